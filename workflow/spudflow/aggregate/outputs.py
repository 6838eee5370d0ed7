"""Write a command's tables under DIR/{name}.{parquet,csv,md,tex}, after all were computed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from spudflow.core.logs import get_logger
from spudflow.core.table_artifacts import TABLES
from spudflow.core.tables import TABLE_FORMATS, write_table

log = get_logger(__name__)

# Per-item data behind a figure (ROC points, every pair's ratio): too long for Markdown or LaTeX.
DATA_FORMATS = ("parquet", "csv")


@dataclass(frozen=True)
class Table:
    name: str
    frame: pl.DataFrame
    caption: str
    formats: tuple[str, ...] = TABLE_FORMATS


def write_tables(tables: list[Table], out_dir: str | Path) -> None:
    """Each table in its formats. Called once every table is computed, so that bad input stops a
    command before anything is written."""
    for table in tables:
        write_table(table.frame, Path(out_dir) / table.name, TABLES[table.name],
                    caption=table.caption, formats=table.formats)
        log.info("wrote %s (%d rows) to %s", table.name, table.frame.height, out_dir)
