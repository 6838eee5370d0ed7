"""BLiMP: a pair is correct when log P(good) > log P(bad); ties count as wrong and are reported.

Accuracy per paradigm (UID), per field and overall: `accuracy` over all pairs of the group and
`paradigm_mean_accuracy`, the unweighted mean of its paradigms' accuracies (equal when every
paradigm has the same number of pairs, as the 1,000 of the released files).
"""

from __future__ import annotations

import polars as pl

from spudflow.aggregate.inputs import scored_items
from spudflow.aggregate.outputs import Table
from spudflow.core.errors import InputError

SCORER = ["dataset", "model", "method"]
PARADIGM = ["field", "linguistics_term", "uid"]


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


def pair_outcomes(scored: pl.DataFrame) -> pl.DataFrame:
    """One row per (pair, scoring function): both log-probabilities, correct, tie."""
    good = scored.filter(pl.col("label") == 1).select(
        *SCORER, "group_id", *PARADIGM, "pair_id", pl.col("logprob_sum").alias("logprob_good"))
    bad = scored.filter(pl.col("label") == 0).select(
        *SCORER, "group_id", pl.col("logprob_sum").alias("logprob_bad"))
    pairs = good.join(bad, on=[*SCORER, "group_id"], how="inner")
    return pairs.with_columns(
        (pl.col("logprob_good") > pl.col("logprob_bad")).alias("correct"),
        (pl.col("logprob_good") == pl.col("logprob_bad")).alias("tie"),
    ).sort([*SCORER, "group_id"])


def _accuracy(keys: list[str], frame: pl.DataFrame) -> pl.DataFrame:
    return frame.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("n_pairs"),
        pl.col("correct").sum().cast(pl.Int64).alias("n_correct"),
        pl.col("tie").sum().cast(pl.Int64).alias("n_ties"),
        pl.col("correct").mean().alias("accuracy"),
    ).sort(keys)


def accuracy_tables(pairs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(per paradigm, per field, overall)."""
    paradigm = _accuracy([*SCORER, *PARADIGM], pairs)
    tables = [paradigm]
    for keys in ([*SCORER, "field"], SCORER):
        macro = paradigm.group_by(keys).agg(
            pl.len().cast(pl.Int64).alias("n_paradigms"),
            pl.col("accuracy").mean().alias("paradigm_mean_accuracy"))
        table = _accuracy(keys, pairs).join(macro, on=keys, how="left")
        tables.append(table.select(*keys, "n_paradigms", "n_pairs", "n_correct", "n_ties",
                                   "accuracy", "paradigm_mean_accuracy").sort(keys))
    return tables[0], tables[1], tables[2]


def blimp_tables(items: pl.DataFrame, scores: pl.DataFrame) -> list[Table]:
    check_pairs(items)
    pairs = pair_outcomes(scored_items(items, scores))
    if pairs.is_empty():
        raise InputError("--scores", None, "no BLiMP pair with both sentences scored")
    paradigm, field, overall = accuracy_tables(pairs)
    return [
        Table("blimp_paradigm", paradigm,
              "BLiMP accuracy per paradigm: share of pairs with log P(good) > log P(bad); ties "
              "count as wrong."),
        Table("blimp_field", field, "BLiMP accuracy per field."),
        Table("blimp_overall", overall, "BLiMP accuracy over all paradigms."),
    ]
