"""Paired comparisons of two scoring functions on the same items.

- `align_items`: the items both functions scored, joined on their ids; the items only one side
  scored are left out and counted (never silently), a duplicated id is refused.
- `paired_accuracy`: the difference of two accuracies (or of two paradigm-mean accuracies,
  stratified), its paired bootstrap interval (pairs resampled with both outcomes; the
  multinomial fast path of resampling.py, as the intervals of the accuracies) and the exact
  McNemar p on the discordant pairs (the pooled items).
- `paired_bootstrap` / `paired_permutation_test`: any statistic that is not a mean of outcomes
  (an MCC at fixed thresholds, a median ratio, a mean of template AUCs): the difference of the
  statistic between the two functions, units (items, or clusters of items such as an original
  sentence with its nonce versions) resampled with both functions' values, optionally within
  strata; the permutation test swaps the two functions' values within each unit.
- `holm`: Holm's step-down adjustment of the p-values of one table.

A statistic takes (values, weights): values of shape (..., rows) and integer weights (resamples,
rows), how often each row is in the resample, and returns one value per resample (the helpers
below: weighted_mean, weighted_quantile, weighted_mcc). Weights keep every resample one numpy
operation over a block of resamples (resampling.unit_counts).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np
import polars as pl

from spudflow.aggregate import joint_quantiles
from spudflow.aggregate.resampling import (
    block_size,
    category_draws,
    interval,
    jackknife_deviations,
    unit_counts,
)
from spudflow.aggregate.uncertainty import Uncertainty, stratified_mean_of_means

Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ---- items both sides scored ----------------------------------------------------------------

@dataclass(frozen=True)
class Aligned:
    items: pl.DataFrame  # one row per item both scored: the ids, then each side's columns
    only_first: int      # items the first function scored and the second did not
    only_second: int


def align_items(first: pl.DataFrame, second: pl.DataFrame, on: Sequence[str],
                suffixes: tuple[str, str] = ("_a", "_b")) -> Aligned:
    """The items both frames hold, matched on the id columns `on` (each side's other columns
    suffixed), sorted by id; the items of one side only are counted. A side with an id twice
    cannot be paired: ValueError."""
    on = list(on)
    for name, frame in (("first", first), ("second", second)):
        duplicated = frame.select(on).is_duplicated()
        if duplicated.any():
            row = frame.filter(duplicated).sort(on).row(0, named=True)
            raise ValueError(f"the {name} scoring function has item {row} more than once")
    renamed = [frame.rename({c: f"{c}{suffix}" for c in frame.columns if c not in on})
               for frame, suffix in zip((first, second), suffixes, strict=True)]
    both = renamed[0].join(renamed[1], on=on, how="inner").sort(on)
    return Aligned(both, first.height - both.height, second.height - both.height)


# ---- accuracies -------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairedAccuracy:
    n_items: int
    difference: float | None  # first's accuracy minus second's (or of the paradigm means)
    ci_low: float | None
    ci_high: float | None
    interval_method: str | None
    n_first_only_correct: int  # the discordant pairs McNemar tests
    n_second_only_correct: int
    p_value: float | None


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """Two-sided exact McNemar p: the discordant pairs against Binomial(n, 1/2); 1 with none."""
    n = first_only + second_only
    if n == 0:
        return 1.0
    # scipy.stats.binomtest's two-sided p for p = 1/2, a symmetric distribution: twice the
    # smaller tail (statsmodels' formula), without importing scipy.stats (half a second)
    from scipy.special import bdtr

    return float(min(1.0, 2 * bdtr(min(first_only, second_only), n, 0.5)))


def paired_accuracy(first_correct, second_correct, settings: Uncertainty,
                    strata=None) -> PairedAccuracy:
    """The paired difference of two functions' accuracies on the same items (in the same
    order); with `strata` (a label per item, e.g. the paradigm) the difference of the unweighted
    means of the strata's accuracies, resampled within each stratum."""
    a = np.asarray(first_correct, dtype=bool)
    b = np.asarray(second_correct, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"outcomes of shapes {a.shape} and {b.shape} are not paired")
    first_only, second_only = int(np.sum(a & ~b)), int(np.sum(~a & b))
    p = mcnemar_exact(first_only, second_only) if len(a) else None
    if not len(a):
        return PairedAccuracy(0, None, None, None, None, 0, 0, None)
    d = a.astype(np.float64) - b.astype(np.float64)
    if strata is None:
        groups = [d]
    else:
        labels = np.asarray(strata)
        if labels.shape != d.shape:
            raise ValueError(f"{labels.shape} strata for {d.shape} items")
        _, inverse = np.unique(labels, return_inverse=True)
        order = np.argsort(inverse, stable=True)
        groups = np.split(d[order], np.flatnonzero(np.diff(inverse[order])) + 1)
    difference = float(np.mean([np.mean(g) for g in groups]))
    low, high, method = stratified_mean_of_means(groups, settings)
    return PairedAccuracy(len(a), difference, low, high, method, first_only, second_only, p)


