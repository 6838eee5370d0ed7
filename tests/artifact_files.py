"""Editing artifact files in tests: `rewrite` keeps a file valid under its contract (a producer's
output, changed), `tamper` writes what the contract forbids (a broken or foreign producer)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from spudflow.core import artifacts
from spudflow.core.contract import ARTIFACT_KEY, read_artifact, write_artifact

BY_NAME = {a.name: a for a in artifacts.STAGE_ARTIFACTS}


def artifact_of_file(path: Path):
    name = pq.read_schema(path).metadata[ARTIFACT_KEY].decode()
    return BY_NAME[name]


def rewrite(path: Path, change: Callable[[pl.DataFrame], pl.DataFrame],
            dest: Path | None = None) -> Path:
    """Read PATH as its artifact, apply `change`, write it (to DEST) through the contract."""
    artifact = artifact_of_file(path)
    dest = dest or path
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_artifact(change(read_artifact(path, artifact)), dest, artifact)
    return dest


def tamper(path: Path, change: Callable[[pl.DataFrame], pl.DataFrame]) -> Path:
    """Apply `change` and write the result raw, keeping the file's artifact metadata: what a
    producer that broke its contract would leave."""
    table = pq.read_table(path)
    changed = change(pl.from_arrow(table)).to_arrow()
    pq.write_table(changed.replace_schema_metadata(table.schema.metadata), path)
    return path
