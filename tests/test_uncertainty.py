"""aggregate/uncertainty.py against independent implementations: Wilson's interval against
statsmodels' proportion_confint, the stderr against lm-eval's formula, the stratified bootstrap
against scipy.stats.bootstrap called directly; and the intervals in the BLiMP table."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from spudflow.aggregate.blimp import accuracy_tables
from spudflow.aggregate.uncertainty import (
    BCA,
    PERCENTILE,
    Uncertainty,
    accuracy_stderr,
    outcome_mean_of_means,
    stratified_mean_of_means,
    wilson,
)
from spudflow.core.outputs_registry import TABLE, command_tables

COUNTS = [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (517, 1000), (731, 1000), (1, 7)]


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_is_statsmodels_wilson(level):
    k, n = map(np.array, zip(*COUNTS, strict=True))
    low, high = wilson(k, n, level)
    expected_low, expected_high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert np.max(np.abs(low - expected_low)) < 1e-12
    assert np.max(np.abs(high - expected_high)) < 1e-12


def test_wilson_has_no_interval_without_pairs():
    low, high = wilson([0], [0], 0.95)
    assert np.isnan(low[0]) and np.isnan(high[0])


def test_stderr_is_lm_evals_sample_sd_over_sqrt_n():
    """lm-eval's mean_stderr: sqrt(sum((x - mean)^2) / (n - 1)) / sqrt(n) of the 0/1 outcomes."""
    for k, n in COUNTS:
        outcomes = [1.0] * k + [0.0] * (n - k)
        if n < 2:
            assert math.isnan(accuracy_stderr([k], [n])[0])
            continue
        mean = sum(outcomes) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in outcomes) / (n - 1))
        assert abs(accuracy_stderr([k], [n])[0] - sd / math.sqrt(n)) < 1e-12


def _groups(seed=3, sizes=(40, 25, 60, 33)):
    rng = np.random.default_rng(seed)
    return [(rng.random(size) < p).astype(np.float64)
            for size, p in zip(sizes, (0.9, 0.6, 0.75, 0.5), strict=True)]


def _scipys_group_means(groups, resamples, seed):
    """The group means of scipy.stats.bootstrap's own resamples: one batch, per sample
    rng.integers(0, n, (resamples, n)) in order (scipy's _bootstrap_resample)."""
    rng = np.random.default_rng(seed)
    return np.array([np.mean(g[rng.integers(0, len(g), (resamples, len(g)))], axis=-1)
                     for g in groups])


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("seed", [7, 8, 9])
def test_stratified_bootstrap_is_scipys_given_its_resamples(level, seed):
    """The multinomial fast path's interval, given the paradigm means of scipy's resamples, is
    scipy's BCa interval to 1e-12 (the closed-form jackknife and scipy's BCa formulas)."""
    groups = _groups(seed=seed)
    settings = Uncertainty(level=level, resamples=2000, seed=seed)

    def mean_of_means(*samples, axis=-1):
        return np.mean([np.mean(s, axis=axis) for s in samples], axis=0)

    direct = stats.bootstrap(tuple(groups), mean_of_means, n_resamples=2000,
                             confidence_level=level, method="BCa",
                             rng=np.random.default_rng(seed)).confidence_interval
    low, high, method = outcome_mean_of_means(
        groups, [], len(groups), settings, means=_scipys_group_means(groups, 2000, seed))
    assert method == BCA
    assert abs(low - direct.low) < 1e-12 and abs(high - direct.high) < 1e-12


def test_stratified_bootstrap_draws_have_scipys_distribution():
    """The fast path draws binomial counts instead of scipy's indices: the same distribution,
    so with 20,000 resamples its interval is scipy's within Monte Carlo error (the ends of a
    95 % interval of these paradigm means move by ~0.003 from seed to seed)."""
    groups = _groups()
    settings = Uncertainty(resamples=20_000, seed=7)
    low, high, method = stratified_mean_of_means(groups, settings)

    def mean_of_means(*samples, axis=-1):
        return np.mean([np.mean(s, axis=axis) for s in samples], axis=0)

    direct = stats.bootstrap(tuple(groups), mean_of_means, n_resamples=20_000, method="BCa",
                             rng=np.random.default_rng(7)).confidence_interval
    assert method == BCA
    assert abs(low - direct.low) < 0.01 and abs(high - direct.high) < 0.01
    point = np.mean([g.mean() for g in groups])
    assert low < point < high


