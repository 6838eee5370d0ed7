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

Outliers (§4.4: the findings hold "whether outliers with r_f > 250 are taken into account or not"):
the summary and the tests are given twice, on all observations (`outliers` = `kept`) and with the
observations above a threshold removed (`removed`), the number removed in `n_dropped`. The
threshold applies to the observation the statistic uses: a pair's ratio on a seed's rows, an
original's geometric-mean ratio on `all` rows; in a test, an observation goes when either
function's ratio is above it, so that the test stays paired.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.coverage import unseen_fraction
from spudflow.aggregate.derived_once import derived_once
from spudflow.aggregate.group_status import unscored_rows
from spudflow.aggregate.inputs import (
    of_scoring_function,
    scored_items,
    scoring_functions,
    unusable_functions,
)
from spudflow.aggregate.outputs import Table
from spudflow.aggregate.resampling import quantile_bootstrap
from spudflow.aggregate.uncertainty import Uncertainty
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.scoring_methods import OUTLIER_CAUSAL, OUTLIER_MASKED, outlier_methods
from spudflow.core.table_artifacts import STATUS_OK, TABLES

log = get_logger(__name__)

SCORING_FUNCTION = ["model", "method"]
PAIR_SET = ["dataset", "language", "nonce_method"]
# `nonce_seed` of the rows that combine every seed (one observation per original sentence).
ALL_SEEDS = columns.SPUD_ALL_SEEDS
SEED_SET = [*PAIR_SET, "nonce_seed"]
# `outliers` of the rows on all observations and of those with the outliers removed.
KEPT, REMOVED = "kept", "removed"


def is_original() -> pl.Expr:
    """Original sentences carry the method columns.SPUD_ORIGINAL_METHOD (items.spud)."""
    return pl.col("nonce_method") == columns.SPUD_ORIGINAL_METHOD


@derived_once
def pair_ratios(scored: pl.DataFrame) -> pl.DataFrame:
    """One row per (nonce sentence, scoring function): both perplexities and their ratio."""
    scored = scored.filter(pl.col("ppl").is_not_null())
    orig = scored.filter(is_original()).select(
        "dataset", "group_id", *SCORING_FUNCTION, pl.col("item_id").alias("orig_item_id"),
        pl.col("sentence").alias("orig_sentence"), pl.col("ppl").alias("ppl_orig"))
    nonce = scored.filter(~is_original()).select(
        "dataset", "language", "group_id", *SCORING_FUNCTION,
        pl.col("nonce_method").cast(pl.String),
        pl.col("nonce_seed").cast(pl.String), pl.col("item_id").alias("nonce_item_id"),
        pl.col("sentence").alias("nonce_sentence"), pl.col("ppl").alias("ppl_nonce"))
    pairs = nonce.join(orig, on=["dataset", "group_id", *SCORING_FUNCTION], how="inner")
    pairs = pairs.with_columns((pl.col("ppl_nonce") / pl.col("ppl_orig")).alias("ratio"))
    # two infinite perplexities (exp overflowed) have no ratio: such pairs would turn every
    # quantile and test of their group into NaN (a NaN one is null already: scored_items)
    undefined = pairs.filter(pl.col("ratio").is_nan())
    keys = ["dataset", *SCORING_FUNCTION]
    for dataset, model, method, n in undefined.group_by(keys).len().sort(keys).iter_rows():
        log.warning("%s, %s/%s: %d pairs left out: their perplexity ratio is NaN", dataset,
                    model, method, n)
    pairs = pairs.filter(pl.col("ratio").is_not_nan())
    pairs = pairs.with_columns(pl.col("ratio").log().alias("log_ratio"))
    return pairs.select(
        *PAIR_SET, "nonce_seed", *SCORING_FUNCTION, "group_id", "orig_item_id", "nonce_item_id",
        "ppl_orig", "ppl_nonce", "ratio", "log_ratio", "orig_sentence", "nonce_sentence",
    ).sort([*PAIR_SET, *SCORING_FUNCTION, "nonce_item_id"])


