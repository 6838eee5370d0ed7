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
- Clusters (an original sentence with its nonce versions, a test sentence in every eval set):
  `resample_indices` draws n cluster indices per resample as scipy.stats.bootstrap draws one
  sample's (`rng.integers(0, n, (block, n))` per block of BLOCK resamples), `jackknife_indices`
  the leave-one-out rows in scipy's order; cluster_bootstrap.py evaluates any statistic on them.
- Quantiles (SPUD's quartiles of one observation per original): `quantile_bootstrap` draws
  each resample's few order statistics that the quantiles interpolate between directly (one
  beta draw each, `order_statistic_draws`: the distribution of the order statistics of n
  indices drawn with replacement, at a cost independent of n, where drawing and sorting the
  resamples cost O(n log n) each), and reads the jackknife off the sorted sample (leaving one
  value out shifts the order statistics above it by one). Given the order statistics of
  scipy's own resamples, the interval is scipy's to 1e-12 (tests).
- Categories (a 2 x 2 table of choices, a confusion matrix): `multinomial_draws` draws a
  resample's category counts, Multinomial(n, counts / n), the distribution of counting n items
  drawn with replacement, at a cost independent of n (`category_draws`: the same within
  strata).
- `interval`: the BCa interval (Efron & Tibshirani 14.3, 15.4, as scipy.stats.bootstrap computes
  it: z0 from the fraction of resamples below the estimate, acceleration from the jackknife of
  each stratum) and the percentile interval where BCa is undefined (a degenerate distribution),
  computed with the standard library's normal distribution (so BLiMP's tables load no scipy);
  `interval_of` the same for several statistics at once (`bca_levels`, shared with
  uncertainty.py's intervals of category counts), the normal distribution's functions of the
  standard library too: their values are scipy.special's ndtr / ndtri to the rounding, and a
  table job that needs no other scipy does not spend a tenth of a second importing it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

BCA = "bca"
PERCENTILE = "percentile"
_NORMAL = NormalDist()


def _ndtri(p: float) -> float:
    if np.isnan(p):
        return np.nan
    return _NORMAL.inv_cdf(p) if 0 < p < 1 else (-np.inf if p <= 0 else np.inf)


def _elementwise(function, x) -> np.ndarray:
    """A scalar function of the standard library's normal distribution over an array: the few
    statistics of a table row, where importing scipy.special would cost more than the calls."""
    x = np.asarray(x, dtype=np.float64)
    return np.array([function(float(v)) for v in x.ravel()], dtype=np.float64).reshape(x.shape)


def percentile_of_score(theta_b: np.ndarray, theta_hat, axis=None):
    """scipy's: the fraction of resamples below the estimate, ties counted half (along `axis`
    of theta_b: per statistic, with theta_hat one value per statistic)."""
    below = (np.count_nonzero(theta_b < theta_hat, axis=axis)
             + np.count_nonzero(theta_b <= theta_hat, axis=axis))
    return below / (2 * (theta_b.size if axis is None else theta_b.shape[axis]))


def acceleration(jackknife_deviations: Sequence[np.ndarray]) -> float:
    """BCa's a-hat from U_ji = (n_j - 1) (mean_i theta_ji - theta_ji), the jackknife of each
    stratum j (scipy's sum over samples); NaN when no U differs from 0."""
    # u * u * u, not u ** 3: numpy squares by multiplying but cubes through pow(), ten times
    # the time on a jackknife of thousands of units, for the same value to the rounding
    nums = sum(float(np.sum(u * u * u)) / len(u) ** 3 for u in jackknife_deviations if len(u))
    dens = sum(float(np.sum(u * u)) / len(u) ** 2 for u in jackknife_deviations if len(u))
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
    for b, draws in _drawn_units(strata, resamples, rng, max(n_units, width)):
        counts = np.zeros(b * n_units, dtype=np.int64)
        offsets = (np.arange(b, dtype=np.int64) * n_units)[:, None]
        for drawn in draws:
            drawn += offsets  # a fresh array each: offset in place
            counts += np.bincount(drawn.ravel(), minlength=b * n_units)
        yield counts.reshape(b, n_units)


def _drawn_units(strata: Sequence[np.ndarray], resamples: int, rng: np.random.Generator,
                 width: int):
    """Per block of resamples (block_size of `width` columns): its size and, per stratum, the
    (block, len(stratum)) units drawn by scipy's `rng.integers(0, len(stratum), ...)`."""
    block = block_size(width, resamples)
    # a stratum of units 0..n-1 (no strata) is its own index: no copy through it
    numbered = [np.array_equal(units, np.arange(len(units))) for units in strata]

    def drawn(b):  # drawn as the caller counts them, one stratum's draw in memory at a time
        for units, own in zip(strata, numbered, strict=True):
            indices = rng.integers(0, len(units), (b, len(units)))
            yield indices if own else units[indices]
    for start in range(0, resamples, block):
        b = min(block, resamples - start)
        yield b, drawn(b)


# ---- cluster draws, scipy's stream ------------------------------------------------------------

BLOCK = 1000  # resamples drawn and evaluated at once: memory block x n


def resample_indices(n: int, resamples: int, seed: int, block: int = BLOCK):
    """The resamples' cluster indices, (block, n) at a time, from a generator seeded with
    `seed`; the same stream as scipy.stats.bootstrap(..., batch=block, rng=seed)."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, block):
        yield rng.integers(0, n, (min(block, resamples - start), n))


def jackknife_indices(n: int, block: int = BLOCK):
    """Leave-one-out index rows (n - 1 indices each), (block, n - 1) at a time, in scipy's order."""
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))[:, None]
        kept = np.arange(n - 1)[None, :]
        yield kept + (kept >= rows)


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n clusters is drawn in each resample: (rows, n) int64."""
    rows = indices.shape[0]
    flat = (np.arange(rows)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n)


# ---- BCa of several statistics at once (scipy's special functions) ----------------------------

def ndtri(p) -> np.ndarray:
    """The standard normal quantile function, elementwise (scipy.special.ndtri's values to the
    rounding, ±inf at 0 and 1)."""
    return _elementwise(_ndtri, p)


def bca_levels(z0, acceleration, alpha: float) -> list:
    """The BCa interval's two quantile levels of the resampled statistics, as
    scipy.stats.bootstrap computes them (ndtri, ndtr), elementwise in z0 and the acceleration."""
    z = _ndtri(alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        return [_elementwise(_cdf, z0 + (z0 + z_end) / (1 - acceleration * (z0 + z_end)))
                for z_end in (z, -z)]


def interval_of(theta_hat: np.ndarray, theta_b: np.ndarray, theta_jack: np.ndarray | None,
                level: float, one_method: bool = False, jack_counts: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) per statistic (last axis) from its point value theta_hat (k,), its
    bootstrap distribution theta_b (B, k) and its jackknife values theta_jack (n, k) (None: no
    BCa): BCa as scipy.stats.bootstrap computes it where it is finite, the percentile interval
    elsewhere (`one_method`: everywhere unless BCa is finite for every statistic, so that one
    method names the intervals of a row); NaN (method None) where a resample has no value.
    `jack_counts` (m, k): theta_jack holds only the m distinct leave-one-out values of each
    statistic, each left-out unit counted where it gives that value (quantile_jackknife)."""
    theta_hat = np.asarray(theta_hat, np.float64)
    alpha = (1 - level) / 2
    percentile = np.quantile(theta_b, [alpha, 1 - alpha], axis=0)
    low, high = percentile[0].copy(), percentile[1].copy()
    method = np.full(theta_hat.shape, PERCENTILE, dtype=object)
    counts = np.ones_like(theta_jack) if jack_counts is None and theta_jack is not None \
        else jack_counts
    if theta_jack is not None and counts.sum(axis=0).min() > 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            z0 = ndtri(percentile_of_score(theta_b, theta_hat, axis=0))
            n = counts.sum(axis=0, dtype=np.float64)
            # the mean of every left-out value, as scipy takes it: where all are equal, its
            # rounding is what makes the deviations (and so BCa) defined or not
            mean = theta_jack.mean(axis=0) if jack_counts is None else np.array(
                [np.repeat(theta_jack[:, k], counts[:, k].astype(np.int64)).mean()
                 for k in range(theta_jack.shape[1])])
            u = (n - 1) * (mean - theta_jack)
            squares = counts * u * u
            a = 1 / 6 * (np.sum(squares * u, axis=0) / n ** 3) / (
                np.sum(squares, axis=0) / n ** 2) ** 1.5
        ends = bca_levels(z0, a, alpha)
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


