"""The CoLA and German case intervals against independent computations: the MCC's against
scipy.stats.bootstrap of sklearn's matthews_corrcoef over (label, prediction) pairs, the
accuracy's against statsmodels' Wilson, the mean template AUC's against scipy.stats.bootstrap of
the table's own template AUCs, the pooled AUC's against delong.py (itself checked against R's
pROC in test_delong.py); with aggregate.uncertainty.resamples 0 no bootstrap, and the same
tables to the byte when run twice."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
from scipy import stats
from sklearn.metrics import matthews_corrcoef
from statsmodels.stats.proportion import proportion_confint

from spudflow.aggregate.cola import intervals, mcc_of_counts
from spudflow.aggregate.delong import delong_auc
from spudflow.aggregate.uncertainty import (
    BCA,
    PERCENTILE,
    SHARED_INDEX_DRAWS_MAX_ITEMS,
    Uncertainty,
    counts_bootstrap_interval,
    resampled_counts,
)

from aggregate_inputs import assert_table_files, cola_inputs, german_case_inputs


def _files(out):
    """The tables' bytes by file name (not the write marks)."""
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


def _held_out(n: int = 200, seed: int = 1):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.7).astype(np.int64)
    predictions = np.where(rng.random(n) < 0.75, labels, 1 - labels)
    return labels, predictions


def test_mcc_of_counts_is_sklearns():
    labels, predictions = _held_out()
    cells = np.bincount(2 * labels + predictions, minlength=4)
    assert mcc_of_counts(cells) == pytest.approx(matthews_corrcoef(labels, predictions),
                                                 abs=1e-14)
    # a margin empty (every prediction 1): 0, as sklearn
    assert mcc_of_counts(np.bincount(2 * labels + 1, minlength=4)) == 0.0 == \
        matthews_corrcoef(labels, np.ones_like(labels))


@pytest.mark.parametrize(("n", "level", "resamples", "seed"), [(200, 0.9, 500, 7),
                                                               (60, 0.95, 2000, 0)])
def test_cola_mcc_interval_is_scipys_bootstrap_of_sklearns_mcc(n, level, resamples, seed):
    """Given the same resamples (the counts of each resampled set of sentences), the interval is
    scipy.stats.bootstrap's BCa of sklearn's matthews_corrcoef, its jackknife taken sentence by
    sentence over (label, prediction) pairs."""
    labels, predictions = _held_out(n, seed)
    settings = Uncertainty(level, resamples, seed)
    got = intervals(labels, predictions, float(matthews_corrcoef(labels, predictions)), settings)
    cells = np.bincount(2 * labels + predictions, minlength=4)
    distribution = mcc_of_counts(resampled_counts(cells, settings))
    expected = stats.bootstrap(
        (labels, predictions), lambda y, p: matthews_corrcoef(y, p), paired=True,
        vectorized=False, n_resamples=0, confidence_level=level, method="BCa",
        bootstrap_result=SimpleNamespace(bootstrap_distribution=distribution)
    ).confidence_interval
    assert got["mcc_interval"] == BCA
    assert got["mcc_ci_low"] == pytest.approx(expected.low, abs=1e-12)
    assert got["mcc_ci_high"] == pytest.approx(expected.high, abs=1e-12)
    low, high = proportion_confint(int((labels == predictions).sum()), n, alpha=1 - level,
                                   method="wilson")
    assert (got["accuracy_ci_low"], got["accuracy_ci_high"]) == pytest.approx((low, high),
                                                                              abs=1e-12)
    assert got["accuracy_stderr"] == pytest.approx(
        np.std(labels == predictions, ddof=1) / np.sqrt(n), rel=1e-12)


def test_resampled_counts_are_those_of_resampled_sentences():
    """The multinomial draws have the distribution of the cell counts of sentences drawn with
    replacement (scipy's index resampling): the same means and covariances, within Monte Carlo
    error."""
    labels, predictions = _held_out(300)
    codes = 2 * labels + predictions
    cells = np.bincount(codes, minlength=4)
    drawn = resampled_counts(cells, Uncertainty(resamples=20_000, seed=1))
    rng = np.random.default_rng(2)
    by_index = np.stack([np.bincount(codes[rng.integers(0, 300, 300)], minlength=4)
                         for _ in range(20_000)])
    assert drawn.sum(axis=1).tolist() == [300] * 20_000
    assert np.abs(drawn.mean(axis=0) - by_index.mean(axis=0)).max() < 0.3
    assert np.abs(np.cov(drawn.T) - np.cov(by_index.T)).max() < 3


@pytest.mark.parametrize(("cells", "seed"), [((9, 4, 5, 12), 0), ((1, 0, 0, 2), 5),
                                            ((40, 3, 30, 55), 2)])
