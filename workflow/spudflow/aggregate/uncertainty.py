"""Intervals of the headline figures (config `aggregate.uncertainty`).

- A proportion of independent items (an accuracy over pairs): Wilson's score interval, a closed
  form that needs no resampling (so it is given with `resamples: 0` too), and lm-evaluation-
  harness's `acc_stderr`: the sample standard deviation of the 0/1 outcomes over sqrt(n).
- A mean of group means (BLiMP's paradigm mean): a bootstrap stratified by group, the pairs
  of each group resampled within it (scipy.stats.bootstrap with one sample per group), BCa
  where it is defined and the percentile interval where it is not (every resample equal);
  `resamples: 0` gives none. For 0/1 outcomes the resampled paradigm means are drawn as
  binomial counts (resampling.py): the distribution of scipy's resamples at a cost that does
  not grow with the pairs, and scipy's interval to 1e-12 given the same resamples.

Every bootstrap draws from its own generator seeded with `seed`, so a figure's interval does
not depend on which other figures the table holds or their order.
"""

from __future__ import annotations

import functools
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from spudflow.aggregate.resampling import (
    BCA,
    PERCENTILE,
    bca_levels,
    category_means,
    interval,
    is_small_integer,
    mean_of_means_deviations,
    multinomial_draws,
    ndtri,
    percentile_of_score,
)

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


# The fewest items a group may have for a bootstrap within groups: resampling n items within
# themselves gives (n - 1) / n of their variance (a group of one: none at all), so a mean over
# groups of one or two pairs (a sampled model's BLiMP paradigms) got an interval of about its
# point; from 5 items the variance is at most a fifth short (the docs say so).
MIN_GROUP_SIZE = 5


def stratified_mean_of_means(groups: Sequence[np.ndarray], settings: Uncertainty,
                             names: Sequence[str] | None = None, draws: dict | None = None
                             ) -> tuple[float | None, float | None, str | None]:
    """(low, high, method) of the unweighted mean of the groups' means, each group resampled
    within itself; (None, None, None) with resamples 0, no group or a group of fewer than
    MIN_GROUP_SIZE items.

    With `names` (one per group, e.g. BLiMP's paradigm uids) and outcomes on the fast path, each
    group's resamples come from its own generator seeded with (seed, name): a paradigm is
    resampled alike in every figure that holds it (its field's, the overall), and `draws`, a
    dict the caller keeps, lets the next figure reuse them (keyed by name: one scoring function
    per dict)."""
    if names is not None and (len(names) != len(groups) or len(set(names)) != len(names)):
        raise ValueError(f"{len(names)} names for {len(groups)} groups: one distinct name each")
    named = [(g, name) for g, name in zip(groups, names or [None] * len(groups), strict=True)
             if len(g)]
    groups = [np.asarray(g, dtype=np.float64) for g, _ in named]
    if settings.resamples == 0 or not groups or min(map(len, groups)) < MIN_GROUP_SIZE:
        return None, None, None  # too few items in a group to resample within it
    resampled, constants = tuple(groups), []  # every group varies (MIN_GROUP_SIZE items)
    if all(is_small_integer(g) for g in resampled):  # accuracies: the multinomial fast path
        means = None
        if names is not None:
            draws = {} if draws is None else draws
            means = np.stack([_named_draw(g, name, settings, draws)
                              for g, (_, name) in zip(groups, named, strict=True)])
        return outcome_mean_of_means(resampled, constants, len(groups), settings, means)
    return _scipy_interval(resampled, _mean_of_means(constants, len(groups)), settings)


def _scipy_interval(data: tuple, statistic, settings: Uncertainty, **options
                    ) -> tuple[float, float, str]:
    """(low, high, method) of scipy.stats.bootstrap(data, statistic, **options), vectorised and
    seeded by settings.seed: BCa, or percentile where BCa is not finite (a degenerate
    distribution, every resample equal, makes it NaN)."""
    from scipy import stats  # only a bootstrap loads scipy

    for method in (BCA, PERCENTILE):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            with np.errstate(divide="ignore", invalid="ignore"):
                result = stats.bootstrap(
                    data, statistic, n_resamples=settings.resamples,
                    confidence_level=settings.level, method=method, vectorized=True,
                    rng=np.random.default_rng(settings.seed), **options)
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high), method
    raise AssertionError("a percentile interval of finite data is finite")


NO_INTERVAL = (None, None, None)
# Elements of one block of resampled data (indices, then the statistic's temporaries): bounds a
# bootstrap's memory whatever the sample size, and fixed so the same data give the same draws.
BLOCK_ELEMENTS = 4_000_000


