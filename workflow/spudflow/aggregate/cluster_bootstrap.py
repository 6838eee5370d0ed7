"""A bootstrap over clusters (original sentences with their nonce versions, test sentences with
their versions in every eval set) and the BCa / percentile interval of any bootstrap
distribution, as scipy.stats.bootstrap computes it (config `aggregate.uncertainty`).

A cluster bootstrap draws n cluster indices with replacement per resample, exactly as
scipy.stats.bootstrap draws the indices of one sample (rng.integers(0, n, (block, n)) per block
of resamples), so that a statistic of one observation per cluster gets scipy's interval to the
rounding; the statistic sees the index matrix and may take every member of each cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spudflow.aggregate.uncertainty import BCA, PERCENTILE, Uncertainty

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
