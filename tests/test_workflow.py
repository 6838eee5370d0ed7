"""The Snakemake workflow: lint, DAG of the default config, config validation, a tiny real run.

Everything plans in copies of the workflow (never in the checkout) and in-process through the
Snakemake API; the tiny real run goes through the `snakemake` command line, as a user runs it."""

from __future__ import annotations

import functools
import re
import shutil
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow_helpers import (
    copy_checkout,
    copy_workflow,
    default_config,
    lint_findings,
    plan,
    planning_error,
    snakemake_cli,
    update_config,
)

from spudflow.core.config import config_errors

from conftest import REPO

MINI = REPO / "tests" / "data" / "mini.conllu"


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


@pytest.mark.slow
def test_lint_is_clean(tmp_path):
    assert not lint_findings(copy_checkout(tmp_path))


@pytest.mark.slow
def test_default_config_dry_run_shows_the_dag(default_plan):
    jobs = Counter(rule for rule, _ in default_plan.jobs)
    # eight vendored splits (six PUD test files, EWT dev and test)
    assert jobs["ingest"] == 8


@pytest.mark.slow
def test_default_config_runs_the_cola_analysis_on_blimp_sentences(default_plan):
    """CoLA is not vendored: the default run's CoLA tables read an acceptability set built from
    BLiMP's sentences, scored by the English trigram, and the front page shows them."""
    cola = ("table_cola", ())
    assert cola in default_plan.jobs
    assert default_plan.inputs[cola] == {
        "results/items/blimp_acceptability.parquet",
        "results/scores/blimp_acceptability/en_ewt_trigram/item_scores.parquet"}
    assert ("items_blimp_acceptability", ()) in default_plan.jobs
    assert "results/tables/cola_thresholds.parquet" in default_plan.inputs[("front_page", ())]


@pytest.mark.slow
def test_default_config_trains_its_own_models_on_sentences_nothing_scores(default_plan):
    planned = default_plan
    pud = ["en_pud", "de_pud", "fr_pud", "ru_pud", "ar_pud", "ja_pud"]
    shares = {dict(w)["treebank"] for rule, w in planned.jobs if rule == "training_share"}
    # (en_pud keeps its share out of its SPUD pairs too, but English trains on EWT dev)
    assert shares == set(pud) - {"en_pud"}
    # SPUD pairs of the PUD splits only (EWT trains the n-gram and the controls)
    assert {dict(w)["dataset"] for rule, w in planned.jobs if rule == "items_spud"} == \
        {f"spud_{tb}_test" for tb in pud}
    # one n-gram per language: English on EWT dev, the others on their PUD training share
    assert not [j for j in planned.jobs if j[0] == "control_train"]
    ngrams = {dict(w)["ngram"]: {f for f in planned.inputs[(rule, w)] if f.endswith(".parquet")}
              for rule, w in planned.jobs if rule == "ngram_train"}
    assert ngrams == {"en_ewt_dev": {"results/ingest/en_ewt/dev/tokens.parquet"},
                      **{f"{tb[:2]}_pud_share": {f"results/shares/{tb}/test/train/tokens.parquet"}
                         for tb in pud if tb != "en_pud"}}


def _overlap_config(allow):
    config = default_config()
    config["ngrams"]["de_pud_share"]["text"] = ["de_pud/test", "en_ewt/dev"]
    config["models"]["de_pud_trigram"]["allow_training_overlap"] = allow
    return config


@pytest.mark.slow
def test_a_model_scoring_its_training_text_stops_planning(tmp_path):
    error = planning_error(copy_checkout(tmp_path / "stopped", _overlap_config(allow=False)))
    lines = [line for line in error.splitlines() if line.startswith("config key models.")]
    assert len(lines) == 1, error
    assert re.fullmatch(r"config key models\.de_pud_trigram: trained on de_pud/test \((\d+) shared "
                        r"sentences\), which dataset spud_de_pud_test scores; set "
                        r"models\.de_pud_trigram\.allow_training_overlap: true to allow it",
                        lines[0])
    assert plan(copy_checkout(tmp_path / "allowed", _overlap_config(allow=True))).jobs