def per_original(pairs: pl.DataFrame) -> pl.DataFrame:
    """One row per original sentence and scoring function: its nonce versions of every seed
    combined by geometric means (ppl_nonce = exp(mean log ppl_nonce), ratio = exp(mean log r)), with
    `nonce_seed` = ALL_SEEDS and `n_seeds` the versions combined."""
    return pairs.group_by([*PAIR_SET, *SCORING_FUNCTION, "group_id"]).agg(
        pl.len().cast(pl.Int64).alias("n_seeds"),
        pl.col("ppl_orig").first(),
        pl.col("ppl_nonce").log().mean().exp(),
        pl.col("log_ratio").mean(),
    ).with_columns(pl.col("log_ratio").exp().alias("ratio"), pl.lit(ALL_SEEDS).alias("nonce_seed")
                   ).sort([*PAIR_SET, *SCORING_FUNCTION, "group_id"])  # group_by: any order


def _summary(frame: pl.DataFrame) -> pl.DataFrame:
    ratio = pl.col("ratio")
    return frame.group_by([*SEED_SET, *SCORING_FUNCTION]).agg(
        pl.len().cast(pl.Int64).alias("n_pairs"),
        pl.col("n_seeds").max().cast(pl.Int64),
        ratio.quantile(0.25, interpolation="linear").alias("ratio_q1"),
        ratio.quantile(0.5, interpolation="linear").alias("ratio_median"),
        ratio.quantile(0.75, interpolation="linear").alias("ratio_q3"),
        ratio.mean().alias("ratio_mean"),
        (ratio > 1).mean().alias("fraction_ratio_gt1"),
        (ratio == 1).mean().alias("tie_fraction"),
        pl.col("ppl_orig").median().alias("ppl_orig_median"),
        pl.col("ppl_nonce").median().alias("ppl_nonce_median"),
    )


def _summary_without_outliers(frame: pl.DataFrame, threshold: float) -> pl.DataFrame:
    """The summary of the observations with r <= threshold; a group whose every observation is
    above it keeps its row (n_pairs 0, statistics null) rather than vanishing."""
    keys = [*SEED_SET, *SCORING_FUNCTION]
    dropped = frame.group_by(keys).agg(
        (pl.col("ratio") > threshold).sum().cast(pl.Int64).alias("n_dropped"),
        pl.col("n_seeds").max().cast(pl.Int64))
    kept = _summary(frame.filter(pl.col("ratio") <= threshold)).drop("n_seeds")
    return dropped.join(kept, on=keys, how="left").with_columns(
        pl.col("n_pairs").fill_null(0), pl.lit(REMOVED).alias("outliers"))


def unseen_fractions(pairs: pl.DataFrame, scored: pl.DataFrame) -> pl.DataFrame:
    """Per seed (and `all` seeds) and scoring function: the fraction of the words of its pairs'
    sentences (each original once, each nonce version) that the model never saw in training
    (coverage.py), outliers included."""
    keys = [*SEED_SET, *SCORING_FUNCTION]
    sentences = pl.concat([pairs.select(*keys, pl.col(c).alias("item_id"))
                           for c in ("orig_item_id", "nonce_item_id")])
    sentences = pl.concat([sentences, sentences.with_columns(pl.lit(ALL_SEEDS)
                                                             .alias("nonce_seed"))]).unique()
    counts = scored.select("dataset", "item_id", *SCORING_FUNCTION, "n_unseen", "n_words")
    return sentences.join(counts, on=["dataset", "item_id", *SCORING_FUNCTION]).group_by(
        keys).agg(unseen_fraction().alias("unseen_fraction"))


