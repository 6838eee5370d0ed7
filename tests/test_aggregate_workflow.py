"""The whole pipeline on the tiny config, end to end: every stage runs for real (an n-gram model
trained by the pipeline does the scoring), then the tables, figures and the report are checked.
The statistics themselves are checked against scipy/sklearn in the other test_aggregate_* files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from workflow_helpers import copy_workflow, run_workflow

from aggregate_inputs import assert_table_files

# Tables documented in other stages' pages: all four formats, columns checked there.
OTHER_STAGES_TABLES = ("treebank_stats", "nonce_replacement_ratio", "nonce_type_token_ratio",
                       "nonce_replacements")
TABLES = ("spud_ratio_summary", "spud_wilcoxon", "spud_extremes",
          "german_case_auc", "german_case_auc_templates", "german_case_auc_violation",
          "german_case_animacy", "german_case_order", "blimp_overall", "blimp_field",
          "blimp_paradigm", "japanese_accuracy", "japanese_agreement", "japanese_regression",
          "probe_summary", "probe_layers")
FIGURES = ("spud_log_ratios", "german_case_roc", "blimp_fields", "japanese_agreement",
           "probe_layers")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("e2e") / "workflow")
    run_workflow(workdir)
    return workdir


@pytest.mark.slow
def test_every_table_and_figure_is_written(finished_run):
    tables = finished_run / "results" / "tables"
    for name in TABLES:
        assert_table_files(tables, name)
    for name in OTHER_STAGES_TABLES:
        for ext in ("parquet", "csv", "md", "tex"):
            assert (tables / f"{name}.{ext}").stat().st_size > 0
    for name in FIGURES:
        for ext in ("png", "svg"):
            assert (finished_run / "results" / "figures" / f"{name}.{ext}").stat().st_size > 1000
    # the n-gram model scored the SPUD pairs of both tiny treebanks with both of its methods
    summary = pl.read_parquet(tables / "spud_ratio_summary.parquet")
    assert summary.height > 0
    # the control model the pipeline trained scored the SPUD pairs of both languages
    control = summary.filter(pl.col("model") == "tiny_bert")
    assert set(control["method"]) == {"pppl", "unmasked"}
    assert set(control["dataset"]) == {"spud_tiny_en_test", "spud_tiny_de_test"}
    blimp = pl.read_parquet(tables / "blimp_overall.parquet")
    assert blimp.height > 0
    # the tiny BERT and its M0 baseline were probed on tiny_en and its two nonce versions
    probe = pl.read_parquet(tables / "probe_summary.parquet")
    assert set(zip(probe["baseline"], probe["eval"], strict=True)) == {
        (b, e) for b in ("none", "M0") for e in ("orig", "spud", "pos")}
    assert probe.filter(pl.col("eval") != "orig")["delta_las_mean"].null_count() == 0


@pytest.mark.slow
def test_report_holds_the_tables_and_figures(finished_run):
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run([sys.executable, "-m", "snakemake", "--report", "results/report.html"],
                            cwd=finished_run, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    html = (finished_run / "results" / "report.html").read_text(encoding="utf-8")
    for text in ("treebank_stats.csv", "spud_log_ratios.svg", "german_case_auc.csv",
                 "blimp_overall.csv", "tiny_trigram"):
        assert text in html, text
