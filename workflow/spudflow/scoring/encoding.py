"""Sentences as model input: token ids, which positions are scored, and each scored token's
characters, word and regions (see alignment.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spudflow.core.alignment import anchor_span, overlaps, word_of_span, words_in_span
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
            offsets: Sequence[tuple[int, int]], max_length: int | None) -> EncodedItem:
    """An EncodedItem whose scored tokens (at `positions`) have character `offsets`."""
    anchors = [anchor_span(item.sentence, s, e) for s, e in offsets]
    words = [word_of_span(a, item.word_starts, item.word_ends) for a in anchors]
    skipped = None
    if not positions:
        skipped = SKIP_NO_TOKENS
    elif max_length is not None and len(input_ids) > max_length:
        skipped = SKIP_TOO_LONG
    return EncodedItem(item, input_ids, positions, tokens, [s for s, _ in offsets],
                       [e for _, e in offsets], anchors, words, skipped)


def encode_with_tokenizer(items: Sequence[Item], tokenizer, *, template: bool,
                          prefix: Sequence[int] = (), max_length: int | None) -> list[EncodedItem]:
    """Tokenize items with a fast tokenizer.

    template=True adds the tokenizer's special tokens (e.g. `[CLS] … [SEP]`, for masked and
    ELECTRA models); `prefix` ids are put before the tokens (the BOS of causal models). Special
    tokens are recognised by the tokenizer's special-tokens mask; text that merely looks like a
    special token (`[MASK]` typed in a sentence) is tokenized as ordinary text.
    """
    if not items:
        return []
    batch = tokenizer([item.sentence for item in items], add_special_tokens=template,
                      return_offsets_mapping=True, return_special_tokens_mask=True,
                      return_attention_mask=False, split_special_tokens=True)
    encoded = []
    for index, item in enumerate(items):
        ids = list(prefix) + list(batch["input_ids"][index])
        special = [1] * len(prefix) + list(batch["special_tokens_mask"][index])
        offsets = [(0, 0)] * len(prefix) + [tuple(o) for o in batch["offset_mapping"][index]]
        positions = [p for p, s in enumerate(special) if not s]
        tokens = tokenizer.convert_ids_to_tokens([ids[p] for p in positions])
        encoded.append(aligned(item, ids, positions, tokens, [offsets[p] for p in positions],
                               max_length))
    return encoded
