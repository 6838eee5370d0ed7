"""A bootstrap over clusters (original sentences with their nonce versions, test sentences with
their versions in every eval set) of any statistic of the drawn clusters, with the BCa /
percentile interval as scipy.stats.bootstrap computes it (config `aggregate.uncertainty`).

The resamples are resampling.py's `resample_indices`: n cluster indices per resample, exactly as
scipy.stats.bootstrap draws the indices of one sample, so that a statistic of one observation per
cluster gets scipy's interval to the rounding; the statistic sees the index matrix and may take
every member of each cluster. (Quantiles of one observation per cluster have a faster path with
the same numbers: resampling.quantile_bootstrap.)
"""

from __future__ import annotations

import numpy as np

from spudflow.aggregate.resampling import (
    BLOCK,
    interval_of,
    jackknife_indices,
    resample_indices,
)
from spudflow.aggregate.uncertainty import Uncertainty

__all__ = ["BLOCK", "cluster_bootstrap"]


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
    theta_b = np.concatenate([np.asarray(statistic(i), np.float64) for i in
                              resample_indices(n, settings.resamples, settings.seed, block)])
    jack = (np.concatenate([np.asarray(statistic(i), np.float64)
                            for i in jackknife_indices(n, block)])
            if bca and n > 1 else None)
    return interval_of(theta_hat, theta_b, jack, settings.level, one_method)
