"""The `*_comparison` tables on small real inputs, against independent computations:
statsmodels' exact McNemar and Holm, scipy's permutation test and bootstrap, sklearn's AUC and R's
pROC (DeLong, paired)."""

from __future__ import annotations

import subprocess

import numpy as np
import polars as pl
import pytest
from artifact_files import rewrite
from scipy import stats
from sklearn.metrics import matthews_corrcoef, roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from spudflow.aggregate import columns
from spudflow.aggregate.comparison_tables import (
    blimp_comparison,
    german_case_comparison,
    spud_comparison,
)
from spudflow.aggregate.inputs import read_items, read_scores
from spudflow.aggregate.uncertainty import Uncertainty
from spudflow.core import artifacts
from spudflow.core.contract import read_artifact, write_artifact
from spudflow.core.table_artifacts import TABLES

from aggregate_inputs import (
    blimp_inputs,
    cola_inputs,
    german_case_inputs,
    japanese_inputs,
    probe_metrics,
    score_path,
    scores_frame,
    spud_inputs,
    write,
)

SETTINGS = Uncertainty(resamples=2000, seed=3)


def check_frame(frame: pl.DataFrame, artifact, path=None) -> None:
    """The table through its artifact's contract, written and read back unchanged."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{artifact.name}.parquet"
        write_artifact(frame, path, artifact)
        assert read_artifact(path, artifact).equals(frame)


def _blimp(tmp_path, drop=("anaphor_gender_agreement-3-bad",)):
    """The BLiMP fixture's `lm` and a second function `lm2` that did not score `drop`."""
    items_path, scores = blimp_inputs(tmp_path)
    items = pl.read_parquet(items_path)
    rng = np.random.default_rng(7)
    ids = items.filter(~pl.col("item_id").is_in(list(drop)))["item_id"].to_list()
    good = np.array([i.endswith("-good") for i in ids])
    second = write(scores_frame(ids, "lm2", "ppl", -30 + 0.4 * good + rng.normal(0, 2, len(ids)),
                                np.full(len(ids), 6)), score_path(tmp_path, "blimp", "lm2"))
    return (read_items([items_path], artifacts.ITEMS_BLIMP, columns.BLIMP_ITEMS),
            read_scores([*scores, second]))


def _outcomes(scores: pl.DataFrame, model: str) -> pl.DataFrame:
    frame = scores.filter(pl.col("model") == model).with_columns(
        pl.col("item_id").str.replace(r"-(good|bad)$", "").alias("pair"),
        pl.col("item_id").str.ends_with("-good").alias("good"))
    wide = frame.group_by("pair").agg(
        pl.col("logprob_sum").filter(pl.col("good")).first().alias("g"),
        pl.col("logprob_sum").filter(~pl.col("good")).first().alias("b"))
    return wide.drop_nulls().select("pair", (pl.col("g") > pl.col("b")).alias(model))


def test_blimp_comparison_is_statsmodels_mcnemar_on_the_pairs_both_scored(tmp_path):
    items, scores = _blimp(tmp_path)
    table = blimp_comparison(items, scores, SETTINGS)
    check_frame(table, TABLES["blimp_comparison"])
    accuracy = table.filter(pl.col("statistic") == "accuracy").row(0, named=True)
    both = _outcomes(scores, "lm").join(_outcomes(scores, "lm2"), on="pair")
    a, b = both["lm"].to_numpy(), both["lm2"].to_numpy()
    assert (accuracy["model_a"], accuracy["model_b"]) == ("lm", "lm2")
    assert (accuracy["n_items"], accuracy["n_only_a"], accuracy["n_only_b"]) == (35, 1, 0)
    assert accuracy["value_a"] == pytest.approx(a.mean()) and \
        accuracy["value_b"] == pytest.approx(b.mean())
    assert accuracy["difference"] == pytest.approx(a.mean() - b.mean())
    contingency = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert accuracy["test"] == "mcnemar_exact"
    assert abs(accuracy["p_value"] - mcnemar(contingency, exact=True).pvalue) < 1e-12
    # scipy's paired bootstrap of the difference: the same interval up to Monte Carlo error
    direct = stats.bootstrap((a.astype(float) - b,), np.mean, n_resamples=2000, method="BCa",
                             rng=np.random.default_rng(0)).confidence_interval
    assert abs(accuracy["difference_ci_low"] - direct.low) < 0.03
    assert abs(accuracy["difference_ci_high"] - direct.high) < 0.03

    paradigm = table.filter(pl.col("statistic") == "paradigm_mean_accuracy").row(0, named=True)
    uid = both["pair"].str.replace(r"-\d+$", "")
    means = [both.filter(uid == u).select(pl.col("lm", "lm2").cast(float).mean()).row(0)
             for u in sorted(set(uid))]
    assert paradigm["value_a"] == pytest.approx(np.mean([m[0] for m in means]))
    assert paradigm["value_b"] == pytest.approx(np.mean([m[1] for m in means]))
    assert paradigm["test"] in ("permutation", "permutation_exact")
    assert paradigm["difference_ci_low"] <= paradigm["difference"] <= \
        paradigm["difference_ci_high"]
    # Holm over the table's two p-values, as statsmodels adjusts them
    assert table["p_holm"].to_list() == pytest.approx(
        list(multipletests(table["p_value"].to_list(), method="holm")[1]), abs=1e-12)


