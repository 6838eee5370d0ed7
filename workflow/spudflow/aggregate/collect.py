"""Tables collected across treebanks (paper Tables 7–8): per-split files concatenated into one."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.input_files import read_parquet_checked

# Sort keys used where a collected table has them, in this order.
SORT_KEYS = ("treebank", "split", "language", "method", "seed")


def collect(paths: Iterable[str | Path]) -> pl.DataFrame:
    """Row-wise concatenation; a column missing from some files is null there."""
    frames = []
    for path in map(Path, paths):
        # Every collected table is per treebank: a file without the column is another kind.
        frames.append(read_parquet_checked(path, "a per-treebank table", ["treebank"]))
    if not frames:
        raise InputError("inputs", None, "no files to collect")
    table = pl.concat(frames, how="diagonal_relaxed")
    keys = [k for k in SORT_KEYS if k in table.columns]
    return table.sort(keys, nulls_last=False, maintain_order=True) if keys else table
