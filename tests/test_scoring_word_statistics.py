"""SLOR, NormLP and Word-LP Min-1 (Lau et al. 2017; CoLA paper §4) put the model's and the unigram
model's log probabilities of the same tokens side by side: a token that belongs to no word (here
the trailing `Ġ` a byte-level BPE tokenizer emits for a sentence ending in a space) has no unigram
term, so its log probability stays out of the model side too."""

from __future__ import annotations

import numpy as np
import pytest
from scoring_models import hf_tokenizer

from spudflow.scoring.encoding import aligned, encode_with_tokenizer
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


CANNOT = "Ted cannot go."
CANNOT_WORDS = (("Ted", 0, 3), ("can", 4, 7), ("not", 7, 10), ("go", 11, 13), (".", 13, 14))
CANNOT_UNIGRAM = {"Ted": -9.0, "can": -6.0, "not": -5.5, "go": -7.0, ".": -2.0}


def test_a_word_inside_another_words_token_keeps_its_unigram_term():
    # CoLA splits `cannot` into the words `can` `not`; GPT-2-style tokenizers keep `Ġcannot`
    # whole. The token's log probability covers both words, so both unigram terms count (the
    # token's word is `can`; without `not`, SLOR dropped from 2.08 to 1.83 on a CoLA sentence).
    item = Item("1", CANNOT, tuple(w for w, _, _ in CANNOT_WORDS),
                tuple(s for _, s, _ in CANNOT_WORDS), tuple(e for _, _, e in CANNOT_WORDS), (),
                "en")
    offsets = [(0, 3), (3, 10), (10, 13), (13, 14)]  # Ted, Ġcannot, Ġgo, .
    encoded = aligned(item, [1, 2, 3, 4], [0, 1, 2, 3], ["Ted", "Ġcannot", "Ġgo", "."],
                      offsets, None)
    assert encoded.word_index == [0, 1, 3, 4]  # no token's word is `not`
    logprobs = [-4.0, -8.0, -3.0, -1.0]
    covers = [encoded.words_of_token(t) for t in range(4)]
    assert covers[1] == [1, 2]
    row = item_statistics(logprobs, encoded.word_index, item.words, [0, 1, 2, 3, 4],
                          CANNOT_UNIGRAM.get, covers)

    unigram_sum = sum(CANNOT_UNIGRAM.values())
    assert row["slor"] == pytest.approx((sum(logprobs) - unigram_sum) / 5)
    assert row["normlp"] == pytest.approx(-sum(logprobs) / unigram_sum)
    # Word-LP Min-1 compares the token with both of its words: -(-8) / (-6 - 5.5)
    per_unit = [4.0 / -9.0, 8.0 / -11.5, 3.0 / -7.0, 1.0 / -2.0]
    assert row["word_lp_min1"] == pytest.approx(min(per_unit))
    # a region row whose words stop at `can` leaves `not` out, as before
    region = item_statistics(logprobs[:2], encoded.word_index[:2], item.words, [0, 1],
                             CANNOT_UNIGRAM.get, covers[:2])
    assert region["slor"] == pytest.approx((-12.0 - (-15.0)) / 2)
