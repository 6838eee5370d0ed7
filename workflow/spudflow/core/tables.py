"""Result tables: one DataFrame written as Parquet, CSV, Markdown and LaTeX (booktabs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Number
from pathlib import Path

import numpy as np
import polars as pl

from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import Artifact, conform, write_parquet, write_parquet_parts
from spudflow.core.outputs_registry import TABLE_FORMATS


def table_paths(stem: str | Path) -> dict[str, Path]:
    stem = Path(stem)
    return {fmt: stem.with_name(f"{stem.name}.{fmt}") for fmt in TABLE_FORMATS}


# A cell's text as Markdown shows it: HTML special characters as entities (a sentence's `<b>` is
# text, not markup), `|` escaped (it would end the cell), line breaks as `<br>` (one would end the
# row). `&` first, so that the entities written here are not escaped again.
_MARKDOWN_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"),
                     ("\r\n", "<br>"), ("\n", "<br>"), ("\r", "<br>"))


def markdown_cell(text: str) -> str:
    for plain, escaped in _MARKDOWN_ESCAPES:
        text = text.replace(plain, escaped)
    return text


def _markdown_value(value: object) -> object:
    # Numbers stay numbers (tabulate formats them); anything else is text to escape.
    if value is None or isinstance(value, (Number, np.bool_)):
        return value
    return markdown_cell(str(value))


def _markdown(df: pl.DataFrame) -> str:
    # Nulls as `--`, as in the LaTeX table: pandas would turn a null string (a whole-sentence
    # row's region) into NaN and print `nan`.
    frame = df.to_pandas().astype(object).map(_markdown_value, na_action="ignore")
    frame = frame.astype(object).where(frame.notna(), None)
    frame.columns = [markdown_cell(str(name)) for name in frame.columns]
    return frame.to_markdown(index=False, floatfmt=".4g", missingval="--") + "\n"


def _latex(df: pl.DataFrame, caption: str | None) -> str:
    styler = df.to_pandas().style.hide(axis="index").format(precision=4, na_rep="--")
    # booktabs rules; escape `_` and `%` that appear in treebank names and labels.
    styler = styler.format_index(escape="latex", axis=1).format(escape="latex", precision=4,
                                                                 na_rep="--")
    return styler.to_latex(hrules=True, caption=caption, position_float="centering") + ""


def write_table(df: pl.DataFrame, stem: str | Path, artifact: Artifact,
                caption: str | None = None,
                formats: tuple[str, ...] = TABLE_FORMATS,
                report_caption: str | None = None) -> dict[str, Path]:
    """Write STEM.parquet, STEM.csv, STEM.md, STEM.tex (and, given `report_caption`, the
    report's caption STEM.caption.rst), all or none, after checking the table against its
    definition (core/table_artifacts.py)."""
    paths = table_paths(stem)
    if report_caption is not None:
        formats = (*formats, "caption.rst")
        paths["caption.rst"] = Path(stem).with_name(f"{Path(stem).name}.caption.rst")
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
            elif fmt == "caption.rst":
                tmp.write_text(report_caption, encoding="utf-8")
    return {fmt: paths[fmt] for fmt in formats}


def write_table_parts(parts: Iterable[pl.DataFrame], stem: str | Path, artifact: Artifact,
                      disjoint_by: Sequence[str]) -> int:
    """STEM.parquet alone, of `parts` written as they come (a per-item file too large to hold at
    once), each checked against the artifact; the parts' `disjoint_by` values must differ from
    part to part, so that a key unique within each part is unique in the file. Returns the
    rows written; no part writes an empty file."""
    seen: set[tuple] = set()

    def conformed():
        for part in parts:
            values = set(part.select(disjoint_by).unique().rows())
            if values & seen:
                raise ValueError(f"{artifact.name}: {sorted(values & seen)[0]} in two parts")
            seen.update(values)
            yield conform(part, artifact)
        if not seen:
            yield conform(pl.DataFrame(schema=artifact.polars_schema()), artifact)

    with atomic_outputs() as out:
        return write_parquet_parts(conformed(), out.path(Path(f"{stem}.parquet")))
