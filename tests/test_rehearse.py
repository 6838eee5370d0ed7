"""`spudflow rehearse` on the SPUD preset cut to a few jobs (one treebank split by its UD URL,
one nonce version, GPT-2 by its hub id, a hub id no table knows, an n-gram model on a
user-supplied corpus): the models come from the offline hub cache, the treebank from the
mirror, the corpus from a stand-in; a second rehearsal has nothing to do. About a minute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from spudflow.rehearse.families import choose_family
from spudflow.rehearse.mirror import mirror_location
from spudflow.rehearse.overlay import build_overlay, hub_models

REPO = Path(__file__).resolve().parents[1]
SPUD = yaml.safe_load((REPO / "config" / "papers" / "spud.yaml").read_text(encoding="utf-8"))
EWT_TEST = SPUD["treebanks"]["en_ewt"]["splits"]["test"]


def cut_spud_preset() -> dict:
    return {
        "treebanks": {"en_ewt": {"lang": "en", "splits": {"test": EWT_TEST}}},
        "ingest": {"lenient": False},
        "nonce": {**SPUD["nonce"], "methods": ["spud"], "seeds": [1]},
        "pairs": {"spud": {**SPUD["pairs"]["spud"], "treebanks": ["en_ewt"]}},
        "ngrams": {"user_lm": {"lang": "en", "text": ["resources/corpora/user.txt"],
                               "order": 2, "k": 1.0, "min_count": 1}},
        "models": {
            "gpt2": SPUD["models"]["gpt2"],
            "user_bert": {"source": "someorg/new-bert", "kind": "masked",
                          "methods": ["pppl"], "dtype": "float32"},
            "user_lm": {"source": "results/ngram/user_lm.parquet", "kind": "ngram",
                        "methods": ["addk"]},
        },
        "scoring": {"datasets": ["spud_en_ewt_test"]},
    }


def rehearse(config: Path, workdir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    env.pop("HF_HUB_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "spudflow", "rehearse", str(config), "--workdir", str(workdir),
         "--cores", "2"], cwd=workdir.parent, env=env, capture_output=True, text=True)


def test_unknown_hub_id_takes_its_kinds_generic_family():
    assert choose_family("someorg/new-bert", "masked").how.startswith("generic")
    assert choose_family("someorg/new-lm", "causal").family.architecture == "gpt2"
    assert choose_family("roberta-base", "masked").family.tokenizer == "bytebpe"
    assert choose_family("x/y", "causal", "gpt-neo").how == "overlay"


def test_overlay_points_at_the_mirror_and_narrows_only_sizes(tmp_path):
    preset = yaml.safe_load((REPO / "config/papers/japanese_transitivity.yaml").read_text())
    overlay = build_overlay(preset, {"https://x/": "/m"}, "small")
    assert set(overlay) == {"pairs", "fetch"}
    samples = overlay["pairs"]["japanese_transitivity"]["sample"]
    assert set(samples) == {"base", "rare", "longer", "relative"}
    assert {s["n"] for s in samples.values()} == {40}
    assert [m.hub_id for m in hub_models(SPUD)][:2] == ["bert-base-multilingual-cased",
                                                        "ai-forever/mGPT"]
    assert max(m.layers for m in hub_models(SPUD)) == 24  # mGPT's probe layers exist
    prefix, file = mirror_location(tmp_path, EWT_TEST)
    assert prefix + file.name == EWT_TEST


@pytest.mark.slow
def test_rehearsal_runs_offline_from_hub_cache_mirror_and_stand_ins(tmp_path):
    config = tmp_path / "cut_spud.yaml"
    config.write_text(yaml.safe_dump(cut_spud_preset()), encoding="utf-8")
    workdir = tmp_path / "rehearsal"
    first = rehearse(config, workdir)
    assert first.returncode == 0, first.stderr[-3000:]

    # Every hub id is a snapshot of the offline cache, loaded by id from it.
    for hub_id in ("gpt2", "someorg/new-bert"):
        repo = workdir / "hub" / ("models--" + hub_id.replace("/", "--"))
        commit = (repo / "refs" / "main").read_text()
        assert (repo / "snapshots" / commit / "config.json").is_file()
        logs = list((workdir / "results" / "logs").rglob("*.log"))
        assert any(f"cache: hub model {hub_id} at commit {commit}" in p.read_text()
                   for p in logs), hub_id
    # The treebank came from the mirror, the corpus from a stand-in.
    _, mirrored = mirror_location(workdir / "mirror", EWT_TEST)
    assert (workdir / "resources/downloads/en_ewt/test.conllu").read_bytes() == \
        mirrored.read_bytes()
    assert (workdir / "resources/corpora/user.txt").stat().st_size > 0
    scores = pl.read_parquet(workdir / "results/tables/spud_ratio_summary.parquet")
    assert scores.height > 0
    assert set(scores["model"]) >= {"gpt2", "user_bert", "user_lm"}
    report = (workdir / "rehearsal.md").read_text(encoding="utf-8")
    assert "generic for kind masked (unknown id)" in report
    assert "resources/corpora/user.txt" in report
    assert "| score |" in report

    second = rehearse(config, workdir)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Nothing to be done" in second.stderr
