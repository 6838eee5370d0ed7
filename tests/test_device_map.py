"""A model split across devices (`--device-map`, `--max-memory`, `--offload-folder`;
core/device_map.py) scores and extracts features exactly as the whole model does.

Tested on the CPU with accelerate's disk offload: a CPU budget smaller than the model puts most
of its layers on disk, which accelerate brings back to the CPU layer by layer, the path a model
larger than its GPUs takes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from probe_support import feature_file, save_tiny_encoder
from safetensors.numpy import load_file
from scoring_models import CORPUS, tiny_model_dir

from spudflow.cli import main
from spudflow.core import device_map
from spudflow.core.errors import InputError

# Under the tiny models' weights (some 100 kB), so that most of their modules go to disk.
SMALL_BUDGET = "cpu=30KB"


def _split(tmp_path: Path) -> list[str]:
    return ["--device-map", "auto", "--max-memory", SMALL_BUDGET,
            "--offload-folder", str(tmp_path / "offload")]


def _score(tmp_path: Path, name: str, kind: str, methods: str, *extra: str) -> pl.DataFrame:
    text = tmp_path / "sentences.txt"
    text.write_text("\n".join(CORPUS[:8]) + "\n", encoding="utf-8")
    out = tmp_path / name
    model = tiny_model_dir(kind, "wordpiece" if kind == "masked" else "bytebpe")
    assert main(["score", str(text), "--model", str(model), "--kind", kind, "--method", methods,
                 "--device", "cpu", "--dtype", "float32", "--out", str(out), *extra]) == 0
    return pl.read_parquet(out / "token_scores.parquet")


@pytest.mark.parametrize(("kind", "methods"), [("causal", "ppl"),
                                               ("masked", "pppl,pppl_l2r,unmasked")])
def test_a_model_offloaded_to_disk_scores_as_the_whole_model(tmp_path, kind, methods):
    whole = _score(tmp_path, "whole", kind, methods)
    split = _score(tmp_path, "split", kind, methods, *_split(tmp_path))
    assert split.drop("logprob").equals(whole.drop("logprob"))
    np.testing.assert_allclose(split["logprob"].to_numpy(), whole["logprob"].to_numpy(),
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_the_budget_puts_layers_on_disk(tmp_path, kind):
    """The test above is of a split model: the budget does send modules to disk."""
    from spudflow.scoring.scorers import load_scorer

    placement = device_map.placement_from_options("auto", SMALL_BUDGET, tmp_path / "off")
    scorer = load_scorer(kind, str(tiny_model_dir(kind, "bytebpe")), device="cpu",
                         dtype="float32", placement=placement)
    devices = set(scorer.model.hf_device_map.values())
    assert "disk" in devices, scorer.model.hf_device_map
    assert scorer.device.type == "cpu"


def test_offloaded_probe_features_equal_the_whole_encoders(tmp_path):
    from probe_support import ewt_sentences

    from spudflow.cli import main as cli

    model = save_tiny_encoder(tmp_path / "encoder", pretrained_like=True)
    conllu = tmp_path / "dev.conllu"
    conllu.write_text(ewt_sentences("dev", 0, 12), encoding="utf-8")
    treebank = tmp_path / "tb"
    assert cli(["ingest", str(conllu), "--out", str(treebank)]) == 0
    whole, split = tmp_path / "whole.safetensors", tmp_path / "split.safetensors"
    assert feature_file(treebank, model, "0,1,2", whole, "--device", "cpu") == 0
    assert feature_file(treebank, model, "0,1,2", split, "--device", "cpu",
                        *_split(tmp_path)) == 0
    before, after = load_file(whole), load_file(split)
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_allclose(after[key].astype(np.float64),
                                   before[key].astype(np.float64), rtol=0, atol=1e-6)


@pytest.mark.parametrize(("options", "message"), [
    (["--max-memory", "cpu=1GB"], "only used with --device-map"),
    (["--device-map", "everywhere"], "neither auto"),
    (["--device-map", "auto", "--max-memory", "cpu:1GB"], "not DEVICE=SIZE"),
    (["--device-map", '{"bert": "gpu"}'], "unknown device"),
])
def test_bad_placement_options_exit_2_before_loading(tmp_path, capsys, options, message):
    text = tmp_path / "s.txt"
    text.write_text("The cat sat.\n", encoding="utf-8")
    code = main(["score", str(text), "--model", str(tiny_model_dir("causal", "bytebpe")),
                 "--kind", "causal", "--method", "ppl", "--out", str(tmp_path / "out"),
                 *options])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_parsed_options_are_what_from_pretrained_takes(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    placement = device_map.placement_from_options(
        '{"model.embed_tokens": 0, "model.layers.0": "cuda:1", "lm_head": "cpu"}',
        "0=70GiB,1=70GiB,cpu=200GiB", Path("/scratch/offload"))
    assert placement.mapped
    assert placement.loading_options() == {
        "device_map": {"model.embed_tokens": 0, "model.layers.0": 1, "lm_head": "cpu"},
        "max_memory": {0: "70GiB", 1: "70GiB", "cpu": "200GiB"},
        "offload_folder": "/scratch/offload"}
    assert device_map.Placement().loading_options() == {}


def test_only_the_gpus_the_job_was_given_are_used(monkeypatch):
    """A job asks for the GPUs its weights need, maybe fewer than its budget names: the others'
    budgets are dropped; a map onto a GPU the job does not see is bad input."""
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    budget = device_map.placement_from_options("balanced", "0=75GiB,1=75GiB,2=75GiB,3=75GiB,"
                                               "cpu=100GiB", None)
    assert budget.loading_options()["max_memory"] == {0: "75GiB", 1: "75GiB", 2: "75GiB",
                                                      "cpu": "100GiB"}
    mapped = device_map.placement_from_options('{"a": 0, "b": 3}', None, None)
    with pytest.raises(InputError, match="GPU 3, but this job sees 3"):
        mapped.loading_options()


SEVENTY_B = 140e9  # 70B parameters in bfloat16


@pytest.mark.parametrize(("spec", "weights", "gpus"), [
    ({}, SEVENTY_B, 1),                                               # no map: one device
    ({"device_map": "auto"}, SEVENTY_B, 3),                           # 168 GB over 80 GB GPUs
    ({"device_map": "auto", "max_memory": {i: "75GiB" for i in range(4)}}, SEVENTY_B, 3),
    ({"device_map": "auto", "max_memory": {i: "75GiB" for i in range(4)}}, 2 * SEVENTY_B, 4),
    ({"device_map": "balanced", "max_memory": {0: "40GB", 1: "40GB", "cpu": "300GB"}},
     SEVENTY_B, 2),                                                   # the rest on the CPU
    ({"device_map": "auto"}, 1e6, 1),                                 # a small model: one
    ({"device_map": "auto", "max_memory": {0: "70GiB", 1: "70GiB"}}, None, 2),  # not on disk
    ({"device_map": {"a": 0, "b": "cuda:2", "c": "cpu", "d": "disk"}}, SEVENTY_B, 2),
])
def test_a_split_model_asks_for_the_gpus_its_weights_need(spec, weights, gpus):
    assert device_map.gpus_needed(spec, weights) == gpus


def test_weight_bytes_are_scaled_to_the_loaded_dtype(tmp_path):
    (tmp_path / "config.json").write_text('{"torch_dtype": "bfloat16"}', encoding="utf-8")
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"0" * 1000)
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"0" * 500)
    assert device_map.loaded_weight_bytes(tmp_path, "bfloat16") == 1500
    assert device_map.loaded_weight_bytes(tmp_path, "auto") == 1500
    assert device_map.loaded_weight_bytes(tmp_path, "float32") == 3000
    assert device_map.loaded_weight_bytes(tmp_path / "missing", "float32") is None


def test_a_map_naming_no_known_device_is_refused():
    with pytest.raises(InputError, match="unknown device"):
        device_map.gpus_needed({"device_map": {"a": "tpu"}}, None)


def _seventy_b(folder: Path) -> Path:
    """A stand-in for a 70B causal model in bfloat16: its config and 140 GB of weight files,
    sparse (their size is what planning reads)."""
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "torch_dtype": "bfloat16"}',
                                        encoding="utf-8")
    for shard in range(1, 3):
        with (folder / f"model-0000{shard}-of-00002.safetensors").open("wb") as f:
            f.truncate(70_000_000_000)
    return folder


MAP = '{"embeddings": "cpu", "encoder": "cpu", "pooler": "disk"}'


# The config of docs/scoring.md, "Models larger than one GPU": a node with four 80 GB GPUs.
SEVENTY_B_CONFIG = {
    "kind": "causal", "methods": ["ppl"], "datasets": ["blimp"], "dtype": "bfloat16",
    "device_map": "auto",
    "max_memory": {0: "75GiB", 1: "75GiB", 2: "75GiB", 3: "75GiB", "cpu": "100GiB"},
    "offload_folder": "/scratch/offload",
}


@pytest.mark.slow
def test_a_split_models_jobs_ask_for_the_gpus_of_its_weights(tmp_path):
    from workflow_helpers import copy_workflow, plan, update_config

    workdir = copy_workflow(tmp_path / "workflow")
    _seventy_b(workdir / "llama-70b")

    def change(config):
        config["models"]["llama70b"] = {"source": "llama-70b", **SEVENTY_B_CONFIG}
        config["probe"]["models"]["tiny_bert"].update(
            device_map={"embeddings": "cpu", "encoder": "cpu", "pooler": "disk"})

    update_config(workdir, change)
    planned = plan(workdir, forceall=True)
    (score,) = [j for j in planned.jobs if j[0] == "score" and ("model", "llama70b") in j[1]]
    # 140 GB x 1.2 over 75 GiB GPUs: 3 of the node's 4; the CPU's 100 GiB on top of the memory
    assert planned.resources[score]["gpu"] == 3
    assert planned.resources[score]["mem_mb"] >= 100 * 2**30 / 1e6
    assert ("--device-map auto --max-memory 0=75GiB,1=75GiB,2=75GiB,3=75GiB,cpu=100GiB"
            " --offload-folder /scratch/offload") in planned.shell[score]
    whole = [j for j in planned.jobs if j[0] == "score" and ("model", "tiny_bert") in j[1]]
    assert whole and {planned.resources[j]["gpu"] for j in whole} == {1}
    assert not any("--device-map" in planned.shell[j] for j in whole)
    features = [j for j in planned.jobs if j[0] == "probe_features"]
    assert features and all(planned.resources[j]["gpu"] == 0 for j in features)  # all on CPU
    assert all(f"--device-map '{MAP}'" in planned.shell[j] for j in features)



def test_a_split_model_is_served_by_the_whole_models_cache_entries(tmp_path, caplog):
    """The map is in no cache key (it changes no number): the split model finds every entry the
    whole model wrote and computes none."""
    from cache_scenario import COUNTS
    from test_scoring_cli import ITEMS, write_items

    caplog.set_level("INFO")
    items = write_items(tmp_path / "items.parquet", ITEMS)
    model = tiny_model_dir("causal", "bytebpe")
    counts = []
    for name, extra in (("whole", []), ("split", _split(tmp_path))):
        caplog.clear()
        assert main(["score", str(items), "--model", str(model), "--kind", "causal",
                     "--method", "ppl", "--device", "cpu", "--dtype", "float32",
                     "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / name),
                     *extra]) == 0
        found = [COUNTS.search(r.getMessage()) for r in caplog.records]
        counts += [tuple(map(int, m.groups())) for m in found if m]
    (_, computed), (hits, none) = counts
    assert computed > 0 and (hits, none) == (computed, 0)
    for table in ("token_scores.parquet", "item_scores.parquet"):
        split, whole = (tmp_path / name / table for name in ("split", "whole"))
        assert split.read_bytes() == whole.read_bytes()