# ---- any statistic ----------------------------------------------------------------------------

@dataclass(frozen=True)
class PairedDifference:
    n_units: int
    difference: float  # statistic(first) - statistic(second)
    ci_low: float | None
    ci_high: float | None
    interval_method: str | None
    # the percentile bootstrap's two-sided p of "no difference": twice the smaller share of
    # resampled differences on either side of 0 (with one added to count and total), the
    # smallest level at which the percentile interval excludes 0; None without resamples
    p_value: float | None = None


def _units(n_rows: int, clusters, strata) -> tuple[np.ndarray, list[np.ndarray]]:
    """(unit of each row, the units of each stratum)."""
    if clusters is None:
        unit = np.arange(n_rows)
    else:
        clusters = np.asarray(clusters)
        if clusters.shape != (n_rows,):
            raise ValueError(f"{clusters.shape} cluster ids for {n_rows} rows")
        _, unit = np.unique(clusters, return_inverse=True)
    n_units = int(unit.max()) + 1 if n_rows else 0
    if strata is None:
        return unit, [np.arange(n_units)]
    strata = np.asarray(strata)
    if strata.shape != (n_rows,):
        raise ValueError(f"{strata.shape} strata for {n_rows} rows")
    _, stratum_of_row = np.unique(strata, return_inverse=True)
    stratum = np.full(n_units, -1)
    stratum[unit] = stratum_of_row
    if np.any(stratum[unit] != stratum_of_row):
        raise ValueError("a cluster spans two strata")
    return unit, [np.flatnonzero(stratum == s) for s in range(int(stratum.max()) + 1)]


def _difference(statistic: Statistic, first, second, weights) -> np.ndarray:
    return np.asarray(statistic(first, weights), dtype=np.float64) - \
        np.asarray(statistic(second, weights), dtype=np.float64)


def paired_bootstrap(statistic: Statistic, first, second, settings: Uncertainty, *,
                     clusters=None, strata=None, bca: bool = True,
                     memo: dict | None = None) -> PairedDifference:
    """statistic(first) - statistic(second) with its bootstrap interval: the units (rows, or
    the `clusters` rows share) resampled with both functions' values, within each of the
    `strata`. BCa (jackknife over the units: as many evaluations of the statistic as units)
    unless `bca` is False or it is undefined; with resamples 0, no interval.

    `memo` (a dict the caller keeps for one statistic and one `settings`): each side's
    resampled statistics, kept by its values and units. Every call draws the same resamples
    for the same units (its generator starts from the settings' seed), so a table that pairs
    each scoring function with several others computes each function's once, with the same
    numbers to the bit."""
    first, second = np.asarray(first), np.asarray(second)
    n_rows = first.shape[-1]
    if second.shape[-1] != n_rows:
        raise ValueError(f"{n_rows} and {second.shape[-1]} rows are not paired")
    unit, strata_units = _units(n_rows, clusters, strata)
    n_units = sum(len(s) for s in strata_units)
    theta_hat = float(_difference(statistic, first, second, np.ones((1, n_rows)))[0])
    if settings.resamples == 0 or n_units == 0:
        return PairedDifference(n_units, theta_hat, None, None, None)
    rng = np.random.default_rng(settings.seed)
    if isinstance(statistic, CountStatistic) and clusters is None:
        joint = statistic.joint(first, second)  # a row is a unit: count its category
        k = statistic.n_categories ** 2
        tallies = [np.bincount(joint[units], minlength=k) for units in strata_units]
        theta_b = np.concatenate([statistic.difference(counts) for counts in category_draws(
            tallies, settings.resamples, rng)])
        total = np.bincount(joint, minlength=k)

        def leave_one_out(units):  # the rows' counts less the left-out row's category
            return statistic.difference(total - (joint[units][:, None] == np.arange(len(
                total))))
    else:
        sides = _jointly_drawn(first, second, memo) if clusters is None and strata is None \
            else None
        if sides is None:
            sides = _resampled(statistic, [first, second], unit, strata_units,
                               clusters is None, settings, rng, memo)
        theta_b = sides[0] - sides[1]  # elementwise: the per-block differences' bits

        def leave_one_out(units):
            if clusters is None and first.ndim == 1 and hasattr(statistic, "leave_one_out"):
                return (np.asarray(statistic.leave_one_out(first), np.float64)[units]
                        - np.asarray(statistic.leave_one_out(second), np.float64)[units])
            return _leave_one_out(statistic, first, second, unit, units)
    deviations = None
    if bca and all(len(s) > 1 for s in strata_units):
        deviations = [jackknife_deviations(leave_one_out(s)) for s in strata_units]
    low, high, method = interval(theta_hat, theta_b, settings.level, deviations)
    return PairedDifference(n_units, theta_hat, low, high, method, bootstrap_p_value(theta_b))


