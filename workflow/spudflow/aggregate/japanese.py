"""Japanese transitivity (seed 002): which verb of a transitive/intransitive pair a model prefers.

A scoring mode is a model, a scoring method and a region (null: the whole sentence; `verb`: only
the verb's tokens). The mode prefers the transitive verb when the transitive sentence's score is
higher; ties count as not preferring it and are reported. Accuracy on obligatory pairs (the
transitive verb is the grammatical one) and the transitive-preference rate on ambiguous pairs; how
often two modes choose the same verb (agreement and sklearn's Cohen's kappa).
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
from sklearn.metrics import cohen_kappa_score

from spudflow.aggregate import columns
from spudflow.aggregate.inputs import scored_items
from spudflow.aggregate.japanese_regression import regression_table
from spudflow.aggregate.outputs import Table
from spudflow.core.errors import InputError

MODE = ["model", "method", "region"]
CONTEXT = ["verb_pair", "condition", "order", "args", "adverbial", "relative_clause",
           "relative_position"]


def check_pairs(items: pl.DataFrame) -> None:
    """Each group: one transitive and one intransitive sentence."""
    counts = items.group_by("source_file", "dataset", "group_id").agg(
        (pl.col("transitivity") == columns.JAPANESE_TRANSITIVE).sum().alias("transitive"),
        pl.len().alias("n"))
    wrong = counts.filter((pl.col("transitive") != 1) | (pl.col("n") != 2))
    if wrong.height:
        row = wrong.sort("group_id").row(0, named=True)
        raise InputError(row["source_file"], None, f"group {row['group_id']!r} is not one "
                         f"transitive and one intransitive sentence ({row['n']} items, "
                         f"{row['transitive']} transitive)")


def mode_label() -> pl.Expr:
    """"model/method", or "model/method@region" for a region's score."""
    region = pl.when(pl.col("region").is_not_null()).then(pl.lit("@") + pl.col("region"))
    return pl.concat_str(pl.col("model"), pl.lit("/"), pl.col("method"),
                         region.otherwise(pl.lit("")))


def preferences(scored: pl.DataFrame) -> pl.DataFrame:
    """One row per (pair, mode): prefers_transitive, tie, and the pair's context columns."""
    is_transitive = pl.col("transitivity") == columns.JAPANESE_TRANSITIVE
    transitive = scored.filter(is_transitive).select(
        "dataset", "group_id", *MODE, *CONTEXT, pl.col("logprob_sum").alias("logprob_transitive"))
    intransitive = scored.filter(~is_transitive).select(
        "dataset", "group_id", *MODE, pl.col("logprob_sum").alias("logprob_intransitive"))
    pairs = transitive.join(intransitive, on=["dataset", "group_id", *MODE], how="inner",
                            nulls_equal=True)
    pairs = pairs.filter(pl.col("logprob_transitive").is_not_null()
                         & pl.col("logprob_intransitive").is_not_null())
    return pairs.with_columns(
        (pl.col("logprob_transitive") > pl.col("logprob_intransitive")).alias("prefers_transitive"),
        (pl.col("logprob_transitive") == pl.col("logprob_intransitive")).alias("tie"),
        mode_label().alias("mode"),
    ).sort(["dataset", *MODE, "group_id"], nulls_last=False)


def accuracy_table(pairs: pl.DataFrame) -> pl.DataFrame:
    obligatory = pl.col("condition") == columns.JAPANESE_OBLIGATORY
    ambiguous = pl.col("condition") == columns.JAPANESE_AMBIGUOUS
    prefers = pl.col("prefers_transitive")
    keys = ["dataset", *MODE]
    return pairs.group_by(keys).agg(
        obligatory.sum().cast(pl.Int64).alias("n_obligatory"),
        prefers.filter(obligatory).mean().alias("accuracy_obligatory"),
        ambiguous.sum().cast(pl.Int64).alias("n_ambiguous"),
        prefers.filter(ambiguous).mean().alias("transitive_rate_ambiguous"),
        pl.col("tie").sum().cast(pl.Int64).alias("n_ties"),
    ).sort(keys, nulls_last=False)


def _kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """sklearn's Cohen's kappa; None where it is undefined (both modes constant)."""
    if len(a) == 0 or (len(set(a.tolist())) < 2 and len(set(b.tolist())) < 2):
        return None
    return float(cohen_kappa_score(a, b))


def agreement_table(pairs: pl.DataFrame) -> pl.DataFrame:
    """Every ordered pair of modes (the full matrix, diagonal included), per dataset."""
    rows = []
    for (dataset,), group in sorted(pairs.partition_by("dataset", as_dict=True).items()):
        modes = group.select("mode", *MODE).unique().sort(MODE, nulls_last=False)["mode"]
        choices = {m: group.filter(pl.col("mode") == m).select("group_id", "prefers_transitive")
                   for m in modes}
        for mode_a, mode_b in itertools.product(modes, repeat=2):
            both = choices[mode_a].join(choices[mode_b], on="group_id", suffix="_b")
            a = both["prefers_transitive"].to_numpy().astype(int)
            b = both["prefers_transitive_b"].to_numpy().astype(int)
            rows.append({"dataset": dataset, "mode_a": mode_a, "mode_b": mode_b,
                         "n_pairs": both.height,
                         "agreement": float(np.mean(a == b)) if both.height else None,
                         "kappa": _kappa(a, b)})
    schema = {"dataset": pl.String, "mode_a": pl.String, "mode_b": pl.String,
              "n_pairs": pl.Int64, "agreement": pl.Float64, "kappa": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def japanese_tables(items: pl.DataFrame, scores: pl.DataFrame, folds: int, seed: int,
                    c: float, l1_ratio: float, top: int, max_iter: int,
                    jobs: int = 1) -> list[Table]:
    check_pairs(items)
    pairs = preferences(scored_items(items, scores, all_regions=True))
    if pairs.is_empty():
        raise InputError("--scores", None, "no Japanese pair with both sentences scored")
    return [
        Table("japanese_accuracy", accuracy_table(pairs),
              "Japanese transitivity: accuracy on obligatory pairs (transitive preferred) and "
              "transitive-preference rate on ambiguous pairs, per dataset and scoring mode."),
        Table("japanese_agreement", agreement_table(pairs),
              "Agreement between scoring modes: share of pairs on which two modes prefer the "
              "same verb, and Cohen's kappa."),
        Table("japanese_regression",
              regression_table(pairs, folds, seed, c, l1_ratio, top, max_iter, jobs),
              f"Elastic-net logistic regression (C={c}, l1_ratio={l1_ratio}) of each mode's "
              f"preference for the transitive verb on the context: {folds}-fold "
              f"cross-validated accuracy and the {top} largest coefficients."),
    ]