def test_blimp_comparison_reruns_byte_identical_and_resamples_0_keeps_the_closed_forms(
        tmp_path):
    items, scores = _blimp(tmp_path)
    first, again = (blimp_comparison(items, scores, SETTINGS) for _ in range(2))
    paths = [tmp_path / "first.parquet", tmp_path / "again.parquet"]
    for frame, path in zip((first, again), paths, strict=True):
        frame.write_parquet(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    off = blimp_comparison(items, scores, Uncertainty(resamples=0))
    assert off["difference_ci_low"].null_count() == off.height
    by = {row["statistic"]: row for row in off.iter_rows(named=True)}
    # the exact McNemar p needs no resampling; the permutation test does
    assert by["accuracy"]["p_value"] == first.filter(
        pl.col("statistic") == "accuracy")["p_value"][0]
    assert by["paradigm_mean_accuracy"]["p_value"] is None
    assert by["accuracy"]["p_holm"] == by["accuracy"]["p_value"]  # one test in the table


def test_one_scoring_function_has_no_comparison(tmp_path):
    items_path, scores = blimp_inputs(tmp_path)
    items = read_items([items_path], artifacts.ITEMS_BLIMP, columns.BLIMP_ITEMS)
    table = blimp_comparison(items, read_scores(scores), SETTINGS)
    assert table.is_empty()
    check_frame(table, TABLES["blimp_comparison"])


def _german(tmp_path):
    items_path, scores = german_case_inputs(tmp_path)
    return (read_items([items_path], artifacts.ITEMS_GERMAN_CASE, columns.GERMAN_CASE_ITEMS),
            read_scores(scores))


@pytest.mark.parametrize("analysis", ["all", "restricted"])
def test_german_case_comparison_pooled_auc_is_pROC_paired_delong(tmp_path, r_proc, analysis):
    items, scores = _german(tmp_path)
    table = german_case_comparison(items, scores, SETTINGS)
    check_frame(table, TABLES["german_case_comparison"])
    pooled = table.filter(pl.col("statistic") == "auc_pooled",
                          pl.col("analysis") == analysis).row(0, named=True)
    wide = scores.pivot(on="model", index="item_id", values="logprob_sum").join(
        items.select("item_id", "grammatical", "cases"), on="item_id").sort("item_id")
    if analysis == "restricted":  # the grammatical sentences in the template's own cases only
        wide = wide.filter(~pl.col("grammatical") | (pl.col("cases") == "NDA"))
    assert pooled["n_items"] == wide.height == (432 if analysis == "all" else 342)
    labels = wide["grammatical"].cast(int).to_numpy()
    assert pooled["value_a"] == pytest.approx(roc_auc_score(labels, wide["gbert"]), abs=1e-12)
    csv = tmp_path / "roc.csv"
    wide.select(pl.col("grammatical").cast(int), "gbert", "ggpt").write_csv(csv)
    script = (f"library(pROC); d <- read.csv('{csv}'); "
              "a <- roc(d$grammatical, d$gbert, direction = '<', quiet = TRUE); "
              "b <- roc(d$grammatical, d$ggpt, direction = '<', quiet = TRUE); "
              "t <- roc.test(a, b, method = 'delong', paired = TRUE); "
              "cat(sprintf('%.15g %.15g %.15g', t$p.value, t$conf.int[1], t$conf.int[2]))")
    p, low, high = map(float, subprocess.run(["Rscript", "-e", script], capture_output=True,
                                             text=True, check=True).stdout.split())
    assert pooled["test"] == "delong" == pooled["interval_method"]
    assert abs(pooled["p_value"] - p) < 1e-9
    assert abs(pooled["difference_ci_low"] - low) < 1e-9
    assert abs(pooled["difference_ci_high"] - high) < 1e-9


def test_german_case_comparison_per_analysis_is_german_case_aucs_difference(tmp_path):
    """A row per analysis german_case_auc reports; each function's figures are that table's
    (mean over templates, pooled) and the p-values are Holm-adjusted over all of them."""
    from spudflow.aggregate.german_case import german_case_tables

    items, scores = _german(tmp_path)
    table = german_case_comparison(items, scores, SETTINGS)
    auc = next(t.frame for t in german_case_tables(items, scores, settings=SETTINGS)
               if t.name == "german_case_auc")
    assert table.select("analysis", "statistic").rows() == [
        ("all", "auc_mean"), ("all", "auc_pooled"),
        ("restricted", "auc_mean"), ("restricted", "auc_pooled")]
    for analysis in ("all", "restricted"):
        figures = {(m, statistic): auc.filter(pl.col("analysis") == analysis,
                                              pl.col("model") == m)[statistic].item()
                   for m in ("gbert", "ggpt") for statistic in ("auc_mean", "auc_pooled")}
        for statistic in ("auc_mean", "auc_pooled"):
            row = table.filter(pl.col("analysis") == analysis,
                               pl.col("statistic") == statistic).row(0, named=True)
            assert (row["model_a"], row["model_b"]) == ("gbert", "ggpt")
            assert row["value_a"] == pytest.approx(figures["gbert", statistic], abs=1e-12)
            assert row["value_b"] == pytest.approx(figures["ggpt", statistic], abs=1e-12)
            assert row["difference"] == pytest.approx(
                figures["gbert", statistic] - figures["ggpt", statistic], abs=1e-12)
            assert (row["n_only_a"], row["n_only_b"]) == (0, 0)
    restricted = table.filter(pl.col("analysis") == "restricted")
    assert restricted["value_a"].to_list() != table.filter(
        pl.col("analysis") == "all")["value_a"].to_list()
    assert table["p_holm"].to_list() == pytest.approx(
        multipletests(table["p_value"].to_list(), method="holm")[1], abs=1e-12)


def test_german_case_comparison_counts_an_analysis_own_items_one_side_did_not_score(tmp_path):
    """n_only_a counts the analysis's own sentences that b did not score: a violation is in
    both analyses, a grammatical sentence in another case assignment only in `all`."""
    items, scores = _german(tmp_path)
    dropped = ["t0-NAA-123", "t0-DNA-123"]  # a violation, a permuted grammatical sentence
    assert dict(items.filter(pl.col("item_id").is_in(dropped)).select(
        "item_id", "grammatical").rows()) == {"t0-NAA-123": False, "t0-DNA-123": True}
    scores = scores.filter(~((pl.col("model") == "ggpt") & pl.col("item_id").is_in(dropped)))
    table = german_case_comparison(items, scores, SETTINGS)
    counts = dict(table.filter(pl.col("statistic") == "auc_pooled").select(
        "analysis", pl.struct("n_items", "n_only_a", "n_only_b")).rows())
    assert counts == {"all": {"n_items": 430, "n_only_a": 2, "n_only_b": 0},
                      "restricted": {"n_items": 341, "n_only_a": 1, "n_only_b": 0}}


def test_german_case_comparison_mean_template_auc_is_scipys_permutation_test(tmp_path):
    items, scores = _german(tmp_path)
    table = german_case_comparison(items, scores, SETTINGS)
    mean = table.filter(pl.col("statistic") == "auc_mean",
                        pl.col("analysis") == "all").row(0, named=True)
    frame = scores.join(items.select("item_id", "template", "grammatical"), on="item_id")
    aucs = {m: [roc_auc_score(part["grammatical"].cast(int), part["logprob_sum"])
                for _, part in frame.filter(pl.col("model") == m).sort("template").group_by(
                    "template", maintain_order=True)] for m in ("gbert", "ggpt")}
    a, b = np.array(aucs["gbert"]), np.array(aucs["ggpt"])
    assert mean["value_a"] == pytest.approx(a.mean()) and mean["value_b"] == pytest.approx(
        b.mean())
    direct = stats.permutation_test((a, b), lambda u, v, axis=-1: u.mean(axis) - v.mean(axis),
                                    permutation_type="samples", vectorized=True,
                                    n_resamples=2000)
    assert mean["test"] == "permutation_exact"  # three templates: all 8 swap patterns
    assert abs(mean["p_value"] - direct.pvalue) < 1e-12


def test_spud_comparison_median_ratio_on_the_nonce_pairs_both_scored(tmp_path):
    items_path, scores = spud_inputs(tmp_path, n_groups=10)
    items = read_items([items_path], artifacts.ITEMS_SPUD, columns.SPUD_ITEMS)
    scores = read_scores(scores).filter(
        ~((pl.col("model") == "gpt") & (pl.col("item_id") == "3-spud-1")))
    table = spud_comparison(items, scores, SETTINGS)
    check_frame(table, TABLES["spud_comparison"])
    # one nonce seed: its rows, and those of `all`, the same figures (exp(log r) to rounding)
    seed, table = (table.filter(pl.col("nonce_seed") == s) for s in ("1", "all"))
    assert seed.select(pl.selectors.string(), pl.selectors.integer()).drop("nonce_seed").equals(
        table.select(pl.selectors.string(), pl.selectors.integer()).drop("nonce_seed"))
    assert seed["difference"].to_list() == pytest.approx(table["difference"].to_list(),
                                                         abs=1e-12)
    # three functions: three pairs per nonce method
    assert table.group_by("nonce_method").len().sort("nonce_method").rows() == [("pos", 3),
                                                                                  ("spud", 3)]
    row = table.filter((pl.col("nonce_method") == "spud") & (pl.col("model_a") == "bert") &
                       (pl.col("method_a") == "pppl") & (pl.col("model_b") == "gpt")
                       ).row(0, named=True)
    assert (row["n_items"], row["n_only_a"], row["n_only_b"]) == (9, 1, 0)

    def ratios(model, method):
        f = scores.filter((pl.col("model") == model) & (pl.col("method") == method))
        ppl = dict(zip(f["item_id"], f["ppl"], strict=True))
        return np.array([ppl[f"{g}-spud-1"] / ppl[f"{g}-orig"] for g in range(10) if g != 3])
    a, b = ratios("bert", "pppl"), ratios("gpt", "ppl")
    assert row["value_a"] == pytest.approx(np.median(a), abs=1e-12)
    assert row["difference"] == pytest.approx(np.median(a) - np.median(b), abs=1e-12)
    # the p of the percentile bootstrap, from scipy's resampled differences (the same draws)
    direct = stats.bootstrap(
        (a, b), lambda u, v, axis=-1: np.median(u, axis) - np.median(v, axis), paired=True,
        vectorized=True, n_resamples=SETTINGS.resamples, method="percentile",
        rng=np.random.default_rng(SETTINGS.seed)).bootstrap_distribution
    total = len(direct) + 1
    expected = min(1, 2 * min((np.sum(direct <= 0) + 1) / total, (np.sum(direct >= 0) + 1) / total))
    assert row["test"] == "paired_bootstrap"
    assert abs(row["p_value"] - expected) < 1e-12
    assert table["p_holm"].to_list() == pytest.approx(
        list(multipletests(table["p_value"].to_list(), method="holm")[1]), abs=1e-12)


def test_spud_comparison_per_nonce_seed_is_the_difference_of_the_tables_seed_medians(
        tmp_path):
    """A row per nonce seed (numeric order, then `all`): each side's figure is
    spud_ratio_summary's median of that seed, outliers kept (the headline's rows), the interval
    the paired bootstrap of that seed's pairs; Holm within each seed, so that the rows of
    `all` are what they were with one comparison per pair set."""
    from spudflow.aggregate.spud_scores import spud_tables

    items_path, scores = spud_inputs(tmp_path, n_groups=12, nonce_seeds=(1, 2, 10))
    items = read_items([items_path], artifacts.ITEMS_SPUD, columns.SPUD_ITEMS)
    scores = read_scores(scores)
    # a ratio far above the outlier threshold: the headline keeps it, so does the comparison
    scores = scores.with_columns(pl.when(pl.col("item_id") == "0-spud-2").then(
        pl.col("ppl") * 1e6).otherwise(pl.col("ppl")).alias("ppl"))
    table = spud_comparison(items, scores, SETTINGS)
    check_frame(table, TABLES["spud_comparison"])
    spud = table.filter(pl.col("nonce_method") == "spud")
    assert spud["nonce_seed"].unique(maintain_order=True).to_list() == ["1", "2", "10", "all"]
    summary = spud_tables(items, scores, 5, 250.0, 250.0, 0.5)[0].frame.filter(
        pl.col("outliers") == "kept")
    medians = {(r["nonce_method"], r["nonce_seed"], r["model"], r["method"]): r["ratio_median"]
               for r in summary.iter_rows(named=True)}
    for row in table.iter_rows(named=True):
        key = (row["nonce_method"], row["nonce_seed"])
        a = medians[(*key, row["model_a"], row["method_a"])]
        b = medians[(*key, row["model_b"], row["method_b"])]
        assert (row["value_a"], row["value_b"]) == pytest.approx((a, b), abs=1e-12)
        assert row["difference"] == pytest.approx(a - b, abs=1e-12)
        assert row["n_items"] == (36 if row["nonce_seed"] == "all" else 12)
    # seed 2's row: scipy's percentile bootstrap of that seed's pairs (the same draws)
    row = spud.filter((pl.col("nonce_seed") == "2") & (pl.col("model_a") == "bert")
                      & (pl.col("method_a") == "pppl") & (pl.col("model_b") == "gpt")
                      ).row(0, named=True)

    def ratios(model, method):
        f = scores.filter((pl.col("model") == model) & (pl.col("method") == method))
        ppl = dict(zip(f["item_id"], f["ppl"], strict=True))
        # in the order of the group ids (g0, g1, g10, ...), which the resamples draw by
        return np.array([ppl[f"{g}-spud-2"] / ppl[f"{g}-orig"]
                         for g in sorted(range(12), key=lambda g: f"g{g}")])
    direct = stats.bootstrap(
        (ratios("bert", "pppl"), ratios("gpt", "ppl")),
        lambda u, v, axis=-1: np.median(u, axis) - np.median(v, axis), paired=True,
        vectorized=True, n_resamples=SETTINGS.resamples, method="percentile",
        rng=np.random.default_rng(SETTINGS.seed)).bootstrap_distribution
    total = len(direct) + 1
    expected = min(1, 2 * min((np.sum(direct <= 0) + 1) / total, (np.sum(direct >= 0) + 1) / total))
    assert abs(row["p_value"] - expected) < 1e-12
    for _, part in table.group_by("nonce_seed"):
        assert part["p_holm"].to_list() == pytest.approx(
            list(multipletests(part["p_value"].to_list(), method="holm")[1]), abs=1e-12)
    # a pair one side did not score: left out of its seed's row and of `all`, counted in both
    fewer = spud_comparison(items, scores.filter(
        ~((pl.col("model") == "gpt") & (pl.col("item_id") == "3-spud-10"))), SETTINGS)
    counts = fewer.filter((pl.col("nonce_method") == "spud") & (pl.col("model_b") == "gpt")
                          & (pl.col("method_a") == "pppl")).select(
        "nonce_seed", "n_items", "n_only_a", "n_only_b").rows()
    assert counts == [("1", 12, 0, 0), ("2", 12, 0, 0), ("10", 11, 1, 0), ("all", 35, 1, 0)]


def test_front_page_says_which_differences_are_significant_after_holm(tmp_path, run_cli):
    """The SPUD section's line names each comparison with p_holm < 0.05 and counts the rest;
    BLiMP, with one scoring function, has nothing to test."""
    from test_front_page import read_page

    out = tmp_path / "tables"
    items, scores = spud_inputs(tmp_path / "spud")
    # bert's pppl_l2r gets gpt's perplexities (no difference), and pppl finds every nonce
    # sentence three times as perplexing as gpt does (a difference in every group)
    gpt = pl.read_parquet(scores[0]).filter(pl.col("method") == "ppl").select(
        "item_id", pl.col("ppl").alias("gpt"))
    nonce = ~pl.col("item_id").str.ends_with("-orig")
    rewrite(scores[1], lambda f: f.join(gpt, on="item_id").with_columns(
        pl.when((pl.col("method") == "pppl") & nonce).then(pl.col("gpt") * 3)
        .otherwise(pl.col("gpt")).alias("ppl")).drop("gpt"))
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out, "--resamples", "1000")
    assert code == 0, err
    items, scores = blimp_inputs(tmp_path / "blimp")
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    page = tmp_path / "index.html"
    code, _, err = run_cli("front-page", *[a for name in ("spud_ratio_summary", "spud_comparison",
                                                          "blimp_overall", "blimp_comparison")
                                           for a in ("--table", f"{name}={out / name}.parquet")],
                           "--out", page)
    assert code == 0, err
    sections = read_page(page)
    comparison = pl.read_parquet(out / "spud_comparison.parquet").filter(
        pl.col("nonce_seed") == "all")  # the headline's rows: the line's
    significant = comparison.filter(pl.col("p_holm") < 0.05)
    assert comparison.height == 6  # 2 nonce methods x 3 pairs of functions
    assert sorted(significant["method_a"]) == ["pppl"] * 4  # pppl against either other one
    text = " ".join(sections["spud_ratio_summary"]["text"].split())
    assert text.count("Holm p = ") == significant.height
    for row in significant.iter_rows(named=True):
        assert (f"{row['model_a']} · {row['method_a']} − {row['model_b']} · {row['method_b']} = "
                f"{row['difference']:+.3f} [{row['difference_ci_low']:.3f}, "
                f"{row['difference_ci_high']:.3f}]") in text
    rest = comparison.height - significant.height
    assert f"The other {rest} difference{'s are' if rest > 1 else ' is'} not significant" in text
    assert any(h.endswith("spud_comparison.csv") for h in sections["spud_ratio_summary"]["links"])
    assert "none to test" in sections["blimp_overall"]["text"]
    from spudflow.aggregate.front_page import significance_line

    assert "none of the 6 tested." in significance_line(comparison.with_columns(
        pl.lit(0.5).alias("p_holm")))
    # many significant differences: the 8 of the smallest p named, the rest counted
    many = pl.concat([comparison.with_columns(pl.lit(0.01 * (i + 1)).alias("p_holm"))
                      for i in range(2)]).with_columns(
        pl.Series("p_holm", [0.001 * (i + 1) for i in range(12)]))
    line = significance_line(many)
    assert line.count("Holm p = ") == 8 and "and 4 more (the comparisons CSV)" in line
    assert "Holm p = 0.001" in line and "Holm p = 0.009" not in line


