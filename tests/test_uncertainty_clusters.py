"""The cluster bootstrap of aggregate/uncertainty.py against scipy.stats.bootstrap (one
observation per cluster, the same seed and blocks: the same interval to 1e-12) and against a
slow loop over resamples (clusters of several members)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from spudflow.aggregate.uncertainty import (
    BCA,
    PERCENTILE,
    Uncertainty,
    cluster_bootstrap,
    resample_counts,
)


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
