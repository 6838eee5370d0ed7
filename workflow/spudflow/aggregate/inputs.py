"""Read items, scores and probe metrics by the column names of columns.py, with clear errors."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.derived_once import derived_once
from spudflow.core.artifacts import (
    ITEM_SCORES,
    PROBE_LAYER_CHOICE,
    PROBE_METRICS,
    SCORES_LAYOUT,
    dataset_of_scores,
)
from spudflow.core.contract import Artifact, read_artifact
from spudflow.core.distinct_inputs import one_source_per
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.text_hash import text_hash

log = get_logger(__name__)

# What identifies a probe run's rows (one metrics file per run and probe seed).
PROBE_RUN = ["treebank", "model", "baseline", "dist_layer", "label_layer", "auto_layers", "seed"]


def read_columns(path: str | Path, artifact: Artifact,
                 wanted: Mapping[str, str]) -> pl.DataFrame:
    """The `wanted` columns (internal name -> file column) of a file checked against its
    artifact, renamed to the internal names. A missing column is bad input, never a null."""
    frame = read_artifact(path, artifact, list(dict.fromkeys(wanted.values())))
    return frame.select([pl.col(src).alias(name) for name, src in wanted.items()])


def read_items(paths: Iterable[str | Path], artifact: Artifact,
               condition: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Items files (one per dataset) of one family: the shared columns and the family's
    condition columns."""
    wanted = {**columns.ITEMS, **(condition or {})}
    frames = []
    for path in paths:
        frame = read_columns(path, artifact, wanted).with_columns(
            pl.lit(str(path)).alias("source_file"))
        duplicated = frame.filter(pl.struct("dataset", "item_id").is_duplicated())
        if duplicated.height:
            raise InputError(path, None, f"item_id {duplicated['item_id'][0]!r} is not unique")
        frames.append(frame)
    if not frames:
        raise InputError("--items", None, "no items files given")
    items = pl.concat(frames, how="vertical")
    one_source_per(items, ["dataset"], "items of")
    return items


def read_scores(paths: Iterable[str | Path]) -> pl.DataFrame:
    """item_scores files, with the `dataset` their path names."""
    frames = []
    for path in map(Path, paths):
        # read_columns checks the artifact's key (item_id, model, method, region): no row twice
        frames.append(read_columns(path, ITEM_SCORES, columns.SCORES).with_columns(
            pl.lit(dataset_of_scores(path)).alias("dataset"),
            pl.lit(str(path)).alias("source_file")))
    if not frames:
        raise InputError("--scores", None, "no score files given")
    scores = pl.concat(frames, how="vertical")
    one_source_per(scores, ["dataset", "model"], "scores of")
    return scores


