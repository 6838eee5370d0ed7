"""Tokens to words and regions by character offsets, for the three tokenizer families."""

from __future__ import annotations

import pytest
from scoring_models import EDGE_CASES, TOKENIZER_KINDS, edge_case_items, make_item, tiny_model_dir
from transformers import AutoTokenizer

from spudflow.core.alignment import anchor_span, word_of_span, words_in_span
from spudflow.scoring.encoding import encode_with_tokenizer


@pytest.mark.parametrize(("span", "anchor"), [
    ((0, 3), (0, 3)),     # "The"
    ((3, 7), (4, 7)),     # " cat" (byte-level BPE offsets include the space)
    ((3, 4), (4, 5)),     # a lone space marker belongs to the next word's first character
    ((11, 13), (13, 13)),  # trailing spaces: anchored nowhere
])
def test_anchor_span(span, anchor):
    assert anchor_span("The cat sat  ", *span) == anchor


def test_word_of_span_prefers_most_overlap_then_first():
    starts, ends = (0, 2, 5), (2, 5, 6)     # 東京 | は日本? | 。 style spans
    assert word_of_span((1, 4), starts, ends) == 1   # 1 char of word 0, 2 of word 1
    assert word_of_span((1, 3), starts, ends) == 0   # tie: the first
    assert word_of_span((6, 6), starts, ends) is None
    assert words_in_span(1, 3, starts, ends) == [0, 1]


@pytest.mark.parametrize("tokenizer_kind", TOKENIZER_KINDS)
def test_every_token_maps_to_the_word_under_it(tokenizer_kind):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("masked", tokenizer_kind))
    items = edge_case_items()
    for sentence in encode_with_tokenizer(items, tokenizer, template=True, max_length=None):
        item = sentence.item
        assert sentence.input_ids[0] == tokenizer.cls_token_id  # specials in the input ...
        assert sentence.positions[0] == 1                       # ... but never scored
        assert len(sentence.positions) == len(sentence.input_ids) - 2
        covered = set()
        for k in range(sentence.n_tokens):
            word = sentence.word_index[k]
            start, end = sentence.anchors[k]
            covered.update(words_in_span(start, end, item.word_starts, item.word_ends))
            if word is None:  # only trailing whitespace belongs to no word
                assert not item.sentence[sentence.char_starts[k]:].strip()
            else:  # the token's characters overlap its word
                assert start < item.word_ends[word] and end > item.word_starts[word]
        # Every word is under some token (one [UNK] may cover two emoji words).
        assert covered == set(range(len(item.words))), item.item_id


def test_punctuation_cjk_emoji_and_spaces_by_tokenizer():
    items = {i.item_id: i for i in edge_case_items()}
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("masked", "bytebpe"))
    encoded = {e.item.item_id: e for e in encode_with_tokenizer(
        list(items.values()), tokenizer, template=True, max_length=None)}
    emoji = encoded["emoji"]
    # 🍕 and 🍣 are split into byte tokens; each byte token maps to its emoji's word.
    pizza = [k for k in range(emoji.n_tokens) if emoji.word_index[k] == 3]
    sushi = [k for k in range(emoji.n_tokens) if emoji.word_index[k] == 4]
    assert len(pizza) >= 2 and len(sushi) >= 2
    assert all(emoji.anchors[k] == (13, 14) for k in pizza[1:])
    spaces = encoded["spaces"]
    assert spaces.word_index[0] == 0 and spaces.tokens[0] == "Ġ"  # leading space -> Leading
    assert spaces.word_index[-1] is None                           # trailing space -> none
    punctuation = encoded["punctuation"]
    comma = punctuation.tokens.index(",")
    assert punctuation.word_index[comma] == 1


