"""Which files spudflow wrote: the mark core/atomic.py checks before it replaces a file.

A Parquet output carries its own mark, the artifact its schema metadata names (core/contract.py),
and so does a safetensors file (its `spudflow` metadata key). Every other file spudflow writes
(CSV, Markdown, LaTeX, CoNLL-U, PNG, SVG, HTML, a download) is listed in the hidden folder
`.spudflow-written/` beside it: one entry per file, NAME.sha256 (a suffix no reader globs for),
holding the SHA-256 of the bytes spudflow wrote there. A file is spudflow's when its entry lists
the hash of its bytes as they are now. A file spudflow wrote and someone changed since (a filled
annotation sheet, a table edited by hand) is theirs from then on, and kept like any other file
of theirs.

One entry per file, not one list per folder: jobs that write into one folder side by side mark
their files without a lock and without losing each other's entries.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from spudflow.core.errors import InputError

MARK_DIR = ".spudflow-written"


def sha256_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


ENTRY_SUFFIX = ".sha256"


def _entry(path: Path) -> Path:
    return path.parent / MARK_DIR / f"{path.name}{ENTRY_SUFFIX}"


def _listed(path: Path) -> list[str]:
    try:
        return _entry(path).read_text(encoding="ascii").split()
    except (OSError, ValueError):
        return []


def written_hash(path: Path) -> str | None:
    """The SHA-256 of the regular file PATH when spudflow wrote it as it is now, else None."""
    listed = _listed(path)
    if not listed or not path.is_file():
        return None
    digest = sha256_of(path)
    return digest if digest in listed else None


def is_written(path: Path) -> bool:
    return written_hash(path) is not None


def mark(final: Path, hashes: list[str]) -> None:
    """Record that FINAL holds (or is about to hold) bytes of one of HASHES, spudflow's."""
    folder = final.parent / MARK_DIR
    try:
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write("".join(f"{h}\n" for h in hashes))
        os.replace(tmp, _entry(final))
    except OSError as error:
        raise InputError(folder, None, f"cannot record the files spudflow writes here "
                         f"({error.strerror or error}): nothing written") from None