def _resampled(statistic: Statistic, sides: Sequence[np.ndarray], unit: np.ndarray,
               strata_units: list[np.ndarray], unit_per_row: bool, settings: Uncertainty,
               rng: np.random.Generator, memo: dict | None) -> list[np.ndarray]:
    """Each side's statistic over the resamples of the units, all sides weighted by the same
    draws; a side `memo` holds is taken from it, the others are added to it."""
    n_rows, n_units = len(unit), sum(len(s) for s in strata_units)

    # the counts spread over the rows (clusters) or, one unit a row, copied column-major: the
    # layout that spreading gives, which fixes the order in which a weighted mean sums its
    # rows, and so its last bits (a row-major copy moves them)
    def spread(counts):
        if unit_per_row:
            return counts.astype(np.int32, order="F")
        return counts.astype(np.int32)[:, unit]
    memo = {} if memo is None else memo
    keys = [_memo_key(side, unit, strata_units, unit_per_row) for side in sides]
    missing = {key: side for key, side in zip(keys, sides, strict=True) if key not in memo}
    if missing:
        blocks: dict[bytes, list[np.ndarray]] = {key: [] for key in missing}
        for counts in unit_counts(strata_units, settings.resamples, rng, n_units, n_rows):
            weights = spread(counts)
            for key, side in missing.items():
                blocks[key].append(np.asarray(statistic(side, weights), dtype=np.float64))
        memo.update((key, np.concatenate(found)) for key, found in blocks.items())
    return [memo[key] for key in keys]


def resample_sides(statistic: Statistic, sides: Sequence[np.ndarray], settings: Uncertainty,
                   memo: dict) -> None:
    """Puts into `memo` what paired_bootstrap(statistic, ·, ·, settings, memo=memo) needs for
    each of `sides` (1-D values, a unit per row: the scoring functions a table compares with
    each other) it does not hold. The sides of one length share one draw of the resamples:
    index draws, as their paired_bootstrap calls would draw them; for a quantile of many units
    (joint_quantiles.banded_length) one joint draw in bands of the call's sides of that length,
    in an order of their own (the same numbers whatever order the sides come in), whose sides
    pair only with each other (paired_bootstrap refuses others)."""
    by_length: dict[int, dict[bytes, np.ndarray]] = {}
    for side in sides:
        side = np.asarray(side)
        unit, strata_units = _units(len(side), None, None)
        key = _memo_key(side, unit, strata_units, True)
        if key not in memo:
            by_length.setdefault(len(side), {})[key] = side
    q = getattr(statistic, "quantile", None)
    for n_rows, same in by_length.items():
        if settings.resamples == 0 or n_rows == 0:
            continue
        rng = np.random.default_rng(settings.seed)
        if q is not None and joint_quantiles.banded_length(n_rows, q):
            keys = sorted(same)
            drawn = joint_quantiles.joint_quantile_draws(
                joint_quantiles.bands_of([same[k] for k in keys], q), statistic,
                [same[k] for k in keys], settings.resamples, rng)
            memo.update(zip(keys, drawn, strict=True))
            draw = object()  # this call's draw, for paired_bootstrap's check
            memo.setdefault(JOINT_DRAWS, {}).update((key, draw) for key in keys)
            continue
        unit, strata_units = _units(n_rows, None, None)
        _resampled(statistic, list(same.values()), unit, strata_units, True, settings, rng,
                   memo)