def bootstrap_interval(data: Sequence[np.ndarray], statistic, settings: Uncertainty,
                       paired: bool = False) -> tuple[float | None, float | None, str | None]:
    """(low, high, method) of `statistic` (vectorised: it takes the samples and `axis`) by
    scipy.stats.bootstrap, BCa where it is defined and percentile where it is not (every resample
    equal); resamples drawn in blocks of BLOCK_ELEMENTS (scipy's `batch`), seeded by
    settings.seed. NO_INTERVAL with resamples 0 or fewer than two items in a sample."""
    data = tuple(np.asarray(d) for d in data)
    if settings.resamples == 0 or min(len(d) for d in data) < 2:
        return NO_INTERVAL
    batch = max(1, BLOCK_ELEMENTS // max(len(d) for d in data))
    return _scipy_interval(data, statistic, settings, batch=batch, paired=paired)


# Samples of at most this many items draw their resamples as index matrices, as
# scipy.stats.bootstrap does, shared by every sample of the same size (a CoLA source's rows of
# each scoring function and normalisation): their categories' counts are then read off in a
# few columns, where a multinomial of few items costs numpy one inverted binomial per category
# per resample; larger ones draw the multinomial, whose cost does not grow with n.
SHARED_INDEX_DRAWS_MAX_ITEMS = 128
# ... at most this many indices per sample size (128 x the default 10,000 resamples), so that
# the draws kept for 64 sizes stay within 64 x 129 x 10,000 int16 (165 MB) at any --resamples
SHARED_INDEX_DRAWS_MAX_INDICES = 1_280_000


def resampled_counts(counts: np.ndarray, settings: Uncertainty) -> np.ndarray:
    """settings.resamples draws of the category counts of a with-replacement resample of
    sum(counts) items (resamples x categories). Up to SHARED_INDEX_DRAWS_MAX_ITEMS items and
    SHARED_INDEX_DRAWS_MAX_INDICES indices, scipy.stats.bootstrap's own resamples of the items
    sorted by category (indices_below); beyond, the multinomial distribution that drawing the
    items one by one gives, without an index matrix of resamples x items (four categories:
    split_table_draws)."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if 0 < n <= SHARED_INDEX_DRAWS_MAX_ITEMS and \
            n * settings.resamples <= SHARED_INDEX_DRAWS_MAX_INDICES:
        below = indices_below(n, settings.resamples, settings.seed)
        return np.diff(below[:, np.concatenate([[0], np.cumsum(counts)])].astype(np.int64),
                       axis=1)
    if len(counts) == 4:
        return split_table_draws(counts, settings)
    return multinomial_draws(counts, settings.resamples, settings.seed)


def split_table_draws(counts: np.ndarray, settings: Uncertainty) -> np.ndarray:
    """(resamples, 4): Multinomial(n, counts / n) of four categories (a 2 x 2 table in
    row-major order, as CoLA's (label, prediction) cells) drawn as its rows' totals,
    Binomial(n, row 0's share), then each row's split, Binomial(row total, its first cell's
    share of the row): the distribution of numpy's multinomial. The totals depend on n and row
    0's count alone, so they are drawn once (split_totals) and shared by every table of those
    totals, such as a sample's tables under each scoring function (the same labels, other
    predictions): two binomials per further table instead of three."""
    counts = np.asarray(counts, dtype=np.int64)
    n, row0 = int(counts.sum()), int(counts[0] + counts[1])
    totals, state = split_totals(n, row0, settings.resamples, settings.seed)
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = state  # where drawing the totals left default_rng(seed)
    drawn = np.empty((settings.resamples, 4), dtype=np.int64)
    drawn[:, 0] = rng.binomial(totals, int(counts[0]) / row0) if row0 else 0
    drawn[:, 1] = totals - drawn[:, 0]
    rest = n - totals
    drawn[:, 2] = rng.binomial(rest, int(counts[2]) / (n - row0)) if n - row0 else 0
    drawn[:, 3] = rest - drawn[:, 2]
    return drawn


# a CoLA table job meets a few dozen samples; 64 x 4 bytes x resamples (2.6 MB at 10,000)
@functools.lru_cache(maxsize=64)
def split_totals(n: int, row0: int, resamples: int, seed: int) -> tuple[np.ndarray, dict]:
    """Row 0's totals of `resamples` resampled 2 x 2 tables of n items, row0 of them in row
    0 (Binomial(n, row0 / n), int32, read-only), from default_rng(seed), and that generator's
    state after them."""
    rng = np.random.default_rng(seed)
    totals = rng.binomial(n, row0 / n, size=resamples).astype(np.int32)
    totals.setflags(write=False)
    return totals, rng.bit_generator.state


# CoLA's sources come in a few dozen sizes, each met again for every scoring function and
# normalisation
@functools.lru_cache(maxsize=64)
def indices_below(n: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n + 1) int16, read-only: how many of each resample's n indices are below
    0, 1, ..., n, the indices drawn as scipy.stats.bootstrap draws them in one batch,
    default_rng(seed).integers(0, n, (resamples, n)). Kept per size, resamples and seed: every
    sample of that size reads its categories' counts from the same draws."""
    drawn = np.random.default_rng(seed).integers(0, n, (resamples, n))
    rows = np.arange(resamples, dtype=np.int64)[:, None] * n
    per_index = np.bincount((rows + drawn).ravel(), minlength=resamples * n)
    below = np.zeros((resamples, n + 1), dtype=np.int16)
    np.cumsum(per_index.reshape(resamples, n), axis=1, out=below[:, 1:])
    below.setflags(write=False)
    return below


def counts_bootstrap_interval(counts, statistic, settings: Uncertainty
                              ) -> tuple[float | None, float | None, str | None]:
    """(low, high, method) of a statistic of category counts (items that are one of a few
    categories, e.g. a sentence's label and prediction), bootstrapping the items: BCa where it is
    defined, percentile where it is not, as scipy.stats.bootstrap computes them from the same
    resamples (resampled_counts), with the jackknife in closed form (leaving out any item of one
    category gives the same value). `statistic(counts, axis=-1)` takes counts along the last
    axis. NO_INTERVAL with resamples 0 or fewer than two items."""
    counts = np.asarray(counts, dtype=np.int64)
    if settings.resamples == 0 or int(counts.sum()) < 2:
        return NO_INTERVAL
    return _counts_interval(tuple(int(c) for c in counts), statistic, settings)


@functools.lru_cache(maxsize=4096)
def _counts_interval(counts: tuple[int, ...], statistic, settings: Uncertainty
                     ) -> tuple[float, float, str]:
    """counts_bootstrap_interval of COUNTS: a function of the counts, the statistic and the
    settings alone (its draws are seeded by settings.seed), so rows with equal counts (CoLA's
    small sources) share one computation."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())

    distribution = statistic(resampled_counts(counts, settings), axis=-1)
    alpha = (1 - settings.level) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = float(statistic(counts, axis=-1))
        z0 = ndtri(percentile_of_score(distribution, theta))
        present = np.flatnonzero(counts)
        left_out = statistic(counts[None, :] - np.eye(len(counts), dtype=np.int64)[present],
                             axis=-1)
        weights = counts[present]
        u = (n - 1) * (np.sum(weights * left_out) / n - left_out)
        acceleration = (np.sum(weights * u ** 3) / n ** 3) / 6 / (
            np.sum(weights * u ** 2) / n ** 2) ** 1.5
    bca = bca_levels(z0, acceleration, alpha)
    for method, levels in ((BCA, bca), (PERCENTILE, [alpha, 1 - alpha])):
        if np.all(np.isfinite(levels)):
            low, high = np.quantile(distribution, np.asarray(levels, dtype=np.float64))
            if np.isfinite(low) and np.isfinite(high):
                return float(low), float(high), method
    raise AssertionError("a percentile interval of finite data is finite")


def _named_draw(group: np.ndarray, name: str, settings: Uncertainty, draws: dict
                ) -> np.ndarray:
    """One group's resampled means from the generator of (seed, name), drawn once per `draws`."""
    if name not in draws:
        rng = np.random.default_rng([settings.seed, zlib.crc32(str(name).encode())])
        draws[name] = category_means([group], settings.resamples, rng)[0]
    return draws[name]


def outcome_mean_of_means(resampled: Sequence[np.ndarray], constants: Sequence[float],
                          n_groups: int, settings: Uncertainty,
                          means: np.ndarray | None = None) -> tuple[float, float, str]:
    """The interval of stratified_mean_of_means for small-integer outcomes (0/1 accuracies):
    the resampled group means drawn as multinomial counts (resampling.category_means; or
    `means`, (groups, resamples), given), the jackknife in closed form. Given the group means
    of scipy.stats.bootstrap's own resamples it returns scipy's interval (tests), and the draws
    have the distribution of scipy's, at a cost independent of the number of pairs."""
    if means is None:
        means = category_means(resampled, settings.resamples,
                               np.random.default_rng(settings.seed))
    fixed = float(np.sum(constants))
    theta_hat = float(_mean_of_means(constants, n_groups)(*resampled))
    theta_b = (np.sum(means, axis=0) + fixed) / n_groups  # scipy's order of operations
    return interval(theta_hat, theta_b, settings.level,
                    mean_of_means_deviations(resampled, n_groups))
