"""The Snakemake workflow: lint, DAG of the default config, config validation, a tiny real run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from spudflow.core.config import config_errors

from conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
MINI = REPO / "tests" / "data" / "mini.conllu"


def _env():
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _snakemake(*args, cwd=REPO):
    return subprocess.run([*SNAKEMAKE, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env=_env())


def _tiny_config(tmp_path: Path) -> Path:
    url_copy = tmp_path / "remote" / "mini-copy.conllu"
    url_copy.parent.mkdir()
    shutil.copy(MINI, url_copy)
    # Only the ingestion sections: stages left out of a config make no jobs.
    config = {
        "treebanks": {
            "mini": {"lang": "de", "splits": {"test": str(MINI), "dev": url_copy.as_uri()}},
        },
        "ingest": {"lenient": False},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_lint_is_clean():
    result = _snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr


def test_default_config_dry_run_shows_the_dag():
    result = _snakemake("-n", "--forceall", "--quiet", "rules")
    assert result.returncode == 0, result.stderr
    out = result.stdout + result.stderr
    # eight vendored splits (six PUD test files, EWT dev and test)
    assert "ingest" in out and " 8" in out.split("ingest", 1)[1].splitlines()[0]


def test_default_config_trains_its_own_models_on_sentences_nothing_scores():
    from workflow_helpers import plan

    planned = plan(REPO, forceall=True)
    pud = ["en_pud", "de_pud", "fr_pud", "ru_pud", "ar_pud", "ja_pud"]
    shares = {dict(w)["treebank"] for rule, w in planned.jobs if rule == "training_share"}
    # (en_pud keeps its share out of its SPUD pairs too, but English trains on EWT dev)
    assert shares == set(pud) - {"en_pud"}
    # SPUD pairs of the PUD splits only (EWT trains the n-gram and the controls)
    assert {dict(w)["dataset"] for rule, w in planned.jobs if rule == "items_spud"} == \
        {f"spud_{tb}_test" for tb in pud}
    # one n-gram per language: English on EWT dev, the others on their PUD training share
    assert not [j for j in planned.jobs if j[0] == "train_control"]
    ngrams = {dict(w)["ngram"]: {f for f in planned.inputs[(rule, w)] if f.endswith(".parquet")}
              for rule, w in planned.jobs if rule == "ngram_train"}
    assert ngrams == {"en_ewt_dev": {"results/ingest/en_ewt/dev/tokens.parquet"},
                      **{f"{tb[:2]}_pud_share": {f"results/shares/{tb}/test/train/tokens.parquet"}
                         for tb in pud if tb != "en_pud"}}


def _overlap_config(tmp_path, allow):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["ngrams"]["de_pud_share"]["text"] = ["de_pud/test", "en_ewt/dev"]
    config["models"]["de_pud_trigram"]["allow_training_overlap"] = allow
    path = tmp_path / f"overlap-{allow}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_model_scoring_its_training_text_stops_planning(tmp_path):
    result = _snakemake("-n", "--configfile", _overlap_config(tmp_path, allow=False))
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines()
             if line.startswith("config key models.")]
    assert len(lines) == 1, result.stdout + result.stderr
    assert re.fullmatch(r"config key models\.de_pud_trigram: trained on de_pud/test \((\d+) shared "
                        r"sentences\), which dataset spud_de_pud_test scores; set "
                        r"models\.de_pud_trigram\.allow_training_overlap: true to allow it",
                        lines[0])
    allowed = _snakemake("-n", "--configfile", _overlap_config(tmp_path, allow=True))
    assert allowed.returncode == 0, allowed.stderr


def test_the_tiny_workflow_config_allows_its_overlap_explicitly(tmp_path):
    from workflow_helpers import copy_workflow, plan, update_config

    workdir = copy_workflow(tmp_path / "work")
    assert plan(workdir).jobs
    update_config(workdir, lambda c: c["models"]["tiny_trigram"].pop("allow_training_overlap"))
    with pytest.raises(Exception) as stopped:
        plan(workdir)
    # the SPUD pairs keep the half of tiny_en/test outside its training share: 2 of 4 sentences
    assert ("config key models.tiny_trigram: trained on tiny_en/test (2 shared sentences), which "
            "dataset spud_tiny_en_test scores") in str(stopped.value)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda c: c["treebanks"]["en_pud"].update(colour="red"),
     "config key treebanks.en_pud: Additional properties are not allowed ('colour' was "
     "unexpected)"),
    (lambda c: c["treebanks"]["en_pud"].update(lang=5),
     "config key treebanks.en_pud.lang: 5 is not of type 'string'"),
    (lambda c: c.update(unknown_section={}),
     "config key (top level): Additional properties are not allowed ('unknown_section' was "
     "unexpected)"),
])
def test_config_errors_name_the_key(tmp_path, edit, message):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert config_errors(config, REPO / "config" / "schema.yaml") == []
    edit(config)
    assert message in config_errors(config, REPO / "config" / "schema.yaml")
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    result = _snakemake("-n", "--configfile", path)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


def test_tiny_pipeline_run_with_local_and_url_splits(tmp_path):
    config = _tiny_config(tmp_path)
    workdir = tmp_path / "work"
    result = _snakemake("--cores", "1", "--configfile", config, "--directory", workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    # the URL split went through the download rule into resources/downloads/
    assert (workdir / "resources" / "downloads" / "mini" / "dev.conllu").read_bytes() == \
        MINI.read_bytes()
    for split in ("test", "dev"):
        tokens = pl.read_parquet(workdir / "results" / "ingest" / "mini" / split / "tokens.parquet")
        assert tokens.height == 12
    stem = workdir / "results" / "tables" / "treebank_stats"
    for ext in ("parquet", "csv", "md", "tex"):
        assert stem.with_suffix(f".{ext}").is_file()
    stats = pl.read_parquet(stem.with_suffix(".parquet"))
    assert stats.select("treebank", "split", "words").rows() == [("mini", "dev", 10),
                                                                  ("mini", "test", 10)]
    assert "\\toprule" in stem.with_suffix(".tex").read_text()
    # a second invocation has nothing to do
    again = _snakemake("--cores", "1", "--configfile", config, "--directory", workdir, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_every_command_has_help():
    from spudflow.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert {"ingest", "export", "fetch", "stats"} <= set(commands)
    for name, sub in commands.items():
        assert sub.description, f"`spudflow {name}` has no description"
        assert sub.format_help()