# the memo's entry naming, for each side resample_sides drew jointly, its draw
JOINT_DRAWS = "joint draws"


def _jointly_drawn(first: np.ndarray, second: np.ndarray, memo: dict | None
                   ) -> list[np.ndarray] | None:
    """Both sides' resampled statistics from resample_sides' joint draw of them; None where
    neither side was drawn jointly. A side of one joint draw paired with a side drawn otherwise
    would pair two different sets of resamples: ValueError."""
    joint = (memo or {}).get(JOINT_DRAWS)
    if not joint:
        return None
    unit, strata_units = _units(len(first), None, None)
    keys = [_memo_key(side, unit, strata_units, True) for side in (first, second)]
    draws = [joint.get(key) for key in keys]
    if draws[0] is None and draws[1] is None:
        return None
    if draws[0] is not draws[1]:
        raise ValueError("sides resampled by different draws cannot be paired")
    return [memo[key] for key in keys]


def _memo_key(values: np.ndarray, unit: np.ndarray, strata_units: list[np.ndarray],
              unit_per_row: bool) -> bytes:
    """What one side's resampled statistics depend on beside the statistic and settings: its
    values, which units (and strata) the rows belong to and how the counts reach the rows."""
    digest = hashlib.blake2b(f"{unit_per_row}".encode(), digest_size=20)
    for array in (values, unit, *strata_units):
        array = np.ascontiguousarray(array)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.digest()


def bootstrap_p_value(theta_b: np.ndarray) -> float:
    """Two-sided p of a zero difference from its resampled values (PairedDifference.p_value):
    consistent with the interval, unlike a swap test, which for a statistic that is not a mean
    (a median) also rejects when the two distributions differ only in shape."""
    total = len(theta_b) + 1
    below = (np.count_nonzero(theta_b <= 0) + 1) / total
    above = (np.count_nonzero(theta_b >= 0) + 1) / total
    return float(min(1.0, 2 * min(below, above)))


def _leave_one_out(statistic, first, second, unit, units) -> np.ndarray:
    """The statistic's difference with each of `units` left out, in blocks of units."""
    n_rows = len(unit)
    block = block_size(n_rows, len(units))
    out = []
    for start in range(0, len(units), block):
        left_out = units[start:start + block]
        weights = (unit[None, :] != left_out[:, None]).astype(np.int64)
        out.append(_difference(statistic, first, second, weights))
    return np.concatenate(out)


@dataclass(frozen=True)
class PermutationTest:
    difference: float
    p_value: float
    exact: bool  # every swap pattern enumerated (2 ** units <= resamples)


