"""SPUD scoring (paper §4, Fig. 2, Tables 10–13): how much more perplexing nonce sentences are.

Per pair of an original sentence and one of its nonce versions, r = f(nonce) / f(orig), f the
(pseudo-)perplexity of one scoring function (a model and a scoring method). Summaries per language
and scoring function, Wilcoxon signed-rank tests between scoring functions on the same pairs, and
the pairs with the highest and lowest ratios.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
from scipy.stats import wilcoxon

from spudflow.aggregate import columns
from spudflow.aggregate.inputs import of_scorer, scored_items, scorers
from spudflow.aggregate.outputs import DATA_FORMATS, Table
from spudflow.core.errors import InputError
from spudflow.core.progress import progress

SCORER = ["model", "method"]
PAIR_SET = ["dataset", "language", "nonce_method"]


def is_original() -> pl.Expr:
    """Original sentences carry no nonce method (or one of columns.SPUD_ORIGINAL_METHODS)."""
    method = pl.col("nonce_method").cast(pl.String)
    return method.is_null() | method.is_in(list(columns.SPUD_ORIGINAL_METHODS))


def pair_ratios(scored: pl.DataFrame) -> pl.DataFrame:
    """One row per (nonce sentence, scoring function): both perplexities and their ratio."""
    scored = scored.filter(pl.col("ppl").is_not_null())
    orig = scored.filter(is_original()).select(
        "dataset", "group_id", *SCORER, pl.col("item_id").alias("orig_item_id"),
        pl.col("sentence").alias("orig_sentence"), pl.col("ppl").alias("ppl_orig"))
    nonce = scored.filter(~is_original()).select(
        "dataset", "language", "group_id", *SCORER, pl.col("nonce_method").cast(pl.String),
        pl.col("nonce_seed").cast(pl.String), pl.col("item_id").alias("nonce_item_id"),
        pl.col("sentence").alias("nonce_sentence"), pl.col("ppl").alias("ppl_nonce"))
    pairs = nonce.join(orig, on=["dataset", "group_id", *SCORER], how="inner")
    pairs = pairs.with_columns((pl.col("ppl_nonce") / pl.col("ppl_orig")).alias("ratio"))
    pairs = pairs.with_columns(pl.col("ratio").log().alias("log_ratio"))
    return pairs.select(
        *PAIR_SET, "nonce_seed", *SCORER, "group_id", "orig_item_id", "nonce_item_id",
        "ppl_orig", "ppl_nonce", "ratio", "log_ratio", "orig_sentence", "nonce_sentence",
    ).sort([*PAIR_SET, *SCORER, "nonce_item_id"])


def ratio_summary(pairs: pl.DataFrame) -> pl.DataFrame:
    """Quartiles (linear interpolation, as numpy.quantile), mean and share of r > 1."""
    ratio = pl.col("ratio")
    return pairs.group_by([*PAIR_SET, *SCORER]).agg(
        pl.len().alias("n_pairs"),
        ratio.quantile(0.25, interpolation="linear").alias("ratio_q1"),
        ratio.quantile(0.5, interpolation="linear").alias("ratio_median"),
        ratio.quantile(0.75, interpolation="linear").alias("ratio_q3"),
        ratio.mean().alias("ratio_mean"),
        (ratio > 1).mean().alias("share_ratio_gt1"),
        pl.col("ppl_orig").median().alias("ppl_orig_median"),
        pl.col("ppl_nonce").median().alias("ppl_nonce_median"),
    ).with_columns(pl.col("n_pairs").cast(pl.Int64)).sort([*PAIR_SET, *SCORER])


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    """scipy's two-sided signed-rank test; undefined (None) without a non-zero difference."""
    if len(a) == 0 or np.all(a == b):
        return None, None
    result = wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)


