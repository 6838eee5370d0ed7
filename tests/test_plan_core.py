"""The rules' planning as plain Python (spudflow.core.plan, spudflow.<stage>.plan) on small
configs, without Snakemake: what the rules' input, params and resource functions answer."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from spudflow.aggregate.plan import AggregatePlan
from spudflow.controls.plan import ControlsPlan
from spudflow.core.plan_base import registry_files, training_text_sources
from spudflow.core.rules_support import memory_mb
from spudflow.ingest.plan import IngestPlan
from spudflow.scoring.plan import ScoringPlan

CODE = Path(__file__).resolve().parents[1] / "workflow" / "spudflow"


def small_config(**sections) -> dict:
    config = {
        "treebanks": {"en_pud": {"lang": "en", "splits": {"test": "a.conllu"}},
                      "de_pud": {"lang": "de", "splits": {"test": "b.conllu", "dev": "c.conllu"}}},
        "training_shares": {"en_pud/test": {"share": 0.5, "seed": 3}},
    }
    return config | sections


def test_treebank_splits_are_in_config_order():
    plan = IngestPlan(small_config(), CODE)
    assert plan.treebank_splits() == [("en_pud", "test"), ("de_pud", "test"), ("de_pud", "dev")]
    assert plan.ingest_outputs()[0] == "results/ingest/en_pud/test/tokens.parquet"


def test_training_text_is_a_split_a_share_or_a_file():
    plan = IngestPlan(small_config(), CODE)
    inputs = plan.training_text_inputs(["de_pud/dev", "en_pud/test@train", "corpus.txt"])
    assert inputs == ["results/ingest/de_pud/dev/tokens.parquet",
                      "results/shares/en_pud/test/train/tokens.parquet", "corpus.txt"]
    assert training_text_sources(inputs) == [
        "results/ingest/de_pud/dev", "results/shares/en_pud/test/train", "corpus.txt"]


def test_a_share_the_config_does_not_define_is_a_config_error():
    with pytest.raises(ValueError, match="training_shares has no entry 'de_pud/dev'"):
        IngestPlan(small_config(), CODE).training_text_inputs(["de_pud/dev@train"])


def test_a_training_shares_args_come_from_its_entry():
    wildcards = SimpleNamespace(treebank="en_pud", split="test", part="heldout")
    assert IngestPlan(small_config(), CODE).training_share_args(wildcards) == (
        "--fraction 0.5 --seed 3 --rest")


def test_a_controls_text_defaults_to_every_split_sorted():
    config = small_config(controls={"c": {"text": None, "kind": "bert", "seed": 1}})
    plan = ControlsPlan(config, CODE)
    wildcards = SimpleNamespace(control="c")
    assert plan.control_text_inputs(wildcards) == [
        "results/ingest/de_pud/dev/tokens.parquet", "results/ingest/de_pud/test/tokens.parquet",
        "results/ingest/en_pud/test/tokens.parquet"]
    assert plan.control_train_args(wildcards) == "--kind bert --seed 1"


def test_sharded_models_are_matched_by_the_shard_rules_only():
    config = small_config(scoring={"shards": 1}, models={
        "big": {"kind": "causal", "shards": 3}, "small": {"kind": "ngram"}})
    plan = ScoringPlan(config, CODE)
    assert plan.scoring_models_pattern(sharded=True) == "big"
    assert plan.scoring_models_pattern(sharded=False) == "small"
    dirs = plan.score_shard_dirs(SimpleNamespace(dataset="d", model="big"))
    assert dirs[-1] == "results/scores/d/big/shards/3-of-3"


def test_the_memory_model_is_base_plus_headroom_over_what_a_job_holds_with_a_floor():
    assert memory_mb(0, floor_mb=4000) == 4000
    assert memory_mb(4000, floor_mb=4000) == 6000  # 1000 + 1.25 x 4000
    assert memory_mb(10.2, 100, base_mb=0, headroom=1) == 100
    assert memory_mb(100.2, 100, base_mb=0, headroom=1) == 101


def test_registry_files_are_named_by_suffix_the_first_outputs_alone():
    files = registry_files("table_treebank_stats")
    assert list(files)[:4] == ["csv", "parquet", "md", "tex"]
    assert files["parquet"] == "results/tables/treebank_stats.parquet"
    assert registry_files("figure_probe_layers")["png"] == "results/figures/probe_layers.png"
    assert len(registry_files("table_probe")) == len(set(registry_files("table_probe").values()))


def test_a_family_table_reads_its_options_from_the_aggregate_section():
    aggregate = {"extremes": 5, "spud_outlier_threshold": 1.0, "spud_outliers_above": 1.1,
                 "spud_outliers_below": 1.2, "german_animacy": "any", "folds": 10, "seed": 0,
                 "cola_criterion": "mcc", "regression": {}, "japanese_decision": "sum",
                 "japanese_agreement_modes": [], "japanese_graph_threshold": 0.5,
                 "uncertainty": {"level": 0.9, "resamples": 200, "seed": 3}, "examples": 4}
    plan = AggregatePlan(small_config(aggregate=aggregate, pairs={}), CODE)
    tables = plan.family_tables()
    assert tables["spud"]["options"] == (
        "--extremes 5 --outlier-threshold 1.0 --outliers-above 1.1 --outliers-below 1.2 "
        "--interval-level 0.9 --resamples 200 --interval-seed 3 --examples 4 --examples-seed 0")
    assert tables["cola"]["options"] == (
        "--folds 10 --seed 0 --criterion mcc "
        "--interval-level 0.9 --resamples 200 --interval-seed 3 --examples 4 --examples-seed 0")
    assert tables["german_case"]["options"] == (
        "--animacy any --interval-level 0.9 --resamples 200 --interval-seed 3 --examples 4 "
        "--examples-seed 0")
    assert tables["blimp"]["options"] == (
        "--interval-level 0.9 --resamples 200 --interval-seed 3 --examples 4 --examples-seed 0")
