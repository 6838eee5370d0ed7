"""aggregate/comparison.py against independent implementations: exact McNemar against
statsmodels, Holm against statsmodels' multipletests, the paired bootstraps against
scipy.stats.bootstrap given the same resamples, the permutation test against
scipy.stats.permutation_test; and the alignment of two functions' items."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from scipy import stats
from sklearn.metrics import matthews_corrcoef
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from spudflow.aggregate import comparison
from spudflow.aggregate.comparison import (
    align_items,
    holm,
    mcnemar_exact,
    paired_accuracy,
    paired_bootstrap,
    paired_permutation_test,
    resample_sides,
    weighted_mcc,
    weighted_mean,
    weighted_quantile,
)
from spudflow.aggregate.resampling import BCA, PERCENTILE, category_draws
from spudflow.aggregate.uncertainty import Uncertainty, outcome_mean_of_means


def test_mcnemar_is_statsmodels_exact():
    worst = max(abs(mcnemar_exact(a, b) - mcnemar([[11, a], [b, 4]], exact=True).pvalue)
                for a in range(45) for b in range(45))
    assert worst < 1e-12
    assert mcnemar_exact(0, 0) == 1.0


def test_holm_is_statsmodels_holm():
    rng = np.random.default_rng(0)
    for trial in range(200):
        p = rng.random(int(rng.integers(1, 25))) ** 3
        if trial % 3 == 0:
            p[::2] = p[0]  # ties
        expected = multipletests(p, method="holm")[1]
        assert np.max(np.abs(np.array(holm(list(p))) - expected)) < 1e-12


def test_holm_leaves_missing_p_values_out_of_the_count():
    assert holm([0.01, None, 0.04, float("nan")]) == [0.02, None, 0.04, None]
    assert holm([]) == []


def test_align_counts_the_items_one_side_did_not_score():
    a = pl.DataFrame({"item_id": ["x", "y", "z", "w"], "correct": [True, False, True, True]})
    b = pl.DataFrame({"item_id": ["z", "x", "v"], "correct": [False, True, True]})
    aligned = align_items(a, b, ["item_id"])
    assert aligned.items.columns == ["item_id", "correct_a", "correct_b"]
    assert aligned.items.rows() == [("x", True, True), ("z", True, False)]
    assert (aligned.only_first, aligned.only_second) == (2, 1)


def test_align_refuses_an_item_scored_twice():
    a = pl.DataFrame({"item_id": ["x", "x"], "correct": [True, False]})
    b = pl.DataFrame({"item_id": ["x"], "correct": [True]})
    with pytest.raises(ValueError, match="more than once"):
        align_items(a, b, ["item_id"])


def _outcomes(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random(n) < 0.72, rng.random(n) < 0.64, rng.integers(0, 4, n)


def test_paired_accuracy_difference_and_interval_are_scipys_paired_bootstrap():
    """The paired interval: the items resampled with both outcomes, the difference of the
    accuracies (the mean of a - b); given scipy's resamples, scipy's BCa interval to 1e-12."""
    a, b, _ = _outcomes()
    settings = Uncertainty(resamples=2000, seed=5)
    result = paired_accuracy(a, b, settings)
    assert result.difference == pytest.approx(a.mean() - b.mean(), abs=1e-15)
    assert (result.n_first_only_correct, result.n_second_only_correct) == \
        (int(np.sum(a & ~b)), int(np.sum(~a & b)))
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert abs(result.p_value - mcnemar(table, exact=True).pvalue) < 1e-12

    # scipy's paired resamples draw one index per item for both sides, as the resamples of the
    # differences d = a - b do; the statistic is written as the mean of d, since on 0/1 data
    # many resamples equal the estimate and mean(a) - mean(b), rounded otherwise, would move
    # some of them across it in BCa's bias correction
    d = a.astype(float) - b.astype(float)
    direct = stats.bootstrap((d,), np.mean, n_resamples=2000, method="BCa",
                             rng=np.random.default_rng(5)).confidence_interval
    rng = np.random.default_rng(5)
    means = np.mean(d[rng.integers(0, len(d), (2000, len(d)))], axis=-1)[None, :]
    low, high, method = outcome_mean_of_means([d], [], 1, settings, means=means)
    assert method == BCA
    assert abs(low - direct.low) < 1e-12 and abs(high - direct.high) < 1e-12
    # the fast path's own draws: the same distribution (Monte Carlo error ~0.005 here)
    assert abs(result.ci_low - direct.low) < 0.02 and abs(result.ci_high - direct.high) < 0.02


def test_stratified_paired_accuracy_is_the_difference_of_stratum_means():
    a, b, strata = _outcomes()
    settings = Uncertainty(resamples=2000, seed=1)
    result = paired_accuracy(a, b, settings, strata=strata)
    expected = np.mean([a[strata == s].mean() - b[strata == s].mean() for s in range(4)])
    assert result.difference == pytest.approx(expected, abs=1e-15)
    assert result.ci_low < result.difference < result.ci_high
    assert paired_accuracy(a, b, settings, strata=strata) == result  # seeded: the same
    assert paired_accuracy([], [], settings).difference is None


def test_identical_functions_differ_by_nothing():
    a, _, _ = _outcomes()
    result = paired_accuracy(a, a, Uncertainty(resamples=500))
    assert (result.difference, result.ci_low, result.ci_high, result.p_value) == \
        (0.0, 0.0, 0.0, 1.0)
    assert result.interval_method == PERCENTILE


def _scores(n=57, seed=2):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, x + rng.normal(0.2, 1, size=n), rng.random(n) < 0.5


@pytest.mark.parametrize("q", [0.25, 0.5, 0.75])
def test_weighted_quantile_is_numpys_quantile_of_the_resample(q):
    x, _, _ = _scores()
    rng = np.random.default_rng(0)
    index = rng.integers(0, len(x), (50, len(x)))
    weights = np.stack([np.bincount(i, minlength=len(x)) for i in index])
    assert np.array_equal(weighted_quantile(q)(x, weights), np.quantile(x[index], q, axis=-1))


def test_weighted_mcc_is_sklearns():
    x, y, labels = _scores()
    predictions = x > 0
    assert weighted_mcc(labels)(predictions, np.ones((1, len(x))))[0] == \
        pytest.approx(matthews_corrcoef(labels, predictions), abs=1e-12)
    assert weighted_mcc(labels)(np.ones(len(x), dtype=bool), np.ones((1, len(x))))[0] == 0.0


@pytest.mark.parametrize("name", ["mean", "median", "q3"])
def test_paired_bootstrap_is_scipys_paired_bootstrap(name):
    """One stratum, no clusters: the same index draws as scipy (paired=True), so the same
    interval to 1e-12."""
    x, y, _ = _scores()
    ours, theirs = {
        "mean": (weighted_mean, np.mean),
        "median": (weighted_quantile(0.5), lambda v, axis: np.quantile(v, 0.5, axis=axis)),
        "q3": (weighted_quantile(0.75), lambda v, axis: np.quantile(v, 0.75, axis=axis)),
    }[name]
    result = paired_bootstrap(ours, x, y, Uncertainty(resamples=2000, seed=4))
    direct = stats.bootstrap((x, y), lambda u, v, axis=-1: theirs(u, axis) - theirs(v, axis),
                             paired=True, n_resamples=2000, method="BCa",
                             rng=np.random.default_rng(4)).confidence_interval
    assert result.interval_method == BCA
    assert abs(result.ci_low - direct.low) < 1e-12 and abs(result.ci_high - direct.high) < 1e-12


def test_paired_mcc_bootstrap_is_scipys(monkeypatch):
    """Given scipy's resamples (its index draws, counted per category where the MCC's path
    draws the category counts), the interval is scipy's BCa of sklearn's MCC difference."""
    x, y, labels = _scores()
    px, py = x > 0, y > 0.1
    n = len(x)

    def difference(index, axis=-1):
        rows = np.atleast_2d(index)
        out = np.array([matthews_corrcoef(labels[i], px[i]) - matthews_corrcoef(labels[i], py[i])
                        for i in rows])
        return out if index.ndim > 1 else out[0]

    joint = weighted_mcc(labels).joint(px, py)

    def scipys_draws(tallies, resamples, rng):
        index = np.random.default_rng(3).integers(0, n, (resamples, n))
        yield np.stack([np.bincount(joint[i], minlength=16) for i in index])
    monkeypatch.setattr(comparison, "category_draws", scipys_draws)
    result = paired_bootstrap(weighted_mcc(labels), px, py, Uncertainty(resamples=1000, seed=3))
    direct = stats.bootstrap((np.arange(n),), difference, n_resamples=1000, method="BCa",
                             rng=np.random.default_rng(3)).confidence_interval
    assert abs(result.ci_low - direct.low) < 1e-12 and abs(result.ci_high - direct.high) < 1e-12


def test_category_draws_are_each_strata_multinomial():
    """Per resample each stratum contributes its size; over many resamples each category's
    count averages its tally, with the multinomial's variance."""
    tallies = [np.array([5, 0, 3, 2]), np.array([1, 7, 0, 0])]
    drawn = np.concatenate(list(category_draws(tallies, 40_000, np.random.default_rng(0))))
    assert drawn.shape == (40_000, 4) and np.all(drawn.sum(axis=1) == 18)
    total = tallies[0] + tallies[1]
    variance = sum(t * (1 - t / t.sum()) for t in tallies)
    assert np.all(np.abs(drawn.mean(axis=0) - total) < 5 * np.sqrt(variance / 40_000) + 1e-12)
    assert np.allclose(drawn.var(axis=0), variance, rtol=0.05, atol=1e-9)