def test_a_degenerate_bootstrap_falls_back_to_percentile():
    """Every pair of every paradigm correct: each resample is 1, BCa is undefined."""
    assert stratified_mean_of_means([np.ones(5), np.ones(8)], Uncertainty()) == \
        (1.0, 1.0, PERCENTILE)


def test_one_pair_paradigms_are_constants_of_the_mean():
    """scipy resamples samples of two or more; a one-pair paradigm's mean never varies. A mean
    over paradigms that holds one gets no interval: resampling a group within itself gives it
    (n - 1) / n of its variance, none for one pair (a sampled model's paradigms of one or two
    pairs had an interval about as wide as its point)."""
    groups = [np.array([1.0]), *_groups(sizes=(40, 25, 60, 33))]
    settings = Uncertainty(resamples=1000, seed=1)
    low, high, _ = outcome_mean_of_means(groups[1:], [1.0], 5, settings,
                                         means=_scipys_group_means(groups[1:], 1000, 1))

    def statistic(*samples, axis=-1):
        return (np.sum([np.mean(s, axis=axis) for s in samples], axis=0) + 1.0) / 5

    direct = stats.bootstrap(tuple(groups[1:]), statistic, n_resamples=1000, method="BCa",
                             rng=np.random.default_rng(1)).confidence_interval
    assert abs(low - direct.low) < 1e-12 and abs(high - direct.high) < 1e-12
    assert stratified_mean_of_means(groups, settings) == (None, None, None)
    # from MIN_GROUP_SIZE (5) pairs per paradigm on
    small = _groups(sizes=(5, 7, 9, 6))
    assert stratified_mean_of_means(small, settings)[0] is not None
    assert stratified_mean_of_means([g[:4] for g in small], settings) == (None, None, None)


def test_scores_that_are_not_outcomes_take_scipys_bootstrap():
    """Values that are not small integers: scipy.stats.bootstrap itself, same seed."""
    groups = [g + 0.5 * np.arange(len(g)) / len(g) for g in _groups()]
    settings = Uncertainty(resamples=1000, seed=3)

    def mean_of_means(*samples, axis=-1):
        return np.mean([np.mean(s, axis=axis) for s in samples], axis=0)

    direct = stats.bootstrap(tuple(groups), mean_of_means, n_resamples=1000, method="BCa",
                             rng=np.random.default_rng(3)).confidence_interval
    low, high, _ = stratified_mean_of_means(groups, settings)
    assert abs(low - direct.low) < 1e-12 and abs(high - direct.high) < 1e-12


def test_a_named_group_is_resampled_alike_in_every_figure():
    """A paradigm's resamples come from the generator of (seed, its uid): the same draws in its
    field's figure and in the overall one, whatever other paradigms the figure holds, and a
    `draws` dict hands them from one figure to the next."""
    groups = _groups()
    settings = Uncertainty(resamples=500, seed=4)
    alone, together, shared = {}, {}, {}
    stratified_mean_of_means(groups[:2], settings, names=["p0", "p1"], draws=alone)
    stratified_mean_of_means(groups[::-1], settings, names=["p3", "p2", "p1", "p0"],
                             draws=together)
    assert np.array_equal(alone["p1"], together["p1"])
    assert not np.array_equal(together["p0"], together["p1"])
    first = stratified_mean_of_means(groups, settings, names=["p0", "p1", "p2", "p3"],
                                     draws=shared)
    assert stratified_mean_of_means(groups, settings, names=["p0", "p1", "p2", "p3"],
                                    draws=shared) == first
    assert stratified_mean_of_means(groups, settings, names=["p0", "p1", "p2", "p3"]) == first
    with pytest.raises(ValueError, match="distinct"):  # two paradigms would share one draw
        stratified_mean_of_means(groups, settings, names=["p0", "p0", "p2", "p3"])


