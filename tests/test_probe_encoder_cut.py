"""An encoder cut above the highest layer asked for gives the full model's vectors, bit for bit,
with fewer layers (GPT-2's last hidden state has passed ln_f, so it keeps one block more)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from transformers import AutoModel

from spudflow.probe.encoder import load_encoder
from spudflow.rehearse.families import FAMILIES
from spudflow.rehearse.tiny_models import build_model, build_tokenizer

TEXTS = ["The cat sat on the mat .", "A dog , a cat and a bird !", "Birds sing ."] * 5
N_LAYERS = 4
# family -> blocks built for hidden_states[L], L < N_LAYERS
BLOCKS = {"bert": lambda top: max(1, top), "roberta": lambda top: max(1, top),
          "electra": lambda top: max(1, top), "gpt2": lambda top: top + 1,
          "gpt-neo": lambda top: top + 1}


@pytest.fixture(scope="module", params=sorted(BLOCKS))
def saved(request, tmp_path_factory):
    family = dataclasses.replace(FAMILIES[request.param], layers=N_LAYERS)
    tokenizer = build_tokenizer(family, TEXTS)
    path = tmp_path_factory.mktemp(request.param)
    build_model(family, tokenizer, seed=0).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return request.param, path, tokenizer


@pytest.mark.parametrize("top", range(N_LAYERS + 1))
def test_the_cut_encoder_gives_the_full_models_vectors(saved, top):
    name, path, tokenizer = saved
    full = AutoModel.from_pretrained(path).eval()
    encoder = load_encoder(str(path), [top], None, 0, None, "cpu")
    assert encoder.n_layers == N_LAYERS
    expected_blocks = BLOCKS[name](top) if top < N_LAYERS else N_LAYERS
    assert encoder.model.config.num_hidden_layers == expected_blocks
    assert encoder.model.config.use_cache is False  # no key/value cache: features never read it
    for text in TEXTS[:3]:
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        with torch.no_grad():
            want = full(input_ids=ids, output_hidden_states=True).hidden_states[top]
            got = encoder.model(input_ids=ids, output_hidden_states=True).hidden_states[top]
        assert torch.equal(got, want), text