@pytest.mark.parametrize(("n", "resamples", "strata"), [(3000, 1000, False), (400, 2000, True),
                                                       (9, 1000, False)])
def test_counted_mcc_gives_the_weighted_rows_numbers(n, resamples, strata):
    """The MCC of a resample's category counts is that of its weighted rows, to the bit (exact
    integer counts both ways); so the counted bootstrap and swap test (drawing the counts) agree
    with the weighted rows' (index draws, swapped rows) within Monte Carlo error, and the
    enumerated swap test of 9 rows is the same to the bit."""
    rng = np.random.default_rng(n)
    labels = rng.random(n) < 0.6
    px = np.where(rng.random(n) < 0.8, labels, ~labels)
    py = np.where(rng.random(n) < 0.7, labels, ~labels)
    counted = weighted_mcc(labels)

    def rows(values, weights):  # a plain statistic: weighted rows, no counting
        return counted(values, weights)

    weights = np.random.default_rng(1).multinomial(n, np.full(n, 1 / n), size=200)
    joint = counted.joint(px, py)
    by_category = np.stack([np.bincount(joint, weights=w, minlength=16) for w in weights])
    assert np.array_equal(counted.difference(by_category.astype(np.int64)),
                          rows(px, weights) - rows(py, weights))
    settings = Uncertainty(resamples=resamples, seed=3)
    by = {"strata": np.arange(n) % 3} if strata else {}
    drawn, indexed = (paired_bootstrap(s, px, py, settings, **by) for s in (counted, rows))
    assert drawn.difference == indexed.difference
    width = indexed.ci_high - indexed.ci_low
    assert abs(drawn.ci_low - indexed.ci_low) < 0.15 * width
    assert abs(drawn.ci_high - indexed.ci_high) < 0.15 * width
    swaps = [paired_permutation_test(s, px, py, resamples, 5) for s in (counted, rows)]
    if swaps[1].exact:
        assert swaps[0] == swaps[1]
    else:
        p = swaps[1].p_value
        assert abs(swaps[0].p_value - p) < 5 * np.sqrt(max(p * (1 - p), 1e-3) / resamples)


