"""An input file must be a regular file: a folder, a FIFO or a device (/dev/null) given where a
file is read is bad input said as what it is, not as a missing file. No heavy imports: every
command's reading of its inputs starts here."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.errors import InputError


def not_a_file(path: Path) -> str | None:
    """Why PATH cannot be read as an input file (missing, a directory, a FIFO or device such
    as /dev/null), or None for a regular file."""
    if path.is_file():
        return None
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "is a directory, not a file"
    return "is not a regular file (a FIFO, socket or device)"


def check_regular_file(path: str | Path) -> Path:
    """PATH, which must be a regular file (empty or not)."""
    path = Path(path)
    reason = not_a_file(path)
    if reason:
        raise InputError(path, None, reason)
    return path