def scores_by_model(paths: Iterable[str | Path]) -> Iterator[tuple[str, pl.DataFrame]]:
    """read_scores(paths) one dataset and model at a time (both sorted): (dataset, its rows of
    that model). For the tables computed per dataset and model: the whole of a large stage's
    scores need not fit in memory (the Japanese preset's 36 files: 41M rows, more than 24 GB
    joined with their items)."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("--scores", None, "no score files given")
    files: dict[str, list[Path]] = {}
    for path in paths:
        files.setdefault(dataset_of_scores(path), []).append(path)
    for dataset in sorted(files):
        # the models of each file as polars' unique values: a set of every row's model name is
        # a Python loop over the file's rows (33.7M in the Japanese preset's base dataset)
        models = {path: set(read_columns(path, ITEM_SCORES, {"model": "model"})["model"]
                            .unique().to_list()) for path in files[dataset]}
        one_source_per(pl.DataFrame(
            [(dataset, model, str(path)) for path in files[dataset] for model in
             sorted(models[path])], schema=["dataset", "model", "source_file"], orient="row"),
            ["dataset", "model"], "scores of")
        for model in sorted(set().union(*models.values())):
            yield dataset, pl.concat([read_scores([path]).filter(pl.col("model") == model)
                                      for path in files[dataset] if model in models[path]])


class ScoresByModel:
    """scores_by_model(paths) afresh at each iteration: for each registered table of a
    command that reads the scores one dataset and model at a time."""

    def __init__(self, paths: Iterable[str | Path]):
        self.paths = list(paths)

    def __iter__(self) -> Iterator[tuple[str, pl.DataFrame]]:
        return scores_by_model(self.paths)


# The score columns that hold a number (columns.SCORES names).
FIGURES = ("logprob_sum", "ppl", "mean_logprob", "slor", "word_lp_min1", "norm_lp")


def without_nan(scores: pl.DataFrame) -> pl.DataFrame:
    """A NaN figure (a model's NaN log-probability) as null, the item not scored by it, with a
    warning per scoring function: polars orders NaN above every number, so a NaN would win
    every comparison and turn every mean or quantile of its group into NaN."""
    nan = pl.any_horizontal(pl.col(*FIGURES).is_nan())
    counts = scores.filter(nan).group_by("model", "method").len().sort("model", "method")
    for model, method, n in counts.iter_rows():
        log.warning("%s/%s: %d score rows with a NaN figure, taken as not scored", model,
                    method, n)
    return scores.with_columns(pl.col(*FIGURES).fill_nan(None)) if counts.height else scores


# The reason of a table's row for a scoring function none of whose scores is usable (every one
# NaN or left out): its rows carry it (status `skipped`), the front page a red line.
NO_USABLE_SCORE = "no usable score"


def unusable_functions(scores: pl.DataFrame, all_regions: bool = False,
                       by_region: bool = False) -> pl.DataFrame:
    """(dataset, model, method, reason) of each scoring function without one usable score: every
    logprob_sum of its whole-sentence rows (with `all_regions`: of all its rows) NaN (float16
    overflow), null, or left out by scoring. `by_region`: of each (function, region) of the
    rows, with a `region` column before the reason (a Japanese scoring mode). Read the raw
    scores, before `without_nan`."""
    rows = scores if all_regions or by_region else scores.filter(pl.col("region").is_null())
    keys = ["dataset", "model", "method", *["region"] * by_region]
    counts = rows.group_by(keys).agg(
        pl.len().alias("n"),
        (pl.col("logprob_sum").is_not_null() & pl.col("logprob_sum").is_not_nan()
         & pl.col("skipped").is_null()).sum().alias("usable"),
        pl.col("logprob_sum").is_nan().sum().alias("nan"),
        pl.col("skipped").is_not_null().sum().alias("left_out"),
    ).filter(pl.col("usable") == 0).sort(keys, nulls_last=False)
    reasons = []
    for row in counts.iter_rows(named=True):
        what = [f"{row['nan']} NaN (e.g. a float16 overflow)" if row["nan"] else "",
                f"{row['left_out']} left out by scoring" if row["left_out"] else ""]
        reasons.append(f"{NO_USABLE_SCORE}: of {row['n']} score rows, "
                       f"{', '.join(w for w in what if w) or 'every one null'}")
    return counts.select(*keys).with_columns(pl.Series("reason", reasons, dtype=pl.String))


def warn_not_scored(scores: pl.DataFrame) -> None:
    """One warning per scoring function and reason for the items that scoring left out
    (`skipped`, e.g. too_long): the tables leave them out too, and the log says how many."""
    if "skipped" not in scores.columns:
        return
    counts = (scores.filter(pl.col("skipped").is_not_null() & pl.col("region").is_null())
              .group_by("dataset", "model", "method", "skipped").len()
              .sort("dataset", "model", "method", "skipped"))
    for dataset, model, method, reason, n in counts.iter_rows():
        log.warning("%s, %s/%s: %d items not scored (%s), left out of the tables", dataset,
                    model, method, n, reason)


@derived_once
def scored_items(items: pl.DataFrame, scores: pl.DataFrame,
                 all_regions: bool = False) -> pl.DataFrame:
    """Scores of whole sentences (and with `all_regions` of every region) joined with their items,
    NaN figures as null (`without_nan`).

    Every scored item must exist in the items; items without scores are left out."""
    if not all_regions:
        scores = scores.filter(pl.col("region").is_null())
    scores = without_nan(scores)
    warn_not_scored(scores)
    datasets = sorted(items["dataset"].unique().to_list())
    elsewhere = scores.filter(~pl.col("dataset").is_in(datasets))
    if elsewhere.height:  # the path names the dataset: a file moved out of its folders
        row = elsewhere.row(0, named=True)
        raise InputError(row["source_file"], None, f"a scores file names its dataset by its "
                         f"path, {SCORES_LAYOUT}, and {row['dataset']!r} from this one is the "
                         f"dataset of no items file ({', '.join(map(repr, datasets))})")
    # Rows in items-file order within each scoring function, so that seeded fold splits follow
    # the file. One join of the scores with their items, which the checks read; only where it
    # shows a problem is there another join, to name the row.
    known = with_text_hash(items).drop("source_file").with_row_index("item_order")
    joined = scores.drop("source_file").join(known, on=["dataset", "item_id"], how="inner")
    if (joined.height != scores.height
            or items.select(pl.struct("dataset", "item_id").is_duplicated().any()).item()):
        unknown = scores.join(items, on=["dataset", "item_id"], how="anti")
        if unknown.height:
            row = unknown.row(0, named=True)
            raise InputError(row["source_file"], None, f"item {row['item_id']!r} of dataset "
                             f"{row['dataset']!r} is in no items file")
    if joined.select((pl.col("text_hash") != pl.col(ITEMS_TEXT_HASH)).any()).item():
        check_text(known, scores)
    return joined.drop("text_hash", ITEMS_TEXT_HASH).sort(
        ["model", "method", "region", "item_order"], nulls_last=False).drop("item_order")


# The hash of an item's sentence (core/text_hash.py), beside the items while they are joined
# with scores.
ITEMS_TEXT_HASH = "items_text_hash"


def with_text_hash(items: pl.DataFrame) -> pl.DataFrame:
    """The items with their sentences' hash (kept where there already: a caller that drops the
    sentence before joining many score files hashes once)."""
    if ITEMS_TEXT_HASH in items.columns:
        return items
    return items.with_columns(pl.Series(ITEMS_TEXT_HASH, [text_hash(s) for s in items["sentence"]],
                                        dtype=pl.String))


def check_text(items: pl.DataFrame, scores: pl.DataFrame) -> None:
    """Bad input where a score row's item has another sentence in the items (with_text_hash) than
    the one scored: items made again under the same ids, whose old scores are not this text's."""
    stale = scores.select("dataset", "item_id", "model", "text_hash", "source_file").join(
        items.select("dataset", "item_id", ITEMS_TEXT_HASH), on=["dataset", "item_id"],
        how="inner").filter(pl.col("text_hash") != pl.col(ITEMS_TEXT_HASH)).sort(
        "source_file", "item_id", "model")
    if stale.height:
        row = stale.row(0, named=True)
        n = stale["item_id"].n_unique()
        raise InputError(row["source_file"], None, f"item {row['item_id']!r} of dataset "
                         f"{row['dataset']!r}: model {row['model']!r} scored another text "
                         f"than the items file's sentence (text hash {row['text_hash']}, the "
                         f"items' {row[ITEMS_TEXT_HASH]}; {n} item(s) so): the items were made "
                         "again since these scores, score them again")


