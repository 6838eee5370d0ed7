"""Vectorised bootstrap machinery shared by the intervals (uncertainty.py) and the paired
comparisons (comparison.py): no Python loop per resample.

- A resample is a vector of counts, how often each unit (an item, or a cluster of items) was
  drawn; the units of each stratum are drawn within it. `unit_counts` draws them in blocks of
  resamples with scipy.stats.bootstrap's own calls (`rng.integers(0, n, (block, n))` per stratum
  per block), so with one stratum and no clusters the resamples are scipy's, index for index.
- Means of small-integer outcomes (0/1 accuracies, -1/0/1 paired differences): resampling n
  items with replacement gives each outcome value a multinomial count with the observed
  proportions, so `category_means` draws those counts (rng.multinomial per stratum: exact in
  distribution, O(strata x categories) per resample instead of O(items)). The resampled means
  are then computed in the same floating-point order as scipy computes them from its index
  draws, so the interval from the same resamples is scipy's to the last bits (tests).
- `interval`: the BCa interval (Efron & Tibshirani 14.3, 15.4, as scipy.stats.bootstrap computes
  it: z0 from the fraction of resamples below the estimate, acceleration from the jackknife of
  each stratum) and the percentile interval where BCa is undefined (a degenerate distribution).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

BCA = "bca"
PERCENTILE = "percentile"
_NORMAL = NormalDist()


def _ndtri(p: float) -> float:
    return _NORMAL.inv_cdf(p) if 0 < p < 1 else (-np.inf if p <= 0 else np.inf)


def percentile_of_score(theta_b: np.ndarray, theta_hat: float) -> float:
    """scipy's: the fraction of resamples below the estimate, ties counted half."""
    below = np.count_nonzero(theta_b < theta_hat) + np.count_nonzero(theta_b <= theta_hat)
    return below / (2 * len(theta_b))


def acceleration(jackknife_deviations: Sequence[np.ndarray]) -> float:
    """BCa's a-hat from U_ji = (n_j - 1) (mean_i theta_ji - theta_ji), the jackknife of each
    stratum j (scipy's sum over samples); NaN when no U differs from 0."""
    nums = sum(float(np.sum(u ** 3)) / len(u) ** 3 for u in jackknife_deviations if len(u))
    dens = sum(float(np.sum(u ** 2)) / len(u) ** 2 for u in jackknife_deviations if len(u))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(nums) / 6 / np.float64(dens) ** 1.5)


def jackknife_deviations(theta_ji: np.ndarray) -> np.ndarray:
    """U_ji of one stratum's leave-one-out estimates."""
    theta_ji = np.asarray(theta_ji, dtype=np.float64)
    return (len(theta_ji) - 1) * (np.mean(theta_ji) - theta_ji)


def interval(theta_hat: float, theta_b: np.ndarray, level: float,
             deviations: Sequence[np.ndarray] | None) -> tuple[float, float, str]:
    """(low, high, method): BCa when `deviations` (the jackknife's U per stratum) are given and
    the interval is finite, else the percentile interval of the resampled statistics."""
    alpha = (1 - level) / 2
    if deviations is not None:
        z0 = _ndtri(percentile_of_score(theta_b, theta_hat))
        a = acceleration(deviations)
        z = _ndtri(alpha)
        ends = []
        for zz in (z, -z):
            num = z0 + zz
            with np.errstate(divide="ignore", invalid="ignore"):
                ends.append(_cdf(z0 + num / (1 - a * num)))
        if all(np.isfinite(e) for e in ends):
            low, high = np.quantile(theta_b, ends)
            if np.isfinite(low) and np.isfinite(high):
                return float(low), float(high), BCA
    low, high = np.quantile(theta_b, [alpha, 1 - alpha])
    return float(low), float(high), PERCENTILE


def _cdf(x: float) -> float:
    if np.isnan(x):
        return np.nan
    return _NORMAL.cdf(x) if np.isfinite(x) else (0.0 if x < 0 else 1.0)


# ---- means of small-integer outcomes --------------------------------------------------------

def is_small_integer(values: np.ndarray) -> bool:
    """Outcomes whose sums are exact in float64 (integers of small magnitude): the multinomial
    path applies."""
    values = np.asarray(values, dtype=np.float64)
    return bool(np.all(values == np.round(values)) and np.all(np.abs(values) <= 2 ** 20))


def category_means(groups: Sequence[np.ndarray], resamples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """(groups, resamples): each group's mean over `resamples` resamples of its items with
    replacement, drawn as multinomial counts of its distinct values: as conditional binomials,
    one vectorised draw over every group and resample per value (one in all for 0/1 outcomes)."""
    tallies = [np.unique(np.asarray(g, dtype=np.float64), return_counts=True) for g in groups]
    n_levels = max(len(levels) for levels, _ in tallies)
    levels = np.zeros((len(groups), n_levels))
    shares = np.zeros((len(groups), n_levels))
    for g, (values, counts) in enumerate(tallies):
        levels[g, :len(values)] = values
        shares[g, :len(values)] = counts / counts.sum()
    n = np.array([len(g) for g in groups], dtype=np.int64)
    remaining = np.repeat(n[:, None], resamples, axis=1)
    sums = np.zeros((len(groups), resamples))
    left = np.ones(len(groups))  # the share of the values not drawn yet
    for level in range(n_levels - 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.clip(np.where(left > 0, shares[:, level] / left, 0.0), 0.0, 1.0)
        drawn = rng.binomial(remaining, p[:, None])
        sums += drawn * levels[:, level:level + 1]
        remaining -= drawn
        left -= shares[:, level]
    sums += remaining * levels[:, -1:]
    # an integer sum is exact, so sum / n is the correctly rounded mean, as np.mean's
    return sums / n[:, None]


def mean_of_means_deviations(groups: Sequence[np.ndarray], n_groups: int) -> list[np.ndarray]:
    """The jackknife U of the mean of `n_groups` group means, per resampled group: leaving item
    i of group j out moves the statistic by ((x_i - m_j) / (n_j - 1)) / n_groups from its
    jackknife mean, so U_ji = (x_i - m_j) / n_groups (closed form: no leave-one-out loop)."""
    return [(np.asarray(g, dtype=np.float64) - np.mean(g)) / n_groups for g in groups]


# ---- unit counts for any statistic ----------------------------------------------------------

def block_size(n_units: int, resamples: int, budget_bytes: int = 64 * 2 ** 20) -> int:
    """Resamples per block: an (block, units) int64 draw within the budget. Depends only on the
    sizes, so the draws (and the interval) are the same on every machine."""
    return int(max(1, min(resamples, budget_bytes // (8 * max(1, n_units)))))


def unit_counts(strata: Sequence[np.ndarray], resamples: int, rng: np.random.Generator,
                n_units: int, width: int = 0):
    """Yields (block, n_units) count matrices: per block, per stratum (an array of unit
    indices), scipy's `rng.integers(0, len(stratum), (block, len(stratum)))`, counted per
    unit. `width`: the columns the caller spreads a block over (its rows), for the block size."""
    block = block_size(max(n_units, width), resamples)
    for start in range(0, resamples, block):
        b = min(block, resamples - start)
        counts = np.zeros(b * n_units, dtype=np.int64)
        offsets = (np.arange(b, dtype=np.int64) * n_units)[:, None]
        for units in strata:
            drawn = units[rng.integers(0, len(units), (b, len(units)))]
            counts += np.bincount((drawn + offsets).ravel(), minlength=b * n_units)
        yield counts.reshape(b, n_units)