@pytest.mark.parametrize("decision", ["perplexity", "logprob_sum"])
def test_japanese_comparison_is_statsmodels_mcnemar_on_the_obligatory_pairs(tmp_path, run_cli,
                                                                           decision):
    """The command's japanese_comparison: per dataset and span, the functions that scored it
    (whole sentence: bert and gpt; verb only: bert alone, no row), by the table's decision."""
    items, scores = japanese_inputs(tmp_path)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores, "--out-dir",
                           out, "--folds", 3, "--decision", decision)
    assert code == 0, err
    table = read_artifact(out / "japanese_comparison.parquet", TABLES["japanese_comparison"])
    assert table.select("region", "model_a", "model_b").rows() == [(None, "bert", "gpt")]
    row = table.row(0, named=True)
    score = {"perplexity": "mean_logprob", "logprob_sum": "logprob_sum"}[decision]
    frame = pl.read_parquet(items).filter(pl.col("context_label") == "obligatory").join(
        pl.concat([pl.read_parquet(p) for p in scores]).filter(pl.col("region").is_null()),
        on="item_id")
    wide = frame.pivot(on="verb_form", index=["group_id", "model"], values=score)
    prefers = wide.with_columns((pl.col("transitive") > pl.col("intransitive")).alias("p")
                                ).pivot(on="model", index="group_id", values="p")
    a, b = prefers["bert"].to_numpy(), prefers["gpt"].to_numpy()
    assert (row["n_items"], row["n_only_a"], row["n_only_b"]) == (len(a), 0, 0)
    assert row["value_a"] == pytest.approx(a.mean()) and row["value_b"] == pytest.approx(
        b.mean())
    accuracy = pl.read_parquet(out / "japanese_accuracy.parquet").filter(
        pl.col("region").is_null()).sort("model")["accuracy_obligatory"].to_list()
    assert [row["value_a"], row["value_b"]] == pytest.approx(accuracy)
    contingency = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert abs(row["p_value"] - mcnemar(contingency, exact=True).pvalue) < 1e-12
    assert row["p_holm"] == row["p_value"]


