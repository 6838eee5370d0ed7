"""BLiMP: a pair is correct when log P(good) > log P(bad); ties count as wrong and are reported.

A scoring function's pairs are the pairs of which it scored at least one sentence (a pair with no
score row at all was left out of its sample). Of these, a pair is *skipped* when a sentence has no
score row, or one with `skipped` set or no logprob_sum (too long for the model); skipped pairs are
counted in `n_skipped` and are in no other count. `n_pairs` counts the pairs with both sentences
scored, and `accuracy` = n_correct / n_pairs (ties in n_pairs, counted wrong).

Accuracy per paradigm (UID), per field and overall: `accuracy` over all pairs of the group and
`paradigm_mean_accuracy`, the unweighted mean of its paradigms' accuracies (equal when every
paradigm has the same number of pairs, as the 1,000 of the released files).

Intervals (uncertainty.py) over pairs: Wilson's for `accuracy` with lm-eval's stderr beside it,
and a bootstrap stratified by paradigm (pairs resampled within each paradigm) for
`paradigm_mean_accuracy`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from spudflow.aggregate.coverage import unseen_fraction
from spudflow.aggregate.derived_once import derived_once
from spudflow.aggregate.inputs import scored_items, unusable_functions
from spudflow.aggregate.outputs import Table
from spudflow.aggregate.uncertainty import (
    Uncertainty,
    accuracy_stderr,
    stratified_mean_of_means,
    wilson,
)
from spudflow.core.errors import InputError
from spudflow.core.table_artifacts import STATUS_OK, STATUS_SKIPPED

DATASET_SCORING = ["dataset", "model", "method"]
PARADIGM = ["field", "linguistics_term", "uid"]


@derived_once
def check_pairs(items: pl.DataFrame) -> None:
    """Each group is one pair: one good (label 1) and one bad (label 0) sentence."""
    counts = items.group_by("source_file", "dataset", "group_id").agg(
        (pl.col("label") == 1).sum().alias("good"), (pl.col("label") == 0).sum().alias("bad"),
        pl.len().alias("n"))
    wrong = counts.filter((pl.col("good") != 1) | (pl.col("bad") != 1) | (pl.col("n") != 2))
    if wrong.height:
        row = wrong.sort("group_id").row(0, named=True)
        raise InputError(row["source_file"], None, f"group {row['group_id']!r} is not one good "
                         f"and one bad sentence ({row['good']} good, {row['bad']} bad, "
                         f"{row['n']} items)")


@derived_once
def pair_outcomes(items: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """One row per (pair, scoring function) with a score row for a sentence of the pair: both
    log-probabilities (null where not scored), scored (both sentences), correct, tie, skipped."""
    scored = scored_items(items, scores).with_columns(
        (pl.col("skipped").is_null() & pl.col("logprob_sum").is_not_null()).alias("usable"))
    sides = {}
    for side, label in (("good", 1), ("bad", 0)):
        sides[side] = scored.filter(pl.col("label") == label).select(
            *DATASET_SCORING, "group_id", pl.col("logprob_sum").alias(f"logprob_{side}"),
            pl.col("usable").alias(f"usable_{side}"), pl.col("n_unseen").alias(f"unseen_{side}"),
            pl.col("n_words").alias(f"words_{side}"))
    pair_items = items.filter(pl.col("label") == 1).select("dataset", "group_id", *PARADIGM,
                                                           "pair_id")
    pairs = pl.concat([sides["good"].select(*DATASET_SCORING, "group_id"),
                       sides["bad"].select(*DATASET_SCORING, "group_id")]).unique()
    pairs = pairs.join(pair_items, on=["dataset", "group_id"], how="inner")
    for side in ("good", "bad"):
        pairs = pairs.join(sides[side], on=[*DATASET_SCORING, "group_id"], how="left")
    both = pl.col("usable_good").fill_null(False) & pl.col("usable_bad").fill_null(False)
    pairs = pairs.with_columns(both.alias("scored"))
    return pairs.with_columns(
        (pl.col("scored") & (pl.col("logprob_good") > pl.col("logprob_bad"))).alias("correct"),
        (pl.col("scored") & (pl.col("logprob_good") == pl.col("logprob_bad"))).alias("tie"),
        (~pl.col("scored")).alias("skipped"),
        (pl.col("unseen_good") + pl.col("unseen_bad")).alias("n_unseen"),
        (pl.col("words_good") + pl.col("words_bad")).alias("n_words"),
    ).select(*DATASET_SCORING, "group_id", *PARADIGM, "pair_id", "logprob_good", "logprob_bad",
             "scored", "correct", "tie", "skipped", "n_unseen", "n_words"
             ).sort([*DATASET_SCORING, "group_id"])


def _accuracy(keys: list[str], frame: pl.DataFrame, level: float) -> pl.DataFrame:
    counts = frame.group_by(keys).agg(
        pl.col("scored").sum().cast(pl.Int64).alias("n_pairs"),
        pl.col("correct").sum().cast(pl.Int64).alias("n_correct"),
        pl.col("tie").sum().cast(pl.Int64).alias("n_ties"),
        pl.col("skipped").sum().cast(pl.Int64).alias("n_skipped"),
    ).sort(keys)
    low, high = wilson(counts["n_correct"].to_numpy(), counts["n_pairs"].to_numpy(), level)
    stderr = accuracy_stderr(counts["n_correct"].to_numpy(), counts["n_pairs"].to_numpy())
    # One denominator: the pairs with both sentences scored (none: no accuracy, no interval).
    return counts.with_columns(
        pl.when(pl.col("n_pairs") > 0).then(pl.col("n_correct") / pl.col("n_pairs"))
        .alias("accuracy"),
        pl.Series("accuracy_ci_low", low).fill_nan(None),
        pl.Series("accuracy_ci_high", high).fill_nan(None),
        pl.Series("accuracy_stderr", stderr).fill_nan(None))


ACCURACY_INTERVAL = ["accuracy_ci_low", "accuracy_ci_high", "accuracy_stderr"]
MEAN_INTERVAL = ["paradigm_mean_accuracy_ci_low", "paradigm_mean_accuracy_ci_high",
                 "paradigm_mean_interval"]


def paradigm_mean_intervals(keys: list[str], pairs: pl.DataFrame, settings: Uncertainty,
                            draws: dict | None = None) -> pl.DataFrame:
    """Per group of `keys`: the stratified bootstrap interval of the mean of its paradigms'
    accuracies (the scored pairs' outcomes resampled within each paradigm, each paradigm by
    its own seeded generator; `draws` keeps a scoring function's paradigm resamples for the
    next grouping)."""
    draws = {} if draws is None else draws
    outcomes = pairs.filter(pl.col("scored")).group_by([*keys, "uid"]).agg(
        pl.col("correct")).sort([*keys, "uid"])
    rows = []
    for key, group in outcomes.group_by(keys, maintain_order=True):
        function = tuple(dict(zip(keys, key, strict=True))[c] for c in DATASET_SCORING)
        low, high, method = stratified_mean_of_means(
            [c.to_numpy().astype(np.float64) for c in group["correct"]], settings,
            names=group["uid"].to_list(), draws=draws.setdefault(function, {}))
        rows.append((*key, low, high, method))
    schema = {**{k: pairs.schema[k] for k in keys},
              MEAN_INTERVAL[0]: pl.Float64, MEAN_INTERVAL[1]: pl.Float64,
              MEAN_INTERVAL[2]: pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


def accuracy_tables(pairs: pl.DataFrame, settings: Uncertainty | None = None
                    ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(per paradigm, per field, overall)."""
    settings = settings or Uncertainty()
    paradigm = _accuracy([*DATASET_SCORING, *PARADIGM], pairs, settings.level)
    tables = [paradigm]
    draws = {}  # each function's paradigm resamples, drawn for the fields, reused overall
    for keys in ([*DATASET_SCORING, "field"], DATASET_SCORING):
        # Paradigms with an accuracy: the mean's denominator.
        macro = paradigm.group_by(keys).agg(
            pl.col("accuracy").is_not_null().sum().cast(pl.Int64).alias("n_paradigms"),
            pl.col("accuracy").mean().alias("paradigm_mean_accuracy"))
        table = _accuracy(keys, pairs, settings.level).join(macro, on=keys, how="left").join(
            paradigm_mean_intervals(keys, pairs, settings, draws), on=keys, how="left")
        tables.append(table.select(*keys, "n_paradigms", "n_pairs", "n_correct", "n_ties",
                                   "n_skipped", "accuracy", *ACCURACY_INTERVAL,
                                   "paradigm_mean_accuracy", *MEAN_INTERVAL).sort(keys))
    return tables[0], tables[1], _with_coverage(tables[2], pairs)