def paired_permutation_test(statistic: Statistic, first, second, resamples: int, seed: int, *,
                            clusters=None) -> PermutationTest:
    """Two-sided test of statistic(first) = statistic(second): the two functions' values
    swapped within random units (every swap pattern when there are at most `resamples`), as
    scipy.stats.permutation_test(permutation_type="samples") computes its p-value."""
    first, second = np.asarray(first), np.asarray(second)
    n_rows = first.shape[-1]
    if n_rows == 0 or second.shape[-1] != n_rows:
        raise ValueError(f"{n_rows} and {second.shape[-1]} rows: nothing to test")
    unit, _ = _units(n_rows, clusters, None)
    n_units = int(unit.max()) + 1
    ones = np.ones((1, n_rows))
    observed = float(_difference(statistic, first, second, ones)[0])
    exact = n_units < 63 and 2 ** n_units <= resamples
    n_null = 2 ** n_units if exact else resamples
    rng = np.random.default_rng(seed)
    block = block_size(n_rows, n_null)
    patterns = _all_patterns(n_units) if exact else None
    null = []
    counted = isinstance(statistic, CountStatistic) and clusters is None
    if counted:  # a swap moves a row from its joint category (a, b) to (b, a)
        k = statistic.n_categories
        joint = statistic.joint(first, second)
        total = np.bincount(joint, minlength=k * k)
        movers = [(c, (c % k) * k + c // k, np.flatnonzero(joint == c))
                  for c in range(k * k) if c % k != c // k and total[c]]
    for start in range(0, n_null, block):
        b = min(block, n_null - start)
        if counted:  # the swapped rows of each category counted: the rows' weighted sums
            counts = np.repeat(total[None, :], b, axis=0)
            for c, to, rows in movers:
                # each row swapped with probability 1/2: drawn, a binomial count per category
                moved = (np.count_nonzero(patterns[start:start + b][:, rows], axis=1) if exact
                         else rng.binomial(len(rows), 0.5, size=b))
                counts[:, c] -= moved
                counts[:, to] += moved
            null.append(statistic.difference(counts))
            continue
        swap = patterns[start:start + b] if exact else rng.random((b, n_units)) < 0.5
        swap = swap[:, unit]
        x = np.where(swap, second, first)
        y = np.where(swap, first, second)
        null.append(_difference(statistic, x, y, ones))
    null = np.concatenate(null)
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)  # scipy's tolerance for equal values
    adjustment = 0 if exact else 1
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (n_null + adjustment)
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (n_null + adjustment)
    return PermutationTest(observed, float(np.clip(2 * min(less, greater), 0, 1)), exact)


def _all_patterns(n_units: int) -> np.ndarray:
    return np.array(list(product((False, True), repeat=n_units)), dtype=bool).reshape(
        2 ** n_units, n_units)


# ---- weighted statistics (rows weighted by how often a resample drew them) ----------------

def weighted_mean(values, weights) -> np.ndarray:
    return np.sum(values * weights, axis=-1) / np.sum(weights, axis=-1)


def weighted_quantile(q: float) -> Statistic:
    """np.quantile(·, q) (linear interpolation) of each resample, the rows repeated by their
    weights, without building the resample (np.quantile itself where every weight is 1)."""
    def statistic(values, weights):
        values = np.asarray(values, dtype=np.float64)
        weights = np.asarray(weights)
        if weights.shape[0] == 1 and np.all(weights == 1):  # the sample itself (a permutation)
            shape = np.broadcast_shapes(values.shape, weights.shape)
            return np.quantile(np.broadcast_to(values, shape), q, axis=-1)
        if values.ndim == 1:  # one sample, many weightings (a bootstrap): sort it once
            order = np.argsort(values, stable=True)
            ordered = values[order]
            sorted_weights = weights[:, order]
        else:
            values, weights = np.broadcast_arrays(values, weights)
            order = np.argsort(values, axis=-1, stable=True)
            ordered = np.take_along_axis(values, order, axis=-1)
            sorted_weights = np.take_along_axis(weights, order, axis=-1)
        # the j-th value (0-based) of the repeated sample is at the first row whose cumulative
        # weight exceeds j: the resamples' weights laid end to end and summed in one pass, so
        # each resample's cumulative weights are lifted by those before it (`lift`), and one
        # binary search per resample finds it
        n = sorted_weights.shape[-1]
        integer = np.issubdtype(sorted_weights.dtype, np.integer)
        # integer weights (counts, never negative) summed exactly: in int32 where the block's
        # total fits (a sixth of the time of int64 sums), else in int64
        narrow = integer and sorted_weights.dtype.itemsize <= 4 and \
            int(sorted_weights.sum(dtype=np.int64)) < 2 ** 31
        flat = np.cumsum(sorted_weights.ravel(),
                         dtype=(np.int32 if narrow else np.int64) if integer else None)
        ends = flat[n - 1::n]
        lift = np.concatenate([np.zeros(1, flat.dtype), ends[:-1]])
        total = (ends - lift)[:, None]
        h = (total - 1) * q
        below = np.floor(h)
        t = (h - below)[:, 0]
        starts = np.arange(len(ends), dtype=np.int64) * n

        def value_at(j):
            # keys of flat's type (j is a whole number): float keys would make searchsorted
            # convert all of flat on every search; j = -1 (a resample of no row) is its row's
            # first value
            keys = j[:, 0].astype(flat.dtype) + lift
            index = np.maximum(np.searchsorted(flat, keys, side="right"), starts) - starts
            if ordered.ndim == 1:
                return ordered[index]
            return np.take_along_axis(ordered, index[:, None], axis=-1)[:, 0]
        a, b = value_at(below), value_at(np.minimum(below + 1, total - 1))
        return _lerp(a, b, t)

    def leave_one_out(values):
        """The statistic of 1-D `values` without each row in turn (the jackknife), read off
        the sorted values: leaving out the row of rank r moves the values above it down one
        place. The weighted rows' numbers, to the bit."""
        values = np.asarray(values, dtype=np.float64)
        n = len(values)
        if values.ndim != 1 or n < 2:
            raise ValueError(f"a jackknife of {values.shape} values")
        order = np.argsort(values, stable=True)
        ordered = values[order]
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        h = np.float64(n - 2) * q  # (total - 1) * q, n - 1 rows left
        below = int(np.floor(h))
        t = h - np.floor(h)

        def value_at(j):
            return np.where(j < rank, ordered[j], ordered[min(j + 1, n - 1)])
        return _lerp(value_at(below), value_at(min(below + 1, n - 2)), t)
    statistic.leave_one_out = leave_one_out
    statistic.quantile = q  # resample_sides draws a quantile's sides jointly
    return statistic


def _lerp(a, b, t):
    """numpy's lerp, so that a quantile is np.quantile's to the bit."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


@dataclass(frozen=True)
class CountStatistic:
    """A statistic of the rows' categories alone (`category`: each row's, from its value, below
    `n_categories`), a function `of_counts` of the weighted count of each category (last
    axis). Called as any statistic; paired_bootstrap and paired_permutation_test (without
    clusters) draw each resample's category counts instead of weighting every row: a
    multinomial per stratum (resampling.category_draws) and a binomial count of swapped rows
    per category, the distributions of index draws and of random swaps, at a cost per resample
    independent of the rows (every swap pattern, when enumerated, counted as before). Given
    the same resamples the numbers are those of weighting the rows: the counts are exact
    integers either way."""
    category: Callable[[np.ndarray], np.ndarray]
    n_categories: int
    of_counts: Callable[[np.ndarray], np.ndarray]

    def __call__(self, values, weights) -> np.ndarray:
        categories = self.category(values)
        w = np.asarray(weights, dtype=np.float64)
        return self.of_counts(np.stack([np.sum(w * (categories == c), axis=-1)
                                        for c in range(self.n_categories)], axis=-1))

    def joint(self, first, second) -> np.ndarray:
        """Each row's pair of categories (first's, second's) as one, first * k + second."""
        return self.category(first) * self.n_categories + self.category(second)

    def difference(self, joint_counts) -> np.ndarray:
        """of_counts(first) - of_counts(second) per row of joint category counts (..., k * k)."""
        k = self.n_categories
        counts = np.asarray(joint_counts).reshape(*np.shape(joint_counts)[:-1], k, k)
        first = counts.sum(axis=-1).astype(np.float64)
        second = counts.sum(axis=-2).astype(np.float64)
        return (np.asarray(self.of_counts(first), dtype=np.float64)
                - np.asarray(self.of_counts(second), dtype=np.float64))


def weighted_mcc(labels) -> CountStatistic:
    """Matthews' correlation of 0/1 predictions with the 0/1 `labels` (sklearn's
    matthews_corrcoef: 0 where a margin of the confusion matrix is empty): a statistic of each
    row's (label, prediction), category 2 * label + prediction (tn, fp, fn, tp)."""
    y = np.asarray(labels, dtype=bool).astype(np.int64)

    def category(predictions):
        return 2 * y + np.asarray(predictions, dtype=bool)

    def of_counts(counts):
        tn, fp, fn, tp = np.moveaxis(np.asarray(counts, dtype=np.float64), -1, 0)
        denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)
    return CountStatistic(category, 4, of_counts)


# ---- many comparisons in one table ------------------------------------------------------------

def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (statsmodels' multipletests(method="holm")); a
    missing p (None or NaN: no test) stays missing and is not counted among the tests."""
    p = np.array([np.nan if v is None else v for v in p_values], dtype=np.float64)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested], stable=True)]
    m = len(order)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order]) if m else np.array([])
    out: list[float | None] = [None] * len(p)
    for index, value in zip(order, np.minimum(adjusted, 1.0), strict=True):
        out[int(index)] = float(value)
    return out

