"""SLOR, NormLP and Word-LP Min-1 (Lau et al. 2017; CoLA paper §4) put the model's and the unigram
model's log probabilities of the same tokens side by side: a token that belongs to no word (here
the trailing `Ġ` a byte-level BPE tokenizer emits for a sentence ending in a space) has no unigram
term, so its log probability stays out of the model side too."""

from __future__ import annotations

import numpy as np
import pytest
from scoring_models import hf_tokenizer

from spudflow.scoring.encoding import encode_with_tokenizer
from spudflow.scoring.items import Item
from spudflow.scoring.reductions import item_statistics

SENTENCE = "Kim left. "
WORDS = (("Kim", 0, 3), ("left", 4, 8), (".", 8, 9))
UNIGRAM = {"Kim": -9.0, "left": -7.5, ".": -2.0}


def test_tokens_of_no_word_are_left_out_of_both_sides():
    item = Item("1", SENTENCE, tuple(w for w, _, _ in WORDS), tuple(s for _, s, _ in WORDS),
                tuple(e for _, _, e in WORDS), (), "en")
    encoded = encode_with_tokenizer([item], hf_tokenizer("bytebpe"), template=False,
                                    max_length=None)[0]
    assert encoded.word_index[-1] is None  # the tokenizer emits a token of no word
    logprobs = list(-np.random.default_rng(0).uniform(0.5, 6.0, encoded.n_tokens))
    row = item_statistics(logprobs, encoded.word_index, item.words, [0, 1, 2], UNIGRAM.get)

    # independently: per word, the log probabilities of its tokens (by character offsets)
    model = {word: sum(lp for lp, (s, e) in zip(logprobs, encoded.anchors, strict=True)
                       if start <= s and e <= end)
             for word, start, end in WORDS}
    model_sum, unigram_sum = sum(model.values()), sum(UNIGRAM.values())
    assert row["slor"] == pytest.approx((model_sum - unigram_sum) / 3)
    assert row["normlp"] == pytest.approx(-model_sum / unigram_sum)
    assert row["word_lp_min1"] == pytest.approx(min(-model[w] / UNIGRAM[w] for w in model))
    # the sentence's own log probability keeps every scored token
    assert row["logprob_sum"] == pytest.approx(sum(logprobs))
    assert row["logprob_sum"] < model_sum
