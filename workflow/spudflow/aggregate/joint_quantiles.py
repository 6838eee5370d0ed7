"""A quantile of several sides (scoring functions' values on the same units) over the same
bootstrap resamples, at a cost that grows with the square root of the number of units.

A resample draws n units uniformly with replacement: its counts are Multinomial(n, 1/n each).
A side's quantile q of the resample interpolates between two order statistics, j and j + 1
(numpy's method linear, j = floor((n - 1) q)), and the number of drawn units below sorted
position p is Binomial(n, p / n): the order statistics lie, but with a probability of about 6e-5
per ranking, within a band of positions BAND_SDS binomial standard deviations wide on either
side of j. So the counts are drawn in two steps that together are the multinomial:

1. the count of each *cell* of units outside every side's band (units grouped by whether each
   side ranks them below its band or above it) and of the units inside some band (`U`), one
   multinomial draw per resample over a handful of categories;
2. the draws that fell in U, spread uniformly over U's units (given how many fell there, each is
   uniform over them): individual counts for U's units only.

A side's count below its band is then its cells' counts plus those of U's units below it, and a
cumulative sum over its band finds the two order statistics. Where a resample puts one outside
its band, the resample's counts are completed (each cell's draws spread uniformly over its units)
and the statistic is computed over every unit, as it would have been. Either way the value is
the weighted quantile of the resample's counts to the bit; only the draws differ from index
draws (the same distribution; the multinomial's probabilities are the cells' shares of n in
float64). Used where that costs at most half of what index draws would (`banded_length`);
small samples, whose bands hold most units, keep the index draws.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from spudflow.aggregate.resampling import lerp

# the half-width of the band in binomial standard deviations: an order statistic falls outside
# with probability about 6e-5 per ranking and resample (then the resample is completed, at the
# cost of an index draw's); wider bands cost every resample more
BAND_SDS = 4.0
# bytes of the per-block matrix of U's counts (block x |U| int64): small enough for the cache,
# where counting the draws into it is a third of the time of a 32 MB block's
BLOCK_BYTES = 2 * 2 ** 20


@dataclass(frozen=True)
class Bands:
    """Where each side's quantile can fall. Sides with the same ranking of the units (the same
    stable sort) share its band and its sums; only their values differ."""
    n: int
    q: float
    u_units: np.ndarray          # the units in some ranking's band, increasing
    cells: list[np.ndarray]      # the other units, grouped by their ranking-wise below/above
    lo: int                      # a band: sorted positions lo .. hi - 1 of each ranking
    band_slots: np.ndarray       # (rankings, hi - lo): the U slot of the unit at each position
    below_slots: np.ndarray      # (|U|, rankings): 1 where the ranking puts U's unit below lo
    below_cells: np.ndarray      # (cells, rankings): 1 where it puts the cell below lo
    ranking_of: np.ndarray       # each side's ranking
    ordered: list[np.ndarray]    # each side's values, sorted


def interpolated_ranks(n: int, q: float) -> tuple[int, int, float]:
    """(j, j1, t): the order statistics a quantile q of n values interpolates between and the
    weight of j1, as weighted_quantile computes them for a resample of n draws."""
    h = np.float64(n - 1) * q
    j = int(np.floor(h))
    return j, min(j + 1, n - 1), float(h - np.floor(h))


def bands_of(sides: Sequence[np.ndarray], q: float, sds: float = BAND_SDS) -> Bands:
    """The band of sorted positions around the quantile's order statistics (the same for every
    side: the binomial does not depend on the values), the units in some side's band (U) and the
    cells of the others."""
    values = [np.asarray(side, dtype=np.float64) for side in sides]
    n = len(values[0])
    lo, hi = band_width(n, q, sds)
    rankings: dict[bytes, int] = {}
    orders, ranking_of = [], []
    for side in values:
        order = np.argsort(side, stable=True)
        ranking_of.append(rankings.setdefault(order.tobytes(), len(rankings)))
        if ranking_of[-1] == len(orders):
            orders.append(order)
    in_band = np.zeros(n, dtype=bool)
    below = np.zeros((len(orders), n), dtype=bool)
    for r, order in enumerate(orders):
        in_band[order[lo:hi]] = True
        below[r, order[:lo]] = True
    u_units = np.flatnonzero(in_band)
    slot = np.full(n, -1, dtype=np.int64)
    slot[u_units] = np.arange(len(u_units))
    rest = np.flatnonzero(~in_band)
    signatures = np.zeros((0, len(orders)), dtype=bool)
    cells: list[np.ndarray] = []
    if len(rest):
        signatures, cell_of = np.unique(below[:, rest].T, axis=0, return_inverse=True)
        cell_of = np.asarray(cell_of).reshape(-1)
        order = np.argsort(cell_of, stable=True)
        cells = np.split(rest[order], np.flatnonzero(np.diff(cell_of[order])) + 1)
    return Bands(n, q, u_units, cells, lo, np.stack([slot[o[lo:hi]] for o in orders]),
                 below[:, u_units].T.astype(np.int64), signatures.astype(np.int64),
                 np.array(ranking_of), [v[orders[r]] for v, r in zip(values, ranking_of,
                                                                      strict=True)])


def band_width(n: int, q: float, sds: float = BAND_SDS) -> tuple[int, int]:
    """(lo, hi): the band of sorted positions around the order statistics of quantile q of n
    values that a resample's lie in, but with a probability of about 6e-5 (at BAND_SDS)."""
    j, j1, _ = interpolated_ranks(n, q)
    share = (j + 1) / n
    half = sds * np.sqrt(n * share * (1 - share)) + 1
    return max(0, int(np.floor(j - half))), min(n, int(np.ceil(j1 + 1 + half)))


