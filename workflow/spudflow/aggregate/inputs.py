"""Read items, scores and probe metrics by the column names of columns.py, with clear errors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import polars as pl

from spudflow.aggregate import columns
from spudflow.core.errors import InputError


def read_columns(path: str | Path, required: Mapping[str, str],
                 optional: Mapping[str, str] | Iterable[str] = ()) -> pl.DataFrame:
    """The `required` and present `optional` columns of a Parquet file, renamed to internal names.

    Mappings go internal name -> file column. Absent optional columns come back as nulls."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "no such file")
    try:
        schema = pl.read_parquet_schema(path)
    except Exception as error:  # noqa: BLE001 - any unreadable file is bad input
        raise InputError(path, None, f"not a Parquet file ({error})") from None
    optional = dict(optional) if isinstance(optional, Mapping) else {c: c for c in optional}
    missing = [src for src in required.values() if src not in schema]
    if missing:
        raise InputError(path, None, f"missing column(s) {', '.join(missing)}; the file has "
                         f"{', '.join(schema)}")
    wanted = {**required, **{k: v for k, v in optional.items() if v in schema}}
    frame = pl.read_parquet(path, columns=list(dict.fromkeys(wanted.values())))
    frame = frame.select([pl.col(src).alias(name) for name, src in wanted.items()])
    absent = [k for k, v in optional.items() if v not in schema]
    return frame.with_columns([pl.lit(None, dtype=pl.String).alias(k) for k in absent])


def read_items(paths: Iterable[str | Path], condition: Mapping[str, str] | None = None,
               optional: Iterable[str] = ()) -> pl.DataFrame:
    """Items files (one per dataset) with the shared columns and a kind's condition columns."""
    condition = condition or {}
    frames = []
    for path in paths:
        required = {**columns.ITEMS, **{k: v for k, v in condition.items() if k not in optional}}
        opt = {k: v for k, v in condition.items() if k in optional}
        frame = read_columns(path, required, opt).with_columns(
            pl.col("dataset", "item_id", "group_id").cast(pl.String),
            pl.lit(str(path)).alias("source_file"))
        duplicated = frame.filter(pl.struct("dataset", "item_id").is_duplicated())
        if duplicated.height:
            raise InputError(path, None, f"item_id {duplicated['item_id'][0]!r} is not unique")
        frames.append(frame)
    if not frames:
        raise InputError("--items", None, "no items files given")
    return pl.concat(frames, how="diagonal_relaxed")


def dataset_of_scores(path: Path) -> str:
    """results/scores/{dataset}/{model}/item_scores.parquet -> dataset."""
    return path.parent.parent.name


# Optional score columns that are numbers (null-filled when the file lacks them).
NUMERIC_OPTIONAL_SCORES = ("slor", "word_lp_min1", "norm_lp")


def read_scores(paths: Iterable[str | Path]) -> pl.DataFrame:
    """item_scores files, with a `dataset` column (from the file, else from its path)."""
    frames = []
    for path in map(Path, paths):
        frame = read_columns(path, columns.SCORES, columns.SCORES_OPTIONAL)
        schema = pl.read_parquet_schema(path)
        if columns.SCORES_DATASET in schema:
            dataset = pl.read_parquet(path, columns=[columns.SCORES_DATASET]).to_series()
        else:
            dataset = pl.Series([dataset_of_scores(path)] * frame.height)
        frame = frame.with_columns(dataset.cast(pl.String).alias("dataset"),
                                   pl.col("item_id", "model", "method", "region",
                                          "skipped").cast(pl.String),
                                   pl.col(*NUMERIC_OPTIONAL_SCORES).cast(pl.Float64),
                                   pl.lit(str(path)).alias("source_file"))
        key = ["dataset", "item_id", "model", "method", "region"]
        duplicated = frame.filter(pl.struct(key).is_duplicated())
        if duplicated.height:
            row = duplicated.row(0, named=True)
            raise InputError(path, None, f"two rows for item {row['item_id']!r}, model "
                             f"{row['model']!r}, method {row['method']!r}, "
                             f"region {row['region']!r}")
        frames.append(frame)
    if not frames:
        raise InputError("--scores", None, "no score files given")
    return pl.concat(frames, how="diagonal_relaxed")


def scored_items(items: pl.DataFrame, scores: pl.DataFrame,
                 all_regions: bool = False) -> pl.DataFrame:
    """Scores of whole sentences (and with `all_regions` of every region) joined with their items.

    Every scored item must exist in the items; items without scores are left out."""
    if not all_regions:
        scores = scores.filter(pl.col("region").is_null())
    unknown = scores.join(items, on=["dataset", "item_id"], how="anti")
    if unknown.height:
        row = unknown.row(0, named=True)
        raise InputError(row["source_file"], None, f"item {row['item_id']!r} of dataset "
                         f"{row['dataset']!r} is in no items file")
    # Rows in items-file order within each scorer, so that seeded fold splits follow the file.
    items = items.drop("source_file").with_row_index("item_order")
    joined = scores.drop("source_file").join(items, on=["dataset", "item_id"], how="inner")
    return joined.sort(["model", "method", "region", "item_order"], nulls_last=False).drop(
        "item_order")


def read_probe_metrics(paths: Iterable[str | Path]) -> pl.DataFrame:
    frames = [read_columns(p, columns.PROBE_METRICS).with_columns(
        pl.lit(str(p)).alias("source_file")) for p in paths]
    if not frames:
        raise InputError("metrics", None, "no metrics files given")
    return pl.concat(frames, how="diagonal_relaxed")


def scorers(frame: pl.DataFrame) -> list[tuple[str, str]]:
    """(model, method) pairs in the frame, sorted."""
    return sorted(frame.select("model", "method").unique().iter_rows())


def of_scorer(frame: pl.DataFrame, scorer: tuple[str, str]) -> pl.DataFrame:
    return frame.filter((pl.col("model") == scorer[0]) & (pl.col("method") == scorer[1]))
