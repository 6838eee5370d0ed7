"""The scoring rules on a tiny workflow (an n-gram model trained on an ingested treebank and a
tiny masked LM score a hand-made items dataset), and the config schema of the scoring keys."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest
import yaml
from scoring_models import tiny_model_dir
from test_scoring_cli import ITEMS, write_items
from test_scoring_ngram import CONLLU
from workflow_helpers import copy_checkout, copy_workflow, plan, run_workflow, update_config

REPO = Path(__file__).resolve().parents[1]

def tiny_config(tmp_path: Path) -> dict:
    conllu = tmp_path / "tiny.conllu.gz"
    with gzip.open(conllu, "wt", encoding="utf-8") as handle:
        handle.write(CONLLU)
    return {
        "treebanks": {"tiny_tb": {"lang": "fr", "splits": {"train": str(conllu)}}},
        "ingest": {"lenient": False},
        "ngrams": {"tiny_bigram": {"lang": "en", "text": ["tiny_tb/train"], "order": 2}},
        "models": {
            "bigram": {"source": "results/ngram/tiny_bigram.parquet", "kind": "ngram",
                       "methods": ["kn", "addk_region"], "languages": ["en"]},
            "bert": {"source": str(tiny_model_dir("masked", "wordpiece")), "kind": "masked",
                     "methods": ["pppl", "unmasked_region"], "device": "cpu",
                     "batch_tokens": 256},
        },
        "scoring": {"datasets": ["tiny"], "unigram": ["tiny_bigram"], "block_size": 2},
    }


def run_snakemake(workdir: Path, config: dict, *targets: str):
    """Run `targets` in the workflow copy at `workdir` on `config` (in-process, one core)."""
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run_workflow(workdir, cores=1, targets=targets)


@pytest.mark.slow
def test_scoring_rules_run_every_model_on_every_dataset(tmp_path):
    copy_checkout(tmp_path)
    (tmp_path / "results" / "items").mkdir(parents=True)
    write_items(tmp_path / "results" / "items" / "tiny.parquet", ITEMS)
    config = tiny_config(tmp_path)
    targets = [f"results/scores/tiny/{m}/{t}.parquet" for m in ("bigram", "bert")
               for t in ("token_scores", "item_scores")]
    run_snakemake(tmp_path, config, *targets)
    bigram = pl.read_parquet(tmp_path / "results/scores/tiny/bigram/item_scores.parquet")
    assert set(bigram["method"]) == {"kn", "addk_region"}
    assert "jp" not in set(bigram["item_id"])                 # languages: [en]
    assert bigram.filter(pl.col("method") == "kn")["slor"].is_not_null().all()
    bert = pl.read_parquet(tmp_path / "results/scores/tiny/bert/item_scores.parquet")
    assert set(bert["item_id"]) == {i.item_id for i in ITEMS}
    assert bert.filter(pl.col("item_id") == "long")["skipped"].to_list() == ["too_long"]
    log = (tmp_path / "results/logs/score/tiny/bert.log").read_text(encoding="utf-8")
    assert "on cpu in float32" in log and "items/s" in log

    # The same jobs in 2 scatter/gather shards (4 items in blocks of 2: one block each) rerun,
    # and write the same bytes.
    unsharded = {t: (tmp_path / t).read_bytes() for t in targets}
    config["scoring"]["shards"] = 2
    run_snakemake(tmp_path, config, *targets)
    for model in ("bigram", "bert"):
        assert (tmp_path / f"results/logs/score_gather/tiny/{model}.log").is_file()
        assert (tmp_path / f"results/scores/tiny/{model}/shards/2-of-2/item_scores.parquet"
                ).is_file()
    assert {t: (tmp_path / t).read_bytes() for t in targets} == unsharded


def test_shard_jobs_ask_for_a_gpu_for_transformer_models_only(tmp_path):
    """score_shard jobs of a transformer model declare gpu=1 (profiles/slurm turns it into
    --gpus=1), those of an n-gram model and the gather jobs none; a model's own `shards` wins
    over scoring.shards, and every model's files come from exactly one rule."""
    workdir = copy_workflow(tmp_path / "w")
    update_config(workdir, lambda config: (
        config["models"].update(tiny_bert={"source": "hub-org/tiny-bert", "kind": "masked",
                                           "methods": ["pppl"], "shards": 3}),
        config["scoring"].update(shards=2),
        config["models"].update(tiny_addk={"source": "results/ngram/tiny_en.parquet",
                                           "kind": "ngram", "methods": ["addk"], "shards": 1,
                                           "allow_training_overlap": True})))
    full = plan(workdir, forceall=True, targets=["results/tables/blimp_overall.parquet"])
    by_rule = {}
    for j in full.jobs:
        wildcards = dict(j[1])
        by_rule.setdefault((j[0], wildcards.get("model")), []).append(
            (wildcards, full.resources[j].get("gpu", 0)))
    assert sorted(k for k in by_rule if k[1]) == [
        ("score", "tiny_addk"), ("score_gather", "tiny_bert"), ("score_gather", "tiny_trigram"),
        ("score_shard", "tiny_bert"), ("score_shard", "tiny_trigram")]
    assert sorted(w["shards"] for w, _ in by_rule["score_shard", "tiny_bert"]) == ["3"] * 3
    assert sorted(w["shard"] for w, _ in by_rule["score_shard", "tiny_trigram"]) == ["1", "2"]
    assert {gpu for _, gpu in by_rule["score_shard", "tiny_bert"]} == {1}
    assert {gpu for _, gpu in by_rule["score_shard", "tiny_trigram"]} == {0}
    assert {gpu for _, gpu in by_rule["score_gather", "tiny_bert"]} == {0}


@pytest.mark.slow
def test_schema_accepts_the_default_config_and_rejects_a_method_the_kind_cannot_do(tmp_path):
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    schema = str(REPO / "config" / "schema.yaml")
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    validate(default, schema)
    config = tiny_config(tmp_path)
    validate(config, schema)
    config["models"]["bert"]["methods"] = ["ppl"]
    with pytest.raises(WorkflowError, match="'ppl' is not one of"):
        validate(config, schema)