@pytest.mark.parametrize(("n", "q", "ties"), [(2, 0.5, False), (11, 0.25, True),
                                             (2000, 0.5, False), (2001, 0.75, True)])
def test_quantile_jackknife_read_off_the_sorted_values_is_the_weighted_rows(n, q, ties):
    """weighted_quantile's leave_one_out (each row left out in turn, from the sorted values)
    is the statistic on the rows weighted 0/1, to the bit, ties included; the paired bootstrap
    that uses it gives the same interval."""
    rng = np.random.default_rng(n)
    x = rng.lognormal(size=n)
    y = x * rng.lognormal(0.1, 0.3, n)
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
        x[:n // 3] = 1.0
    quantile = weighted_quantile(q)
    left_out = (np.arange(n)[None, :] != np.arange(n)[:, None]).astype(np.int64)
    assert np.array_equal(quantile.leave_one_out(x), quantile(x, left_out))

    def rows(values, weights):  # no leave_one_out: the jackknife weighs the rows
        return quantile(values, weights)

    settings = Uncertainty(resamples=200, seed=1)
    assert paired_bootstrap(quantile, x, y, settings) == paired_bootstrap(rows, x, y, settings)


def test_a_memo_computes_each_sides_resamples_once_with_the_same_numbers():
    """Three functions compared pairwise on the same units: with a memo each function's
    resampled medians are computed once (the statistic's bootstrap calls counted), and every
    comparison is the one without the memo, to the bit; other values are their own entry."""
    rng = np.random.default_rng(7)
    x = rng.lognormal(size=300)
    functions = [x, x * rng.lognormal(0.1, 0.3, 300), x * rng.lognormal(-0.1, 0.2, 300)]
    median = weighted_quantile(0.5)
    calls = []

    def counted(values, weights):
        if weights.shape[0] > 1:  # a block of resamples, not the sample or a jackknife
            calls.append(values[0])
        return median(values, weights)
    counted.leave_one_out = median.leave_one_out
    settings = Uncertainty(resamples=500, seed=2)
    memo = {}
    pairs = [(0, 1), (0, 2), (1, 2)]
    with_memo = [paired_bootstrap(counted, functions[a], functions[b], settings, memo=memo)
                 for a, b in pairs]
    assert len(calls) == 3 and len(memo) == 3
    assert with_memo == [paired_bootstrap(median, functions[a], functions[b], settings)
                         for a, b in pairs]
    other = functions[0][:-1]
    assert paired_bootstrap(counted, other, functions[1][:-1], settings, memo=memo) == \
        paired_bootstrap(median, other, functions[1][:-1], settings)
    assert len(memo) == 5


def test_sides_resampled_together_are_the_comparisons_own():
    """resample_sides fills the memo for every side in one draw per length (a repeated side
    once): the comparisons then compute nothing more and give their numbers without it."""
    rng = np.random.default_rng(8)
    x = rng.lognormal(size=200)
    functions = [x, x * rng.lognormal(0.1, 0.3, 200), x * 1.5]
    shorter = x[:150]
    median = weighted_quantile(0.5)
    calls = []

    def counted(values, weights):
        if weights.shape[0] > 1:
            calls.append(len(values))
        return median(values, weights)
    counted.leave_one_out = median.leave_one_out
    settings = Uncertainty(resamples=300, seed=5)
    memo = {}
    resample_sides(counted, [*functions, functions[0], shorter], settings, memo)
    assert sorted(calls) == [150, 200, 200, 200] and len(memo) == 4
    for a, b in [(0, 1), (1, 2), (2, 0)]:
        assert paired_bootstrap(counted, functions[a], functions[b], settings, memo=memo) == \
            paired_bootstrap(median, functions[a], functions[b], settings)
    assert paired_bootstrap(counted, shorter, shorter * 2, settings, memo=memo) == \
        paired_bootstrap(median, shorter, shorter * 2, settings)
    assert len(calls) == 5  # shorter * 2 only


def test_a_weighted_mean_bootstrap_keeps_its_bits():
    """The same inputs and seed give the same bytes from version to version: the resample
    counts reach a weighted mean as the gathered (rows spread) copy, whose memory layout fixes
    the order of its sums (a contiguous copy moved German case's auc_mean interval in the 16th
    digit)."""
    rng = np.random.default_rng(0)
    x = rng.random(50)
    y = x + rng.normal(0, 0.05, 50)
    result = paired_bootstrap(weighted_mean, x, y, Uncertainty(resamples=10000))
    assert (result.ci_low, result.ci_high) == (-0.015455914410991894, 0.011956987097055323)


def test_clustered_stratified_bootstrap_is_scipys_over_the_units():
    """Clusters (an original with its nonce versions) resampled whole, within strata: scipy's
    multi-sample bootstrap of the units of each stratum, the statistic over their rows."""
    rng = np.random.default_rng(9)
    n_units = 30
    sizes = rng.integers(1, 5, n_units)
    unit_of_row = np.repeat(np.arange(n_units), sizes)
    stratum_of_unit = np.arange(n_units) % 2
    x = rng.lognormal(size=len(unit_of_row))
    y = x * rng.lognormal(0.1, 0.3, size=len(unit_of_row))
    median = weighted_quantile(0.5)
    # units are numbered in the order of their sorted ids, here the test's own numbering
    result = paired_bootstrap(median, x, y, Uncertainty(resamples=1000, seed=6),
                              clusters=unit_of_row * 7 + 3, strata=stratum_of_unit[unit_of_row])
    units = [np.flatnonzero(stratum_of_unit == s) for s in (0, 1)]

    def difference(*samples, axis=-1):
        rows = [np.atleast_2d(s) for s in samples]  # (1 or resamples, units of the stratum)
        out = []
        for r in range(max(len(s) for s in rows)):
            picked = np.concatenate([np.flatnonzero(unit_of_row == u)
                                     for s in rows for u in s[min(r, len(s) - 1)]])
            out.append(np.median(x[picked]) - np.median(y[picked]))
        return np.array(out) if np.ndim(samples[0]) > 1 else out[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = stats.bootstrap(tuple(units), difference, n_resamples=1000, method="BCa",
                                 rng=np.random.default_rng(6)).confidence_interval
    assert result.n_units == n_units
    assert abs(result.ci_low - direct.low) < 1e-12 and abs(result.ci_high - direct.high) < 1e-12


def test_a_cluster_in_two_strata_is_refused():
    with pytest.raises(ValueError, match="two strata"):
        paired_bootstrap(weighted_mean, np.ones(3), np.ones(3), Uncertainty(),
                         clusters=[1, 1, 2], strata=[0, 1, 1])


def test_no_resamples_no_interval():
    x, y, _ = _scores()
    result = paired_bootstrap(weighted_mean, x, y, Uncertainty(resamples=0))
    assert result.difference == pytest.approx(x.mean() - y.mean())
    assert (result.ci_low, result.ci_high, result.interval_method) == (None, None, None)


@pytest.mark.parametrize("name", ["mean", "median"])
def test_exact_permutation_test_is_scipys(name):
    x, y, _ = _scores(n=10)
    ours, theirs = {"mean": (weighted_mean, np.mean),
                    "median": (weighted_quantile(0.5), np.median)}[name]
    result = paired_permutation_test(ours, x, y, resamples=2000, seed=0)
    direct = stats.permutation_test(
        (x, y), lambda u, v, axis=-1: theirs(u, axis=axis) - theirs(v, axis=axis),
        permutation_type="samples", vectorized=True, n_resamples=2000)
    assert result.exact
    assert abs(result.p_value - direct.pvalue) < 1e-12
    assert result.difference == pytest.approx(direct.statistic, abs=1e-12)


def test_random_permutation_test_is_seeded_and_near_the_exact_p():
    x, y, _ = _scores(n=14)
    exact = paired_permutation_test(weighted_mean, x, y, resamples=2 ** 14, seed=0)
    sampled = paired_permutation_test(weighted_mean, x, y, resamples=4000, seed=1)
    assert exact.exact and not sampled.exact
    assert abs(sampled.p_value - exact.p_value) < 0.03
    assert paired_permutation_test(weighted_mean, x, y, resamples=4000, seed=1) == sampled


def test_clustered_permutation_swaps_whole_clusters():
    """Two clusters: four swap patterns, exact; the p-value is the fraction of them at least as
    extreme as the observed difference."""
    x = np.array([1.0, 2.0, 10.0, 11.0])
    y = np.array([0.0, 0.0, 0.0, 0.0])
    result = paired_permutation_test(weighted_mean, x, y, resamples=100, seed=0,
                                     clusters=["a", "a", "b", "b"])
    # null differences of the means: +-6, +-4.5 (swapping a, b, both, none): 2 of 4 as extreme
    assert result.exact and result.p_value == pytest.approx(0.5)


@pytest.mark.slow
def test_paired_accuracy_intervals_cover_the_true_difference():
    """1,000 simulated pairs of models on 400 items with known accuracies (0.75, 0.70, their
    outcomes correlated): the 95 % paired intervals cover the true difference 93-97 % of the
    time, and the paradigm-mean intervals (8 paradigms of 50 pairs) the true mean."""
    rng = np.random.default_rng(2024)
    settings = Uncertainty(resamples=2000, seed=0)
    strata = np.repeat(np.arange(8), 50)
    p_first = np.linspace(0.6, 0.9, 8)[strata]
    covered = covered_stratified = 0
    for _ in range(1000):
        shared = rng.random(400)
        first = shared < p_first
        # the second model agrees with the first on most items: P(correct) = p_first - 0.05
        second = np.where(rng.random(400) < 0.7, shared, rng.random(400)) < p_first - 0.05
        result = paired_accuracy(first, second, settings)
        covered += result.ci_low <= 0.05 <= result.ci_high
        stratified = paired_accuracy(first, second, settings, strata=strata)
        covered_stratified += stratified.ci_low <= 0.05 <= stratified.ci_high
    assert 930 <= covered <= 970
    assert 930 <= covered_stratified <= 970
