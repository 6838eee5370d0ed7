"""Sentences as model input: token ids, which positions are scored, and each scored token's
characters, word and regions (see alignment.py), and its word as the tokenizer splits the
sentence (pppl_l2r's default words)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from spudflow.core.alignment import (
    anchor_span,
    anchor_spans,
    overlaps,
    word_of_span,
    words_in_span,
    words_of_spans,
)
from spudflow.core.gpu_feed import paused_gc
from spudflow.core.tokenize import tokenize_with_words
from spudflow.scoring.items import Item, Region

# Reasons an item is left out, as written in item_scores.parquet's `skipped` column.
SKIP_TOO_LONG = "too_long"
SKIP_NO_TOKENS = "no_tokens"


@dataclass
class EncodedItem:
    """One item as model input. Token i of the sentence (its `token_index`) sits at input
    position `positions[i]`; special tokens and any prefix are in `input_ids` but never scored."""

    item: Item
    input_ids: list[int]
    positions: list[int]
    tokens: list[str]
    char_starts: list[int]       # the tokenizer's offsets of each scored token
    char_ends: list[int]
    anchors: list[tuple[int, int]]
    word_index: list[int | None]
    skipped: str | None = None   # SKIP_* when the item is left out
    # Each scored token's word among the tokenizer's pre-tokenizer words of the sentence (the
    # fast tokenizer's `word_ids()`, as Kauf & Ivanova's l2r masking reads them); None: not known
    # (an n-gram model's words) or a token of no such word.
    tokenizer_word_index: list[int | None] | None = None

    @property
    def n_tokens(self) -> int:
        return len(self.positions)

    def words_of_token(self, token: int) -> list[int]:
        """Every word token `token` overlaps (its `word_index` is the one it overlaps most)."""
        return words_in_span(*self.anchors[token], self.item.word_starts, self.item.word_ends)

    def region_tokens(self, region: Region) -> list[int]:
        return [i for i, a in enumerate(self.anchors) if overlaps(a, region.start, region.end)]

    def tokens_in_any_region(self) -> list[int]:
        return [i for i, a in enumerate(self.anchors)
                if any(overlaps(a, r.start, r.end) for r in self.item.regions)]


def aligned(item: Item, input_ids: list[int], positions: list[int], tokens: list[str],
            offsets: Sequence[tuple[int, int]], max_length: int | None,
            tokenizer_words: list[int | None] | None = None) -> EncodedItem:
    """An EncodedItem whose scored tokens (at `positions`) have character `offsets` (and the
    tokenizer's word ids `tokenizer_words`, when known)."""
    anchors = [anchor_span(item.sentence, s, e) for s, e in offsets]
    words = [word_of_span(a, item.word_starts, item.word_ends) for a in anchors]
    return EncodedItem(item, input_ids, positions, tokens, [s for s, _ in offsets],
                       [e for _, e in offsets], anchors, words,
                       skip_reason(len(positions), len(input_ids), max_length), tokenizer_words)


def skip_reason(n_scored: int, n_input: int, max_length: int | None) -> str | None:
    if not n_scored:
        return SKIP_NO_TOKENS
    if max_length is not None and n_input > max_length:
        return SKIP_TOO_LONG
    return None


def encode_with_tokenizer(items: Sequence[Item], tokenizer, *, template: bool,
                          prefix: Sequence[int] = (), max_length: int | None) -> list[EncodedItem]:
    """Tokenize items with a fast tokenizer, in one call for all of them.

    template=True adds the tokenizer's special tokens (e.g. `[CLS] … [SEP]`, for masked and
    ELECTRA models); `prefix` ids are put before the tokens (the BOS of causal models). Special
    tokens are recognised by the tokenizer's special-tokens mask; text that merely looks like a
    special token (`[MASK]` typed in a sentence) is tokenized as ordinary text. Anchors and words
    (core/alignment.py) are found for every token of every item at once.
    """
    if not items:
        return []
    with paused_gc():
        return _encode(items, tokenizer, template, prefix, max_length)


def _encode(items: Sequence[Item], tokenizer, template: bool, prefix: Sequence[int],
            max_length: int | None) -> list[EncodedItem]:
    # The sentence's own text is tokenized, so its word ids are those of the text a tool such as
    # minicons is given.
    ids, specials, offset_lists, word_id_lists = tokenize_with_words(
        tokenizer, [item.sentence for item in items], template)
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(items))
    total = int(lengths.sum())
    special = np.fromiter(chain.from_iterable(specials), dtype=np.int64, count=total)
    offsets = np.fromiter(chain.from_iterable(chain.from_iterable(offset_lists)),
                          dtype=np.int64, count=2 * total).reshape(total, 2)
    flat_ids = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=total)
    # None (a special token) becomes NaN, then -1: one C loop instead of one per token
    tokenizer_words = None if word_id_lists is None else np.nan_to_num(
        np.array(list(chain.from_iterable(word_id_lists)), dtype=np.float64),
        nan=-1).astype(np.int64)
    scored = np.flatnonzero(special == 0)
    owner = np.repeat(np.arange(len(items)), lengths)[scored]
    positions = scored - (np.cumsum(lengths) - lengths)[owner] + len(prefix)
    starts, ends = offsets[scored, 0], offsets[scored, 1]
    anchor_starts, anchor_ends = anchor_spans([item.sentence for item in items], owner, starts,
                                              ends)
    words = words_of_spans(anchor_starts, anchor_ends, owner,
                           [item.word_starts for item in items],
                           [item.word_ends for item in items])
    # Token strings looked up once per distinct id.
    unique, inverse = np.unique(flat_ids[scored], return_inverse=True)
    names = np.array(tokenizer.convert_ids_to_tokens(unique.tolist()), dtype=object)
    tokens = names[inverse].tolist()
    positions_, starts_, ends_ = positions.tolist(), starts.tolist(), ends.tolist()
    anchors = list(zip(anchor_starts.tolist(), anchor_ends.tolist(), strict=True))
    word_index = [None if w < 0 else w for w in words.tolist()]
    tokenizer_word_index = None if tokenizer_words is None else [
        None if w < 0 else w for w in tokenizer_words[scored].tolist()]
    cuts = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=len(items)))]).tolist()
    prefix = list(prefix)
    encoded = []
    for index, item in enumerate(items):
        a, b = cuts[index], cuts[index + 1]
        input_ids = prefix + ids[index]
        encoded.append(EncodedItem(item, input_ids, positions_[a:b], tokens[a:b], starts_[a:b],
                                   ends_[a:b], anchors[a:b], word_index[a:b],
                                   skip_reason(b - a, len(input_ids), max_length),
                                   None if tokenizer_word_index is None
                                   else tokenizer_word_index[a:b]))
    return encoded
