"""The `*_comparison` tables: every pair of scoring functions (model x method) that scored the
same items, per family, compared on the family's headline figure.

A row: the group (dataset, ...), the two functions (`_a` and `_b`, `a` the first in sorted
order), the statistic compared, the items both scored (`n_items`) and those only one side scored
(`n_only_a`, `n_only_b`: left out of both figures), each side's figure on the shared items, the
difference a - b with its paired interval, the test that gives its p-value (`test`) and Holm's
adjustment of the p-values of the whole table (`p_holm`). The tests (comparison.py, delong.py):

- a paired accuracy: exact McNemar on the discordant items (`mcnemar_exact`);
- a pooled ROC AUC: DeLong's paired test (`delong`);
- a mean (a paradigm mean of accuracies, a mean of template AUCs) or an MCC: a paired
  permutation test, the two functions' values swapped within each unit (`permutation`;
  `permutation_exact` when every swap pattern was enumerated);
- a median ratio: the paired bootstrap's own p (`paired_bootstrap`, comparison.
  bootstrap_p_value), consistent with the interval: swapping the two functions' ratios tests
  whether their distributions are the same, and rejects for a difference of shape (one
  function's ratios piled at exactly 1, the other's spread about it) with equal medians;
- none with `resamples: 0` (`p_value` null, no interval), the closed forms stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.comparison import (
    align_items,
    holm,
    paired_accuracy,
    paired_bootstrap,
    paired_permutation_test,
    resample_sides,
    weighted_mcc,
    weighted_mean,
    weighted_quantile,
)
from spudflow.aggregate.delong import delong_paired
from spudflow.aggregate.resampling import block_size
from spudflow.aggregate.uncertainty import Uncertainty
from spudflow.core.logs import get_logger

log = get_logger(__name__)

MCNEMAR, DELONG, PERMUTATION, PERMUTATION_EXACT, BOOTSTRAP = (
    "mcnemar_exact", "delong", "permutation", "permutation_exact", "paired_bootstrap")
FUNCTION = ("model", "method")  # what names a scoring function


def _pairs_of(functions) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    return list(combinations(sorted(set(functions)), 2))


def _row(group: dict, a, b, statistic: str, n: int, only_a: int, only_b: int, value_a,
         value_b, difference, low, high, interval_method, test: str, p,
         sides: Sequence[str] = FUNCTION, units: int | None = None) -> dict:
    """One row; `units`: what the bootstrap resampled (default the n items): with fewer than
    2, no interval (one unit's resamples are all the estimate), as the headline tables'."""
    def real(x):
        return None if x is None or not np.isfinite(x) else float(x)
    if (n if units is None else units) < 2 and interval_method != DELONG:
        low = high = interval_method = None
    return {**group, **{f"{c}_a": v for c, v in zip(sides, a, strict=True)},
            **{f"{c}_b": v for c, v in zip(sides, b, strict=True)},
            "statistic": statistic, "n_items": n, "n_only_a": only_a, "n_only_b": only_b,
            "value_a": real(value_a), "value_b": real(value_b), "difference": real(difference),
            "difference_ci_low": real(low), "difference_ci_high": real(high),
            "interval_method": interval_method, "test": test, "p_value": real(p)}


def _frame(rows: list[dict], group: Sequence[str], sides: dict | None = None) -> pl.DataFrame:
    """The table's rows sorted by group and sides, Holm's adjustment added; `sides`: the side
    columns' types (a scoring function's model and method by default)."""
    sides = sides or {c: pl.String for c in FUNCTION}
    schema = {**{g: pl.String for g in group}, **{f"{c}_a": t for c, t in sides.items()},
              **{f"{c}_b": t for c, t in sides.items()},
              "statistic": pl.String, "n_items": pl.Int64, "n_only_a": pl.Int64,
              "n_only_b": pl.Int64, **{c: pl.Float64 for c in (
                  "value_a", "value_b", "difference", "difference_ci_low",
                  "difference_ci_high")},
              "interval_method": pl.String, "test": pl.String, "p_value": pl.Float64}
    order = [*group, *(f"{c}_a" for c in sides), *(f"{c}_b" for c in sides), "statistic"]
    frame = pl.DataFrame(rows, schema=schema).sort(order, nulls_last=False)
    return frame.with_columns(pl.Series("p_holm", holm(frame["p_value"].to_list()),
                                        dtype=pl.Float64))


def _permutation(statistic, first, second, settings: Uncertainty, clusters=None):
    """(test, p) of a paired permutation test; (PERMUTATION, None) with resamples 0."""
    if settings.resamples == 0 or np.shape(first)[-1] == 0:
        return PERMUTATION, None
    result = paired_permutation_test(statistic, first, second, settings.resamples,
                                     settings.seed, clusters=clusters)
    return (PERMUTATION_EXACT if result.exact else PERMUTATION), result.p_value


def sign_flip_test(contributions, resamples: int, seed: int) -> tuple[str, float | None]:
    """(test, p) of paired_permutation_test for a statistic linear in each unit's values, as a
    mean of means is: the difference of the statistic is sum_i c_i (a_i - b_i), `contributions`
    c_i (a_i - b_i), and swapping unit i flips its sign. Units contributing 0 (concordant
    pairs) leave every swap's value unchanged and are left out; enumerated (2 ** units <=
    resamples), the same p. Drawn, the null value is sum over the distinct |c| of
    |c| (2 Binomial(m, 1/2) - m), m the units of that size: the distribution of random sign
    flips (each unit's signed share is +-|c| with probability 1/2), at the cost of a few
    binomial draws per resample whatever the number of pairs."""
    c = np.asarray(contributions, dtype=np.float64)
    c = c[c != 0]
    observed = float(np.sum(c))
    if resamples == 0:
        return PERMUTATION, None
    n = len(c)
    exact = n < 63 and 2 ** n <= resamples
    if exact:
        patterns = (np.arange(2 ** n)[:, None] >> np.arange(n - 1, -1, -1)) & 1
        null = np.where(patterns == 1, -c, c).sum(axis=-1) if n else np.zeros(1)
    else:
        sizes, counts = np.unique(np.abs(c), return_counts=True)
        draws = np.random.default_rng(seed).binomial(counts, 0.5, size=(resamples, len(counts)))
        null = (2.0 * draws - counts) @ sizes
    return permutation_p(null, observed, exact)


def permutation_p(null: np.ndarray, observed: float, exact: bool) -> tuple[str, float]:
    """(test, two-sided p) of `observed` against its permutation distribution `null`, as
    scipy.stats.permutation_test computes it: equal within its tolerance counts as reached, and
    a sampled (not exact) distribution counts the observed arrangement once more."""
    n_null = len(null)
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)  # scipy's tolerance for equal values
    adjustment = 0 if exact else 1
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (n_null + adjustment)
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (n_null + adjustment)
    return ((PERMUTATION_EXACT if exact else PERMUTATION),
            float(np.clip(2 * min(less, greater), 0, 1)))


def _functions(frame: pl.DataFrame) -> dict:
    return frame.partition_by(["model", "method"], as_dict=True, maintain_order=True)


# ---- BLiMP -------------------------------------------------------------------------------------

def stratum_mean(strata) -> callable:
    """The unweighted mean over strata of the weighted mean within each (a paradigm mean)."""
    _, inverse = np.unique(np.asarray(strata), return_inverse=True)
    indicator = (inverse[None, :] == np.arange(inverse.max() + 1)[:, None]).astype(np.float64)

    def statistic(values, weights):
        values = np.asarray(values, dtype=np.float64)
        weights = np.asarray(weights, dtype=np.float64)
        sums = (values * weights) @ indicator.T
        counts = weights @ indicator.T
        return np.mean(sums / counts, axis=-1)
    return statistic


def blimp_comparison(items: pl.DataFrame, scores: pl.DataFrame,
                     settings: Uncertainty | None = None) -> pl.DataFrame:
    """Per items dataset and pair of scoring functions: overall accuracy (exact McNemar) and
    paradigm mean accuracy (stratified paired bootstrap, permutation test) on the pairs both
    scored (both sentences)."""
    from spudflow.aggregate.blimp import check_pairs, pair_outcomes

    settings = settings or Uncertainty()
    check_pairs(items)
    pairs = pair_outcomes(items, scores).filter(pl.col("scored"))
    rows = []
    for (dataset,), part in sorted(pairs.partition_by("dataset", as_dict=True).items()):
        functions = _functions(part.select("model", "method", "group_id", "uid", "correct"))
        for a, b in _pairs_of(functions):
            aligned = align_items(functions[a].drop("model", "method"),
                                  functions[b].drop("model", "method", "uid"), ["group_id"])
            both = aligned.items
            first, second = both["correct_a"].to_numpy(), both["correct_b"].to_numpy()
            counts = (len(both), aligned.only_first, aligned.only_second)
            group = {"dataset": dataset}
            pooled = paired_accuracy(first, second, settings)
            mean_a = np.mean(first) if len(both) else None
            mean_b = np.mean(second) if len(both) else None
            rows.append(_row(group, a, b, "accuracy", *counts, mean_a, mean_b,
                             pooled.difference, pooled.ci_low, pooled.ci_high,
                             pooled.interval_method, MCNEMAR, pooled.p_value))
            strata = both["uid_a"].to_numpy()
            if len(both):
                statistic = stratum_mean(strata)
                paradigm = paired_accuracy(first, second, settings, strata=strata)
                ones = np.ones((1, len(both)))
                value_a = float(statistic(first, ones)[0])
                value_b = float(statistic(second, ones)[0])
                # each pair's share of the difference: its outcome difference over its
                # paradigm's pairs and the paradigms
                _, inverse, sizes = np.unique(strata, return_inverse=True, return_counts=True)
                share = (first.astype(np.float64) - second) / (sizes[inverse] * len(sizes))
                test, p = sign_flip_test(share, settings.resamples, settings.seed)
                rows.append(_row(group, a, b, "paradigm_mean_accuracy", *counts, value_a,
                                 value_b, paradigm.difference, paradigm.ci_low, paradigm.ci_high,
                                 paradigm.interval_method, test, p))
    return _frame(rows, ["dataset"])


# ---- German case --------------------------------------------------------------------------------

def german_case_comparison(items: pl.DataFrame, scores: pl.DataFrame,
                           settings: Uncertainty | None = None) -> pl.DataFrame:
    """Per items dataset, analysis (as german_case_auc's: `all` sentences, `restricted` to the
    original case assignment among the grammatical ones) and pair of scoring functions, on the
    sentences both scored (every violation): the mean template AUC (bootstrap over templates,
    permutation test swapping a template's two AUCs) and the pooled AUC (DeLong's paired
    test)."""
    from spudflow.aggregate.german_case import analyses, template_aucs, with_derived
    from spudflow.aggregate.inputs import scored_items

    settings = settings or Uncertainty()
    scored = scored_items(with_derived(items), scores).filter(
        pl.col("logprob_sum").is_not_null())
    rows = []
    columns = ["model", "method", "item_id", "template", "grammatical", "cases", "logprob_sum"]
    for (dataset,), part in sorted(scored.partition_by("dataset", as_dict=True).items()):
        functions = _functions(part.select(columns))
        for a, b in _pairs_of(functions):
            aligned = align_items(functions[a].drop("model", "method"),
                                  functions[b].drop("model", "method", "template",
                                                    "grammatical", "cases"), ["item_id"])
            both = aligned.items.rename({"template_a": "template",
                                         "grammatical_a": "grammatical", "cases_a": "cases"})
            per_template = [template_aucs(both.select(
                pl.lit(dataset).alias("dataset"), pl.lit(side).alias("model"),
                pl.lit(side).alias("method"), "template", "item_id", "grammatical", "cases",
                pl.col(f"logprob_sum_{side}").alias("logprob_sum"))) for side in ("a", "b")]
            # an analysis keeps a sentence by its own columns, the same on both sides: of
            # one side's sentences of an analysis, those both scored are `sentences`
            own = [dict(analyses(functions[side])) for side in (a, b)]
            for analysis, sentences in analyses(both):
                counts = (len(sentences), own[0][analysis].height - len(sentences),
                          own[1][analysis].height - len(sentences))
                rows += _german_rows({"dataset": dataset, "analysis": analysis}, a, b, counts,
                                     sentences, [t.filter(pl.col("analysis") == analysis)
                                                 for t in per_template], settings)
    return _frame(rows, ["dataset", "analysis"])


def _german_rows(group: dict, a, b, counts: tuple, sentences: pl.DataFrame,
                 per_template: list[pl.DataFrame], settings: Uncertainty) -> list[dict]:
    """The auc_mean and auc_pooled rows of one analysis's sentences, both sides' template AUCs
    (template_aucs) given."""
    joined = per_template[0].sort("template").select("template", "auc").join(
        per_template[1].sort("template").select("template", "auc"), on="template",
        suffix="_b").filter(pl.col("auc").is_not_null() & pl.col("auc_b").is_not_null())
    ta, tb = joined["auc"].to_numpy(), joined["auc_b"].to_numpy()
    mean = paired_bootstrap(weighted_mean, ta, tb, settings) if len(ta) else None
    test, p = _permutation(weighted_mean, ta, tb, settings)
    rows = [_row(group, a, b, "auc_mean", *counts,
                 np.mean(ta) if len(ta) else None, np.mean(tb) if len(tb) else None,
                 mean.difference if mean else None, mean and mean.ci_low,
                 mean and mean.ci_high, mean and mean.interval_method, test, p,
                 units=len(ta))]
    labels = sentences["grammatical"].cast(pl.Int8).to_numpy()
    pooled = None
    if 0 < labels.sum() < len(labels):
        pooled = delong_paired(labels, sentences["logprob_sum_a"].to_numpy(),
                               sentences["logprob_sum_b"].to_numpy(), settings.level)
    finite = pooled is not None and np.isfinite(pooled.stderr)
    rows.append(_row(group, a, b, "auc_pooled", *counts, pooled and pooled.auc_a,
                     pooled and pooled.auc_b, pooled and pooled.difference,
                     pooled.ci_low if finite else None,
                     pooled.ci_high if finite else None, DELONG if finite else None,
                     DELONG, pooled.p_value if finite else None))
    return rows


# ---- SPUD ---------------------------------------------------------------------------------------

def spud_comparison(items: pl.DataFrame, scores: pl.DataFrame,
                    settings: Uncertainty | None = None) -> pl.DataFrame:
    """Per pair set (dataset, language, nonce method), nonce seed and pair of scoring functions:
    the median ratio as spud_ratio_summary's headline computes it for that seed, on the nonce
    pairs both scored. A seed's row: the median of its pairs' ratios (one per original
    sentence); seed `all`: the median of the per-original-sentence ratio (geometric mean over
    the nonce seeds both scored). All observations, outliers kept, as the headline's `kept`
    rows (the table's `removed` rows are not compared). The original sentences resampled
    (paired bootstrap and its p); n_items counts the seed's nonce pairs (`all`: every seed's).
    Holm's adjustment within each nonce seed: a seed's rows, and `all`'s, are a replication of
    the same comparisons, not further hypotheses, so that `all`'s p_holm does not depend on how
    many nonce seeds ran."""
    from spudflow.aggregate.inputs import scored_items
    from spudflow.aggregate.spud_scores import (
        ALL_SEEDS,
        check_groups,
        pair_ratios,
        per_original,
        seed_key,
    )

    settings = settings or Uncertainty()
    check_groups(items)
    pairs = pair_ratios(scored_items(items, scores))
    keys = ["dataset", "language", "nonce_method"]
    compared = []  # (group, a, b, counts, ra, rb): every row's observations, then its numbers
    for key, part in sorted(pairs.partition_by(keys, as_dict=True).items()):
        functions = _functions(part)
        # a function's per-original ratios over all its nonce pairs: a pair of functions that
        # scored the same nonce pairs compares these (the same rows, the same numbers)
        whole: dict = {}
        for a, b in _pairs_of(functions):
            aligned = align_items(functions[a].select("nonce_item_id", "nonce_seed"),
                                  functions[b].select("nonce_item_id", "nonce_seed"),
                                  ["nonce_item_id"])
            shared = aligned.items["nonce_item_id"]
            both = [functions[f].filter(pl.col("nonce_item_id").is_in(shared.implode()))
                    for f in (a, b)]
            seeds = sorted(set(functions[a]["nonce_seed"]) | set(functions[b]["nonce_seed"]),
                           key=seed_key)
            for seed in [*seeds, ALL_SEEDS]:
                if seed == ALL_SEEDS and not (aligned.only_first or aligned.only_second):
                    for f in (a, b):
                        if f not in whole:
                            whole[f] = per_original(functions[f]).sort("group_id")
                    ratios = [whole[a], whole[b]]
                    counts = (len(shared), 0, 0)
                elif seed == ALL_SEEDS:
                    ratios = [per_original(frame).sort("group_id") for frame in both]
                    counts = (len(shared), aligned.only_first, aligned.only_second)
                else:
                    ratios = [frame.filter(pl.col("nonce_seed") == seed).sort("group_id")
                              for frame in both]
                    n = ratios[0].height
                    counts = (n, int((functions[a]["nonce_seed"] == seed).sum()) - n,
                              int((functions[b]["nonce_seed"] == seed).sum()) - n)
                if not ratios[0]["group_id"].equals(ratios[1]["group_id"]):
                    raise ValueError("the shared nonce pairs have different original sentences")
                group = dict(zip(keys, key, strict=True)) | {"nonce_seed": seed}
                compared.append((group, a, b, counts, ratios[0]["ratio"].to_numpy(),
                                 ratios[1]["ratio"].to_numpy()))
    # each scoring function's medians over the resamples, computed once: the sides a dataset
    # and nonce method compare (its functions, per nonce seed) share one draw per length, kept
    # apart from other sections' (the same values in two sections, a function whose ratios are
    # all 1, are two sides), so a row's numbers depend on that section of the table alone
    median = weighted_quantile(0.5)
    sections: dict[tuple, list[np.ndarray]] = {}
    for group, *_, ra, rb in compared:
        sections.setdefault(tuple(group[k] for k in keys), []).extend((ra, rb))
    resampled = {section: {} for section in sections}
    for section, sides in sections.items():
        resample_sides(median, sides, settings, resampled[section])
    rows = []
    for group, a, b, counts, ra, rb in compared:
        memo = resampled[tuple(group[k] for k in keys)]
        diff = paired_bootstrap(median, ra, rb, settings, memo=memo) if len(ra) else None
        rows.append(_row(group, a, b, "ratio_median", *counts,
                         np.median(ra) if len(ra) else None,
                         np.median(rb) if len(rb) else None, diff and diff.difference,
                         diff and diff.ci_low, diff and diff.ci_high,
                         diff and diff.interval_method, BOOTSTRAP, diff and diff.p_value,
                         units=len(ra)))
    frame = _frame(rows, [*keys, "nonce_seed"])
    within_seed = [part.with_columns(pl.Series("p_holm", holm(part["p_value"].to_list()),
                                               dtype=pl.Float64))
                   for part in frame.partition_by("nonce_seed", maintain_order=True)]
    # numeric seeds in numeric order (2 before 10), then `all`, as spud_ratio_summary's rows
    seed_rank = pl.col("nonce_seed").map_elements(lambda s: "".join(map(str, seed_key(s))),
                                                  return_dtype=pl.String)
    sides = frame.columns[len(keys) + 1:frame.columns.index("statistic") + 1]
    return (pl.concat(within_seed) if within_seed else frame).sort([*keys, seed_rank, *sides])


# ---- Japanese transitivity ----------------------------------------------------------------------

def japanese_comparison(items: pl.DataFrame, scores, settings: Uncertainty | None = None,
                        decision: str | None = None) -> pl.DataFrame:
    """Per dataset and span (region: null the whole sentence, `verb` the verb only) and pair of
    scoring functions: accuracy on the obligatory pairs both scored (exact McNemar), by the
    table's decision rule. `scores`: (dataset, one model's rows) in order, as
    inputs.scores_by_model yields them; only each mode's obligatory outcomes are kept."""
    import itertools

    from spudflow.aggregate.inputs import scored_items
    from spudflow.aggregate.japanese import (
        DEFAULT_DECISION,
        check_pairs,
        dataset_items,
        preferences,
        thesis_modes,
    )

    settings = settings or Uncertainty()
    decision = decision or DEFAULT_DECISION
    check_pairs(items)
    rows = []
    for dataset, chunks in itertools.groupby(scores, key=lambda chunk: chunk[0]):
        own_items = dataset_items(items, dataset)
        outcomes = []
        for _, model_scores in chunks:
            scored = thesis_modes(scored_items(own_items, model_scores, all_regions=True))
            outcomes.append(preferences(scored, decision).filter(
                pl.col("condition") == columns.JAPANESE_OBLIGATORY).select(
                "model", "method", "region", "group_id", "prefers_transitive"))
        for (region,), part in sorted(pl.concat(outcomes).partition_by(
                "region", as_dict=True).items(), key=lambda kv: (kv[0][0] is not None, kv[0])):
            functions = _functions(part.drop("region"))
            for a, b in _pairs_of(functions):
                aligned = align_items(functions[a].drop("model", "method"),
                                      functions[b].drop("model", "method"), ["group_id"])
                first = aligned.items["prefers_transitive_a"].to_numpy()
                second = aligned.items["prefers_transitive_b"].to_numpy()
                result = paired_accuracy(first, second, settings)
                n = len(first)
                rows.append(_row({"dataset": dataset, "region": region}, a, b,
                                 "accuracy_obligatory", n, aligned.only_first,
                                 aligned.only_second, first.mean() if n else None,
                                 second.mean() if n else None, result.difference,
                                 result.ci_low, result.ci_high, result.interval_method, MCNEMAR,
                                 result.p_value))
    return _frame(rows, ["dataset", "region"])


