"""Write a command's tables under DIR/{name}.{parquet,csv,md,tex} (per-item data: the formats
of its entry), after all were computed, each with its caption from its registry entry
(core/outputs_registry.py) and, for a table in the report, the report's caption
DIR/{name}.caption.rst."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from spudflow.core.logs import get_logger
from spudflow.core.outputs_registry import (
    DATA,
    DATA_FORMATS,  # noqa: F401  (per-item data's default formats; the tests read it here)
    TABLE_OUTPUTS,
    command_tables,
    report_caption_text,
)
from spudflow.core.table_artifacts import TABLES
from spudflow.core.tables import write_table, write_table_parts

log = get_logger(__name__)


@dataclass(frozen=True)
class TableParts:
    """A table's rows as parts, computed one at a time while its Parquet file is written
    (core/tables.write_table_parts); `disjoint_by`: columns whose values differ between parts."""
    parts: Iterable[pl.DataFrame]
    disjoint_by: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A computed table: its name (its registry entry), its rows and the values its entry's
    caption shows (`values`); `caption` replaces the entry's where the table says why it is
    empty."""
    name: str
    # or, for per-item data too large to hold at once (Parquet only), its parts: computed while
    # they are written (TableParts)
    frame: pl.DataFrame | TableParts
    values: dict = field(default_factory=dict)
    caption: str | None = None

    @property
    def entry(self):
        return TABLE_OUTPUTS[self.name]

    @property
    def text(self) -> str:
        """Its caption, filled."""
        return self.caption if self.caption is not None else self.entry.caption_text(
            **self.values)

    @property
    def formats(self) -> tuple[str, ...]:
        """Its registry entry's: a table's four, per-item data's Parquet (and CSV)."""
        return self.entry.formats


def with_registered(command: str, tables: list[Table], **inputs) -> list[Table]:
    """`tables` (what the command's writer computed) and each table of the command's registry
    entries that names its own function ("module.function" under spudflow.aggregate), computed
    by it from the family's loaded inputs and the command's options (`inputs`, e.g. items,
    scores, settings, examples: those its keywords name)."""
    own = []
    for entry in command_tables(command):
        if entry.function:
            module, name = entry.function.rsplit(".", 1)
            function = getattr(importlib.import_module(f"spudflow.aggregate.{module}"), name)
            # the inputs it names (items, scores; settings: aggregate.uncertainty)
            wanted = inspect.signature(function).parameters
            own.append(Table(entry.name, function(
                **{k: v for k, v in inputs.items() if k in wanted})))
    return [*tables, *own]


def write_tables(tables: list[Table], out_dir: str | Path) -> None:
    """Each table in its formats. Called once every table is computed, so that bad input stops a
    command before anything is written."""
    for table in tables:
        write_registry_table(table, Path(out_dir) / table.name)


def write_registry_table(table: Table, stem: Path) -> None:
    """One table at STEM.*: its formats, its caption and, for a table in the report, the
    report's caption STEM.caption.rst."""
    if isinstance(table.frame, TableParts):
        if table.formats != ("parquet",):
            raise ValueError(f"{table.name}: parts are written as Parquet only")
        rows = write_table_parts(table.frame.parts, stem, TABLES[table.name],
                                 table.frame.disjoint_by)
        log.info("wrote %s (%d rows) to %s", table.name, rows, stem.parent)
        return
    text = table.text
    in_report = table.entry.output_type != DATA and bool(table.entry.caption)
    write_table(table.frame, stem, TABLES[table.name], caption=text, formats=table.formats,
                report_caption=report_caption_text(table.entry, text) if in_report else None)
    log.info("wrote %s (%d rows) to %s", table.name, table.frame.height, stem.parent)


def table_stem(out_dir: Path | None, out: Path | None, name: str) -> Path:
    """Where a table command writes table NAME: OUT_DIR/NAME, or the deprecated --out STEM."""
    if out is None:
        return Path(out_dir) / name
    log.warning("--out STEM is deprecated: use --out-dir DIR (writes DIR/%s.*)", name)
    return Path(out)
