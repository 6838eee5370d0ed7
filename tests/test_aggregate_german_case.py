"""German case tables: per-template ROC AUC and its summaries against sklearn."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from artifact_files import rewrite
from sklearn.metrics import roc_auc_score, roc_curve

from spudflow.aggregate.outputs import DATA_FORMATS

from aggregate_inputs import assert_table_files, german_case_inputs, run_command

MODELS = (("gbert", "pppl"), ("ggpt", "ppl"))


@pytest.fixture(scope="module")
def german(tmp_path_factory):
    """The scored items and the folder of their tables, made once for the tests that only read
    them."""
    tmp_path = tmp_path_factory.mktemp("german")
    items, scores = german_case_inputs(tmp_path)
    out = tmp_path / "tables"
    assert run_command("table-german-case", "--items", items, "--scores", *scores,
                       "--out-dir", out) == 0
    frame = pl.read_parquet(items).join(pl.concat([pl.read_parquet(p) for p in scores]),
                                        on="item_id")
    return frame, out


def _auc(frame):
    return roc_auc_score(frame["grammatical"].to_numpy(), frame["logprob_sum"].to_numpy())


def _template_aucs(frame, model, keep=None):
    aucs = {}
    for template in ("t0", "t1", "t2"):
        part = frame.filter((pl.col("model") == model) & (pl.col("template") == template))
        aucs[template] = _auc(part if keep is None else part.filter(keep))
    return aucs


@pytest.mark.slow
def test_counts_and_template_aucs(german):
    frame, out = german
    assert frame.height == 3 * 144 * 2
    per_template = assert_table_files(out, "german_case_auc_templates")
    assert per_template.height == 3 * 2 * 2  # templates x models x analyses
    counts = per_template.filter(pl.col("analysis") == "all")
    assert set(counts["n_grammatical"]) == {36} and set(counts["n_violation"]) == {108}
    restricted = per_template.filter(pl.col("analysis") == "restricted")
    assert set(restricted["n_grammatical"]) == {6} and set(restricted["n_violation"]) == {108}
    for model, _ in MODELS:
        expected = _template_aucs(frame, model)
        got = per_template.filter((pl.col("model") == model) & (pl.col("analysis") == "all"))
        assert dict(zip(got["template"], got["auc"], strict=True)) == pytest.approx(expected)


@pytest.mark.slow
def test_mean_sd_over_templates_and_restricted(german):
    frame, out = german
    summary = assert_table_files(out, "german_case_auc")
    original_only = ~pl.col("grammatical") | (pl.col("cases") == "NDA")
    for model, method in MODELS:
        for analysis, keep in (("all", None), ("restricted", original_only)):
            aucs = list(_template_aucs(frame, model, keep).values())
            row = summary.filter((pl.col("model") == model)
                                 & (pl.col("analysis") == analysis)).row(0, named=True)
            assert row["method"] == method and row["n_templates"] == 3
            assert row["auc_mean"] == pytest.approx(np.mean(aucs))
            assert row["auc_sd"] == pytest.approx(np.std(aucs, ddof=1))
            # beside it, every template's sentences in one ROC (src/analyse_results.ipynb)
            pooled = frame.filter(pl.col("model") == model)
            pooled = pooled if keep is None else pooled.filter(keep)
            assert row["auc_pooled"] == pytest.approx(_auc(pooled))
            assert row["auc_pooled"] != pytest.approx(row["auc_mean"])


@pytest.mark.slow
def test_violation_types(german):
    frame, out = german
    table = assert_table_files(out, "german_case_auc_violation")
    assert sorted(table["violation"].unique()) == ["A", "D", "N"]
    for violation in ("N", "A", "D"):
        keep = pl.col("grammatical") | (pl.col("violation") == violation)
        aucs = list(_template_aucs(frame, "ggpt", keep).values())
        row = table.filter((pl.col("model") == "ggpt") & (pl.col("analysis") == "all")
                           & (pl.col("violation") == violation)).row(0, named=True)
        assert row["auc_mean"] == pytest.approx(np.mean(aucs))
        assert row["auc_sd"] == pytest.approx(np.std(aucs, ddof=1))
        assert row["auc_pooled"] == pytest.approx(_auc(frame.filter(pl.col("model") == "ggpt")
                                                       .filter(keep)))


@pytest.mark.slow
def test_case_order_means(german):
    frame, out = german
    order = assert_table_files(out, "german_case_order")
    # case order: np k's case (cases[k-1]) for each k in positions, e.g. NDA read as 213 -> DNA
    in_order = {(c, p): "".join(c[int(k) - 1] for k in p)
                for c, p in frame.select("cases", "positions").unique().iter_rows()}
    assert in_order[("NDA", "213")] == "DNA"
    chosen = frame.filter(pl.col("model") == "gbert").filter(
        pl.struct("cases", "positions").map_elements(
            lambda r: in_order[(r["cases"], r["positions"])] == "DNA", return_dtype=pl.Boolean))
    assert chosen["grammatical"].all()
    row = order.filter((pl.col("model") == "gbert") & pl.col("grammatical")
                       & (pl.col("case_order") == "DNA")).row(0, named=True)
    assert row["n_items"] == chosen.height == 3 * 6  # templates x assignments that read DNA
    assert row["logprob_mean"] == pytest.approx(chosen["logprob_sum"].mean())
    assert row["logprob_sd"] == pytest.approx(np.std(chosen["logprob_sum"].to_numpy(), ddof=1))


@pytest.mark.slow
def test_roc_points_are_sklearns(german):
    frame, out = german
    points = assert_table_files(out, "german_case_roc", formats=DATA_FORMATS)
    part = frame.filter(pl.col("model") == "ggpt")
    fpr, tpr, thresholds = roc_curve(part["grammatical"].to_numpy(), part["logprob_sum"].to_numpy())
    got = points.filter(pl.col("model") == "ggpt")
    assert got["fpr"].to_list() == pytest.approx(fpr.tolist())
    assert got["tpr"].to_list() == pytest.approx(tpr.tolist())
    assert got["threshold"].to_list() == pytest.approx(thresholds.tolist())
    assert got["auc"][0] == pytest.approx(_auc(part))


def test_positions_that_are_no_permutation_are_bad_input(tmp_path, run_cli):
    items, scores = german_case_inputs(tmp_path, n_templates=1)
    rewrite(items, lambda f: f.with_columns(
        pl.when(pl.int_range(pl.len()) == 5).then(pl.lit("112"))
        .otherwise(pl.col("positions")).alias("positions")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-german-case", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 2
    assert err.startswith(f"{items}: item 't0-")
    assert "positions '112'" in err
    assert not out.exists()


@pytest.mark.slow
def test_a_template_with_an_infinite_or_nan_log_probability(tmp_path, run_cli):
    """A log-probability of -inf (a token of probability 0), which sklearn refuses, is ranked:
    its template's AUC is that of the scores' order (as with the lowest finite score); a NaN
    one counts as not scored (aggregate/inputs.py), its template's AUC that of the others. The
    other templates and tables are as before, and the ROC curve of that scoring function is
    left out (logged) rather than stopping the job."""
    items, scores = german_case_inputs(tmp_path)
    path = scores[1]  # ggpt
    before = pl.read_parquet(path)
    infinite, nan = "t0-NDA-123", "t1-NAN-123"
    rewrite(path, lambda f: f.with_columns(
        pl.when(pl.col("item_id") == infinite).then(float("-inf"))
        .when(pl.col("item_id") == nan).then(float("nan"))
        .otherwise(pl.col("logprob_sum")).alias("logprob_sum")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-german-case", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 0, err
    per_template = assert_table_files(out, "german_case_auc_templates").filter(
        (pl.col("model") == "ggpt") & (pl.col("analysis") == "all"))
    aucs = dict(per_template.select("template", "auc").iter_rows())
    frame = pl.read_parquet(items).join(before, on="item_id")
    lowest = frame["logprob_sum"].min() - 1
    t0 = frame.filter(pl.col("template") == "t0").with_columns(
        pl.when(pl.col("item_id") == infinite).then(lowest).otherwise(pl.col("logprob_sum"))
        .alias("logprob_sum"))
    assert aucs["t0"] == pytest.approx(_auc(t0))
    t1 = frame.filter((pl.col("template") == "t1") & (pl.col("item_id") != nan))
    assert aucs["t1"] == pytest.approx(_auc(t1))
    assert aucs["t2"] == pytest.approx(_auc(frame.filter(pl.col("template") == "t2")))
    roc = assert_table_files(out, "german_case_roc", formats=DATA_FORMATS)
    assert roc["model"].unique().to_list() == ["gbert"]
