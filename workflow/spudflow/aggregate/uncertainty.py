"""Intervals of the headline figures (config `aggregate.uncertainty`).

- A proportion of independent items (an accuracy over pairs): Wilson's score interval, a closed
  form that needs no resampling (so it is given with `resamples: 0` too), and lm-evaluation-
  harness's `acc_stderr`: the sample standard deviation of the 0/1 outcomes over sqrt(n).
- A mean of group means (BLiMP's paradigm mean): a bootstrap stratified by group, the pairs
  of each group resampled within it (scipy.stats.bootstrap with one sample per group), BCa
  where it is defined and the percentile interval where it is not (every resample equal);
  `resamples: 0` gives none.

Every bootstrap draws from its own generator seeded with `seed`, so a figure's interval does
not depend on which other figures the table holds or their order.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

BCA = "bca"
PERCENTILE = "percentile"
MIN_RESAMPLES = 100  # below this a 95 % percentile interval rests on a handful of resamples
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class Uncertainty:
    level: float = 0.95
    resamples: int = 10_000
    seed: int = 0

    def __post_init__(self):
        if not 0 < self.level < 1:
            raise ValueError(f"interval level {self.level} is not between 0 and 1")
        if self.resamples != 0 and not MIN_RESAMPLES <= self.resamples <= MAX_RESAMPLES:
            raise ValueError(f"resamples {self.resamples}: 0 (no bootstrap) or "
                             f"{MIN_RESAMPLES} to {MAX_RESAMPLES}")
        if self.seed < 0:
            raise ValueError(f"seed {self.seed} is negative")


def wilson(successes, n, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of successes / n, elementwise; NaN where n = 0."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)  # the standard library's: no scipy to load
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = centre - half, centre + half
    # the closed form's rounding can put an end a hair outside [0, 1] at p = 0 or 1
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def accuracy_stderr(successes, n) -> np.ndarray:
    """lm-eval's acc_stderr: sample sd (ddof 1) of the 0/1 outcomes / sqrt(n); NaN for n < 2."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        variance = np.where(n > 1, n * p * (1 - p) / (n - 1), np.nan)
        return np.sqrt(variance) / np.sqrt(n)


def _mean_of_means(constants: Sequence[float], n_groups: int):
    """The statistic: the mean over the resampled groups' means and the one-item groups' values
    (resampling one item always gives it back; scipy needs two per sample)."""
    fixed = float(np.sum(constants))

    def statistic(*groups, axis=-1):
        return (np.sum([np.mean(g, axis=axis) for g in groups], axis=0) + fixed) / n_groups
    return statistic


def stratified_mean_of_means(groups: Sequence[np.ndarray], settings: Uncertainty
                             ) -> tuple[float | None, float | None, str | None]:
    """(low, high, method) of the unweighted mean of the groups' means, each group resampled
    within itself; (None, None, None) with resamples 0 or no group."""
    groups = [np.asarray(g, dtype=np.float64) for g in groups if len(g)]
    if settings.resamples == 0 or not groups:
        return None, None, None
    resampled = tuple(g for g in groups if len(g) > 1)
    constants = [float(g[0]) for g in groups if len(g) == 1]
    if not resampled:  # nothing varies: the interval is the point
        value = float(np.mean(constants))
        return value, value, PERCENTILE
    from scipy import stats  # only a bootstrap loads scipy

    statistic = _mean_of_means(constants, len(groups))
    for method in (BCA, PERCENTILE):
        with warnings.catch_warnings():
            # a degenerate distribution (every resample equal) makes BCa NaN: percentile then
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            with np.errstate(divide="ignore", invalid="ignore"):
                result = stats.bootstrap(
                    resampled, statistic, n_resamples=settings.resamples,
                    confidence_level=settings.level, method=method, vectorized=True,
                    rng=np.random.default_rng(settings.seed))
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high), method
    raise AssertionError("a percentile interval of finite data is finite")


# --- resampling units that are not one sample's items: clusters, sentences, pairs -------------
# A cluster bootstrap draws n cluster indices with replacement per resample, exactly as
# scipy.stats.bootstrap draws the indices of one sample (rng.integers(0, n, (block, n)) per block
# of resamples), so that a statistic of one observation per cluster gets scipy's interval to the
# rounding; the statistic then sees an index matrix and may take every member of each cluster.
BLOCK = 1000  # resamples drawn and evaluated at once: memory block x n


