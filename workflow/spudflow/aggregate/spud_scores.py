"""SPUD scoring (paper §4, Fig. 2, Tables 10–13): how much more perplexing nonce sentences are.

Per pair of an original sentence and one of its nonce versions, r = f(nonce) / f(orig), f the
(pseudo-)perplexity of one scoring function (a model and a scoring method). Summaries per language
and scoring function, Wilcoxon signed-rank tests between scoring functions on the same pairs, and
the pairs with the highest and lowest ratios.

Every nonce seed gives each original sentence one more nonce version. The paper reports one nonce
instance per sentence (§4.3), so statistics are computed per seed (one pair per original), and a
combined row (`nonce_seed` = `all`) first takes, per original sentence, the geometric mean of its
ratios over the seeds, exp(mean log r), so that each original is one observation: pooling the seeds
would count an original once per seed (odd quartile weights, and a Wilcoxon test that takes the
same sentence for independent pairs: p-values too small).
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
# `nonce_seed` of the rows that combine every seed (one observation per original sentence).
ALL_SEEDS = "all"
SEED_SET = [*PAIR_SET, "nonce_seed"]


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


def per_original(pairs: pl.DataFrame) -> pl.DataFrame:
    """One row per original sentence and scoring function: its nonce versions of every seed
    combined by geometric means (ppl_nonce = exp(mean log ppl_nonce), ratio = exp(mean log r)), with
    `nonce_seed` = ALL_SEEDS and `n_seeds` the versions combined."""
    return pairs.group_by([*PAIR_SET, *SCORER, "group_id"]).agg(
        pl.len().cast(pl.Int64).alias("n_seeds"),
        pl.col("ppl_orig").first(),
        pl.col("ppl_nonce").log().mean().exp(),
        pl.col("log_ratio").mean(),
    ).with_columns(pl.col("log_ratio").exp().alias("ratio"), pl.lit(ALL_SEEDS).alias("nonce_seed")
                   ).sort([*PAIR_SET, *SCORER, "group_id"])  # group_by's order is arbitrary


def _summary(frame: pl.DataFrame) -> pl.DataFrame:
    ratio = pl.col("ratio")
    return frame.group_by([*SEED_SET, *SCORER]).agg(
        pl.len().cast(pl.Int64).alias("n_pairs"),
        pl.col("n_seeds").max().cast(pl.Int64),
        ratio.quantile(0.25, interpolation="linear").alias("ratio_q1"),
        ratio.quantile(0.5, interpolation="linear").alias("ratio_median"),
        ratio.quantile(0.75, interpolation="linear").alias("ratio_q3"),
        ratio.mean().alias("ratio_mean"),
        (ratio > 1).mean().alias("share_ratio_gt1"),
        pl.col("ppl_orig").median().alias("ppl_orig_median"),
        pl.col("ppl_nonce").median().alias("ppl_nonce_median"),
    )


def ratio_summary(pairs: pl.DataFrame) -> pl.DataFrame:
    """Quartiles (linear interpolation, as numpy.quantile), mean and share of r > 1: per seed, and
    over every seed with one (geometric-mean) ratio per original sentence."""
    per_seed = _summary(pairs.with_columns(pl.lit(1, dtype=pl.Int64).alias("n_seeds")))
    combined = _summary(per_original(pairs))
    return pl.concat([per_seed, combined.select(per_seed.columns)]).select(
        *PAIR_SET, "nonce_seed", "n_seeds", *SCORER, "n_pairs", "ratio_q1", "ratio_median",
        "ratio_q3", "ratio_mean", "share_ratio_gt1", "ppl_orig_median", "ppl_nonce_median",
    ).sort([*PAIR_SET, *SCORER, _seed_order(), "nonce_seed"])


def _seed_order() -> pl.Expr:
    """Per-seed rows first, then the combined row."""
    return (pl.col("nonce_seed") == ALL_SEEDS).alias("combined")


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    """scipy's two-sided signed-rank test; undefined (None) without a non-zero difference."""
    if len(a) == 0 or np.all(a == b):
        return None, None
    result = wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)


def _paired(group: pl.DataFrame, scorer_a, scorer_b) -> pl.DataFrame:
    """The nonce sentences both scoring functions scored, with both log ratios."""
    a, b = of_scorer(group, scorer_a), of_scorer(group, scorer_b)
    return a.select("group_id", "nonce_seed", "nonce_item_id", "log_ratio").join(
        b.select("nonce_item_id", "log_ratio"), on="nonce_item_id", suffix="_b")