NO_INTERVALS = Uncertainty(resamples=0)
QUARTILES = {"ratio_q1": 0.25, "ratio_median": 0.5, "ratio_q3": 0.75}
QUARTILE_INTERVALS = [f"{q}_ci_{end}" for q in QUARTILES for end in ("low", "high")]


def quartile_intervals(frame: pl.DataFrame, threshold: float,
                       settings: Uncertainty) -> pl.DataFrame:
    """Per summary row of `frame` (one observation per original sentence: a seed's pair, or the
    geometric-mean ratio over the seeds): the bootstrap intervals of the three quartiles, the
    original sentences resampled (each with all its nonce versions, which its one observation
    combines), and their method; on all observations (`kept`) and on those <= threshold."""
    keys = [*SEED_SET, *SCORING_FUNCTION]
    rows = []
    # the intervals of equal observations, computed once: with one nonce seed, a seed's rows
    # and `all`'s hold the same ratios
    computed: dict[bytes, tuple] = {}
    for outliers, part in ((KEPT, frame), (REMOVED, frame.filter(pl.col("ratio") <= threshold))):
        groups = part.partition_by(keys, as_dict=True)
        for key in sorted(groups):
            # sentence order fixes which observation an index draws: the same every run
            ratios = groups[key].sort("group_id")["ratio"].to_numpy()
            row = {**dict(zip(keys, key, strict=True)), "outliers": outliers}
            if settings.resamples and len(ratios):
                observations = np.ascontiguousarray(ratios, dtype=np.float64).tobytes()
                if observations not in computed:
                    computed[observations] = quantile_bootstrap(
                        ratios, list(QUARTILES.values()), settings.level, settings.resamples,
                        settings.seed, one_method=True)
                low, high, method = computed[observations]
                for k, q in enumerate(QUARTILES):
                    row[f"{q}_ci_low"], row[f"{q}_ci_high"] = float(low[k]), float(high[k])
                row["ratio_interval"] = method[0]
            rows.append(row)
    schema = {**{k: pl.String for k in [*keys, "outliers"]},
              **{c: pl.Float64 for c in QUARTILE_INTERVALS}, "ratio_interval": pl.String}
    return pl.DataFrame(rows, schema=schema).with_columns(pl.col(QUARTILE_INTERVALS).fill_nan(None))


def ratio_summary(pairs: pl.DataFrame, threshold: float,
                  unseen: pl.DataFrame | None = None,
                  settings: Uncertainty = NO_INTERVALS) -> pl.DataFrame:
    """Quartiles (linear interpolation, as numpy.quantile), mean and fraction of r > 1 and of
    r = 1 (tied): per seed, and over every seed with one (geometric-mean) ratio per original
    sentence; each on all observations and without those with r > threshold. `unseen`
    (unseen_fractions) gives each row its unseen_fraction (null without); `settings` the
    quartiles' intervals (quartile_intervals; null with resamples 0)."""
    columns = [*PAIR_SET, "nonce_seed", "n_seeds", "outliers", "outlier_threshold", "n_dropped",
               *SCORING_FUNCTION, "status", "reason", "n_pairs", "ratio_q1", "ratio_median",
               "ratio_q3", *QUARTILE_INTERVALS, "ratio_interval", "ratio_mean",
               "fraction_ratio_gt1", "tie_fraction", "unseen_fraction", "ppl_orig_median",
               "ppl_nonce_median"]
    if unseen is None:
        unseen = pl.DataFrame(schema={**{k: pl.String for k in [*SEED_SET, *SCORING_FUNCTION]},
                                      "unseen_fraction": pl.Float64})
    parts = []
    for frame in (pairs.with_columns(pl.lit(1, dtype=pl.Int64).alias("n_seeds")),
                  per_original(pairs)):
        every = _summary(frame).with_columns(pl.lit(KEPT).alias("outliers"),
                                             pl.lit(0, dtype=pl.Int64).alias("n_dropped"))
        intervals = quartile_intervals(frame, threshold, settings)
        for part in (every, _summary_without_outliers(frame, threshold)):
            part = part.join(unseen, on=[*SEED_SET, *SCORING_FUNCTION], how="left")
            part = part.join(intervals, on=[*SEED_SET, *SCORING_FUNCTION, "outliers"], how="left")
            parts.append(part.with_columns(
                pl.lit(float(threshold)).alias("outlier_threshold"),
                pl.lit(STATUS_OK).alias("status"), pl.lit(None, pl.String).alias("reason"))
                .select(columns))
    return summary_order(pl.concat(parts))


