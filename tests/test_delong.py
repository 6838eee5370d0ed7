"""spudflow.aggregate.delong against R's pROC (skipped, with the reason, where R or pROC is absent:
Debian `r-base-core r-cran-proc`), against sklearn's AUC and against DeLong's variance written out
pair by pair (the m x n comparison matrix Sun & Xu's algorithm avoids)."""

from __future__ import annotations

import subprocess
from statistics import NormalDist

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from spudflow.aggregate.delong import delong_auc, delong_paired


def _data(m: int = 60, n: int = 45, seed: int = 4, rounding: int = 1):
    """Labels and two correlated scorings, rounded so that many scores tie (midranks)."""
    rng = np.random.default_rng(seed)
    labels = np.r_[np.ones(m, int), np.zeros(n, int)]
    rng.shuffle(labels)
    shared = rng.normal(0, 1, m + n) + 0.8 * labels
    a = np.round(shared + rng.normal(0, 0.7, m + n), rounding)
    b = np.round(0.6 * shared + rng.normal(0, 1.0, m + n), rounding)
    return labels, a, b


def _by_pairs(labels, scores):
    """DeLong et al. (1988) as written: psi over the m x n pairs, placements, sample variances."""
    x, y = scores[labels == 1], scores[labels == 0]
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    return psi.mean(), psi.mean(axis=1), psi.mean(axis=0)


def test_auc_and_variance_are_the_pairwise_definition():
    labels, a, b = _data()
    auc, v10, v01 = _by_pairs(labels, a)
    got = delong_auc(labels, a)
    assert got.auc == pytest.approx(roc_auc_score(labels, a), abs=1e-14)
    assert got.auc == pytest.approx(auc, abs=1e-14)
    variance = np.var(v10, ddof=1) / len(v10) + np.var(v01, ddof=1) / len(v01)
    assert got.variance == pytest.approx(variance, rel=1e-12)
    z = NormalDist().inv_cdf(0.975)
    assert (got.ci_low, got.ci_high) == pytest.approx(
        (auc - z * np.sqrt(variance), auc + z * np.sqrt(variance)), rel=1e-12)
    # the paired difference's variance: Var a + Var b - 2 Cov(a, b) of the placements
    _, w10, w01 = _by_pairs(labels, b)
    cov = (np.cov(v10, w10)[0, 1] / len(v10)) + (np.cov(v01, w01)[0, 1] / len(v01))
    var_b = np.var(w10, ddof=1) / len(w10) + np.var(w01, ddof=1) / len(w01)
    paired = delong_paired(labels, a, b)
    assert paired.variance == pytest.approx(variance + var_b - 2 * cov, rel=1e-12)
    assert paired.difference == pytest.approx(auc - roc_auc_score(labels, b), abs=1e-14)


def test_infinite_scores_count_by_their_order_alone():
    labels, a, b = _data()
    infinite = a.copy()
    infinite[np.argmin(a)] = -np.inf
    infinite[np.argmax(a)] = np.inf
    assert delong_auc(labels, infinite) == delong_auc(labels, a)
    assert delong_paired(labels, infinite, b) == delong_paired(labels, a, b)


def test_degenerate_inputs():
    labels, a, _ = _data()
    same = delong_paired(labels, a, a)  # identical rankings: pROC's z = 0, p = 1
    assert (same.difference, same.stderr, same.z, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    perfect = delong_auc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    assert (perfect.auc, perfect.variance, perfect.ci_low, perfect.ci_high) == (1, 0, 1, 1)
    one = delong_auc([0, 0, 1], [0.1, 0.3, 0.2])  # one positive: no sample variance (pROC NA)
    assert one.auc == 0.5 and np.isnan(one.variance) and np.isnan(one.ci_low)
    with pytest.raises(ValueError, match="both classes"):
        delong_auc([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        delong_auc([0, 1], [np.nan, 0.2])
    with pytest.raises(ValueError, match="shape"):
        delong_paired([0, 1], [0.1, 0.2], [0.1])


needs_r = pytest.mark.usefixtures("r_proc")  # skipped without R and its pROC (conftest)


def _r_proc(tmp_path, labels, a, b, level) -> dict[str, float]:
    np.savetxt(tmp_path / "d.csv", np.column_stack([labels, a, b]), delimiter=",", fmt="%.17g")
    program = (
        "suppressMessages(library(pROC)); "
        f'd <- read.csv("{tmp_path}/d.csv", header = FALSE); '
        "ra <- roc(d[, 1], d[, 2], levels = c(0, 1), direction = '<', quiet = TRUE); "
        "rb <- roc(d[, 1], d[, 3], levels = c(0, 1), direction = '<', quiet = TRUE); "
        f"ci <- ci.auc(ra, method = 'delong', conf.level = {level}); "
        f"t <- roc.test(ra, rb, method = 'delong', paired = TRUE, conf.level = {level}); "
        "cat(sprintf('%.17g', c(ci[1], ci[2], ci[3], var(ra, method = 'delong'), "
        "t$statistic, t$p.value, t$conf.int[1], t$conf.int[2], auc(rb))), sep = '\\n')")
    done = subprocess.run(["Rscript", "-e", program], capture_output=True, text=True, check=True)
    names = ("ci_low", "auc", "ci_high", "variance", "z", "p_value", "diff_low", "diff_high",
             "auc_b")
    return dict(zip(names, map(float, done.stdout.split()), strict=True))


@pytest.mark.slow
@needs_r
@pytest.mark.parametrize(("m", "n", "seed", "rounding", "level"), [
    (60, 45, 4, 1, 0.95),  # many ties
    (300, 500, 7, 12, 0.9),  # hardly any
    (5, 3, 1, 0, 0.95),  # tiny, an interval end clipped
])
def test_matches_r_proc(tmp_path, m, n, seed, rounding, level):
    labels, a, b = _data(m, n, seed, rounding)
    r = _r_proc(tmp_path, labels, a, b, level)
    one = delong_auc(labels, a, level)
    for name in ("auc", "variance", "ci_low", "ci_high"):
        assert getattr(one, name) == pytest.approx(r[name], rel=1e-12, abs=1e-14), name
    paired = delong_paired(labels, a, b, level)
    assert paired.auc_b == pytest.approx(r["auc_b"], rel=1e-12)
    assert paired.z == pytest.approx(r["z"], rel=1e-10)
    assert paired.p_value == pytest.approx(r["p_value"], rel=1e-10)
    assert (paired.ci_low, paired.ci_high) == pytest.approx((r["diff_low"], r["diff_high"]),
                                                            rel=1e-12, abs=1e-14)