def test_a_small_samples_mcc_interval_is_scipys_bootstrap_index_for_index(cells, seed):
    """Up to SHARED_INDEX_DRAWS_MAX_ITEMS sentences, the resamples are scipy.stats.bootstrap's
    own index draws (its sentences in category order) with the same seed, shared by every
    sample of that size: the interval is scipy's, not only distributed as it."""
    cells = np.array(cells)
    assert cells.sum() <= SHARED_INDEX_DRAWS_MAX_ITEMS
    codes = np.repeat(np.arange(4), cells)
    labels, predictions = codes // 2, codes % 2
    settings = Uncertainty(0.95, 3000, seed)
    index_draws = np.random.default_rng(seed).integers(0, len(codes), (3000, len(codes)))
    assert np.array_equal(resampled_counts(cells, settings),
                          np.stack([np.bincount(codes[row], minlength=4) for row in index_draws]))

    def mcc(y, p, axis=-1):
        return mcc_of_counts(np.stack([np.sum((y == a) & (p == b), axis=axis)
                                       for a in (0, 1) for b in (0, 1)], axis=-1))
    got = counts_bootstrap_interval(cells, mcc_of_counts, settings)
    for method in ("BCa", "percentile"):
        expected = stats.bootstrap((labels, predictions), mcc, paired=True, vectorized=True,
                                   n_resamples=3000, method=method,
                                   rng=np.random.default_rng(seed)).confidence_interval
        if np.isfinite(expected.low) and np.isfinite(expected.high):
            break
    assert got[2] == method.lower()
    assert got[:2] == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_shared_index_draws_stay_within_their_memory_bound():
    """Index draws are kept only up to SHARED_INDEX_DRAWS_MAX_INDICES per sample size, so that
    the kept draws stay bounded at any --resamples; beyond, the multinomial is drawn."""
    from spudflow.aggregate.uncertainty import SHARED_INDEX_DRAWS_MAX_INDICES, indices_below

    cells = np.array([20, 10, 10, 60])
    resamples = SHARED_INDEX_DRAWS_MAX_INDICES // 100 + 1
    before = indices_below.cache_info().currsize
    drawn = resampled_counts(cells, Uncertainty(resamples=resamples, seed=4))
    assert indices_below.cache_info().currsize == before
    assert drawn.shape == (resamples, 4) and set(drawn.sum(axis=1)) == {100}
    resampled_counts(cells, Uncertainty(resamples=resamples - 1, seed=4))
    assert indices_below.cache_info().currsize == before + 1


def test_tables_of_one_samples_labels_share_their_row_totals():
    """Beyond the shared index draws, a 2 x 2 table's resamples draw its rows' totals first,
    kept per (n, row 0's count): two tables of the same labels and other predictions have the
    same resampled label counts, and each its own split (the multinomial's distribution:
    test_resampled_counts_are_those_of_resampled_sentences)."""
    settings = Uncertainty(resamples=5000, seed=9)
    first = resampled_counts(np.array([120, 80, 30, 170]), settings)
    second = resampled_counts(np.array([150, 50, 90, 110]), settings)
    assert np.array_equal(first[:, :2].sum(axis=1), second[:, :2].sum(axis=1))
    assert not np.array_equal(first[:, 0], second[:, 0])
    assert set(first.sum(axis=1)) == set(second.sum(axis=1)) == {400}
    degenerate = resampled_counts(np.array([0, 0, 150, 250]), settings)
    assert not degenerate[:, :2].any() and set(degenerate.sum(axis=1)) == {400}


def test_cola_degenerate_and_switched_off():
    labels, predictions = _held_out(50)
    off = intervals(labels, predictions, 0.3, Uncertainty(resamples=0))
    assert (off["mcc_ci_low"], off["mcc_ci_high"], off["mcc_interval"]) == (None, None, None)
    assert off["accuracy_ci_low"] is not None  # Wilson's needs no resampling
    one_class = intervals(np.ones(50, int), predictions, None, Uncertainty(resamples=200))
    assert one_class["mcc_interval"] is None  # no MCC, no interval
    # every prediction one class: every resample's MCC is 0, BCa undefined
    constant = intervals(labels, np.ones(50, int), 0.0, Uncertainty(resamples=200))
    assert (constant["mcc_ci_low"], constant["mcc_ci_high"], constant["mcc_interval"]) == \
        (0.0, 0.0, PERCENTILE)


def _cola(tmp_path, run_cli, *options):
    items, scores = cola_inputs(tmp_path, n_per_split=40)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out,
                           "--folds", 5, *options)
    assert code == 0, err
    return out