@pytest.mark.slow
def test_the_tiny_workflow_config_allows_its_overlap_explicitly(tmp_path):
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
    # 1.0 passes JSON Schema's integer and would become results/nonce/…/seed1.0
    (lambda c: c["nonce"].update(seeds=[1.0]),
     "config key nonce.seeds.0: 1.0 is not of type 'integer'"),
    # an order of 3000 took 3 GB on a two-line text
    (lambda c: c["ngrams"]["en_ewt_dev"].update(order=11),
     "config key ngrams.en_ewt_dev.order: 11 is greater than the maximum of 10"),
    (lambda c: c["probe"].update(seeds=[-1]),
     "config key probe.seeds.0: -1 is less than the minimum of 0"),
])
def test_config_errors_name_the_key(tmp_path, edit, message):
    config = default_config()
    assert config_errors(config, REPO / "config" / "schema.yaml") == []
    edit(config)
    assert message in config_errors(config, REPO / "config" / "schema.yaml")
    assert message in planning_error(copy_checkout(tmp_path, config)).splitlines()


def _checked_config(edit=None) -> dict:
    """The default config as the Snakefile has it when it checks the references: edited,
    schema defaults filled in, named entries filled, workflow: paths resolved."""
    from spudflow.core.config import fill_named_entries, fill_schema_defaults
    from spudflow.core.workflow_paths import local_workflow_file, resolve_workflow_paths

    config = default_config()
    if edit:
        edit(config)
    fill_schema_defaults(config, REPO / "config" / "schema.yaml")
    fill_named_entries(config)
    return resolve_workflow_paths(config, local_workflow_file(REPO, REPO))