def read_probe_metrics(paths: Iterable[str | Path]) -> pl.DataFrame:
    frames = [read_columns(p, PROBE_METRICS, columns.PROBE_METRICS).with_columns(
        pl.lit(str(p)).alias("source_file")) for p in paths]
    if not frames:
        raise InputError("metrics", None, "no metrics files given")
    metrics = pl.concat(frames, how="vertical")  # the same columns and types: the artifact's
    one_source_per(metrics, PROBE_RUN, "metrics of probe run")
    return metrics


def read_layer_choices(paths: Iterable[str | Path]) -> pl.DataFrame | None:
    """The probe layer-choice files (`probe select-layers`), stacked; None without any."""
    frames = [read_artifact(p, PROBE_LAYER_CHOICE, ["treebank", "model", "part", "layer"])
              .with_columns(pl.lit(str(p)).alias("source_file")) for p in paths]
    if not frames:
        return None
    choices = pl.concat(frames)
    one_source_per(choices, ["treebank", "model", "part"], "the layer choice of")
    return choices


def scoring_functions(frame: pl.DataFrame) -> list[tuple[str, str]]:
    """(model, method) pairs in the frame, sorted."""
    return sorted(frame.select("model", "method").unique().iter_rows())


def of_scoring_function(frame: pl.DataFrame, function: tuple[str, str]) -> pl.DataFrame:
    return frame.filter((pl.col("model") == function[0]) & (pl.col("method") == function[1]))