# ---- CoLA ---------------------------------------------------------------------------------------

def cola_comparison(items: pl.DataFrame, scores: pl.DataFrame,
                    settings: Uncertainty | None = None, folds: int = 10, seed: int = 0,
                    criterion: str = "mcc") -> pl.DataFrame:
    """Per items dataset, split and normalisation and pair of scoring functions: the Matthews
    correlation of the held-out predictions (each function's thresholds fitted as
    cola_thresholds fits them, on its own scored items) on the sentences both predicted; the
    sentences resampled with their label and both predictions (paired bootstrap) and the two
    predictions swapped (permutation test). Phenomenon sets are not compared."""
    from spudflow.aggregate.cola import fits
    from spudflow.aggregate.inputs import scored_items

    settings = settings or Uncertainty()
    predicted: dict[tuple, dict] = {}
    for key, is_phenomenon, frame, thresholds, _ in fits(scored_items(items, scores), folds,
                                                          seed, criterion):
        if is_phenomenon or thresholds is None:
            continue
        group = (key["dataset"], key["split"], key["normalisation"])
        predicted.setdefault(group, {})[(key["model"], key["method"])] = frame.select(
            "item_id", "label", "prediction")
    rows = []
    for (dataset, split, normalisation), functions in sorted(predicted.items()):
        for a, b in _pairs_of(functions):
            aligned = align_items(functions[a], functions[b].drop("label"), ["item_id"])
            both = aligned.items
            labels = both["label_a"].to_numpy()
            first, second = both["prediction_a"].to_numpy(), both["prediction_b"].to_numpy()
            group = {"dataset": dataset, "split": split, "normalisation": normalisation}
            counts = (len(both), aligned.only_first, aligned.only_second)
            if not len(both) or labels.min() == labels.max():  # no MCC: labels of one class
                rows.append(_row(group, a, b, "mcc", *counts, None, None, None, None, None,
                                 None, PERMUTATION, None))
                continue
            mcc = weighted_mcc(labels)
            ones = np.ones((1, len(both)))
            diff = paired_bootstrap(mcc, first, second, settings)
            test, p = _permutation(mcc, first, second, settings)
            rows.append(_row(group, a, b, "mcc", *counts, mcc(first, ones)[0],
                             mcc(second, ones)[0], diff.difference, diff.ci_low, diff.ci_high,
                             diff.interval_method, test, p))
    return _frame(rows, ["dataset", "split", "normalisation"])


