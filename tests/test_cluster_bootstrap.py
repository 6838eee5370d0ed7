"""aggregate/cluster_bootstrap.py, kappa_interval.py and resampling.py's quantile path against
scipy.stats.bootstrap (one observation per cluster, the same seed and blocks: the same interval to
1e-12), against a slow loop over resamples (clusters of several members) and against the cluster
bootstrap of np.quantile (the quantile path, given scipy's resamples); the quantile path's direct
draws of order statistics against sorted index draws (their distribution)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from spudflow.aggregate.cluster_bootstrap import cluster_bootstrap
from spudflow.aggregate.kappa_interval import (
    cells_of,
    kappa_interval,
    kappa_interval_of_draws,
    kappa_of_cells,
)
from spudflow.aggregate.resampling import (
    jackknife_indices,
    order_statistic_draws,
    quantile_bootstrap,
    quantile_interval,
    quantile_jackknife,
    quantile_targets,
    quantiles_at,
    resample_counts,
    resample_indices,
    sorted_quantiles,
)
from spudflow.aggregate.uncertainty import BCA, PERCENTILE, Uncertainty


@pytest.mark.parametrize("method", [PERCENTILE, BCA])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_one_observation_per_cluster_is_scipys_bootstrap(method, level):
    values = np.random.default_rng(0).lognormal(size=57)
    settings = Uncertainty(level, 2000, 5)
    quantiles = [0.25, 0.5, 0.75]
    low, high, methods = cluster_bootstrap(
        lambda i: np.quantile(values[i], quantiles, axis=-1).T, len(values), settings,
        bca=method == BCA, block=300)
    assert list(methods) == [method] * 3
    for k, q in enumerate(quantiles):
        expected = stats.bootstrap(
            (values,), lambda x, axis=-1, q=q: np.quantile(x, q, axis=axis), n_resamples=2000,
            confidence_level=level, method=method, batch=300, vectorized=True,
            rng=np.random.default_rng(5)).confidence_interval
        assert abs(low[k] - expected.low) < 1e-12 and abs(high[k] - expected.high) < 1e-12


def test_a_ratio_of_sums_is_scipys_paired_bootstrap():
    rng = np.random.default_rng(1)
    right = rng.integers(0, 30, size=40).astype(float)
    words = right + rng.integers(1, 10, size=40)
    low, high, methods = cluster_bootstrap(
        lambda i: (right[i].sum(-1) / words[i].sum(-1))[:, None], 40, Uncertainty(0.95, 3000, 2))
    expected = stats.bootstrap((right, words), lambda a, b, axis=-1: a.sum(axis) / b.sum(axis),
                               paired=True, n_resamples=3000, vectorized=True,
                               rng=np.random.default_rng(2)).confidence_interval
    assert methods[0] == BCA
    assert abs(low[0] - expected.low) < 1e-12 and abs(high[0] - expected.high) < 1e-12


def test_clusters_of_several_members_against_a_slow_loop():
    """Percentile interval of the pooled mean of clusters of unequal sizes: each resample a loop
    over its drawn clusters, every member taken."""
    rng = np.random.default_rng(4)
    clusters = [rng.normal(size=rng.integers(1, 6)) for _ in range(30)]
    sums = np.array([c.sum() for c in clusters])
    sizes = np.array([len(c) for c in clusters], dtype=float)
    settings = Uncertainty(0.95, 500, 9)
    low, high, _ = cluster_bootstrap(
        lambda i: (sums[i].sum(-1) / sizes[i].sum(-1))[:, None], 30, settings, bca=False,
        block=128)
    draw = np.random.default_rng(9)
    slow = []
    for start in range(0, 500, 128):
        for row in draw.integers(0, 30, (min(128, 500 - start), 30)):
            members = np.concatenate([clusters[j] for j in row])
            slow.append(members.mean())
    expected = np.quantile(slow, [0.025, 0.975])
    assert abs(low[0] - expected[0]) < 1e-12 and abs(high[0] - expected[1]) < 1e-12


def test_resample_counts_count_the_draws():
    indices = np.array([[0, 0, 2], [1, 2, 1]])
    assert resample_counts(indices, 3).tolist() == [[2, 0, 1], [0, 2, 1]]


def test_an_undefined_resample_gives_no_interval_and_resamples_0_none():
    values = np.array([0.0, 0.0, 1.0, 2.0])
    low, high, methods = cluster_bootstrap(
        lambda i: (1 / values[i].min(-1))[:, None], 4, Uncertainty(0.95, 200, 0))
    assert np.isnan(low[0]) and np.isnan(high[0]) and methods[0] is None
    low, high, methods = cluster_bootstrap(lambda i: values[i].mean(-1)[:, None], 4,
                                           Uncertainty(0.95, 0, 0))
    assert np.isnan(low[0]) and methods[0] is None


def test_one_method_names_every_interval_of_a_row():
    """A constant statistic beside a varying one: BCa is undefined for the constant, so both get
    the percentile interval under one_method."""
    values = np.random.default_rng(3).normal(size=25)
    statistic = lambda i: np.stack([values[i].mean(-1), np.zeros(len(i))], axis=-1)  # noqa: E731
    _, _, apart = cluster_bootstrap(statistic, 25, Uncertainty(0.95, 500, 0))
    assert list(apart) == [BCA, PERCENTILE]
    _, _, together = cluster_bootstrap(statistic, 25, Uncertainty(0.95, 500, 0), one_method=True)
    assert list(together) == [PERCENTILE, PERCENTILE]


def _choices(n=120, seed=6):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.6).astype(int)
    b = np.where(rng.random(n) < 0.75, a, 1 - a)
    return a, b


def test_kappa_of_cells_is_sklearns():
    from sklearn.metrics import cohen_kappa_score

    for seed in range(5):
        a, b = _choices(40 + seed, seed)
        assert abs(kappa_of_cells(cells_of(a, b)) - cohen_kappa_score(a, b)) < 1e-12
    assert np.isnan(kappa_of_cells(np.array([0, 0, 0, 7])))  # both constant: undefined


@pytest.mark.parametrize("method", [PERCENTILE, BCA])
def test_kappa_interval_of_scipys_draws_is_scipys(method):
    """Given the tables of the items scipy draws (same seed, same blocks), the kappa interval is
    scipy.stats.bootstrap's paired one to 1e-12: the statistic, the jackknife of the tables and
    the interval are scipy's; only the draw differs in the table (see the next test)."""
    a, b = _choices()
    settings = Uncertainty(0.95, 2000, 11)
    code = 2 * a + b
    draws = np.concatenate([resample_counts(i, len(a)) @ np.eye(4)[code]
                            for i in resample_indices(len(a), settings.resamples, settings.seed,
                                                             block=500)])
    low, high, got = kappa_interval_of_draws(cells_of(a, b), draws, settings.level)

    def kappa(x, y, axis=-1):
        cells = np.stack([np.sum((x == i) & (y == j), axis=axis) for i in (0, 1) for j in (0, 1)],
                         axis=-1)
        return kappa_of_cells(cells)

    expected = stats.bootstrap((a, b), kappa, paired=True, n_resamples=2000, batch=500,
                               vectorized=True, method=method,
                               rng=np.random.default_rng(11)).confidence_interval
    if method == BCA:
        assert got == BCA
    else:  # the percentile interval of the same draws
        low, high = np.quantile(kappa_of_cells(draws), [0.025, 0.975])
    assert abs(low - expected.low) < 1e-12 and abs(high - expected.high) < 1e-12


