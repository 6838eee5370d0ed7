"""The bootstrap interval of Cohen's kappa of two binary choices on the same items (the Japanese
agreement table).

Kappa depends on the items only through the 2 x 2 table of the two choices, so a resample of n
items is a draw of that table: Multinomial(n, table / n), the distribution of counting n items
drawn with replacement, at the cost of 4 cells instead of n indices per resample (749,500
Japanese pairs x 10,000 resamples would be 7.5e9 indices).
"""

from __future__ import annotations

import numpy as np

from spudflow.aggregate.resampling import interval_of, multinomial_draws
from spudflow.aggregate.uncertainty import Uncertainty


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


def kappa_as_sklearn(cells: np.ndarray) -> float | None:
    """The table's kappa of one 2 x 2 table (kappa_of_cells' order), as sklearn's
    cohen_kappa_score of those choices computes it, to the bit (its confusion matrix in float64,
    1 - the off-diagonal total over the off-diagonal expected counts), without its input checks
    (2.8 ms a call, 576 calls for 24 modes); None where it is undefined (both choices constant).
    kappa_of_cells, vectorised over resamples, sums in another order: its last bit may differ."""
    a_constant = cells[0] + cells[1] == 0 or cells[2] + cells[3] == 0
    b_constant = cells[0] + cells[2] == 0 or cells[1] + cells[3] == 0
    if cells.sum() == 0 or (a_constant and b_constant):
        return None
    c = np.asarray(cells).astype(np.float64)
    by_b = (c[0] + c[2], c[1] + c[3])  # the confusion matrix's column sums
    by_a = (c[0] + c[1], c[2] + c[3])  # its row sums
    total = by_b[0] + by_b[1]
    expected = by_b[0] * by_a[1] / total + by_b[1] * by_a[0] / total
    return float(1 - (c[1] + c[2]) / expected)


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
    return kappa_interval_of_cells(cells_of(a, b), settings)


def kappa_interval_of_cells(cells: np.ndarray, settings: Uncertainty
                            ) -> tuple[float | None, float | None, str | None]:
    """kappa_interval of the 2 x 2 table (cells_of) of the two choices."""
    cells = np.asarray(cells, np.int64)
    n = int(cells.sum())
    if settings.resamples == 0 or n == 0 or np.isnan(kappa_of_cells(cells)):
        return None, None, None
    draws = multinomial_draws(cells, settings.resamples, settings.seed)
    low, high, method = kappa_interval_of_draws(cells, draws, settings.level)
    if method is None:
        return None, None, None
    return low, high, method