def test_region_tokens_by_overlap():
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("masked", "metaspace"))
    words = ["東京", "は", "日本", "の", "首都", "です", "。"]
    item = make_item("r", "東京は日本の首都です。", words,
                     regions=[("copula", "です"), ("city", "東京")])
    [sentence] = encode_with_tokenizer([item], tokenizer, template=True, max_length=None)
    copula, city = item.regions
    for region in (copula, city):
        # The region's tokens cover exactly its characters (a Metaspace `▁` that the tokenizer
        # puts before 東 has the offsets of 東 and is one of them).
        chars = {c for k in sentence.region_tokens(region) for c in range(*sentence.anchors[k])}
        assert chars == set(range(region.start, region.end))
    assert sentence.tokens_in_any_region() == sorted(
        sentence.region_tokens(copula) + sentence.region_tokens(city))


def test_all_tokens_at_once_follow_the_per_token_rules():
    """anchor_spans and words_of_spans (every token of many texts in numpy) give what
    anchor_span and word_of_span give token by token: random spans over real sentences and
    whitespace of several kinds, words in order and (the loop's fallback) out of order."""
    import random
    import re

    import numpy as np

    from spudflow.core.alignment import anchor_spans, words_of_spans

    rng = random.Random(4)
    texts = [name_sentence[1] for name_sentence in EDGE_CASES] + [
        "", " ", "  a  b ", "x\u00a0 y\u2003z\u3000", "\tq\n", "dog", "ab cd ef gh"]
    text_of, starts, ends = [], [], []
    for t, text in enumerate(texts):
        for _ in range(40):
            s = rng.randint(0, len(text))
            text_of.append(t)
            starts.append(s)
            ends.append(s if rng.random() < 0.1 else rng.randint(s, len(text)))
    got_starts, got_ends = anchor_spans(texts, np.array(text_of), np.array(starts),
                                        np.array(ends))
    anchors = [anchor_span(texts[t], s, e) for t, s, e in zip(text_of, starts, ends, strict=True)]
    assert list(zip(got_starts.tolist(), got_ends.tolist(), strict=True)) == anchors
    word_starts, word_ends = [], []
    for t, text in enumerate(texts):
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        if t % 3 == 1 and len(spans) > 2:  # out of order: the word-by-word fallback
            spans[0], spans[2] = spans[2], spans[0]
        if t % 4 == 2 and len(spans) > 1:  # overlapping words
            spans[0] = (spans[0][0], spans[1][1])
        word_starts.append([s for s, _ in spans])
        word_ends.append([e for _, e in spans])
    for span_starts, span_ends in ((got_starts, got_ends), (np.array(starts), np.array(ends))):
        got = words_of_spans(span_starts, span_ends, np.array(text_of), word_starts, word_ends)
        expected = [word_of_span((s, e), word_starts[t], word_ends[t]) for t, s, e in
                    zip(text_of, span_starts.tolist(), span_ends.tolist(), strict=True)]
        assert got.tolist() == [-1 if w is None else w for w in expected]


@pytest.mark.parametrize("tokenizer_kind", TOKENIZER_KINDS)
def test_a_block_encodes_as_its_items_one_by_one(tokenizer_kind):
    """encode_with_tokenizer's one call and array alignment against its definition, item by
    item (`aligned`: the tokenizer's offsets of each scored token, anchors, words; the
    tokenizer's word ids of the item's sentence alone)."""
    from spudflow.scoring.encoding import aligned

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("causal", tokenizer_kind))
    items = edge_case_items()
    for prefix, template in (((), True), ((tokenizer.eos_token_id,), False)):
        for max_length in (None, 8):
            block = encode_with_tokenizer(items, tokenizer, template=template, prefix=prefix,
                                          max_length=max_length)
            for item, got in zip(items, block, strict=True):
                one = tokenizer(item.sentence, add_special_tokens=template,
                                return_offsets_mapping=True, return_special_tokens_mask=True,
                                split_special_tokens=True)
                ids = list(prefix) + one["input_ids"]
                special = [1] * len(prefix) + one["special_tokens_mask"]
                offsets = [(0, 0)] * len(prefix) + one["offset_mapping"]
                positions = [p for p, s in enumerate(special) if not s]
                word_ids = [None] * len(prefix) + one.word_ids()
                expected = aligned(item, ids, positions, tokenizer.convert_ids_to_tokens(
                    [ids[p] for p in positions]), [offsets[p] for p in positions], max_length,
                    [word_ids[p] for p in positions])
                assert got == expected, item.item_id