# A name in the config that names nothing: each passed the schema and failed later (a
# MissingInputException, or a selection that silently selected nothing).
REFERENCES = [
    (lambda c: c["ngrams"]["en_ewt_dev"].update(text=["nope/test"]),
     "config key ngrams.en_ewt_dev.text[0]: 'nope/test': no such text file, nor a split of "
     "`treebanks:`"),
    (lambda c: c["ngrams"]["en_ewt_dev"].update(text=["en_ewt/dev:train"]),
     "config key ngrams.en_ewt_dev.text[0]: 'en_ewt/dev:train' names a training share, but "
     "training_shares has no entry 'en_ewt/dev'"),
    (lambda c: c.update(controls={"c": {"kind": "masked", "text": ["en_pud/nope"]}}),
     "config key controls.c.text[0]: 'en_pud/nope': no such text file"),
    (lambda c: c["scoring"].update(datasets=["blimp", "nope"]),
     "config key scoring.datasets[1]: 'nope' is neither an items dataset the `pairs:` section "
     "makes"),
    (lambda c: c["models"]["smollm2_135m"].update(datasets=["spud_en_pud_tset"]),
     "config key models.smollm2_135m.datasets[0]: 'spud_en_pud_tset' is neither"),
    (lambda c: c["scoring"].update(unigram=["en_ewt_dve"]),
     "config key scoring.unigram[0]: 'en_ewt_dve' is not an n-gram model of `ngrams:`"),
    (lambda c: c["models"]["de_pud_trigram"].update(source="results/ngram/de_pud.parquet"),
     "config key models.de_pud_trigram.source: 'results/ngram/de_pud.parquet': no n-gram model "
     "'de_pud' under `ngrams:` makes it"),
    (lambda c: c["models"]["de_pud_trigram"].update(source="results/controls/tiny_bert"),
     "config key models.de_pud_trigram.source: 'results/controls/tiny_bert': no control "
     "'tiny_bert' under `controls:` makes it"),
    (lambda c: c["models"]["de_pud_trigram"].update(source="./models/nope"),
     "config key models.de_pud_trigram.source: './models/nope': no such model file or "
     "directory"),
    (lambda c: c["probe"]["models"]["minilm"].update(source="/nope/minilm"),
     "config key probe.models.minilm.source: '/nope/minilm': no such model file or directory"),
    (lambda c: c["training_shares"].update({"en_pud/dev": {"share": 0.5}}),
     "config key training_shares.en_pud/dev: 'en_pud/dev' is not a configured treebank/split"),
    (lambda c: c["nonce"].update(pools={"xx_pud": []}),
     "config key nonce.pools.xx_pud: no treebank 'xx_pud' is configured"),
    (lambda c: c["nonce"].update(pools={"en_pud": ["en_ewt/train"]}),
     "config key nonce.pools.en_pud[0]: 'en_ewt/train' is not a configured treebank/split"),
    (lambda c: c["nonce"].update(lexicons={"xx": ["lexicon.tsv"]}),
     "config key nonce.lexicons.xx: no treebank of language 'xx' is configured"),
    (lambda c: c["pairs"]["spud"].update(treebanks=["en_pud", "en_pdu"]),
     "config key pairs.spud.treebanks[1]: 'en_pdu' is not a treebank of `treebanks:`"),
    (lambda c: c["pairs"]["spud"].update(seeds=[3]),
     "config key pairs.spud.seeds: 3 not in nonce.seeds"),
    (lambda c: c["human_eval"].update(split="en_ewt/train"),
     "config key human_eval.split: 'en_ewt/train' is not a configured treebank/split"),
    (lambda c: c["human_eval"].update(filled={"annotator1": "a.csv"}),
     "config key human_eval.filled: expected a sheet of each of annotator1, annotator2, got "
     "annotator1"),
    (lambda c: c["aggregate"].update(japanese_agreement_modes=["gtp2/ppl"]),
     "config key aggregate.japanese_agreement_modes[0]: 'gtp2/ppl': no model 'gtp2' under "
     "`models:`"),
    (lambda c: c["probe"]["tasks"].update(xx_pud={"train": "test", "test": "test"}),
     "config key probe.tasks.xx_pud: not a treebank of `treebanks:`"),
    # values that named something and failed only in their job
    (lambda c: c["models"]["en_ewt_trigram"].update(source="./resources",
                                                   gguf_file="nope.gguf"),
     "config key models.en_ewt_trigram.gguf_file: 'nope.gguf': no such file in ./resources"),
    (lambda c: c["scoring"].update(cache="results"),
     "config key scoring.cache: 'results' is a pipeline output folder"),
    (lambda c: c["scoring"].update(cache="results/scores"),
     "config key scoring.cache: 'results/scores' is a pipeline output folder"),
    (lambda c: c["scoring"].update(cache="README.md"),
     "config key scoring.cache: 'README.md' is a file; the score cache is a folder"),
    (lambda c: c["human_eval"].update(n=100000),
     "config key human_eval.n: 100000 sentences, but en_ewt/test holds 2077"),
    (lambda c: c["probe"]["models"]["minilm"].update(dist_layer=7),
     "config key probe.models.minilm.dist_layer: layer 7, but the model has 6 layers"),
]


@pytest.mark.parametrize(("edit", "message"), REFERENCES, ids=[m.split(":")[0].split(" ")[-1]
                                                               for _, m in REFERENCES])
def test_a_config_name_that_names_nothing_is_a_config_error(edit, message):
    from spudflow.core.config_references import reference_errors

    assert reference_errors(_checked_config()) == []
    errors = reference_errors(_checked_config(edit))
    assert [e for e in errors if e.startswith(message)] == errors, errors


def test_a_hub_id_missing_from_the_cache_offline_is_a_config_error(tmp_path, monkeypatch):
    """With HF_HUB_OFFLINE set, the job could not download it: said before any job."""
    from spudflow.core.config_references import reference_errors

    def edit(c):
        c["models"]["smollm2_135m"].update(source="HuggingFaceTB/SmolLM2-135M")
        c["nonce"].update(ttr_tokenizer="google-bert/bert-base-multilingual-cased")

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert reference_errors(_checked_config(edit)) == []
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path))
    assert reference_errors(_checked_config(edit)) == [
        "config key models.smollm2_135m.source: 'HuggingFaceTB/SmolLM2-135M' is not in the "
        "Hugging Face hub cache, and HF_HUB_OFFLINE is set: download it first (or unset "
        "HF_HUB_OFFLINE)",
        "config key nonce.ttr_tokenizer: 'google-bert/bert-base-multilingual-cased' is not in "
        "the Hugging Face hub cache, and HF_HUB_OFFLINE is set: download it first (or unset "
        "HF_HUB_OFFLINE)"]