def resample_indices(n: int, settings: Uncertainty, block: int = BLOCK):
    """The resamples' cluster indices, (block, n) at a time, from a generator seeded with
    settings.seed; the same stream as scipy.stats.bootstrap(..., batch=block, rng=seed)."""
    rng = np.random.default_rng(settings.seed)
    for start in range(0, settings.resamples, block):
        yield rng.integers(0, n, (min(block, settings.resamples - start), n))


def jackknife_indices(n: int, block: int = BLOCK):
    """Leave-one-out index rows (n - 1 indices each), (block, n - 1) at a time, in scipy's order."""
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))[:, None]
        kept = np.arange(n - 1)[None, :]
        yield kept + (kept >= rows)


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n clusters is drawn in each resample: (rows, n) float64."""
    rows = indices.shape[0]
    flat = (np.arange(rows)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


def sorted_quantiles(values: np.ndarray, quantiles: Sequence[float]) -> np.ndarray:
    """np.quantile(values, quantiles, axis=-1) (method `linear`), moved to the last axis
    (..., k), bit for bit, computed as numpy does it from a row sort: np.quantile along the
    last axis of a 2-D block partitions a strided copy and takes ten times as long."""
    ordered = np.sort(values, axis=-1)
    n = ordered.shape[-1]
    q = np.asarray(quantiles, dtype=np.float64)
    virtual = (n - 1) * q  # numpy's virtual index of method linear
    previous = np.floor(virtual)
    gamma = virtual - previous
    below = previous.astype(np.int64)
    above = below + 1
    last = virtual >= n - 1
    below[last], above[last] = n - 1, n - 1
    first = virtual < 0
    below[first], above[first] = 0, 0
    a, b = ordered[..., below], ordered[..., above]
    difference = b - a
    # numpy's _lerp: from the nearer end
    return np.where(gamma >= 0.5, b - difference * (1 - gamma), a + difference * gamma)


def interval_of(theta_hat: np.ndarray, theta_b: np.ndarray, theta_jack: np.ndarray | None,
                level: float, one_method: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) per statistic (last axis) from its point value theta_hat (k,), its
    bootstrap distribution theta_b (B, k) and its jackknife values theta_jack (n, k) (None: no
    BCa): BCa as scipy.stats.bootstrap computes it where it is finite, the percentile interval
    elsewhere (`one_method`: everywhere unless BCa is finite for every statistic, so that one
    method names the intervals of a row); NaN (method None) where a resample has no value."""
    from scipy.special import ndtr, ndtri

    theta_hat = np.asarray(theta_hat, np.float64)
    alpha = (1 - level) / 2
    percentile = np.quantile(theta_b, [alpha, 1 - alpha], axis=0)
    low, high = percentile[0].copy(), percentile[1].copy()
    method = np.full(theta_hat.shape, PERCENTILE, dtype=object)
    if theta_jack is not None and len(theta_jack) > 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            below = (np.count_nonzero(theta_b < theta_hat, axis=0)
                     + np.count_nonzero(theta_b <= theta_hat, axis=0)) / (2 * len(theta_b))
            z0 = ndtri(below)
            n = float(len(theta_jack))
            u = (n - 1) * (theta_jack.mean(axis=0) - theta_jack)
            a = 1 / 6 * (np.sum(u ** 3, axis=0) / n ** 3) / (np.sum(u ** 2, axis=0) / n ** 2) ** 1.5
            z = float(ndtri(alpha))
            ends = []
            for z_end in (z, -z):
                shifted = z0 + z_end
                ends.append(ndtr(z0 + shifted / (1 - a * shifted)))
        for k in range(theta_hat.shape[0]):
            if not (np.isfinite(ends[0][k]) and np.isfinite(ends[1][k])):
                continue
            bca = np.quantile(theta_b[:, k], [ends[0][k], ends[1][k]])
            if np.all(np.isfinite(bca)):
                low[k], high[k], method[k] = bca[0], bca[1], BCA
    if one_method and not np.all(method == BCA):
        low, high = percentile[0].copy(), percentile[1].copy()
        method[:] = PERCENTILE
    undefined = np.any(~np.isfinite(theta_b), axis=0)
    low[undefined], high[undefined], method[undefined] = np.nan, np.nan, None
    return low, high, method