def banded_length(n: int, q: float) -> bool:
    """Whether a pair of sides of n units is drawn in bands: where that costs at most half of
    index draws' whatever the two rankings (per resample: the draws into two bands counted and
    both bands summed, 6 x the band, against n draws counted and two sides' n weights summed),
    so that the choice depends on n and q alone."""
    lo, hi = band_width(n, q)
    return 6 * (hi - lo) + 4 <= 2 * n


def joint_quantile_draws(bands: Bands, statistic: Callable, values: Sequence[np.ndarray],
                         resamples: int, rng: np.random.Generator,
                         kept_counts: list | None = None) -> list[np.ndarray]:
    """Each side's quantile over `resamples` resamples of the units, all sides over the same
    resamples: (resamples,) per side. `statistic(values, weights)`: the weighted quantile, for
    the resamples completed where a side's order statistics leave its band. `kept_counts`: a
    list to which each block's full counts are appended (tests)."""
    m = len(bands.u_units)
    block = int(max(1, min(resamples, BLOCK_BYTES // (8 * max(1, m)))))
    sizes = np.array([len(c) for c in bands.cells] + [m], dtype=np.float64)
    shares = sizes / bands.n
    j, j1, t = interpolated_ranks(bands.n, bands.q)
    last = bands.band_slots.shape[1] - 1
    out: list[list[np.ndarray]] = [[] for _ in bands.ordered]
    below_slots = bands.below_slots.astype(np.float64)
    for start in range(0, resamples, block):
        b = min(block, resamples - start)
        drawn = rng.multinomial(bands.n, shares, size=b)
        cell_counts, in_u = drawn[:, :-1], drawn[:, -1]
        rows = np.repeat(np.arange(b, dtype=np.int64) * m, in_u)
        u_counts = np.bincount(rows + rng.integers(0, m, int(in_u.sum())),
                               minlength=b * m).reshape(b, m)
        # each ranking's count below its band (a float64 product, BLAS's where numpy's integer
        # one is a plain loop: counts are integers, exact below 2^53), then the positions of
        # its order statistics
        below = ((u_counts.astype(np.float64) @ below_slots).astype(np.int64)
                 + cell_counts @ bands.below_cells)
        outside = np.zeros(b, dtype=bool)
        at = []
        for r, slots in enumerate(bands.band_slots):
            cum = np.cumsum(u_counts[:, slots], axis=1) + below[:, r:r + 1]
            outside |= (below[:, r] > j) | (cum[:, -1] <= j1)
            at.append((bands.lo + np.minimum(np.count_nonzero(cum <= j, axis=1), last),
                       bands.lo + np.minimum(np.count_nonzero(cum <= j1, axis=1), last)))
        theta = np.stack([lerp(ordered[at[r][0]], ordered[at[r][1]], t)
                          for ordered, r in zip(bands.ordered, bands.ranking_of, strict=True)])
        if kept_counts is not None or outside.any():
            wanted = np.arange(b) if kept_counts is not None else np.flatnonzero(outside)
            full = _completed(bands, cell_counts[wanted], u_counts[wanted], rng)
            if outside.any():
                redo = full[np.searchsorted(wanted, np.flatnonzero(outside))]
                for f, side in enumerate(values):
                    theta[f, outside] = np.asarray(statistic(side, redo), dtype=np.float64)
            if kept_counts is not None:
                kept_counts.append(full)
        for f in range(len(out)):
            out[f].append(theta[f])
    return [np.concatenate(parts) for parts in out]


def _completed(bands: Bands, cell_counts: np.ndarray, u_counts: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """(rows, n) counts of every unit: U's as drawn, each cell's draws spread uniformly over
    its units."""
    rows = len(u_counts)
    counts = np.zeros((rows, bands.n), dtype=np.int64)
    counts[:, bands.u_units] = u_counts
    for c, units in enumerate(bands.cells):
        k = cell_counts[:, c]
        where = np.repeat(np.arange(rows, dtype=np.int64) * bands.n, k)
        drawn = units[rng.integers(0, len(units), int(k.sum()))]
        counts += np.bincount(where + drawn, minlength=rows * bands.n).reshape(rows, bands.n)
    return counts
