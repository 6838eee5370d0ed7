"""Output arguments checked when the command line is read, before any input is read or model
loaded: an output that cannot be written is bad input (exit 2, one line naming it), found in
seconds rather than after an hour of scoring.

Each is an argparse `type=`: `output_file` (one file), `output_dir` (a directory the command
fills), `output_stem` (STEM.parquet, STEM.csv, … beside each other), `output_path` (a file or a
directory, by what the command is given) and `shared_dir` (a folder jobs share). They raise
InputError, which argparse passes on and `spudflow.cli.main` prints as `PATH: what is wrong`.

Whether an existing output may be replaced (a directory where a file is written, a folder the
command did not make) is decided where outputs are renamed into place (core/atomic.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from spudflow.core.errors import InputError


def _nearest_existing(path: Path) -> Path:
    """`path` or its closest ancestor that exists (lexically: `..` is not resolved)."""
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def _check_parent(text: str, path: Path) -> None:
    """The folders the command creates above `path` can be created: the closest existing one is
    a writable directory."""
    found = _nearest_existing(path.parent)
    if not found.is_dir():
        raise InputError(text, None, f"cannot be written: {found} is a file, not a directory")
    if not os.access(found, os.W_OK | os.X_OK):
        raise InputError(text, None, f"cannot be written: no permission to write in {found}")


def _output(what: str):
    """argparse type of WHAT, a path whose parent folders can be made and written."""

    def output(text: str) -> Path:
        path = Path(text)
        _check_parent(text, path)
        return path

    output.__doc__ = f"argparse type of {what}."
    return output


output_file = _output("an output file")
output_stem = _output("an output path without extension (STEM.parquet, STEM.csv, ...)")
output_path = _output("an output that is a file or a directory, by the command's inputs")


def output_dir(text: str) -> Path:
    """argparse type of an output directory; an existing file in its place is bad input."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise InputError(text, None, "is a file, not a directory (an output directory)")
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise InputError(text, None, "cannot be written: no permission to write in it")
    _check_parent(text, path)
    return path


def shared_dir(text: str) -> Path:
    """argparse type of a folder that jobs share and create when missing (the score cache):
    one below a file is bad input; one that cannot be written is the command's to handle."""
    path = Path(text)
    found = _nearest_existing(path.parent)
    if not found.is_dir():
        raise InputError(text, None, f"cannot be written: {found} is a file, not a directory")
    return path
