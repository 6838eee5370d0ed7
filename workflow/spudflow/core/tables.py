"""Result tables: one DataFrame written as Parquet, CSV, Markdown and LaTeX (booktabs)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import Artifact, conform, write_parquet

TABLE_FORMATS = ("parquet", "csv", "md", "tex")


def table_paths(stem: str | Path) -> dict[str, Path]:
    stem = Path(stem)
    return {fmt: stem.with_name(f"{stem.name}.{fmt}") for fmt in TABLE_FORMATS}


def _markdown(df: pl.DataFrame) -> str:
    # Nulls as `--`, as in the LaTeX table: pandas would turn a null string (a whole-sentence
    # row's region) into NaN and print `nan`.
    frame = df.to_pandas().astype(object)
    frame = frame.where(frame.notna(), None)
    return frame.to_markdown(index=False, floatfmt=".4g", missingval="--") + "\n"


def _latex(df: pl.DataFrame, caption: str | None) -> str:
    styler = df.to_pandas().style.hide(axis="index").format(precision=4, na_rep="--")
    # booktabs rules; escape `_` and `%` that appear in treebank names and labels.
    styler = styler.format_index(escape="latex", axis=1).format(escape="latex", precision=4,
                                                                 na_rep="--")
    return styler.to_latex(hrules=True, caption=caption, position_float="centering") + ""


def write_table(df: pl.DataFrame, stem: str | Path, artifact: Artifact,
                caption: str | None = None,
                formats: tuple[str, ...] = TABLE_FORMATS) -> dict[str, Path]:
    """Write STEM.parquet, STEM.csv, STEM.md, STEM.tex, all or none, after checking the table
    against its definition (core/table_artifacts.py)."""
    paths = table_paths(stem)
    table = conform(df, artifact)
    df = pl.from_arrow(table.replace_schema_metadata(None))
    with atomic_outputs() as out:
        for fmt in formats:
            tmp = out.path(paths[fmt])
            if fmt == "parquet":
                write_parquet(table, tmp)
            elif fmt == "csv":
                df.write_csv(tmp)
            elif fmt == "md":
                tmp.write_text(_markdown(df), encoding="utf-8")
            elif fmt == "tex":
                tmp.write_text(_latex(df, caption), encoding="utf-8")
    return {fmt: paths[fmt] for fmt in formats}