def wilcoxon_tests(pairs: pl.DataFrame) -> pl.DataFrame:
    """Every two scoring functions, on the pairs both scored, per dataset and nonce method."""
    rows = []
    groups = pairs.partition_by(PAIR_SET, as_dict=True, maintain_order=True)
    for key in progress(sorted(groups), desc="wilcoxon", unit="pair set"):
        group = groups[key]
        for scorer_a, scorer_b in itertools.combinations(scorers(group), 2):
            a, b = of_scorer(group, scorer_a), of_scorer(group, scorer_b)
            both = a.select("nonce_item_id", "ratio").join(
                b.select("nonce_item_id", "ratio"), on="nonce_item_id", suffix="_b"
            ).sort("nonce_item_id")
            ra, rb = both["ratio"].to_numpy(), both["ratio_b"].to_numpy()
            statistic, p_value = _wilcoxon(ra, rb)
            rows.append({
                **dict(zip(PAIR_SET, key, strict=True)),
                "model_a": scorer_a[0], "method_a": scorer_a[1],
                "model_b": scorer_b[0], "method_b": scorer_b[1],
                "n_pairs": both.height,
                "median_ratio_difference": float(np.median(ra - rb)) if both.height else None,
                "share_a_greater": float(np.mean(ra > rb)) if both.height else None,
                "statistic": statistic, "p_value": p_value,
            })
    return pl.DataFrame(rows, schema=WILCOXON_SCHEMA)


WILCOXON_SCHEMA = {
    "dataset": pl.String, "language": pl.String, "nonce_method": pl.String,
    "model_a": pl.String, "method_a": pl.String, "model_b": pl.String, "method_b": pl.String,
    "n_pairs": pl.Int64, "median_ratio_difference": pl.Float64, "share_a_greater": pl.Float64,
    "statistic": pl.Float64, "p_value": pl.Float64,
}


def extreme_pairs(pairs: pl.DataFrame, k: int) -> pl.DataFrame:
    """The k highest- and k lowest-ratio pairs per scoring function, with both sentences."""
    keys = [*PAIR_SET, *SCORER]
    parts = []
    for extreme, descending in (("highest", True), ("lowest", False)):
        top = pairs.sort(["ratio", "nonce_item_id"], descending=[descending, False])
        top = top.group_by(keys, maintain_order=True).head(k)
        parts.append(top.with_columns(
            pl.lit(extreme).alias("extreme"),
            pl.int_range(1, pl.len() + 1).over(keys).cast(pl.Int64).alias("rank")))
    return pl.concat(parts).select(
        *keys, "extreme", "rank", "nonce_seed", "group_id", "ratio", "ppl_orig", "ppl_nonce",
        "orig_sentence", "nonce_sentence",
    ).sort([*keys, "extreme", "rank"])


def check_one_original(items: pl.DataFrame) -> None:
    orig = items.filter(is_original())
    twice = orig.filter(pl.struct("dataset", "group_id").is_duplicated())
    if twice.height:
        raise InputError(twice["source_file"][0], None, f"group {twice['group_id'][0]!r} has "
                         "more than one original sentence (item without a nonce method)")


def spud_tables(items: pl.DataFrame, scores: pl.DataFrame, extremes: int) -> list[Table]:
    check_one_original(items)
    pairs = pair_ratios(scored_items(items, scores))
    if pairs.is_empty():
        raise InputError("--scores", None, "no scored pair of an original and a nonce sentence")
    models = ", ".join(sorted({m for m, _ in scorers(pairs)}))
    return [
        Table("spud_ratio_summary", ratio_summary(pairs),
              "Perplexity ratio r = f(nonce) / f(orig) per sentence pair: quartiles, mean and "
              f"share with r > 1, per language, nonce method and scoring function ({models})."),
        Table("spud_wilcoxon", wilcoxon_tests(pairs),
              "Wilcoxon signed-rank tests between the ratios of two scoring functions on the same "
              "sentence pairs (scipy.stats.wilcoxon, two-sided)."),
        Table("spud_extremes", extreme_pairs(pairs, extremes),
              f"The {extremes} sentence pairs with the highest and the lowest ratio per scoring "
              "function."),
        Table("spud_ratios", pairs, "Every sentence pair's perplexities and ratio.",
              formats=DATA_FORMATS),
    ]
