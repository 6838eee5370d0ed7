"""Loading transformers models (scoring and probe): a path that holds no model, or a hub id that
cannot be found, is bad input (exit 2, one line naming it); any other failure is an internal
error that keeps its traceback (exit 1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import huggingface_hub.constants
import pytest
import transformers
from scoring_models import tiny_model_dir

from spudflow.core.errors import InputError
from spudflow.core.model_source import resolve_source


def _copy(tmp_path: Path, name: str) -> Path:
    model = tmp_path / name
    shutil.copytree(tiny_model_dir("masked", "wordpiece"), model)
    return model


def _no_config(model: Path) -> None:
    (model / "config.json").unlink()


def _garbage_config(model: Path) -> None:
    (model / "config.json").write_text("# sent_id = 1\n1\tDogs\n", encoding="utf-8")


def _no_model_type(model: Path) -> None:
    (model / "config.json").write_text("{}", encoding="utf-8")


def _no_weights(model: Path) -> None:
    (model / "model.safetensors").unlink()


def _garbage_weights(model: Path) -> None:
    (model / "model.safetensors").write_bytes(b"not safetensors at all")


BROKEN = {
    "no config.json": (_no_config, "holds no model: no config.json"),
    "config not JSON": (_garbage_config, "config.json: not a JSON model configuration"),
    "config without model_type": (_no_model_type, "config.json: names no model_type"),
    "no weights": (_no_weights, "holds no weights"),
    "unreadable weights": (_garbage_weights, "cannot load"),
}


def load_scoring(model: str):
    from spudflow.scoring.scorers import load_scorer

    return load_scorer("masked", model, device="cpu", dtype="float32")


def load_probe(model: str):
    from spudflow.probe.encoder import load_encoder

    return load_encoder(model, [0, 1], None, 0, None, "cpu")


LOADERS = {"scoring": load_scoring, "probe": load_probe}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("broken", BROKEN)
def test_a_directory_without_a_model_is_bad_input(tmp_path, loader, broken):
    model = _copy(tmp_path, "model")
    damage, message = BROKEN[broken]
    damage(model)
    with pytest.raises(InputError) as caught:
        LOADERS[loader](str(model))
    assert caught.value.format().startswith(str(model)), caught.value.format()
    assert message in caught.value.format()


@pytest.mark.parametrize("loader", LOADERS)
def test_missing_path_and_unknown_hub_id_are_bad_input(tmp_path, loader, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    missing = str(tmp_path / "no-model")
    with pytest.raises(InputError, match="no such model file or directory"):
        LOADERS[loader](missing)
    with pytest.raises(InputError) as caught:
        LOADERS[loader]("no-such-org/no-such-model")
    assert caught.value.format().startswith("no-such-org/no-such-model: cannot load")


@pytest.mark.parametrize("loader", LOADERS)
def test_a_good_model_still_loads(loader):
    assert LOADERS[loader](str(tiny_model_dir("masked", "wordpiece"))) is not None


def _runtime_failure(*args, **kwargs):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


@pytest.mark.parametrize("loader", LOADERS)
def test_other_failures_keep_their_traceback(monkeypatch, loader):
    """A runtime error while loading a real model is not the user's input: it propagates."""
    for auto in (transformers.AutoModelForMaskedLM, transformers.AutoModel):
        monkeypatch.setattr(auto, "from_pretrained", _runtime_failure)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        LOADERS[loader](str(tiny_model_dir("masked", "wordpiece")))


def test_internal_error_exits_through_main_with_traceback(monkeypatch, tmp_path):
    """main() turns only InputError into exit 2: anything else leaves main (exit 1, traceback)."""
    from spudflow.cli import main

    monkeypatch.setattr(transformers.AutoModelForMaskedLM, "from_pretrained", _runtime_failure)
    text = tmp_path / "in.txt"
    text.write_text("The cat sat.\n", encoding="utf-8")
    with pytest.raises(RuntimeError):
        main(["score", str(text), "--model", str(tiny_model_dir("masked", "wordpiece")),
              "--kind", "masked", "--method", "pppl", "--out", str(tmp_path / "out"),
              "--device", "cpu"])
    assert not (tmp_path / "out").exists()


def test_a_model_file_that_is_not_a_directory_is_bad_input(tmp_path):
    weights = tiny_model_dir("masked", "wordpiece") / "model.safetensors"
    source = resolve_source(str(weights))
    assert source.local
    for loader in LOADERS.values():
        with pytest.raises(InputError, match="is a file, not a model directory"):
            loader(str(weights))


@pytest.mark.parametrize("baseline", [None, "MRC"])
def test_an_encoder_missing_a_layers_weights_is_bad_input(tmp_path, baseline):
    """A checkpoint without the weights of one of its layers was loaded with that layer drawn at
    random (transformers' missing_keys), exit 0: features of a random layer. The pooler a masked
    LM's checkpoint lacks (test_a_good_model_still_loads) is no probe layer and still loads."""
    from probe_support import save_tiny_encoder
    from safetensors.torch import load_file, save_file

    from spudflow.probe.encoder import load_encoder

    model = save_tiny_encoder(tmp_path / "encoder")
    weights = load_file(model / "model.safetensors")
    kept = {k: v for k, v in weights.items() if not k.startswith("encoder.layer.0.")}
    assert len(kept) < len(weights)
    save_file(kept, model / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(InputError) as error:
        load_encoder(str(model), [1, 2], baseline, 0, None, "cpu")
    message = str(error.value)
    assert message.startswith(f"{model}: holds no weights for encoder.layer.0.")
    assert message.endswith("of the encoder: they would be randomly initialised; choose a "
                            "complete checkpoint")
    # the pooler alone missing is not the encoder's
    no_pooler = {k: v for k, v in weights.items() if not k.startswith("pooler.")}
    save_file(no_pooler, model / "model.safetensors", metadata={"format": "pt"})
    assert load_encoder(str(model), [1, 2], baseline, 0, None, "cpu").n_layers == 2