def with_status(overall: pl.DataFrame, unusable: pl.DataFrame) -> pl.DataFrame:
    """The overall rows with their status: `skipped` with the reason for a scoring function
    without a usable score (its pairs all skipped), else `ok`."""
    order = list(overall.columns)
    overall = overall.join(unusable, on=DATASET_SCORING, how="left").with_columns(
        pl.when(pl.col("reason").is_null()).then(pl.lit(STATUS_OK))
        .otherwise(pl.lit(STATUS_SKIPPED)).alias("status"))
    return overall.select(*DATASET_SCORING, "status", "reason", *order[len(DATASET_SCORING):])


def _with_coverage(overall: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """The overall rows with tie_fraction and unseen_fraction (over the pairs with both sentences
    scored; coverage.py)."""
    unseen = pairs.filter(pl.col("scored")).group_by(DATASET_SCORING).agg(
        unseen_fraction().alias("unseen_fraction"))
    return overall.with_columns(
        pl.when(pl.col("n_pairs") > 0).then(pl.col("n_ties") / pl.col("n_pairs"))
        .alias("tie_fraction")).join(unseen, on=DATASET_SCORING, how="left").sort(DATASET_SCORING)


def blimp_tables(items: pl.DataFrame, scores: pl.DataFrame,
                 settings: Uncertainty | None = None) -> list[Table]:
    settings = settings or Uncertainty()
    check_pairs(items)
    unusable = unusable_functions(scores)
    pairs = pair_outcomes(items, scores)
    if not pairs["scored"].any() and unusable.is_empty():
        raise InputError("--scores", None, "no BLiMP pair with both sentences scored")
    paradigm, field, overall = accuracy_tables(pairs, settings)
    overall = with_status(overall, unusable)
    intervals = (f"Intervals at {settings.level:g} over pairs: Wilson's for the accuracy (stderr: "
                 "lm-eval's, the sample sd over sqrt(n)); for the paradigm mean, a bootstrap "
                 f"of {settings.resamples} resamples (seed {settings.seed}) of the pairs within "
                 "each paradigm (paradigm_mean_interval: bca or percentile"
                 + ("" if settings.resamples else "; none with 0 resamples") + ").")
    captions = dict(intervals=intervals)  # the captions are the registry's
    return [Table("blimp_paradigm", paradigm, captions), Table("blimp_field", field, captions),
            Table("blimp_overall", overall, captions)]