def test_kappa_interval_draws_tables_as_items_are_drawn():
    """The multinomial draw of the 2 x 2 table is the distribution of the tables of items drawn
    with replacement: at 20,000 resamples the two intervals agree to Monte Carlo error."""
    a, b = _choices(200, 2)
    low, high, method = kappa_interval(a, b, Uncertainty(0.95, 20_000, 1))
    expected = stats.bootstrap((a, b), lambda x, y: kappa_of_cells(cells_of(x, y)), paired=True,
                               n_resamples=20_000, vectorized=False,
                               rng=np.random.default_rng(1)).confidence_interval
    assert method == BCA
    assert abs(low - expected.low) < 0.01 and abs(high - expected.high) < 0.01


def test_kappa_interval_is_none_where_kappa_is_not_defined():
    assert kappa_interval(np.ones(9, int), np.ones(9, int), Uncertainty(0.95, 200, 0)) == (
        None, None, None)
    a, b = _choices()
    assert kappa_interval(a, b, Uncertainty(0.95, 0, 0)) == (None, None, None)


@pytest.mark.parametrize("n", [1, 2, 5, 40, 1001])
def test_sorted_quantiles_are_numpys_bit_for_bit(n):
    rng = np.random.default_rng(n)
    values = np.round(rng.lognormal(size=(50, n)), 1)  # ties, as ratios of short texts have
    quantiles = [0.0, 0.25, 0.5, 0.75, 0.9, 1.0]
    expected = np.moveaxis(np.quantile(values, quantiles, axis=-1), 0, -1)
    assert np.array_equal(sorted_quantiles(values, quantiles), expected)


def _ratios(n: int, seed: int) -> np.ndarray:
    """Ratio-like values with ties (rounded, as ratios of short texts have) and a NaN-free tail."""
    return np.round(np.random.default_rng(seed).lognormal(size=n), 1)


def _scipy_order_statistics(values, quantiles, resamples, seed, block=1000):
    """The order statistics quantile_targets of scipy's own resamples (its index draws, as
    ranks in the sorted values), rows of resamples."""
    n = len(values)
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(values, stable=True)] = np.arange(n)
    targets = quantile_targets(n, quantiles)
    return np.concatenate([np.sort(rank[i], axis=-1)[:, targets]
                           for i in resample_indices(n, resamples, seed, block)])


