"""The paper presets (config/papers/*.yaml): each one passes the real config/schema.yaml and plans
its whole DAG in a dry run (no network: URL splits become fetch_treebank jobs, hub models need no
files). The text corpora and CoLA files a preset needs but no rule can fetch are stood in for by
empty files, and config/papers/README.md must tell the user where to put them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml
from workflow_helpers import REPO, copy_checkout, plan

from spudflow.core.config import config_errors

PAPERS = REPO / "config" / "papers"
SCHEMA = REPO / "config" / "schema.yaml"

# Files a preset reads that the user provides before the run (licensed or unpublished corpora).
USER_FILES = {
    "spud": [],
    "german_case": ["resources/corpora/dewiki.txt"],
    "cola": [
        "resources/corpora/bnc.txt",
        "resources/cola/cola_public/raw/in_domain_dev.tsv",
        "resources/cola/cola_public/raw/out_of_domain_dev.tsv",
    ],
    "japanese_transitivity": [],
}
PRESETS = sorted(USER_FILES)


def _preset(name: str) -> dict:
    return yaml.safe_load((PAPERS / f"{name}.yaml").read_text(encoding="utf-8"))


def _dry_run(tmp_path: Path, config: dict, user_files: list[str]) -> Counter:
    """Planned jobs per rule of the whole DAG of `config` in a copy of the workflow. The config
    becomes the copy's config/config.yaml, which is what `--configfile` does: it replaces the
    default whole."""
    workdir = copy_checkout(tmp_path, config, user_files)
    return Counter(rule for rule, _ in plan(workdir, forceall=True).jobs)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_matches_the_schema(name):
    assert config_errors(_preset(name), SCHEMA) == []


def test_the_readme_says_where_each_user_file_goes():
    readme = (PAPERS / "README.md").read_text(encoding="utf-8")
    for name in PRESETS:
        assert f"config/papers/{name}.yaml" in readme
        for relative in USER_FILES[name]:
            assert relative in readme, relative


@pytest.mark.parametrize("name", PRESETS)
def test_preset_dry_run_plans_the_papers_tables(tmp_path, name):
    jobs = _dry_run(tmp_path, _preset(name), USER_FILES[name])
    expected = {
        "spud": {"table_spud_scores", "table_probe", "table_nonce_replacements"},
        "german_case": {"table_german_case", "figure_german_roc"},
        "cola": {"table_cola"},
        "japanese_transitivity": {"table_japanese", "figure_japanese_agreement"},
    }[name]
    assert expected <= set(jobs)


def test_spud_preset_without_its_probe_section_plans_the_papers_data_and_scores(tmp_path):
    config = _preset("spud")
    config.pop("probe")
    jobs = _dry_run(tmp_path, config, [])
    # 5 treebanks x train, dev, test from UD 2.10 URLs.
    assert jobs["fetch_treebank"] == 15
    # Every split x {spud, pos} x 5 seeds.
    assert jobs["nonce"] == 15 * 2 * 5
    # The test sets only: mBERT and mGPT on all five, the monolingual pairs on their language.
    assert jobs["score"] == 5 + 5 + 1 + 1 + 1 + 1


def test_japanese_preset_scores_every_variant_with_the_eight_models(tmp_path):
    jobs = _dry_run(tmp_path, _preset("japanese_transitivity"), [])
    assert jobs["items_japanese_transitivity"] == 4
    assert jobs["score"] == 8 * 4


def test_missing_user_files_stop_planning(tmp_path):
    # Without the German Wikipedia text the n-gram models cannot be planned: no silent skip.
    from snakemake.exceptions import MissingInputException

    with pytest.raises(MissingInputException, match="dewiki.txt"):
        _dry_run(tmp_path, _preset("german_case"), [])
