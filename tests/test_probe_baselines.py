"""The random baselines of App. F.3 built from a tiny pretrained-like BERT: MR has no pretrained
weight, MRC exactly the pretrained embedding layer (word, position, token-type embeddings and
their LayerNorm) and nothing else."""

from __future__ import annotations

import pytest
import torch
from probe_support import LAYERS, save_tiny_encoder
from transformers import AutoModel, GPT2Config, GPT2Model

from spudflow.core.errors import InputError
from spudflow.probe.encoder import embedding_layer, load_encoder


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    directory = save_tiny_encoder(tmp_path_factory.mktemp("encoder") / "bert",
                                  pretrained_like=True)
    return directory, dict(AutoModel.from_pretrained(directory).named_parameters())


def _same(encoder, weights) -> dict[str, bool]:
    parameters = dict(encoder.model.named_parameters())
    assert parameters.keys() == weights.keys()
    return {name: torch.equal(p.cpu(), weights[name]) for name, p in parameters.items()}


def test_mrc_copies_the_whole_embedding_layer_and_nothing_else(pretrained):
    directory, weights = pretrained
    encoder = load_encoder(str(directory), [LAYERS], "MRC", 0, None, "cpu")
    same = _same(encoder, weights)
    embeddings = {n for n in same if n.startswith("embeddings.")}
    assert embeddings >= {"embeddings.word_embeddings.weight",
                          "embeddings.position_embeddings.weight",
                          "embeddings.token_type_embeddings.weight",
                          "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"}
    assert [n for n in embeddings if not same[n]] == []
    others = [n for n in same if n not in embeddings]
    assert others and [n for n in others if same[n]] == []


def test_mr_has_no_pretrained_weight(pretrained):
    directory, weights = pretrained
    encoder = load_encoder(str(directory), [LAYERS], "MR", 0, None, "cpu")
    assert [n for n, equal in _same(encoder, weights).items() if equal] == []


def test_no_embedding_layer_module_is_bad_input():
    # GPT-2 keeps wte/wpe directly in the model: no embedding layer to copy on its own.
    model = GPT2Model(GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10, n_positions=8))
    with pytest.raises(InputError, match="baseline MRC: gpt2 has no embedding layer module"):
        embedding_layer(model, "tiny-gpt2")