@pytest.mark.parametrize("n", [1, 2, 3, 40, 1001])
def test_quantiles_at_order_statistics_are_those_of_the_sorted_resamples(n):
    """Given a resample's order statistics, quantiles_at gives np.quantile of the resample, and
    the closed-form jackknife np.quantile of each leave-one-out sample, bit for bit (ties)."""
    values, quantiles = _ratios(n, n), [0.0, 0.25, 0.5, 0.75, 1.0]
    drawn = np.concatenate([sorted_quantiles(values[i], quantiles)
                            for i in resample_indices(n, 700, 3, block=300)])
    positions = _scipy_order_statistics(values, quantiles, 700, 3, block=300)
    got = quantiles_at(np.sort(values), positions, quantile_targets(n, quantiles), quantiles)
    assert np.array_equal(got, drawn)
    if n > 1:
        left_out = np.concatenate([sorted_quantiles(values[i], quantiles)
                                   for i in jackknife_indices(n, block=300)])
        # distinct values with their counts: each column's multiset, bit for bit
        distinct, counts = quantile_jackknife(np.sort(values), quantiles)
        for k in range(len(quantiles)):
            expanded = np.repeat(distinct[:, k], counts[:, k].astype(int))
            assert np.array_equal(np.sort(expanded), np.sort(left_out[:, k]))


@pytest.mark.parametrize("one_method", [False, True])
@pytest.mark.parametrize("n", [1, 2, 7, 300])
def test_quantile_interval_of_scipys_resamples_is_the_cluster_bootstrap(n, one_method):
    values, quartiles, settings = _ratios(n, 10 + n), [0.25, 0.5, 0.75], Uncertainty(0.95, 2000, 4)
    expected = cluster_bootstrap(lambda i: sorted_quantiles(values[i], quartiles), n, settings,
                                 one_method=one_method)
    positions = _scipy_order_statistics(values, quartiles, 2000, 4)
    got = quantile_interval(values, quartiles, 0.95, positions, one_method)
    assert list(got[2]) == list(expected[2])
    for ours, theirs in zip(got[:2], expected[:2], strict=True):
        assert np.allclose(ours, theirs, rtol=0, atol=1e-12, equal_nan=True)


def test_quantile_interval_of_scipys_resamples_is_scipys():
    values = _ratios(83, 5)
    for q in (0.25, 0.5, 0.75):
        positions = _scipy_order_statistics(values, [q], 3000, 7)
        low, high, methods = quantile_interval(values, [q], 0.95, positions)
        expected = stats.bootstrap((values,), lambda x, axis=-1, q=q: np.quantile(x, q, axis=axis),
                                   n_resamples=3000, batch=1000, vectorized=True,
                                   method=methods[0], rng=np.random.default_rng(7))
        assert abs(low[0] - expected.confidence_interval.low) < 1e-12
        assert abs(high[0] - expected.confidence_interval.high) < 1e-12


@pytest.mark.parametrize("n", [1, 5, 60])
def test_order_statistic_draws_have_the_distribution_of_sorted_index_draws(n):
    """Each drawn order statistic, and the gap between neighbours (the pair a quantile
    interpolates between), against those of 20,000 sorted resamples of n indices: a two-sample
    chi-square test of their counts."""
    targets = np.unique([0, (n - 1) // 4, (n - 1) // 2, min((n - 1) // 2 + 1, n - 1), n - 1])
    resamples = 20_000
    direct = order_statistic_draws(n, targets, resamples, 11)
    rng = np.random.default_rng(12)
    sorted_draws = np.sort(rng.integers(0, n, (resamples, n)), axis=-1)[:, targets]
    columns = [(direct[:, k], sorted_draws[:, k]) for k in range(len(targets))]
    columns += [(direct[:, k + 1] - direct[:, k], sorted_draws[:, k + 1] - sorted_draws[:, k])
                for k in range(len(targets) - 1)]
    for ours, theirs in columns:
        assert ours.min() >= 0 and ours.max() <= n - 1
        values = np.union1d(ours, theirs)
        table = np.array([[np.sum(ours == v) for v in values],
                          [np.sum(theirs == v) for v in values]])
        table = table[:, table.sum(axis=0) >= 10]  # cells the chi-square approximation holds
        if table.shape[1] > 1:
            assert stats.chi2_contingency(table).pvalue > 1e-4


def test_quantile_bootstrap_covers_and_reruns():
    values = _ratios(500, 9)
    first = quantile_bootstrap(values, [0.25, 0.5, 0.75], 0.95, 4000, 0, one_method=True)
    again = quantile_bootstrap(values, [0.25, 0.5, 0.75], 0.95, 4000, 0, one_method=True)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    point = np.quantile(values, [0.25, 0.5, 0.75])
    assert np.all(first[0] <= point) and np.all(point <= first[1])
    off = quantile_bootstrap(values, [0.25, 0.5, 0.75], 0.95, 0, 0)
    assert np.all(np.isnan(off[0])) and list(off[2]) == [None] * 3