@pytest.mark.slow
def test_config_references_stop_planning_with_every_problem_at_once(tmp_path):
    """The cases that ended in a MissingInputException, one line each, before any rule."""
    config = default_config()
    config["ngrams"]["en_ewt_dev"]["text"] = ["nope/test"]
    config["scoring"]["datasets"] = ["nope"]
    lines = planning_error(copy_checkout(tmp_path, config)).splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("config key")] == [
        "config key ngrams.en_ewt_dev.text[0]", "config key scoring.datasets[0]"]
    # a user's own items file is a dataset too
    (tmp_path / "results" / "items").mkdir(parents=True)
    (tmp_path / "results" / "items" / "nope.parquet").write_bytes(b"")
    update_config(tmp_path, lambda c: c["ngrams"]["en_ewt_dev"].update(text=["en_ewt/dev"]))
    assert {dict(w)["dataset"] for rule, w in plan(tmp_path).jobs if rule == "score"} == \
        {"nope"}


DUPLICATED = """\
treebanks:
  mini:
    lang: de
    splits: {test: %s}
ingest:
  lenient: false
nonce:
  seeds: [1]
  seeds: [1, 2]
"""


def test_a_key_given_twice_in_the_default_config_file_stops_planning(tmp_path):
    workdir = copy_checkout(tmp_path)
    config = workdir / "config" / "config.yaml"
    config.write_text(DUPLICATED % MINI, encoding="utf-8")
    assert "config/config.yaml:9: config key nonce.seeds: given twice (first on line 8); only " \
        "the last would count" in planning_error(workdir).splitlines()


def test_a_default_config_file_that_is_not_utf8_stops_planning_naming_its_line(tmp_path):
    """YAML's reader stopped with a traceback naming neither the file nor the line."""
    workdir = copy_checkout(tmp_path)
    config = workdir / "config" / "config.yaml"
    config.write_bytes(b"# caf\xe9\n" + config.read_bytes())
    assert planning_error(workdir).splitlines() == [
        "config/config.yaml:1: not UTF-8 text: byte 0xe9 at offset 5 cannot be decoded; save "
        "the config file as UTF-8"]


@pytest.mark.slow
def test_a_key_given_twice_in_a_configfile_stops_snakemake(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(DUPLICATED % MINI, encoding="utf-8")
    snakefile = copy_checkout(tmp_path / "checkout") / "Snakefile"
    result = snakemake_cli("--snakefile", snakefile, "--configfile", config, "--directory",
                           tmp_path / "work", "--dry-run", cwd=tmp_path)
    assert result.returncode != 0
    assert f"{config}:9: config key nonce.seeds: given twice (first on line 8); only the last " \
        "would count" in (result.stdout + result.stderr).splitlines()


@pytest.mark.slow
def test_tiny_pipeline_run_with_local_and_url_splits(tmp_path):
    """The command-line smoke test: `snakemake --configfile` in a tmp dir, as a user runs it."""
    config = _tiny_config(tmp_path)
    workdir = tmp_path / "work"
    snakefile = copy_checkout(tmp_path / "checkout") / "Snakefile"
    run = functools.partial(snakemake_cli, "--snakefile", snakefile, "--configfile", config,
                            "--directory", workdir, cwd=tmp_path)
    result = run("--cores", "1")
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
    again = run("--cores", "1", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_every_command_has_help():
    from spudflow.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert {"ingest", "export", "fetch", "stats"} <= set(commands)
    for name, sub in commands.items():
        assert sub.description, f"`spudflow {name}` has no description"
        assert sub.format_help()