def summary_order(summary: pl.DataFrame) -> pl.DataFrame:
    return summary.sort([*PAIR_SET, *SCORING_FUNCTION, _seed_order(), _seed_number(),
                         "nonce_seed", _outliers_order()])


def unscored_summary(items: pl.DataFrame, unusable: pl.DataFrame,
                     threshold: float) -> pl.DataFrame:
    """spud_ratio_summary's rows of the scoring functions without a usable score: per dataset,
    language and nonce method of the items, seed `all`, outliers kept, no pairs, the reason."""
    pair_sets = items.filter(~is_original()).select(*PAIR_SET).unique().sort(PAIR_SET)
    return unscored_rows("spud_ratio_summary", unusable, pair_sets.to_dicts(),
                         nonce_seed=ALL_SEEDS, n_seeds=0, outliers=KEPT,
                         outlier_threshold=float(threshold), n_dropped=0, n_pairs=0)


def _outliers_order() -> pl.Expr:
    """All observations first, then those without outliers."""
    return (pl.col("outliers") == REMOVED).alias("trimmed")


def _seed_order() -> pl.Expr:
    """Per-seed rows first, then the combined row."""
    return (pl.col("nonce_seed") == ALL_SEEDS).alias("combined")


def _seed_number() -> pl.Expr:
    """Numeric seeds in numeric order (2 before 10), as seed_key orders spud_wilcoxon's."""
    return pl.col("nonce_seed").cast(pl.Int64, strict=False).alias("seed_number")


# scipy.stats.wilcoxon (method="auto") takes the exact permutation test, all 2**n sign flips,
# for n <= 13 differences with ties or zeros. It runs its statistic once per flip in Python (a
# second each, minutes for a table of small samples); _permutation_p runs the same test on all
# flips at once, with the same p-value.
PERMUTATION_MAX_N = 13


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    """scipy's two-sided signed-rank test; undefined (None) without a non-zero difference."""
    # Imported here: the figure needs per_original only, and scipy.stats takes seconds to load.
    from scipy.stats import wilcoxon

    if len(a) == 0 or np.all(a == b):
        return None, None
    d = a - b
    nonzero = np.abs(d[d != 0])
    if len(d) <= PERMUTATION_MAX_N and (len(nonzero) < len(d)
                                        or len(np.unique(nonzero)) < len(nonzero)):
        statistic = wilcoxon(a, b, method="asymptotic").statistic  # the same for every method
        return float(statistic), _permutation_p(d)
    result = wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)


def _signed_rank_sum(d: np.ndarray, axis: int = -1) -> np.ndarray:
    """R+, the sum of the ranks of |d| where d > 0 (zeros ranked last and left out, as scipy's
    zero_method="wilcox"), along `axis`: every sign flip at once."""
    from scipy.stats import rankdata

    d = np.moveaxis(d, axis, -1)
    ranks = rankdata(np.where(d == 0, np.inf, np.abs(d)), axis=-1)
    return np.sum((d > 0) * ranks, axis=-1)


def _permutation_p(d: np.ndarray) -> float:
    from scipy.stats import permutation_test

    return float(permutation_test((d,), _signed_rank_sum, permutation_type="samples",
                                  vectorized=True, alternative="two-sided").pvalue)