def test_cola_tables_carry_the_intervals(tmp_path, run_cli):
    out = _cola(tmp_path, run_cli, "--resamples", 300, "--interval-seed", 2)
    for name in ("cola_thresholds", "cola_sources"):
        table = assert_table_files(out, name).filter(pl.col("mcc").is_not_null())
        assert table.height
        inside = table.filter((pl.col("mcc_ci_low") <= pl.col("mcc"))
                              & (pl.col("mcc") <= pl.col("mcc_ci_high"))
                              & (pl.col("accuracy_ci_low") <= pl.col("accuracy"))
                              & (pl.col("accuracy") <= pl.col("accuracy_ci_high")))
        assert inside.height == table.height, name
        assert set(table["mcc_interval"]) <= {BCA, PERCENTILE}
    first = _files(out)
    again = _cola(tmp_path / "again", run_cli, "--resamples", 300, "--interval-seed", 2)
    assert _files(again) == first


def test_cola_without_resamples(tmp_path, run_cli):
    table = assert_table_files(_cola(tmp_path, run_cli, "--resamples", 0), "cola_thresholds")
    assert table["mcc_ci_low"].is_null().all() and table["mcc_interval"].is_null().all()
    assert table["accuracy_ci_low"].is_not_null().all()


def _german(tmp_path, run_cli, *options):
    items, scores = german_case_inputs(tmp_path, n_templates=6)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-german-case", "--items", items, "--scores", *scores,
                           "--out-dir", out, *options)
    assert code == 0, err
    frame = pl.read_parquet(items).join(pl.concat([pl.read_parquet(p) for p in scores]),
                                        on="item_id")
    return frame, out


def test_german_intervals(tmp_path, run_cli):
    frame, out = _german(tmp_path, run_cli, "--resamples", 400, "--interval-seed", 5,
                         "--interval-level", 0.9)
    summary = assert_table_files(out, "german_case_auc")
    templates = assert_table_files(out, "german_case_auc_templates")
    assert summary.height == 4  # 2 models x 2 analyses
    for row in summary.iter_rows(named=True):
        aucs = templates.filter((pl.col("model") == row["model"])
                                & (pl.col("analysis") == row["analysis"])).sort("template")
        expected = stats.bootstrap((aucs["auc"].to_numpy(),), np.mean, n_resamples=400,
                                   confidence_level=0.9, method="BCa",
                                   rng=np.random.default_rng(5)).confidence_interval
        assert row["auc_mean_interval"] == BCA
        assert (row["auc_mean_ci_low"], row["auc_mean_ci_high"]) == pytest.approx(
            (expected.low, expected.high), abs=1e-12)
        sentences = frame.filter(pl.col("model") == row["model"])
        if row["analysis"] == "restricted":
            sentences = sentences.filter(~pl.col("grammatical") | (pl.col("cases") == "NDA"))
        delong = delong_auc(sentences["grammatical"].cast(pl.Int8).to_numpy(),
                            sentences["logprob_sum"].to_numpy(), 0.9)
        assert row["auc_pooled"] == pytest.approx(delong.auc, abs=1e-14)
        assert (row["auc_pooled_ci_low"], row["auc_pooled_ci_high"], row["auc_pooled_stderr"]) \
            == pytest.approx((delong.ci_low, delong.ci_high, delong.stderr), rel=1e-12)
    violations = assert_table_files(out, "german_case_auc_violation")
    assert violations.height == 12  # 2 models x 2 analyses x 3 violation types
    row = violations.filter((pl.col("model") == "ggpt") & (pl.col("analysis") == "all")
                            & (pl.col("violation") == "D")).row(0, named=True)
    sentences = frame.filter((pl.col("model") == "ggpt")
                             & (pl.col("grammatical") | (pl.col("violation") == "D")))
    delong = delong_auc(sentences["grammatical"].cast(pl.Int8).to_numpy(),
                        sentences["logprob_sum"].to_numpy(), 0.9)
    assert (row["auc_pooled"], row["auc_pooled_ci_low"], row["auc_pooled_ci_high"]) == \
        pytest.approx((delong.auc, delong.ci_low, delong.ci_high), rel=1e-12)
    assert row["auc_mean_interval"] == BCA
    assert row["auc_mean_ci_low"] <= row["auc_mean"] <= row["auc_mean_ci_high"]
    first = _files(out)
    _, again = _german(tmp_path / "again", run_cli, "--resamples", 400, "--interval-seed", 5,
                       "--interval-level", 0.9)
    assert _files(again) == first


def test_german_without_resamples(tmp_path, run_cli):
    _, out = _german(tmp_path, run_cli, "--resamples", 0)
    summary = assert_table_files(out, "german_case_auc")
    assert summary["auc_mean_ci_low"].is_null().all()
    assert summary["auc_mean_interval"].is_null().all()
    assert summary["auc_pooled_ci_low"].is_not_null().all()  # DeLong's is a closed form
