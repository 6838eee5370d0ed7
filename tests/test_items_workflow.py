"""The items rules under Snakemake: which items datasets the config enables (dry runs in a copy
of the workflow, never in the checkout, whose results/ may hold a finished run)."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml
from workflow_helpers import copy_checkout, default_config, plan


def _planned_jobs(workdir, config=None) -> Counter:
    """Jobs per rule a fresh copy of the workflow plans for `config` (default: the checkout's)."""
    return Counter(rule for rule, _ in plan(copy_checkout(workdir, config)).jobs)


@pytest.mark.slow
def test_default_config_builds_the_vendored_items_datasets(tmp_path):
    jobs = _planned_jobs(tmp_path)
    assert jobs["items_german_case"] == 1
    assert jobs["items_japanese_transitivity"] == 4
    assert jobs["items_blimp"] == 1
    assert "items_cola" not in jobs
    # CoLA is not vendored: its tables read an acceptability set of BLiMP's sentences
    assert jobs["items_blimp_acceptability"] == 1


def test_config_chooses_datasets(tmp_path):
    tsv = tmp_path / "in_domain_dev.tsv"
    tsv.write_text("gj04\t1\t\tThe dog barks.\n", encoding="utf-8")
    # A config file replaces the default config whole: start from the default, change `pairs`.
    config = default_config()
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
    jobs = _planned_jobs(tmp_path / "work", config)
    assert jobs["items_japanese_transitivity"] == 1 and jobs["items_cola"] == 1
    assert "items_german_case" not in jobs and "items_blimp" not in jobs