def _paired(group: pl.DataFrame, function_a, function_b) -> pl.DataFrame:
    """The nonce sentences both scoring functions scored, with both log ratios."""
    a, b = of_scoring_function(group, function_a), of_scoring_function(group, function_b)
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


def _test_row(ra: np.ndarray, rb: np.ndarray) -> dict:
    statistic, p_value = _wilcoxon(ra, rb)
    return {
        "n_pairs": len(ra),
        "median_ratio_difference": float(np.median(ra - rb)) if len(ra) else None,
        "fraction_a_greater": float(np.mean(ra > rb)) if len(ra) else None,
        "statistic": statistic, "p_value": p_value,
    }


def wilcoxon_tests(pairs: pl.DataFrame, threshold: float) -> pl.DataFrame:
    """Every two scoring functions, on the pairs both scored, per dataset, nonce method and seed,
    and combined over the seeds (one observation per original sentence); each on all observations
    and without those where either ratio is above the threshold."""
    rows = []
    groups = pairs.partition_by(PAIR_SET, as_dict=True, maintain_order=True)
    for key in progress(sorted(groups), desc="wilcoxon", unit="pair set"):
        group = groups[key]
        seeds = sorted(group["nonce_seed"].unique(), key=seed_key)
        for function_a, function_b in itertools.combinations(scoring_functions(group), 2):
            both = _paired(group, function_a, function_b)
            for seed in [*seeds, ALL_SEEDS]:
                ra, rb, n_seeds = _observations(both, seed)
                inside = (ra <= threshold) & (rb <= threshold)
                for outliers, keep in ((KEPT, np.ones(len(ra), dtype=bool)), (REMOVED, inside)):
                    rows.append({
                        **dict(zip(PAIR_SET, key, strict=True)), "nonce_seed": seed,
                        "n_seeds": n_seeds, "outliers": outliers,
                        "outlier_threshold": float(threshold),
                        "n_dropped": int((~keep).sum()),
                        "model_a": function_a[0], "method_a": function_a[1],
                        "model_b": function_b[0], "method_b": function_b[1],
                        **_test_row(ra[keep], rb[keep]),
                    })
    return pl.DataFrame(rows, schema=WILCOXON_SCHEMA)


def seed_key(seed: str) -> tuple[int, str]:
    """Numeric seeds in numeric order (2 before 10)."""
    return (0, f"{int(seed):020d}") if seed.isdigit() else (1, seed)


WILCOXON_SCHEMA = TABLES["spud_wilcoxon"].polars_schema()


def extreme_pairs(pairs: pl.DataFrame, k: int) -> pl.DataFrame:
    """The k highest- and k lowest-ratio pairs per scoring function, with both sentences."""
    keys = [*PAIR_SET, *SCORING_FUNCTION]
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


# Tables 12–13: r_PPL of a causal model beside r_PPPL and r_PPPL_l2r of a masked model (the
# methods whose entries in core/scoring_methods.py give them that role).
(CAUSAL_METHOD,) = outlier_methods(OUTLIER_CAUSAL)
MASKED_METHODS = outlier_methods(OUTLIER_MASKED)
R_CAUSAL = f"r_{CAUSAL_METHOD}"
OUTLIER_PAIR = [*SEED_SET, "group_id", "nonce_item_id"]