def test_cola_comparison_is_the_mcc_of_the_tables_held_out_predictions(tmp_path, run_cli):
    """Per split and normalisation: each side's figure is cola_thresholds' MCC (every sentence
    scored by both), the difference's interval and p near scipy's paired bootstrap and
    permutation test of sklearn's MCC over the sentences."""
    items, scores = cola_inputs(tmp_path)
    frame = pl.read_parquet(scores[0])
    rng = np.random.default_rng(11)
    label = pl.read_parquet(items)["label"].to_numpy()
    second = frame.with_columns(pl.Series("logprob_sum", frame["logprob_sum"].to_numpy()
                                          + 8 * rng.normal(0, 1, frame.height) - 3 * label),
                                pl.lit("lm2").alias("model"))
    second = second.with_columns((pl.col("logprob_sum") / pl.col("n_tokens")).alias(
        "mean_logprob"))
    scores.append(write(second.drop("text_hash"), score_path(tmp_path, "cola", "lm2")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out,
                           "--folds", 5, "--seed", 1, "--resamples", 20000)
    assert code == 0, err
    table = read_artifact(out / "cola_comparison.parquet", TABLES["cola_comparison"])
    thresholds = pl.read_parquet(out / "cola_thresholds.parquet")
    assert table.height == thresholds.height // 2  # one pair of functions per split and score
    row = table.filter((pl.col("split") == "in_domain_dev")
                       & (pl.col("normalisation") == "MeanLP")).row(0, named=True)
    mcc = dict(thresholds.filter((pl.col("split") == "in_domain_dev")
                                 & (pl.col("normalisation") == "MeanLP")).select(
        "model", "mcc").iter_rows())
    assert (row["n_items"], row["n_only_a"], row["n_only_b"]) == (60, 0, 0)
    assert row["value_a"] == pytest.approx(mcc["lm"], abs=1e-12)
    assert row["value_b"] == pytest.approx(mcc["lm2"], abs=1e-12)
    assert row["difference"] == pytest.approx(mcc["lm"] - mcc["lm2"], abs=1e-12)
    assert row["test"] == "permutation"
    assert table["p_holm"].to_list() == pytest.approx(
        list(multipletests(table["p_value"].to_list(), method="holm")[1]), abs=1e-12)
    # the held-out predictions, recovered from the command's own fits
    from spudflow.aggregate.cola import fits
    from spudflow.aggregate.inputs import scored_items

    predictions = {key["model"]: f for key, _, f, _, _ in fits(scored_items(
        read_items([items], artifacts.ITEMS_COLA, columns.COLA_ITEMS), read_scores(scores)),
        5, 1, "mcc") if key["split"] == "in_domain_dev" and key["normalisation"] == "MeanLP"}
    y = predictions["lm"]["label"].to_numpy()
    pa, pb = predictions["lm"]["prediction"].to_numpy(), predictions["lm2"]["prediction"].to_numpy()
    assert matthews_corrcoef(y, pa) == pytest.approx(row["value_a"], abs=1e-12)

    def difference(i, axis=-1):
        i = i.astype(int)
        return np.array([matthews_corrcoef(y[j], pa[j]) - matthews_corrcoef(y[j], pb[j])
                         for j in np.atleast_2d(i)])
    direct = stats.bootstrap((np.arange(len(y)),), difference, n_resamples=1000,
                             method="percentile", vectorized=True,
                             rng=np.random.default_rng(0)).confidence_interval
    assert abs(row["difference_ci_low"] - direct.low) < 0.08
    assert abs(row["difference_ci_high"] - direct.high) < 0.08
    def pearson(u, axis=-1):  # MCC is the Pearson correlation of the 0/1 vectors
        u = np.asarray(u, dtype=float) - np.mean(u, axis=axis, keepdims=True)
        v = y - y.mean()
        return np.sum(u * v, axis=axis) / np.sqrt(np.sum(u * u, axis=axis) * np.sum(v * v))
    swapped = stats.permutation_test(
        (pa, pb), lambda u, v, axis=-1: pearson(u, axis) - pearson(v, axis),
        permutation_type="samples", n_resamples=20000, vectorized=True,
        rng=np.random.default_rng(0))
    assert pearson(pa) == pytest.approx(row["value_a"], abs=1e-12)
    # Monte Carlo error of the two p-values: sd about 0.003 each at 20,000 resamples
    assert abs(row["p_value"] - swapped.pvalue) < 0.02



def assert_scipy_sentence_bootstrap(row: dict, difference) -> None:
    """The row's difference is difference() of all 20 sentences, and its interval is close to
    scipy's percentile bootstrap over them (other draws: within 0.03)."""
    assert difference(np.arange(20))[0] == pytest.approx(row["difference"], abs=1e-12)
    direct = stats.bootstrap((np.arange(20),), difference, n_resamples=2000, vectorized=True,
                             method="percentile", rng=np.random.default_rng(0)
                             ).confidence_interval
    assert abs(row["difference_ci_low"] - direct.low) < 0.03
    assert abs(row["difference_ci_high"] - direct.high) < 0.03

def test_probe_comparison_is_the_seed_mean_of_the_runs_scores_on_the_same_sentences(
        tmp_path, run_cli):
    """UAS and LAS per pair of probe configurations: each side's figure is probe_languages'
    orig mean over seeds; the interval near scipy's bootstrap of the sentences (each with every
    seed's counts); with resamples 0 no rows."""
    metrics = probe_metrics(tmp_path)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", metrics, "--out-dir", out, "--resamples", 2000)
    assert code == 0, err
    table = read_artifact(out / "probe_comparison.parquet", TABLES["probe_comparison"])
    # 7 configurations: 21 pairs; RelAcc, UAS and LAS, and two Δ for each of 2 nonce methods
    assert table.height == 7 * 21
    row = table.filter((pl.col("model_a") == "bert") & (pl.col("baseline_a") == "lm")
                       & (pl.col("dist_layer_a") == 6) & (pl.col("model_b") == "gpt")
                       & (pl.col("statistic") == "las")).row(0, named=True)
    assert (row["n_items"], row["n_only_a"], row["n_only_b"]) == (60, 0, 0)  # 3 seeds x 20
    runs = pl.read_parquet(metrics).filter(pl.col("eval_set") == "orig")
    las = {m: runs.filter((pl.col("model") == m) & (pl.col("baseline") == "lm")
                          & (pl.col("dist_layer") == 6))["las"].mean() for m in ("bert", "gpt")}
    assert row["value_a"] == pytest.approx(las["bert"], abs=1e-12)
    assert row["value_b"] == pytest.approx(las["gpt"], abs=1e-12)
    counts = pl.read_parquet(metrics.parent / "sentence_counts.parquet").filter(
        (pl.col("eval_set") == "orig") & (pl.col("baseline") == "lm")
        & (pl.col("dist_layer") == 6))

    def cube(model, column):  # sentences x seeds
        return counts.filter(pl.col("model") == model).pivot(
            on="seed", index="sent_index", values=column).sort("sent_index").drop(
            "sent_index").to_numpy().astype(float)
    words = {m: cube(m, "n_words") for m in ("bert", "gpt")}
    right = {m: cube(m, "n_las") for m in ("bert", "gpt")}

    def difference(i, axis=-1):
        i = np.atleast_2d(i.astype(int))
        return np.array([np.mean(right["bert"][j].sum(0) / words["bert"][j].sum(0))
                         - np.mean(right["gpt"][j].sum(0) / words["gpt"][j].sum(0))
                         for j in i])
    assert_scipy_sentence_bootstrap(row, difference)
    assert row["test"] == "permutation"
    assert table["p_holm"].to_list() == pytest.approx(
        list(multipletests(table["p_value"].to_list(), method="holm")[1]), abs=1e-12)

    code, _, err = run_cli("table-probe", metrics, "--out-dir", tmp_path / "off",
                           "--resamples", 0)
    assert code == 0, err
    assert pl.read_parquet(tmp_path / "off" / "probe_comparison.parquet").is_empty()


def test_probe_comparison_relacc_and_deltas_are_the_differences_of_probe_languages(
        tmp_path, run_cli):
    """RelAcc (original set) and the Δ = orig − nonce of UAS and LAS per nonce method: each
    side's figure is probe_languages' orig_relacc_mean / delta_*_mean; the Δ's interval near
    scipy's bootstrap of the sentences (each with its original and nonce versions' counts of
    every run), its p the clustered permutation test's; a (run, sentence) one side did not
    evaluate is left out and counted."""
    from spudflow.aggregate.comparison import paired_permutation_test

    metrics = probe_metrics(tmp_path)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", metrics, "--out-dir", out, "--resamples", 2000)
    assert code == 0, err
    table = read_artifact(out / "probe_comparison.parquet", TABLES["probe_comparison"])
    languages = read_artifact(out / "probe_languages.parquet", TABLES["probe_languages"])
    assert sorted(table["statistic"].unique()) == ["delta_las", "delta_uas", "las", "relacc",
                                                   "uas"]
    assert table.filter(pl.col("statistic").str.starts_with("delta"))[
        "nonce_method"].unique().sort().to_list() == ["pos", "spud"]
    assert table.filter(~pl.col("statistic").str.starts_with("delta"))[
        "nonce_method"].null_count() == 3 * 21
    configuration = ["model", "baseline", "dist_layer", "label_layer", "auto_layers"]

    def figure(row, side, column, nonce):
        match = languages.filter(*[pl.col(c) == row[f"{c}_{side}"] for c in configuration],
                                 pl.col("nonce") == nonce)
        return match[column][0]
    for row in table.iter_rows(named=True):
        statistic, nonce = row["statistic"], row["nonce_method"]
        column = f"{statistic}_mean" if nonce else f"orig_{statistic}_mean"
        a, b = figure(row, "a", column, nonce or "spud"), figure(row, "b", column, nonce or "spud")
        assert (row["value_a"], row["value_b"]) == pytest.approx((a, b), abs=1e-12)
        assert row["difference"] == pytest.approx(a - b, abs=1e-12)
    assert table["p_holm"].to_list() == pytest.approx(
        list(multipletests(table["p_value"].to_list(), method="holm")[1]), abs=1e-12)

    # bert against gpt (layers 6/7), Δ LAS of spud: 3 seeds x (orig + 2 nonce seeds) x 20
    pick = ((pl.col("model_a") == "bert") & (pl.col("baseline_a") == "lm")
            & (pl.col("dist_layer_a") == 6) & (pl.col("model_b") == "gpt")
            & (pl.col("statistic") == "delta_las") & (pl.col("nonce_method") == "spud"))
    row = table.filter(pick).row(0, named=True)
    assert (row["n_items"], row["n_only_a"], row["n_only_b"]) == (180, 0, 0)
    counts = pl.read_parquet(metrics.parent / "sentence_counts.parquet").filter(
        (pl.col("baseline") == "lm") & (pl.col("dist_layer") == 6)
        & ~pl.col("eval_set").str.starts_with("pos"))
    runs = [(1, "orig"), (2, "orig"), (3, "orig")] + [
        (seed, f"spud/seed{n}") for seed in (1, 2, 3) for n in (1, 2)]
    partner, nonce = [0, 0, 1, 1, 2, 2], list(range(3, 9))

    def cube(model):  # (words, right) x runs x sentences
        f = counts.filter(pl.col("model") == model)
        return np.stack([np.stack([f.filter((pl.col("seed") == s) & (pl.col("eval_set") == e))
                                   .sort("sent_index")[c].to_numpy().astype(float)
                                   for s, e in runs]) for c in ("n_words", "n_las")])
    first, second = cube("bert"), cube("gpt")

    def difference(i, axis=-1):
        i = np.atleast_2d(i.astype(int))
        out = []
        for j in i:
            scores = [x[1][:, j].sum(-1) / x[0][:, j].sum(-1) for x in (first, second)]
            out.append(np.mean(scores[0][partner] - scores[0][nonce])
                       - np.mean(scores[1][partner] - scores[1][nonce]))
        return np.array(out)
    assert_scipy_sentence_bootstrap(row, difference)
    # the p: paired_permutation_test on the (run, sentence) rows, the sentences as clusters
    run_of = np.repeat(np.arange(len(runs)), 20)
    indicator = (run_of[None, :] == np.arange(len(runs))[:, None]).astype(float)

    def rows_statistic(values, weights):
        w = np.asarray(weights, dtype=float)
        scores = ((values[1] * w) @ indicator.T) / ((values[0] * w) @ indicator.T)
        return np.mean(scores[..., partner] - scores[..., nonce], axis=-1)
    flat = [np.stack([m[0].ravel(), m[1].ravel()])[:, None, :] for m in (first, second)]
    swapped = paired_permutation_test(rows_statistic, *flat, 2000, Uncertainty().seed,
                                      clusters=np.tile(np.arange(20), len(runs)))
    assert row["test"] == "permutation"
    assert row["p_value"] == pytest.approx(swapped.p_value, abs=1e-12)

    # gpt's spud/seed2 of probe seed 3 without sentence 4: left out of both sides' Δ, counted
    path = metrics.parent / "sentence_counts.parquet"
    rewrite(path, lambda f: f.filter(~((pl.col("model") == "gpt") & (pl.col("seed") == 3)
                                       & (pl.col("eval_set") == "spud/seed2")
                                       & (pl.col("sent_index") == 4))))
    rewrite(metrics, lambda f: f.join(pl.read_parquet(path).group_by(
        "model", "baseline", "seed", "dist_layer", "label_layer", "eval_set").agg(
        pl.len().alias("k"), *[pl.col(c).sum() for c in ("n_words", "n_uas", "n_las",
                                                          "n_relacc")]).rename(
        {"n_words": "w"}), on=["model", "baseline", "seed", "dist_layer", "label_layer",
                              "eval_set"]).with_columns(
        pl.col("k").alias("n_sentences"), pl.col("w").alias("n_words"),
        *[(pl.col(f"n_{m}") / pl.col("w")).alias(m) for m in ("uas", "las", "relacc")]).drop(
        "k", "w", "n_uas", "n_las", "n_relacc"))
    code, _, err = run_cli("table-probe", metrics, "--out-dir", tmp_path / "fewer",
                           "--resamples", 200)
    assert code == 0, err
    fewer = read_artifact(tmp_path / "fewer" / "probe_comparison.parquet",
                          TABLES["probe_comparison"]).filter(pick).row(0, named=True)
    assert (fewer["n_items"], fewer["n_only_a"], fewer["n_only_b"]) == (179, 1, 0)


@pytest.mark.parametrize("n", [5, 40])
def test_sign_flip_test_is_the_permutation_test_of_a_mean_of_means(n):
    """BLiMP's paradigm-mean test draws only the discordant pairs' signs: enumerated, the
    same p as paired_permutation_test and scipy's permutation_test enumerating every pair's
    swap; drawn, within Monte Carlo error of them."""
    from spudflow.aggregate.comparison import paired_permutation_test
    from spudflow.aggregate.comparison_tables import sign_flip_test, stratum_mean

    rng = np.random.default_rng(n)
    strata = np.repeat(["p1", "p2", "p3"], [n, n + 2, n - 3])
    a = rng.random(len(strata)) < 0.6
    b = np.where(rng.random(len(strata)) < 0.4, ~a, a)
    statistic = stratum_mean(strata)
    _, inverse, sizes = np.unique(strata, return_inverse=True, return_counts=True)
    share = (a.astype(float) - b) / (sizes[inverse] * len(sizes))
    resamples = 2 ** len(strata) if n == 5 else 20000
    test, p = sign_flip_test(share, resamples, 0)
    full = paired_permutation_test(statistic, a.astype(float), b.astype(float),
                                   resamples=resamples, seed=0)
    assert np.sum(share) == pytest.approx(full.difference, abs=1e-15)
    if n == 5:  # 14 pairs: every swap pattern
        direct = stats.permutation_test(
            (a.astype(float), b.astype(float)),
            lambda u, v, axis=-1: statistic(u, np.ones((1, u.shape[-1])))
            - statistic(v, np.ones((1, v.shape[-1]))),
            permutation_type="samples", vectorized=True, n_resamples=resamples)
        assert test == "permutation_exact" and full.exact
        assert abs(p - full.p_value) < 1e-12 and abs(p - direct.pvalue) < 1e-12
    else:
        assert test == "permutation" and not full.exact
        assert abs(p - full.p_value) < 0.02


@pytest.mark.parametrize(("n_sentences", "resamples"), [(9, 1024), (30, 3000)])
def test_probe_swap_test_is_the_clustered_permutation_test_of_the_rows(n_sentences, resamples):
    """The probe's swap test on (seeds, sentences) matrices gives paired_permutation_test's p
    on the (seed, sentence) rows with sentences as clusters, enumerated and drawn alike."""
    from spudflow.aggregate.comparison import paired_permutation_test
    from spudflow.aggregate.comparison_tables import swap_test

    rng = np.random.default_rng(n_sentences)
    seeds = 3
    words = rng.integers(5, 30, (seeds, n_sentences)).astype(float)
    right = [np.floor(words * rng.uniform(0.5, 0.9, (seeds, n_sentences))) for _ in range(2)]
    first, second = (np.stack([words, r]) for r in right)
    seed_of = np.repeat(np.arange(seeds), n_sentences)
    sentence = np.tile(np.arange(n_sentences), seeds)
    _, inverse = np.unique(seed_of, return_inverse=True)
    indicator = (inverse[None, :] == np.arange(seeds)[:, None]).astype(float)

    def rows_statistic(values, weights):  # the same figure on the rows
        w = np.asarray(weights, dtype=float)
        return np.mean(((values[1] * w) @ indicator.T) / ((values[0] * w) @ indicator.T),
                       axis=-1)
    flat = [np.stack([m[0].ravel(), m[1].ravel()])[:, None, :] for m in (first, second)]
    reference = paired_permutation_test(rows_statistic, *flat, resamples, 4, clusters=sentence)
    test, p = swap_test(first, second, resamples, 4, seeds * n_sentences)
    assert (test == "permutation_exact") == reference.exact == (n_sentences == 9)
    assert abs(p - reference.p_value) < 1e-12


def test_a_probe_configuration_reads_as_the_probe_table_names_it():
    """The front page's significance line names a probe configuration by its layers as
    probe_languages does (`layers 3/4`), and the layers' `auto` choice only when it was made."""
    from spudflow.aggregate.front_page import side_label

    side = ["model_a", "baseline_a", "dist_layer_a", "label_layer_a", "auto_layers_a"]
    row = {"model_a": "minilm", "baseline_a": "MR", "dist_layer_a": 3, "label_layer_a": 4,
           "auto_layers_a": False}
    assert side_label(row, side) == "minilm · MR · layers 3/4"
    auto = side_label({**row, "auto_layers_a": True}, side)
    assert auto == "minilm · MR · layers 3/4 · auto layers"
    assert side_label({"model_b": "gpt2", "method_b": "ppl"}, ["model_b", "method_b"]) == \
        "gpt2 · ppl"


def test_spud_comparison_rows_depend_on_their_own_section_alone(tmp_path):
    """Four hundred originals: the medians are drawn jointly in bands (one draw per dataset and
    nonce method), so dropping a scoring function's `pos` scores leaves every `spud` row as it
    was, to the bit, and moves only `pos` rows."""
    from spudflow.aggregate import joint_quantiles

    assert joint_quantiles.banded_length(400, 0.5)
    items_path, scores = spud_inputs(tmp_path, n_groups=400)
    items = read_items([items_path], artifacts.ITEMS_SPUD, columns.SPUD_ITEMS)
    scores = read_scores(scores)
    settings = Uncertainty(resamples=300, seed=3)
    table = spud_comparison(items, scores, settings)
    fewer = spud_comparison(items, scores.filter(~((pl.col("model") == "gpt")
                                                   & pl.col("item_id").str.contains("-pos-"))),
                            settings)
    spud = [t.filter(pl.col("nonce_method") == "spud").drop("p_holm") for t in (table, fewer)]
    assert spud[0].height == 6 and spud[0].equals(spud[1])
    pos = [t.filter((pl.col("nonce_method") == "pos") & (pl.col("model_a") != "gpt")
                    & (pl.col("model_b") != "gpt")) for t in (table, fewer)]
    assert pos[0]["difference"].equals(pos[1]["difference"])
    assert not pos[0]["difference_ci_low"].equals(pos[1]["difference_ci_low"])


def test_spud_comparison_of_a_function_with_the_same_ratios_in_two_sections(tmp_path):
    """A function whose ratios are the same values in two sections (here every nonce sentence
    scored as its original: r = 1 in both) is two sides, one in each section's joint draw: the
    table is written, its rows with the median difference of 1 and the other's median."""
    items_path, scores = spud_inputs(tmp_path, n_groups=400)
    items = read_items([items_path], artifacts.ITEMS_SPUD, columns.SPUD_ITEMS)
    scores = read_scores(scores)
    group = pl.col("item_id").str.extract(r"^(\d+)-")
    original = scores.filter(pl.col("item_id").str.ends_with("-orig")).select(
        "model", "method", group.alias("g"), pl.col("ppl").alias("ppl_orig"))
    scores = scores.with_columns(group.alias("g")).join(
        original, on=["model", "method", "g"], how="left").with_columns(
        pl.when(pl.col("model") == "gpt").then(pl.col("ppl_orig")).otherwise(pl.col("ppl"))
        .alias("ppl")).select(scores.columns)
    table = spud_comparison(items, scores, Uncertainty(resamples=200, seed=3))
    rows = table.filter(pl.col("model_b") == "gpt")
    assert rows.height == 8 and rows["value_b"].to_list() == [1.0] * 8
    assert (rows["difference"] == rows["value_a"] - 1).all()
    assert rows["difference_ci_low"].is_not_null().all()