def test_no_resamples_no_bootstrap_interval():
    assert stratified_mean_of_means(_groups(), Uncertainty(resamples=0)) == (None, None, None)


@pytest.mark.parametrize("bad", [dict(level=1.0), dict(level=0.0), dict(resamples=50),
                                 dict(seed=-1)])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        Uncertainty(**bad)


def _pairs():
    """Two paradigms of one scoring function: 30 pairs (21 correct), 12 pairs (6 correct),
    one skipped pair in the second."""
    rows = []
    for uid, n, correct in (("a", 30, 21), ("b", 13, 6)):
        for i in range(n):
            scored = not (uid == "b" and i == n - 1)
            rows.append(dict(dataset="blimp", model="m", method="sum", field="f",
                             linguistics_term="t", uid=uid, scored=scored,
                             correct=scored and i < correct, tie=False, skipped=not scored,
                             n_unseen=0, n_words=4))
    return pl.DataFrame(rows)


def test_blimp_tables_carry_the_intervals():
    settings = Uncertainty(level=0.95, resamples=1000, seed=0)
    paradigm, _, overall = accuracy_tables(_pairs(), settings)
    expected_low, expected_high = proportion_confint([21, 6], [30, 12], method="wilson")
    assert paradigm["accuracy_ci_low"].to_list() == pytest.approx(expected_low, abs=1e-12)
    assert paradigm["accuracy_ci_high"].to_list() == pytest.approx(expected_high, abs=1e-12)
    row = overall.row(0, named=True)
    assert (row["n_pairs"], row["n_correct"]) == (42, 27)
    low, high = proportion_confint(27, 42, method="wilson")
    assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == pytest.approx((low, high),
                                                                              abs=1e-12)
    groups = [np.array([1.0] * 21 + [0.0] * 9), np.array([1.0] * 6 + [0.0] * 6)]
    assert (row["paradigm_mean_accuracy_ci_low"], row["paradigm_mean_accuracy_ci_high"],
            row["paradigm_mean_interval"]) == stratified_mean_of_means(groups, settings,
                                                                     names=["a", "b"])
    assert row["paradigm_mean_accuracy_ci_low"] < row["paradigm_mean_accuracy"] < \
        row["paradigm_mean_accuracy_ci_high"]
    # the same seed: the same table, to the byte
    again = accuracy_tables(_pairs(), settings)[2]
    assert again.write_ipc(None).getvalue() == overall.write_ipc(None).getvalue()
    # resamples 0: Wilson's intervals stay, the bootstrap's go
    off = accuracy_tables(_pairs(), Uncertainty(resamples=0))[2].row(0, named=True)
    assert off["accuracy_ci_low"] == row["accuracy_ci_low"]
    assert off["paradigm_mean_accuracy_ci_low"] is None
    assert off["paradigm_mean_interval"] is None


def test_table_blimp_reruns_to_the_byte_and_refuses_bad_settings(tmp_path, run_cli):
    from aggregate_inputs import blimp_inputs

    items, scores = blimp_inputs(tmp_path / "blimp")
    written = []
    for run in ("a", "b"):
        out = tmp_path / run
        code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores,
                               "--out-dir", out, "--resamples", "500", "--interval-seed", "3")
        assert code == 0, err
        written.append({p.name: p.read_bytes() for p in sorted(out.glob("blimp_*"))})
    # its tables, each .parquet .csv .md .tex and its report caption .caption.rst, and its data
    # tables' .parquet .csv
    tables = command_tables("table-blimp")
    assert len(written[0]) == sum(5 if t.output_type == TABLE else 2 for t in tables)
    assert written[0] == written[1]
    overall = pl.read_parquet(tmp_path / "a" / "blimp_overall.parquet")
    assert overall["accuracy_ci_low"].is_not_null().all()
    for option, value in (("--resamples", "50"), ("--interval-level", "1"),
                          ("--interval-seed", "-1")):
        with pytest.raises(SystemExit) as stop:  # argparse: exit 2, one line naming the option
            run_cli("table-blimp", "--items", items, "--scores", *scores,
                    "--out-dir", tmp_path / "c", option, value)
        assert stop.value.code == 2
        assert not (tmp_path / "c").exists()
