"""The banded joint draws of a quantile over several sides (aggregate/joint_quantiles.py): each
value is the weighted quantile of its resample's counts to the bit, the counts are the
multinomial of n draws with replacement, and the SPUD comparisons that use them give the
intervals of index draws within Monte Carlo error."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from spudflow.aggregate import joint_quantiles
from spudflow.aggregate.comparison import paired_bootstrap, resample_sides, weighted_quantile
from spudflow.aggregate.uncertainty import Uncertainty


def _sides(n: int, seed: int) -> list[np.ndarray]:
    """Three sides on the same units: one with ties, one correlated with it, one unrelated;
    the first twice more under another name (the same ranking)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.lognormal(size=n), 1)
    return [x, np.round(x * rng.lognormal(0, 0.3, n), 1), rng.permutation(x), x * 2]


@pytest.mark.parametrize(("n", "q", "sds"), [(300, 0.5, 0.3), (300, 0.25, 1.0), (301, 0.75, 4.0),
                                            (40, 0.5, 0.0)])
def test_each_draw_is_the_weighted_quantile_of_its_counts(n, q, sds):
    """Narrow bands send many resamples to the completed path, wide ones few: both give the
    weighted quantile of the resample's own counts, bit for bit, and every resample draws n."""
    sides = _sides(n, n)
    quantile = weighted_quantile(q)
    bands = joint_quantiles.bands_of(sides, q, sds)
    assert len(bands.band_slots) == 3  # x and 2x share a ranking
    kept = []
    drawn = joint_quantiles.joint_quantile_draws(bands, quantile, sides, 2000,
                                                 np.random.default_rng(1), kept_counts=kept)
    counts = np.concatenate(kept)
    assert counts.shape == (2000, n) and np.all(counts.sum(axis=1) == n)
    for side, values in zip(sides, drawn, strict=True):
        assert np.array_equal(values, quantile(side, counts))
    # the resamples whose order statistics left a band were completed: some, not all, when narrow
    j, j1, _ = joint_quantiles.interpolated_ranks(n, q)
    left = np.zeros(2000, dtype=bool)
    for side in sides[:3]:
        order = np.argsort(side, stable=True)
        below = counts[:, order[:bands.lo]].sum(axis=1)
        band = counts[:, order[bands.lo:bands.lo + bands.band_slots.shape[1]]].sum(axis=1)
        left |= (below > j) | (below + band <= j1)
    if sds < 2:
        assert 0 < left.sum() < 2000


def test_the_counts_are_the_multinomial_of_n_draws():
    """Six units, the band forced narrow (positions 1-4: a cell below it, a cell above): the
    count vectors' frequencies over 300,000 resamples against Multinomial(6, 1/6 each), every
    one of the 462 vectors (chi-square)."""
    n = 6
    x = np.random.default_rng(4).random(n)
    sides = [x, 2 * x]
    bands = joint_quantiles.bands_of(sides, 0.5, 0.0)
    assert len(bands.cells) == 2 and len(bands.u_units) == 4  # both steps of the draw
    kept = []
    joint_quantiles.joint_quantile_draws(bands, weighted_quantile(0.5), sides, 300_000,
                                         np.random.default_rng(5), kept_counts=kept)
    vectors, observed = np.unique(np.concatenate(kept), axis=0, return_counts=True)
    every = [v for v in itertools.product(range(n + 1), repeat=n) if sum(v) == n]
    assert len(every) == 462 and len(vectors) == 462
    pmf = np.array([math.factorial(n) / math.prod(math.factorial(c) for c in v) / n ** n
                    for v in map(tuple, vectors)])
    assert stats.chisquare(observed, pmf * observed.sum()).pvalue > 1e-3


def test_spud_sized_comparisons_draw_jointly_and_agree_with_index_draws():
    """Four thousand originals: resample_sides draws the medians jointly (not index draws), in
    an order of its own, and each pair's interval and p are those of index draws within Monte
    Carlo error."""
    rng = np.random.default_rng(7)
    x = rng.lognormal(0.1, 0.4, 4000)
    sides = [x, x * rng.lognormal(0.02, 0.05, 4000), x * rng.lognormal(0.0, 0.3, 4000)]
    median = weighted_quantile(0.5)
    assert joint_quantiles.banded_length(4000, 0.5)
    settings = Uncertainty(resamples=4000, seed=3)
    memo = {}
    resample_sides(median, sides, settings, memo)
    assert len(memo["joint draws"]) == 3
    def index_median(values, weights):  # no `quantile`: drawn by indices
        return median(values, weights)

    for a, b in [(0, 1), (0, 2), (1, 2)]:
        joint = paired_bootstrap(median, sides[a], sides[b], settings, memo=memo)
        index = paired_bootstrap(index_median, sides[a], sides[b], settings)
        assert index == paired_bootstrap(median, sides[a], sides[b], settings)  # no memo
        width = index.ci_high - index.ci_low
        assert joint.difference == index.difference
        assert abs(joint.ci_low - index.ci_low) < 0.1 * width
        assert abs(joint.ci_high - index.ci_high) < 0.1 * width
        assert (joint.p_value < 0.05) == (index.p_value < 0.05)
    # the same sides in another order: the same bytes
    again = {}
    resample_sides(median, sides[::-1], settings, again)
    assert all(np.array_equal(memo[k], again[k]) for k in memo if k != "joint draws")
    # either way round, the same draw
    flipped = paired_bootstrap(median, sides[1], sides[0], settings, memo=memo)
    forward = paired_bootstrap(median, sides[0], sides[1], settings, memo=memo)
    assert flipped.difference == -forward.difference
    assert flipped.ci_low == pytest.approx(-forward.ci_high, abs=1e-12)


def test_a_jointly_drawn_side_pairs_only_with_its_draw():
    """A side of one joint draw paired with a side of another, or with one drawn afresh, would
    pair two different sets of resamples: refused."""
    rng = np.random.default_rng(8)
    x = rng.lognormal(size=3000)
    y, z = x * rng.lognormal(0, 0.1, 3000), x * rng.lognormal(0, 0.2, 3000)
    median = weighted_quantile(0.5)
    settings = Uncertainty(resamples=200, seed=0)
    memo = {}
    resample_sides(median, [x, y], settings, memo)
    resample_sides(median, [z], settings, memo)  # another call: another draw
    paired_bootstrap(median, x, y, settings, memo=memo)
    for other in (z, x * 1.1):
        with pytest.raises(ValueError, match="different draws"):
            paired_bootstrap(median, x, other, settings, memo=memo)


def test_small_samples_keep_the_index_draws():
    """Where the bands would hold most units (a tiny run's few originals), resample_sides draws
    indices, as paired_bootstrap alone does: the numbers of the tables of small runs do not
    move."""
    sides = _sides(40, 2)[:3]
    median = weighted_quantile(0.5)
    assert not joint_quantiles.banded_length(40, 0.5)
    settings = Uncertainty(resamples=500, seed=1)
    memo = {}
    resample_sides(median, sides, settings, memo)
    assert "joint draws" not in memo
    assert paired_bootstrap(median, sides[0], sides[1], settings, memo=memo) == \
        paired_bootstrap(median, sides[0], sides[1], settings)
