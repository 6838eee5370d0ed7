"""DeLong's variance of a ROC AUC and of the difference of two correlated AUCs.

DeLong, DeLong & Clarke-Pearson (1988), "Comparing the areas under two or more correlated receiver
operating characteristic curves: a nonparametric approach", computed with the midrank algorithm of
Sun & Xu (2014), "Fast implementation of DeLong's algorithm for comparing the areas under
correlated receiver operating characteristic curves" (one sort per score vector instead of the
m x n comparison matrix). The numbers are R pROC's (`ci.auc(method = "delong")`,
`roc.test(method = "delong", paired = TRUE)`; tests/test_delong.py checks them against it):

- positives are the items with label 1; an AUC is P(positive scored above negative), a tie
  counting 1/2 (the Mann-Whitney U / (m n), sklearn's roc_auc_score);
- the variance is S10 / m + S01 / n, the sample variances (ddof 1) of the positives' and the
  negatives' placements; it needs two positives and two negatives (NaN otherwise, pROC's NA);
- one AUC's interval is the normal one, auc -/+ z sd, clipped to [0, 1] as pROC clips it;
- the paired difference a - b, on the same items, has variance Var a + Var b - 2 Cov(a, b), z = d
  / sd, a two-sided normal p-value, and the unclipped interval d -/+ z sd; two identical rankings
  (d = 0, sd = 0) give z = 0 and p = 1, as pROC's.

Scores may be -inf or +inf (only their order counts); NaN is refused (no order).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = ["DelongAuc", "DelongDifference", "delong_auc", "delong_paired"]


@dataclass(frozen=True)
class DelongAuc:
    """One AUC with DeLong's variance and its normal interval at `level`."""

    auc: float
    variance: float
    stderr: float
    ci_low: float
    ci_high: float
    level: float
    n_positive: int
    n_negative: int


@dataclass(frozen=True)
class DelongDifference:
    """auc_a - auc_b of two scorings of the same items, DeLong's paired test and interval."""

    auc_a: float
    auc_b: float
    difference: float
    variance: float
    stderr: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    level: float
    n_positive: int
    n_negative: int


def _midranks(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x, method="average", axis=-1)


def _aucs_and_covariance(labels, scores) -> tuple[np.ndarray, np.ndarray, int, int]:
    """AUCs of the k rows of `scores` (k x N) and their k x k DeLong covariance (Sun & Xu's
    algorithm: placements from the midranks within the positives, within the negatives and in
    all items)."""
    labels = np.asarray(labels)
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if labels.ndim != 1 or scores.shape[1] != labels.shape[0]:
        raise ValueError(f"{labels.shape[0]} labels for scores of shape {scores.shape}")
    if not np.isin(labels, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    if np.isnan(scores).any():
        raise ValueError("a score is NaN: it has no order")
    positive = labels.astype(bool)
    m, n = int(positive.sum()), int((~positive).sum())
    if m == 0 or n == 0:
        raise ValueError(f"an AUC needs both classes: {m} positives, {n} negatives")
    positives, negatives = scores[:, positive], scores[:, ~positive]
    within_positives, within_negatives = _midranks(positives), _midranks(negatives)
    overall = _midranks(np.concatenate([positives, negatives], axis=1))
    # a positive's placement: the fraction of negatives below it; a negative's: of positives above
    v_positive = (overall[:, :m] - within_positives) / n
    v_negative = 1.0 - (overall[:, m:] - within_negatives) / m
    aucs = v_positive.mean(axis=1)
    if m < 2 or n < 2:  # a sample variance needs two items
        return aucs, np.full((len(aucs), len(aucs)), np.nan), m, n
    covariance = np.atleast_2d(np.cov(v_positive)) / m + np.atleast_2d(np.cov(v_negative)) / n
    return aucs, covariance, m, n


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level {level} is not between 0 and 1")
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def delong_auc(labels, scores, level: float = 0.95) -> DelongAuc:
    """The AUC of `scores` (higher: more likely label 1) with DeLong's variance, stderr and
    normal interval clipped to [0, 1]; variance and interval NaN with fewer than two items of a
    class. Raises ValueError without both classes or with a NaN score."""
    z = _z(level)
    aucs, covariance, m, n = _aucs_and_covariance(labels, scores)
    value, variance = float(aucs[0]), float(covariance[0, 0])
    stderr = float(np.sqrt(variance)) if np.isfinite(variance) else float("nan")
    low = min(max(value - z * stderr, 0.0), 1.0)
    high = min(max(value + z * stderr, 0.0), 1.0)
    if not np.isfinite(stderr):
        low = high = float("nan")
    return DelongAuc(value, variance, stderr, low, high, level, m, n)


def delong_paired(labels, scores_a, scores_b, level: float = 0.95) -> DelongDifference:
    """DeLong's test of auc(scores_a) - auc(scores_b), both scoring the same items (`labels`,
    element by element): the difference, its variance and stderr, z, the two-sided p-value and
    the normal interval of the difference at `level` (not clipped). NaN variance, z, p and
    interval with fewer than two items of a class. Raises ValueError without both classes,
    with a NaN score or when the arrays differ in length."""
    from scipy.special import ndtr

    z_level = _z(level)
    scores_a, scores_b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b,
                                                                              dtype=np.float64)
    if scores_a.shape != scores_b.shape:
        raise ValueError(f"the two scorings differ in shape: {scores_a.shape}, {scores_b.shape}")
    aucs, s, m, n = _aucs_and_covariance(labels, np.stack([scores_a, scores_b]))
    difference = float(aucs[0] - aucs[1])
    # rounding can leave a hair below 0 where the two rankings are equal
    variance = max(float(s[0, 0] + s[1, 1] - 2 * s[0, 1]), 0.0) if np.isfinite(s).all() \
        else float("nan")
    stderr = float(np.sqrt(variance))
    if not np.isfinite(stderr):
        z = p = low = high = float("nan")
    else:
        if stderr == 0:
            z = 0.0 if difference == 0 else float(np.copysign(np.inf, difference))
        else:
            z = difference / stderr
        p = float(2 * ndtr(-abs(z)))  # scipy's: accurate far in the tail, unlike 1 + erf
        low, high = difference - z_level * stderr, difference + z_level * stderr
    return DelongDifference(float(aucs[0]), float(aucs[1]), difference, variance, stderr, z, p,
                            low, high, level, m, n)