def _observations(both: pl.DataFrame, seed: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(r_a, r_b, seeds) of one seed, or for ALL_SEEDS one geometric-mean ratio per original
    sentence over the seeds both functions scored."""
    if seed == ALL_SEEDS:
        both = both.group_by("group_id").agg(
            pl.col("log_ratio", "log_ratio_b").mean(),
            pl.col("nonce_seed").n_unique().alias("n_seeds"))
        n_seeds = int(both["n_seeds"].max()) if both.height else 0
    else:
        both = both.filter(pl.col("nonce_seed") == seed)
        n_seeds = 1
    both = both.sort("group_id")
    return np.exp(both["log_ratio"].to_numpy()), np.exp(both["log_ratio_b"].to_numpy()), n_seeds


def wilcoxon_tests(pairs: pl.DataFrame) -> pl.DataFrame:
    """Every two scoring functions, on the pairs both scored, per dataset, nonce method and seed,
    and combined over the seeds (one observation per original sentence)."""
    rows = []
    groups = pairs.partition_by(PAIR_SET, as_dict=True, maintain_order=True)
    for key in progress(sorted(groups), desc="wilcoxon", unit="pair set"):
        group = groups[key]
        seeds = sorted(group["nonce_seed"].unique(), key=_seed_key)
        for scorer_a, scorer_b in itertools.combinations(scorers(group), 2):
            both = _paired(group, scorer_a, scorer_b)
            for seed in [*seeds, ALL_SEEDS]:
                ra, rb, n_seeds = _observations(both, seed)
                statistic, p_value = _wilcoxon(ra, rb)
                rows.append({
                    **dict(zip(PAIR_SET, key, strict=True)), "nonce_seed": seed,
                    "n_seeds": n_seeds,
                    "model_a": scorer_a[0], "method_a": scorer_a[1],
                    "model_b": scorer_b[0], "method_b": scorer_b[1],
                    "n_pairs": len(ra),
                    "median_ratio_difference": float(np.median(ra - rb)) if len(ra) else None,
                    "share_a_greater": float(np.mean(ra > rb)) if len(ra) else None,
                    "statistic": statistic, "p_value": p_value,
                })
    return pl.DataFrame(rows, schema=WILCOXON_SCHEMA)


def _seed_key(seed: str) -> tuple[int, str]:
    """Numeric seeds in numeric order (2 before 10)."""
    return (0, f"{int(seed):020d}") if seed.isdigit() else (1, seed)


WILCOXON_SCHEMA = {
    "dataset": pl.String, "language": pl.String, "nonce_method": pl.String,
    "nonce_seed": pl.String, "n_seeds": pl.Int64,
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


def check_groups(items: pl.DataFrame) -> None:
    """One original per group, and one nonce version per group, method and seed (else a seed's
    statistics would count an original twice)."""
    orig = items.filter(is_original())
    twice = orig.filter(pl.struct("dataset", "group_id").is_duplicated())
    if twice.height:
        raise InputError(twice["source_file"][0], None, f"group {twice['group_id'][0]!r} has "
                         "more than one original sentence (item without a nonce method)")
    nonce = items.filter(~is_original())
    unseeded = nonce.filter(pl.col("nonce_seed").is_null())
    if unseeded.height:
        raise InputError(unseeded["source_file"][0], None, f"nonce item "
                         f"{unseeded['item_id'][0]!r} has no seed")
    twice = nonce.filter(pl.struct("dataset", "group_id", "nonce_method", "nonce_seed")
                         .is_duplicated())
    if twice.height:
        row = twice.row(0, named=True)
        raise InputError(row["source_file"], None, f"group {row['group_id']!r} has more than one "
                         f"nonce sentence of method {row['nonce_method']!r} and seed "
                         f"{row['nonce_seed']!r}")


def spud_tables(items: pl.DataFrame, scores: pl.DataFrame, extremes: int) -> list[Table]:
    check_groups(items)
    pairs = pair_ratios(scored_items(items, scores))
    if pairs.is_empty():
        raise InputError("--scores", None, "no scored pair of an original and a nonce sentence")
    models = ", ".join(sorted({m for m, _ in scorers(pairs)}))
    return [
        Table("spud_ratio_summary", ratio_summary(pairs),
              "Perplexity ratio r = f(nonce) / f(orig) per sentence pair: quartiles, mean and "
              f"share with r > 1, per language, nonce method, nonce seed and scoring function "
              f"({models}); seed `{ALL_SEEDS}`: one geometric-mean ratio per original sentence "
              "over the seeds."),
        Table("spud_wilcoxon", wilcoxon_tests(pairs),
              "Wilcoxon signed-rank tests between the ratios of two scoring functions on the same "
              "sentence pairs (scipy.stats.wilcoxon, two-sided), per nonce seed and, as seed "
              f"`{ALL_SEEDS}`, on one geometric-mean ratio per original sentence over the seeds."),
        Table("spud_extremes", extreme_pairs(pairs, extremes),
              f"The {extremes} sentence pairs with the highest and the lowest ratio per scoring "
              "function."),
        Table("spud_ratios", pairs, "Every sentence pair's perplexities and ratio.",
              formats=DATA_FORMATS),
    ]
