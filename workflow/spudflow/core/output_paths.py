"""Output arguments checked when the command line is read, before any input is read or model
loaded: an output that cannot be written is bad input (exit 2, one line naming it), found in
seconds rather than after an hour of scoring.

Each is an argparse `type=`: `output_file` (one file), `output_dir` (a directory the command
fills), `output_stem` (STEM.parquet, STEM.csv, … beside each other), `output_path` (a file or a
directory, by what the command is given) and `shared_dir` (a folder jobs share). They raise
InputError, which argparse passes on and `spudflow.cli.main` prints as `PATH: what is wrong`.

Each returns a Path of a class saying what shape of output it is, so that `spudflow.cli.main`
can refuse an output that is or contains one of the command's inputs before any work
(`check_outputs_apart_from_inputs`): `--out lex.tsv` over the lexicon it reads, `--out split
split`, a stem `a` over its input `a.parquet`.

Whether an existing output may be replaced (a directory where a file is written, a folder the
command did not make, a user's file) is the one write rule of core/atomic.py, decided where
outputs are renamed into place and, before any work, by `check_outputs_replaceable`: on the
files and folders a command declares it writes (`planned_outputs`, a function of its arguments
set as a parser default: each a `PlannedFile` or `PlannedFolder`) or else on its output file
arguments. A conflict is found in seconds, not after the model is loaded or trained.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError


class OutputPath(type(Path())):
    """A path the command writes (the concrete Path class of this system, subclassed)."""

    shape = "output"


class OutputFile(OutputPath):
    shape = "file"


class OutputDir(OutputPath):
    shape = "directory"


class OutputStem(OutputPath):
    shape = "stem"  # STEM.parquet, STEM.csv, ... (one suffix each)


class SharedDir(OutputPath):
    shape = "shared"  # a folder jobs share (the score cache): neither replaced nor an input


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


def _output(what: str, cls: type[OutputPath]):
    """argparse type of WHAT, a path whose parent folders can be made and written."""

    def output(text: str) -> Path:
        path = cls(text)
        _check_parent(text, path)
        return path

    output.__doc__ = f"argparse type of {what}."
    return output


output_file = _output("an output file", OutputFile)
output_stem = _output("an output path without extension (STEM.parquet, STEM.csv, ...)",
                      OutputStem)
output_path = _output("an output that is a file or a directory, by the command's inputs",
                      OutputDir)


def output_dir(text: str) -> Path:
    """argparse type of an output directory; an existing file in its place is bad input."""
    path = OutputDir(text)
    if path.exists() and not path.is_dir():
        raise InputError(text, None, "is a file, not a directory (an output directory)")
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise InputError(text, None, "cannot be written: no permission to write in it")
    _check_parent(text, path)
    return path


def shared_dir(text: str) -> Path:
    """argparse type of a folder that jobs share and create when missing (the score cache):
    one below a file is bad input; one that cannot be written is the command's to handle. An
    empty path is refused: it would make the working folder the shared one."""
    if not text.strip():
        raise InputError(repr(text), None, "an empty path, which would be the working folder: "
                         "name a folder of its own")
    path = SharedDir(text)
    found = _nearest_existing(path.parent)
    if not found.is_dir():
        raise InputError(text, None, f"cannot be written: {found} is a file, not a directory")
    return path


def _paths(value) -> Iterator[Path]:
    """The paths in an argument's value (a path, a list of them, lists of lists, tuples)."""
    if isinstance(value, Path):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item)


def _writes_over(output: OutputPath, written: Path, read: Path) -> bool:
    """Whether OUTPUT (resolved: WRITTEN) is, or would replace, the input READ (resolved)."""
    if read == written:
        return True
    if output.shape == "stem":  # STEM.parquet, STEM.md: the stem's name and one suffix
        rest = read.name[len(written.name) + 1:] if read.name.startswith(written.name + ".") \
            else ""
        return read.parent == written.parent and bool(rest) and "." not in rest
    # A folder the command fills: an input among its files would be replaced with the folder
    # or by one of them (inputs in its subfolders, such as score shards, are not).
    return output.shape == "directory" and read.parent == written


def check_outputs_apart_from_inputs(values: Iterable) -> None:
    """Bad input, before any work, where an output of the command is or would replace one of
    its inputs (every path argument that is not an output is an input; VALUES: the command's
    parsed option values)."""
    values = list(values)
    outputs = [p for p in _paths(values) if isinstance(p, OutputPath) and p.shape != "shared"]
    inputs = [p for p in _paths(values) if not isinstance(p, OutputPath)]
    for output in outputs:
        written = Path(os.path.realpath(output))
        for read in inputs:
            if _writes_over(output, written, Path(os.path.realpath(read))):
                same = "is" if os.path.realpath(read) == str(written) else "would replace"
                raise InputError(output, None, f"{same} the input {read}: spudflow never "
                                 "writes over its own input; nothing written")


@dataclass(frozen=True)
class PlannedFile:
    """A file a command writes: WRITES as core/atomic.check_replaceable takes it (a Parquet
    artifact's `parquet_of(NAME)`; None: a file marked beside it, CoNLL-U, CSV, a figure)."""

    path: Path
    writes: str | None


@dataclass(frozen=True)
class PlannedFolder:
    """A folder a command writes as a whole (DESCRIPTION: `a control model`), replacing only an
    empty one or one RECOGNISE knows as a previous output of that description."""

    path: Path
    description: str
    recognise: Callable[[Path], bool]


def check_outputs_replaceable(planned: list | None, values: Iterable) -> None:
    """Bad input, before any work, where the command would replace what it may not (the write
    rule, core/atomic.py): each output the command declares (PLANNED: its `planned_outputs` of
    its arguments), or else each output file argument among VALUES (the command's parsed option
    values), which may then be any file of spudflow's."""
    from spudflow.core.atomic import (
        ANY_OF_SPUDFLOWS,
        check_folder_replaceable,
        check_replaceable,
    )

    outputs = planned
    if outputs is None:
        outputs = [PlannedFile(p, ANY_OF_SPUDFLOWS) for p in _paths(list(values))
                   if isinstance(p, OutputPath) and p.shape == "file"]
    for output in outputs:
        if isinstance(output, PlannedFolder):
            check_folder_replaceable(output.path, output.description, output.recognise)
        else:
            check_replaceable(output.path, output.writes)
