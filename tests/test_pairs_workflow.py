"""The pairs rules under Snakemake: which items datasets the config enables (dry runs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from pairs_support import REPO


def _planned_jobs(*args) -> dict[str, int]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-c1", "--directory",
                             str(REPO), *args], cwd=REPO, capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    stats = result.stdout.split("Job stats:", 1)[1]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M)}


def test_default_config_builds_the_vendored_items_datasets():
    jobs = _planned_jobs()
    assert jobs["items_german_case"] == 1
    assert jobs["items_japanese_transitivity"] == 4
    assert jobs["items_blimp"] == 1
    assert "items_cola" not in jobs


def test_config_chooses_datasets(tmp_path):
    tsv = tmp_path / "in_domain_dev.tsv"
    tsv.write_text("gj04\t1\t\tThe dog barks.\n", encoding="utf-8")
    # A --configfile replaces the default config whole: start from the default, change `pairs`.
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    config.update(yaml.safe_load(f"""
pairs:
  german_case: {{enabled: false, templates: config/templates/german_case.tsv}}
  japanese_transitivity:
    enabled: true
    lexicon: config/lexicons/japanese_verb_pairs.tsv
    datasets: [rare]
    sample: {{rare: {{n: 10, seed: 1}}}}
  cola: {{enabled: true, files: [{tsv}]}}
  blimp: {{enabled: false, paths: [resources/blimp]}}
"""))
    extra = tmp_path / "config.yaml"
    extra.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    jobs = _planned_jobs("--configfile", str(extra), "--", "all")
    assert jobs["items_japanese_transitivity"] == 1 and jobs["items_cola"] == 1
    assert "items_german_case" not in jobs and "items_blimp" not in jobs
