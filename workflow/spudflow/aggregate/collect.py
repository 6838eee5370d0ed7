"""Tables collected across treebanks (paper Tables 7–8): per-split files of one artifact
concatenated into one."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from spudflow.core.artifacts import NONCE_STATS, TREEBANK_STATS
from spudflow.core.contract import Artifact, artifact_of, read_artifact
from spudflow.core.distinct_inputs import one_source_per
from spudflow.core.errors import InputError

# The per-split files collected into one table.
COLLECTABLE = {a.name: a for a in (NONCE_STATS, TREEBANK_STATS)}
# Sort keys used where a collected table has them, in this order.
SORT_KEYS = ("treebank", "split", "language", "method", "seed")
# What one per-split file is of: its rows come from no other file.
FILE_KEYS = ("treebank", "split", "method", "seed")


def collected_table(artifact: Artifact) -> str:
    """The registry's table (core/outputs_registry.py) that stacks files of `artifact`."""
    from spudflow.core.table_artifacts import TABLES

    return next(name for name, table in TABLES.items() if table is artifact)


def collect(paths: Iterable[str | Path]) -> tuple[pl.DataFrame, Artifact]:
    """Row-wise concatenation of files of one stage artifact, each checked against it; and the
    artifact."""
    frames, artifact = [], None
    for path in map(Path, paths):
        name = artifact_of(path)
        found = COLLECTABLE.get(name)
        if found is None:
            raise InputError(path, None, f"{name or 'no spudflow artifact'}: only "
                             f"{' and '.join(COLLECTABLE)} files are collected")
        if artifact is not None and found != artifact:
            raise InputError(path, None, f"a {found.name} file among {artifact.name} files")
        artifact = found
        frames.append(read_artifact(path, artifact).with_columns(
            pl.lit(str(path)).alias("source_file")))
    if not frames:
        raise InputError("inputs", None, "no files to collect")
    table = pl.concat(frames, how="vertical")
    one_source_per(table, [k for k in FILE_KEYS if k in table.columns], "the rows of")
    table = table.drop("source_file")
    keys = [k for k in SORT_KEYS if k in table.columns]
    table = table.sort(keys, nulls_last=False, maintain_order=True) if keys else table
    return table, artifact
