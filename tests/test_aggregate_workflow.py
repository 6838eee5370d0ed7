"""The aggregate rules under Snakemake, and the report.

The pairs, scoring and probe stages are not part of this run: a wrapper Snakefile defines the
functions those stages provide in rules/common.smk (items_datasets, scoring_jobs,
probe_metrics_files) before including the real Snakefile, and hand-made items, scores and metrics
sit where those stages would write them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from aggregate_inputs import (
    assert_table_files,
    blimp_inputs,
    cola_inputs,
    german_case_inputs,
    japanese_inputs,
    probe_metrics,
    spud_inputs,
)
from conftest import REPO

MINI = REPO / "tests" / "data" / "mini.conllu"

WRAPPER = """
def items_datasets():
    return ["spud_en", "german_case", "cola", "blimp", "japanese_base"]


def scoring_jobs():
    return [("spud_en", "gpt"), ("spud_en", "bert"), ("german_case", "gbert"),
            ("german_case", "ggpt"), ("cola", "lm"), ("blimp", "lm"), ("japanese_base", "bert"),
            ("japanese_base", "gpt")]


def probe_metrics_files():
    return ["results/probe/en_ewt/metrics.parquet"]


include: "{snakefile}"
"""

TABLES = ("spud_ratio_summary", "spud_wilcoxon", "spud_extremes", "german_case_auc",
          "german_case_auc_templates", "german_case_auc_violation", "german_case_animacy",
          "german_case_order", "cola_thresholds", "blimp_overall", "blimp_field", "blimp_paradigm",
          "japanese_accuracy", "japanese_agreement", "japanese_regression", "probe_summary",
          "probe_layers")
FIGURES = ("spud_log_ratios", "german_case_roc", "blimp_fields", "japanese_agreement",
           "probe_layers")


def _snakemake(wrapper: Path, workdir: Path, config: Path, *args: str):
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # targets first: --configfile takes several values
    command = [sys.executable, "-m", "snakemake", *args, "--snakefile", str(wrapper),
               "--directory", str(workdir), "--configfile", str(config)]
    return subprocess.run(command, capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_tables_figures_and_report_under_snakemake(tmp_path):
    # The wrapper sits beside links to the repository's package, config and report folders, as
    # the rules find sources relative to the main Snakefile.
    wrapper_dir = tmp_path / "wrapper"
    wrapper_dir.mkdir()
    for name in ("workflow", "config", "report", "envs"):
        (wrapper_dir / name).symlink_to(REPO / name)
    wrapper = wrapper_dir / "Snakefile"
    wrapper.write_text(WRAPPER.format(snakefile=REPO / "Snakefile"))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["treebanks"] = {"mini": {"lang": "de", "splits": {"test": str(MINI)}}}
    config["aggregate"]["folds"] = 5
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))

    work = tmp_path / "work"
    spud_inputs(work, n_groups=12)
    german_case_inputs(work, n_templates=2)
    cola_inputs(work, n_per_split=20)
    blimp_inputs(work, n_pairs=4)
    japanese_inputs(work)
    probe_metrics(work)

    # the wrapper has no rules of its own, so the target is named
    run = _snakemake(wrapper, work, config_path, "all", "--cores", "2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for name in TABLES:
        assert_table_files(work / "results" / "tables", name)
    for name in FIGURES:
        for ext in ("png", "svg"):
            assert (work / "results" / "figures" / f"{name}.{ext}").stat().st_size > 1000
    assert (work / "results" / "benchmarks" / "aggregate" / "table_japanese.tsv").is_file()
    # no nonce stage in this run: its table is left out of the targets
    assert not (work / "results" / "tables" / "nonce_replacements.parquet").exists()

    report = _snakemake(wrapper, work, config_path, "all", "--report", "results/report.html")
    assert report.returncode == 0, report.stderr[-3000:]
    html = (work / "results" / "report.html").read_text(encoding="utf-8")
    for text in ("German case violations by type", "cola_thresholds.csv", "spud_log_ratios.svg",
                 "probe_summary.csv", "items datasets spud_en", "models: bert, gpt"):
        assert text in html, text
