"""Inputs given twice are bad input, never counted twice: a table of the same scores given under
two paths would count every pair twice (and test on duplicates).

Two guards, used by every command that reads a list of inputs:
- `distinct_paths`: the same file or folder twice in one argument (the same path, or two paths
  of one file: a link, `a/../a`). `spudflow` checks every list-of-paths argument before a
  command runs (cli.main), so a new command is covered as soon as it exists.
- `distinct_names`: a name given twice to a repeatable NAME=PATH option, whose later value
  would silently replace the first.
- `one_source_per`: the same content in two files (a copy): rows that name the same thing
  (a dataset and model of scores, a treebank split of statistics, a probe run) must come from
  one file. The readers call it with the key that identifies their rows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from spudflow.core.errors import InputError


def _identity(path: Path) -> tuple:
    try:
        info = path.stat()
    except OSError:  # missing: its reader says so; two spellings of it are still one path
        return ("path", os.path.abspath(path))
    return ("file", info.st_dev, info.st_ino)


def distinct_paths(paths: Iterable[Path]) -> None:
    """Bad input where two of PATHS are the same file or folder (named at the second)."""
    seen: dict[tuple, Path] = {}
    for path in map(Path, paths):
        identity = _identity(path)
        if identity in seen:
            first = seen[identity]
            raise InputError(path, None, "given twice" if first == path else
                             f"given twice (the same as {first})")
        seen[identity] = path


def check_distinct_path_arguments(values: Iterable) -> None:
    """`distinct_paths` on every argument that is a list of paths (VALUES: the command's parsed
    option values)."""
    for value in values:
        if isinstance(value, list) and len(value) > 1 and \
                all(isinstance(v, Path) for v in value):
            distinct_paths(value)


def distinct_names(names: Iterable, option: str) -> None:
    """Bad input where OPTION (`--table`) names something twice."""
    seen = set()
    for name in names:
        if name in seen:
            shown = " ".join(map(str, name)) if isinstance(name, tuple) else name
            raise InputError(option, None, f"{shown} given twice")
        seen.add(name)


def one_source_per(frame, key: Sequence[str], what: str, source: str = "source_file") -> None:
    """Bad input where rows of one KEY come from two SOURCE files: WHAT (e.g. `scores of`)
    and the key's values name them, at the second file."""
    import polars as pl

    sources = frame.select(*key, source).unique(maintain_order=True)
    twice = sources.filter(pl.struct(*key).is_duplicated())
    if not twice.height:
        return
    values = twice.row(0, named=True)
    first, second = twice.filter(pl.all_horizontal(
        pl.col(k).eq_missing(values[k]) for k in key)).head(2).iter_rows(named=True)
    named = ", ".join(f"{k} {first[k]!r}" for k in key)
    raise InputError(second[source], None, f"{what} {named} again (also in {first[source]}): "
                     "an input given twice?")