# ---- quantiles of resamples -------------------------------------------------------------------

def quantile_positions(n: int, quantiles: Sequence[float]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """numpy's method `linear` on n sorted values: the order statistics (below, above) each
    quantile interpolates between and the weight of `above` (gamma)."""
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
    return below, above, gamma


def lerp(a: np.ndarray, b: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """numpy's _lerp (quantile's interpolation): from the nearer end."""
    difference = b - a
    return np.where(gamma >= 0.5, b - difference * (1 - gamma), a + difference * gamma)


def sorted_quantiles(values: np.ndarray, quantiles: Sequence[float]) -> np.ndarray:
    """np.quantile(values, quantiles, axis=-1) (method `linear`), moved to the last axis
    (..., k), bit for bit, computed as numpy does it from a row sort: np.quantile along the
    last axis of a 2-D block partitions a strided copy and takes ten times as long."""
    ordered = np.sort(values, axis=-1)
    below, above, gamma = quantile_positions(ordered.shape[-1], quantiles)
    return lerp(ordered[..., below], ordered[..., above], gamma)


def order_statistic_draws(n: int, targets: Sequence[int], resamples: int, seed: int
                          ) -> np.ndarray:
    """(resamples, len(targets)): for each resample of n indices drawn uniformly with
    replacement from 0..n-1, its order statistics `targets` (0-based, increasing), drawn
    directly. Such an index is floor(n U), U uniform on [0, 1), and floor is monotone, so the
    t-th smallest index is floor(n U_(t)), with U_(t) the t-th smallest of n uniforms:
    Beta(t + 1, n - t), and, given U_(s) for the previous target s, U_(s) + (1 - U_(s)) x
    Beta(t - s, n - t) (the (t - s)-th smallest of the n - s - 1 uniforms above it). One beta
    draw per target and resample: the joint distribution of the resample's order statistics,
    at a cost independent of n."""
    rng = np.random.default_rng(seed)
    drawn = np.empty((resamples, len(targets)), dtype=np.int64)
    u = np.zeros(resamples)
    previous = -1
    for k, t in enumerate(targets):
        u = u + (1 - u) * rng.beta(t - previous, n - t, size=resamples)
        drawn[:, k] = np.minimum(np.floor(n * u), n - 1)  # u rounded up to 1 is the last
        previous = t
    return drawn


def quantiles_at(ordered: np.ndarray, positions: np.ndarray, targets: Sequence[int],
                 quantiles: Sequence[float]) -> np.ndarray:
    """(rows, k): each row's quantiles (numpy's method linear) of the resample whose order
    statistics `targets` are at `positions` (rows, len(targets)) of the sorted sample
    `ordered`: the value a sort of the resample would give, bit for bit."""
    below, above, gamma = quantile_positions(len(ordered), quantiles)
    column = {int(t): k for k, t in enumerate(targets)}
    at = ordered[positions]
    return lerp(at[:, [column[int(b)] for b in below]], at[:, [column[int(a)] for a in above]],
                gamma)


def quantile_targets(n: int, quantiles: Sequence[float]) -> np.ndarray:
    """The order statistics the quantiles of n values interpolate between, increasing."""
    below, above, _ = quantile_positions(n, quantiles)
    return np.unique(np.concatenate([below, above]))


def quantile_jackknife(ordered: np.ndarray, quantiles: Sequence[float]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The leave-one-out quantiles (numpy's method linear) of the sorted values `ordered`, as
    their distinct values and how many left-out values give each, (3, k) both: leaving out a
    value at or below the lower order
    statistic of the n - 1 left (sorted position p <= below) shifts both up by one, leaving out
    the upper one (p == above > below) only the upper, and any value above neither. The same
    values to the bit, in O(k) after the sort."""
    n = len(ordered)
    below, above, gamma = quantile_positions(n - 1, quantiles)
    values = np.stack([lerp(ordered[below + 1], ordered[above + 1], gamma),
                       lerp(ordered[below], ordered[above + 1], gamma),
                       lerp(ordered[below], ordered[above], gamma)])
    counts = np.stack([below + 1, above - below, n - 1 - above]).astype(np.float64)
    return values, counts


def quantile_interval(values: np.ndarray, quantiles: Sequence[float], level: float,
                      positions: np.ndarray, one_method: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) of the quantiles of `values` from resamples given by the positions
    of their order statistics quantile_targets(n, quantiles) in the sorted values (rows,
    targets): BCa with the leave-one-out jackknife (quantile_jackknife), percentile where BCa
    is undefined, as interval_of computes them."""
    values = np.asarray(values, dtype=np.float64)
    ordered = np.sort(values)
    theta_b = quantiles_at(ordered, positions, quantile_targets(len(values), quantiles),
                           quantiles)
    jack, counts = quantile_jackknife(ordered, quantiles) if len(values) > 1 else (None, None)
    return interval_of(sorted_quantiles(ordered, quantiles), theta_b, jack, level, one_method,
                       jack_counts=counts)


def quantile_bootstrap(values: np.ndarray, quantiles: Sequence[float], level: float,
                       resamples: int, seed: int, one_method: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) of the quantiles of `values` (one observation per cluster, the
    clusters resampled with replacement): each resample's order statistics drawn directly
    (order_statistic_draws: the distribution of scipy.stats.bootstrap's resamples, at a cost
    independent of the number of clusters), its quantiles and the interval as
    quantile_interval computes them (given scipy's resamples, scipy's interval to the
    rounding); NaN (method None) with resamples 0."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        raise ValueError("a bootstrap over no cluster")
    if resamples == 0:
        nothing = np.full(len(quantiles), np.nan)
        return nothing, nothing.copy(), np.full(len(quantiles), None, dtype=object)
    targets = tuple(int(t) for t in quantile_targets(n, quantiles))
    positions = _shared_order_statistic_draws(n, targets, resamples, seed)
    return quantile_interval(values, quantiles, level, positions, one_method)


@functools.lru_cache(maxsize=64)
def _shared_order_statistic_draws(n: int, targets: tuple[int, ...], resamples: int, seed: int
                                  ) -> np.ndarray:
    """order_statistic_draws, read-only, once per process for each n, targets, resamples and
    seed: the draws do not depend on the values, so samples of one size (a treebank's
    originals under each scoring function) share them, as drawing them again would repeat them."""
    drawn = order_statistic_draws(n, targets, resamples, seed)
    drawn.setflags(write=False)
    return drawn


# ---- category counts ------------------------------------------------------------------------

def multinomial_draws(counts: np.ndarray, resamples: int, seed: int, block: int = BLOCK
                      ) -> np.ndarray:
    """(resamples, categories): the category counts of `resamples` with-replacement resamples
    of the sum(counts) items, Multinomial(n, counts / n), the distribution that drawing the
    items one by one gives, without an index matrix of resamples x items; drawn in blocks (the
    same stream as one call) from a generator seeded with `seed`."""
    counts = np.asarray(counts, dtype=np.int64)
    blocks = list(category_draws([counts], resamples, np.random.default_rng(seed), block))
    return np.concatenate(blocks) if blocks else np.zeros((0, len(counts)), dtype=np.int64)


def category_draws(tallies: Sequence[np.ndarray], resamples: int, rng: np.random.Generator,
                   block: int = BLOCK):
    """Yields (block, categories) count matrices: per resample, the category counts of each
    stratum's units drawn with replacement (`tallies`: each stratum's count per category),
    Multinomial(n_s, tally_s / n_s) per stratum, summed: the distribution of counting index
    draws' categories, for a statistic of category counts (an MCC of its confusion matrix), at
    a cost per resample independent of the number of units."""
    tallies = [np.asarray(t, dtype=np.int64) for t in tallies]
    for start in range(0, resamples, block):
        b = min(block, resamples - start)
        counts = np.zeros((b, len(tallies[0])), dtype=np.int64)
        for tally in tallies:
            n = int(tally.sum())
            counts += rng.multinomial(n, tally / n, size=b)
        yield counts