def outlier_pairs(pairs: pl.DataFrame, above: float, below: float) -> pl.DataFrame:
    """The pairs with r_PPL > above (`extreme` = `above`, highest first) or r_PPL < below
    (`below`, lowest first), per causal model (method `ppl`) and masked model (a model scored with
    `pppl` or `pppl_l2r` on the same dataset), with the masked model's two ratios of the same pair
    beside it: null where it did not score the pair (its `sample:`) or was not run with the
    method; `mlm_model` null where no masked model scored the dataset."""
    ppl = pairs.filter(pl.col("method") == CAUSAL_METHOD).select(
        *OUTLIER_PAIR, pl.col("model").alias("ppl_model"), "orig_sentence", "nonce_sentence",
        pl.col("ratio").alias(R_CAUSAL))
    r_ppl = pl.col(R_CAUSAL)
    ppl = ppl.with_columns(
        pl.when(r_ppl > above).then(pl.lit("above")).when(r_ppl < below).then(pl.lit("below"))
        .alias("extreme"),
        pl.when(r_ppl > above).then(pl.lit(float(above))).otherwise(pl.lit(float(below)))
        .alias("threshold"),
    ).filter(pl.col("extreme").is_not_null())
    masked = pairs.filter(pl.col("method").is_in(MASKED_METHODS))
    rows = ppl.join(masked.select(*PAIR_SET, pl.col("model").alias("mlm_model")).unique(),
                    on=PAIR_SET, how="left")
    for method in MASKED_METHODS:
        ratios = masked.filter(pl.col("method") == method).select(
            *OUTLIER_PAIR, pl.col("model").alias("mlm_model"), pl.col("ratio").alias(f"r_{method}"))
        rows = rows.join(ratios, on=[*OUTLIER_PAIR, "mlm_model"], how="left")
    listing = [*PAIR_SET, "ppl_model", "mlm_model", "extreme"]
    # highest r_PPL first above the upper threshold, lowest first below the lower one
    order = pl.when(pl.col("extreme") == "above").then(-r_ppl).otherwise(r_ppl)
    rows = rows.sort([*listing, order, "nonce_item_id"], nulls_last=True)
    return rows.with_columns(
        pl.int_range(1, pl.len() + 1).over(listing).cast(pl.Int64).alias("rank"),
    ).select(*listing, "threshold", "rank", "nonce_seed", "group_id", "orig_sentence",
             "nonce_sentence", *(f"r_{m}" for m in MASKED_METHODS), R_CAUSAL)


@derived_once
def check_groups(items: pl.DataFrame) -> None:
    """One original per group, and one nonce version per group, method and seed (else a seed's
    statistics would count an original twice)."""
    orig = items.filter(is_original())
    twice = orig.filter(pl.struct("dataset", "group_id").is_duplicated())
    if twice.height:
        raise InputError(twice["source_file"][0], None, f"group {twice['group_id'][0]!r} has "
                         "more than one original sentence (method "
                         f"{columns.SPUD_ORIGINAL_METHOD!r})")
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


def spud_tables(items: pl.DataFrame, scores: pl.DataFrame, extremes: int,
                outlier_threshold: float, outliers_above: float,
                outliers_below: float,
                settings: Uncertainty = NO_INTERVALS) -> list[Table]:
    check_groups(items)
    unusable = unusable_functions(scores)
    scored = scored_items(items, scores)
    pairs = pair_ratios(scored)
    if pairs.is_empty() and unusable.is_empty():
        raise InputError("--scores", None, "no scored pair of an original and a nonce sentence")
    models = ", ".join(sorted({m for m, _ in scoring_functions(pairs)}
                              | set(unusable["model"])))
    summary = ratio_summary(pairs, outlier_threshold, unseen_fractions(pairs, scored), settings)
    if not unusable.is_empty():
        summary = summary_order(pl.concat([summary, unscored_summary(
            items.with_columns(pl.col("nonce_method").cast(pl.String)), unusable,
            outlier_threshold)]))
    # what the registry's captions show
    captions = dict(models=models, all_seeds=ALL_SEEDS, outlier_threshold=outlier_threshold,
                    extremes=extremes, outliers_above=outliers_above,
                    outliers_below=outliers_below)
    return [
        Table("spud_ratio_summary", summary, captions),
        Table("spud_wilcoxon", wilcoxon_tests(pairs, outlier_threshold), captions),
        Table("spud_extremes", extreme_pairs(pairs, extremes), captions),
        Table("spud_outliers", outlier_pairs(pairs, outliers_above, outliers_below), captions),
        Table("spud_ratios", pairs),
    ]
