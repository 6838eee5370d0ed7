"""Write a command's tables under DIR/{name}.{parquet,csv,md,tex} (per-item data: the formats
of its entry), after all were computed, each with its caption from its registry entry
(core/outputs_registry.py) and, for a table in the report, the report's caption
DIR/{name}.caption.rst."""

from __future__ import annotations

import importlib
import inspect
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
from spudflow.core.tables import write_table

log = get_logger(__name__)


@dataclass(frozen=True)
class Table:
    """A computed table: its name (its registry entry), its rows and the values its entry's
    caption shows (`values`); `caption` replaces the entry's where the table says why it is
    empty."""
    name: str
    frame: pl.DataFrame
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