# ---- DepProbe -----------------------------------------------------------------------------------

PROBE_CONFIGURATION = {"model": pl.String, "baseline": pl.String, "dist_layer": pl.Int64,
                       "label_layer": pl.Int64, "auto_layers": pl.Boolean}


def seed_mean_of_micro_scores(values, weights) -> np.ndarray:
    """The statistic of probe_languages' figures: per probe seed the micro-averaged score (right
    / words summed over the sentences, each weighted by how often the resample drew it), then
    the mean over the seeds. values: (words, right), each (seeds, sentences)."""
    weights = np.asarray(weights, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.mean((weights @ values[1].T) / (weights @ values[0].T), axis=-1)


def mean_delta(partner: Sequence[int], nonce: Sequence[int]) -> callable:
    """The figure of probe_languages' delta_* from the runs' scores (..., runs): the mean over
    the nonce runs of its probe seed's original-set score (run `partner[i]`) minus its own
    (run `nonce[i]`)."""
    partner, nonce = np.asarray(partner), np.asarray(nonce)
    return lambda scores: np.mean(scores[..., partner] - scores[..., nonce], axis=-1)


def micro_delta(partner: Sequence[int], nonce: Sequence[int]) -> callable:
    """seed_mean_of_micro_scores for the Δ = orig − nonce: each run's micro-averaged score on
    the resampled sentences, then mean_delta. values: (words, right), each (runs, sentences),
    a sentence's original and nonce versions in the same column (resampled together)."""
    figure = mean_delta(partner, nonce)

    def statistic(values, weights):
        weights = np.asarray(weights, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return figure((weights @ values[1].T) / (weights @ values[0].T))
    return statistic


def swap_test(first, second, resamples: int, seed: int, n_rows: int,
              figure=None) -> tuple[str, float]:
    """(test, p) of paired_permutation_test of the seed mean of micro-averaged scores on the
    (seed, sentence) rows, clusters the sentences: a sentence swapped between the two
    configurations moves its counts of every seed, so each side's sums are its own plus the
    swapped sentences' change, a matrix product per block of swap patterns. The swaps are
    drawn as that function draws them (same generator, block size over the `n_rows` rows,
    units the sorted sentences): the same p-value. `figure`: the figure of the runs' scores
    (..., runs), their mean by default (mean_delta for a Δ)."""
    figure = figure or (lambda scores: np.mean(scores, axis=-1))
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    n = first.shape[-1]
    change = second - first  # (2, seeds, sentences)
    totals = first.sum(axis=-1), second.sum(axis=-1)

    def differences(swap):
        moved = np.einsum("bn,vkn->vbk", swap.astype(np.float64), change)
        a, b = totals[0][:, None, :] + moved, totals[1][:, None, :] - moved
        with np.errstate(invalid="ignore", divide="ignore"):
            return figure(a[1] / a[0]) - figure(b[1] / b[0])
    observed = float(differences(np.zeros((1, n)))[0])
    exact = n < 63 and 2 ** n <= resamples
    n_null = 2 ** n if exact else resamples
    rng = np.random.default_rng(seed)
    block = block_size(n_rows, n_null)
    null = []
    for start in range(0, n_null, block):
        b = min(block, n_null - start)
        if exact:
            swap = (np.arange(start, start + b)[:, None] >> np.arange(n - 1, -1, -1)) & 1
        else:
            swap = rng.random((b, n)) < 0.5
        null.append(differences(swap))
    null = np.concatenate(null)
    return permutation_p(null, observed, exact)


PROBE_SCORES = ("relacc", "uas", "las")  # compared on the original sentences
PROBE_DELTAS = ("uas", "las")  # their Δ = orig − nonce compared


def _count_matrices(both: pl.DataFrame, runs: list, units: np.ndarray, score: str,
                    run_columns: Sequence[str]) -> list[np.ndarray]:
    """Each side's (words, right) counts of `score` as (2, runs, sentences) matrices, runs
    named by the `run_columns` of `both`'s rows; a (run, sentence) one side did not evaluate
    is 0 words, 0 right on both (left out of both figures)."""
    index = {run: i for i, run in enumerate(runs)}
    at = (np.array([index[r] for r in both.select(run_columns).iter_rows()], dtype=np.int64),
          np.searchsorted(units, both["sent_index"].to_numpy()))
    sides = []
    for side in "ab":
        matrix = np.zeros((2, len(runs), len(units)))
        matrix[0][at] = both[f"n_words_{side}"].to_numpy()
        matrix[1][at] = both[f"n_{score}_{side}"].to_numpy()
        sides.append(matrix)
    return sides


def probe_comparison(metrics: pl.DataFrame, settings: Uncertainty | None = None
                     ) -> pl.DataFrame:
    """Per treebank and pair of probe configurations, from the runs' per-sentence counts
    (sentence_counts.parquet, probe_intervals.read_sentences): RelAcc, UAS and LAS on the
    original test sentences (`nonce_method` null), on the (probe seed, sentence) both
    evaluated; and per nonce method the Δ = orig − nonce of UAS and LAS (delta_uas,
    delta_las: probe_languages' delta_*_mean, the mean over the nonce runs of its probe seed's
    original score minus its own), on the (run, sentence) both evaluated. The sentences
    resampled with every run's counts, a sentence's original and nonce versions together
    (paired bootstrap; paired by sentence for the Δ) and swapped between the two
    configurations (permutation test). With resamples 0, no rows: the per-sentence counts are
    read only with resampling, as for the intervals."""
    from spudflow.aggregate.probe_intervals import read_sentences

    settings = settings or Uncertainty()
    configuration = list(PROBE_CONFIGURATION)
    rows = []
    group_columns = ["treebank", "nonce_method"]
    if settings.resamples == 0:  # as the intervals, read only with resampling (probe_tables)
        log.info("probe_comparison: no rows with resamples 0 (no per-sentence counts read)")
        return _frame(rows, group_columns, PROBE_CONFIGURATION)
    is_orig = pl.col("eval_version") == columns.PROBE_ORIG_EVAL_SET
    sentences = read_sentences(metrics).with_columns(
        pl.when(is_orig).then(None).otherwise(
            pl.col("eval_version").str.split(columns.PROBE_EVAL_SET_SEPARATOR).list.first())
        .alias("nonce_method"))
    counts = ["n_words", *(f"n_{m}" for m in PROBE_SCORES)]
    # each configuration's resampled figures, computed once (paired_bootstrap's memo): its
    # comparisons with the others resample the same sentences with the same draws
    memos: dict[tuple, dict] = {}
    for (treebank,), part in sorted(sentences.partition_by("treebank", as_dict=True).items()):
        functions = part.select(*configuration, "seed", "eval_version", "nonce_method",
                                "sent_index", *counts).partition_by(configuration,
                                                                    as_dict=True)
        for a, b in _pairs_of(functions):
            own = [functions[f].drop(configuration) for f in (a, b)]
            rows += _orig_rows(treebank, a, b, [o.filter(is_orig) for o in own], settings,
                               memos)
            methods = sorted(set().union(*(o["nonce_method"].drop_nulls() for o in own)))
            for method in methods:
                rows += _delta_rows(treebank, method, a, b, [o.filter(
                    is_orig | (pl.col("nonce_method") == method)) for o in own], settings,
                                    memos)
    return _frame(rows, group_columns, PROBE_CONFIGURATION)


def _orig_rows(treebank, a, b, own: list[pl.DataFrame], settings: Uncertainty,
               memos: dict[tuple, dict]) -> list[dict]:
    """RelAcc, UAS and LAS on the original sentences: the mean over the probe seeds of each
    seed's micro-averaged score, on the (seed, sentence) both evaluated. `memos`: the
    resampled figures kept per statistic (paired_bootstrap's memo)."""
    aligned = align_items(*(o.drop("eval_version", "nonce_method") for o in own),
                          ["seed", "sent_index"])
    both = aligned.items
    counts = (len(both), aligned.only_first, aligned.only_second)
    group = {"treebank": treebank, "nonce_method": None}
    sides = list(PROBE_CONFIGURATION)
    seeds = [(int(s),) for s in np.unique(both["seed"].to_numpy())]
    units = np.unique(both["sent_index"].to_numpy())
    rows = []
    for score in PROBE_SCORES:
        if not len(both):
            rows.append(_row(group, a, b, score, *counts, None, None, None, None, None, None,
                             PERMUTATION, None, sides))
            continue
        first, second = _count_matrices(both, seeds, units, score, ["seed"])
        diff = paired_bootstrap(seed_mean_of_micro_scores, first, second, settings,
                                memo=memos.setdefault(("orig",), {}))
        test, p = swap_test(first, second, settings.resamples, settings.seed, len(both))
        ones = np.ones((1, len(units)))
        rows.append(_row(group, a, b, score, *counts,
                         seed_mean_of_micro_scores(first, ones)[0],
                         seed_mean_of_micro_scores(second, ones)[0], diff.difference,
                         diff.ci_low, diff.ci_high, diff.interval_method, test, p, sides,
                         units=len(units)))
    return rows


def _delta_rows(treebank, method, a, b, own: list[pl.DataFrame], settings: Uncertainty,
                memos: dict[tuple, dict]) -> list[dict]:
    """Δ = orig − nonce of UAS and LAS for one nonce method, on the (run, sentence) both
    evaluated: each run's micro-averaged score, then the mean over the nonce runs of its
    probe seed's original score minus its own."""
    aligned = align_items(*(o.drop("nonce_method") for o in own),
                          ["seed", "eval_version", "sent_index"])
    both = aligned.items
    group = {"treebank": treebank, "nonce_method": method}
    sides = list(PROBE_CONFIGURATION)
    orig = columns.PROBE_ORIG_EVAL_SET
    nonce_runs = sorted({r for r in both.select("seed", "eval_version").iter_rows()
                         if r[1] != orig})
    # every nonce run's original-set run, even one whose sentences only one side evaluated
    # (then no words: its Δ, and the figure, undefined)
    runs = sorted({(seed, orig) for seed, _ in nonce_runs}) + nonce_runs
    partner = [runs.index((seed, orig)) for seed, _ in nonce_runs]
    nonce = list(range(len(runs) - len(nonce_runs), len(runs)))
    wanted = set(runs)  # an original-set run of a seed without a shared nonce run: not used
    both = both.filter(pl.Series([r in wanted for r in both.select(
        "seed", "eval_version").iter_rows()], dtype=pl.Boolean))
    counts = (len(both), aligned.only_first, aligned.only_second)
    units = np.unique(both["sent_index"].to_numpy())
    rows = []
    for score in PROBE_DELTAS:
        statistic = f"delta_{score}"
        if not nonce_runs:
            rows.append(_row(group, a, b, statistic, *counts, None, None, None, None, None,
                             None, PERMUTATION, None, sides))
            continue
        first, second = _count_matrices(both, runs, units, score, ["seed", "eval_version"])
        delta = micro_delta(partner, nonce)
        # the statistic is the runs' layout's (partner, nonce): a memo of its own
        diff = paired_bootstrap(delta, first, second, settings, memo=memos.setdefault(
            ("delta", tuple(partner), tuple(nonce)), {}))
        test, p = swap_test(first, second, settings.resamples, settings.seed, counts[0],
                            figure=mean_delta(partner, nonce))
        ones = np.ones((1, len(units)))
        rows.append(_row(group, a, b, statistic, *counts, delta(first, ones)[0],
                         delta(second, ones)[0], diff.difference, diff.ci_low, diff.ci_high,
                         diff.interval_method, test, p, sides, units=len(units)))
    return rows