def cluster_bootstrap(statistic, n: int, settings: Uncertainty, bca: bool = True,
                      block: int = BLOCK, one_method: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) of a vector of k statistics over n clusters: `statistic(indices)`
    maps an index matrix (rows, m) of clusters to (rows, k) values; the point value is its value
    on arange(n), the bootstrap draws n clusters per resample (resample_indices) and BCa's
    acceleration comes from the leave-one-cluster-out jackknife. NaN (method None) with
    resamples 0 or no cluster."""
    if n == 0:
        raise ValueError("a bootstrap over no cluster")
    theta_hat = np.asarray(statistic(np.arange(n)[None, :]), np.float64)[0]
    if settings.resamples == 0:
        nothing = np.full(theta_hat.shape, np.nan)
        return nothing, nothing.copy(), np.full(theta_hat.shape, None, dtype=object)
    theta_b = np.concatenate([np.asarray(statistic(i), np.float64)
                              for i in resample_indices(n, settings, block)])
    jack = (np.concatenate([np.asarray(statistic(i), np.float64)
                            for i in jackknife_indices(n, block)])
            if bca and n > 1 else None)
    return interval_of(theta_hat, theta_b, jack, settings.level, one_method)


# --- Cohen's kappa of two binary choices on the same items ------------------------------------
# Kappa depends on the items only through the 2 x 2 table of the two choices, so a resample of n
# items is a draw of that table: Multinomial(n, table / n), the distribution of counting n items
# drawn with replacement, at the cost of 4 cells instead of n indices per resample (749,500
# Japanese pairs x 10,000 resamples would be 7.5e9 indices).

def kappa_of_cells(cells: np.ndarray) -> np.ndarray:
    """Cohen's kappa of 2 x 2 tables given as (..., 4) counts of (a, b) = (0,0), (0,1), (1,0),
    (1,1); NaN where it is undefined (both choices constant)."""
    cells = np.asarray(cells, dtype=np.float64)
    n = cells.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (cells[..., 0] + cells[..., 3]) / n
        a1 = (cells[..., 2] + cells[..., 3]) / n
        b1 = (cells[..., 1] + cells[..., 3]) / n
        expected = a1 * b1 + (1 - a1) * (1 - b1)
        kappa = (observed - expected) / (1 - expected)
    return np.where(expected < 1, kappa, np.nan)


def cells_of(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 2 x 2 table of two 0/1 choices on the same items, as kappa_of_cells takes it."""
    return np.bincount(2 * np.asarray(a, np.int64) + np.asarray(b, np.int64), minlength=4)


def kappa_interval_of_draws(cells: np.ndarray, cells_b: np.ndarray, level: float
                            ) -> tuple[float, float, str | None]:
    """(low, high, method) of kappa from its resampled tables cells_b (B, 4): BCa with the
    leave-one-item-out jackknife (one value per cell, repeated for its items), percentile where
    BCa is undefined; NaN (None) where a resample has no kappa."""
    cells = np.asarray(cells, np.int64)
    theta_hat = kappa_of_cells(cells)[None]
    left_out = kappa_of_cells(cells[None, :] - np.eye(4, dtype=np.int64))
    jack = np.repeat(left_out, cells)[:, None]
    low, high, method = interval_of(theta_hat, kappa_of_cells(cells_b)[:, None], jack, level)
    return float(low[0]), float(high[0]), method[0]


def kappa_interval(a: np.ndarray, b: np.ndarray, settings: Uncertainty
                   ) -> tuple[float | None, float | None, str | None]:
    """(low, high, method) of Cohen's kappa of a and b over their items (see above); Nones with
    resamples 0, no item, or kappa undefined on the items or on a resample."""
    cells = cells_of(a, b)
    n = int(cells.sum())
    if settings.resamples == 0 or n == 0 or np.isnan(kappa_of_cells(cells)):
        return None, None, None
    rng = np.random.default_rng(settings.seed)
    draws = np.concatenate([rng.multinomial(n, cells / n, size=min(BLOCK, settings.resamples - s))
                            for s in range(0, settings.resamples, BLOCK)])
    low, high, method = kappa_interval_of_draws(cells, draws, settings.level)
    if method is None:
        return None, None, None
    return low, high, method
