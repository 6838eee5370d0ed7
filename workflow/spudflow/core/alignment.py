"""Tokens to words and regions by character offsets.

Every tokenizer family reports, for each token, the characters of the input it came from (the
fast tokenizers' offset mapping). Words and regions are character spans too, so one rule maps
tokens to them for WordPiece, byte-level BPE and SentencePiece/Metaspace alike, without relying on
a tokenizer's own idea of a word:

- A token's *anchor* is its character span without surrounding whitespace. A token made only of
  whitespace (a lone `Ġ` or `▁`, which marks the start of the next word) is anchored to the first
  non-space character after it, i.e. it belongs to the word it introduces.
- A token belongs to the word its anchor overlaps most (the first such word on ties), or to no
  word when it overlaps none.
- A token is inside a region when its anchor overlaps the region.
"""

from __future__ import annotations

from collections.abc import Sequence


def anchor_span(sentence: str, start: int, end: int) -> tuple[int, int]:
    """The token's characters without surrounding whitespace; see the module docstring."""
    s, e = start, end
    while s < e and sentence[s].isspace():
        s += 1
    while e > s and sentence[e - 1].isspace():
        e -= 1
    if s < e:
        return s, e
    position = max(start, end)
    while position < len(sentence) and sentence[position].isspace():
        position += 1
    if position < len(sentence):
        return position, position + 1
    return end, end  # trailing whitespace: anchored nowhere


def word_of_span(span: tuple[int, int], word_starts: Sequence[int],
                 word_ends: Sequence[int]) -> int | None:
    """Index of the word the span overlaps most, None when it overlaps none."""
    start, end = span
    best, best_overlap = None, 0
    for index, (ws, we) in enumerate(zip(word_starts, word_ends, strict=True)):
        if ws >= end:
            break  # words are in sentence order
        overlap = min(end, we) - max(start, ws)
        if overlap > best_overlap:
            best, best_overlap = index, overlap
    return best


def overlaps(span: tuple[int, int], start: int, end: int) -> bool:
    return span[0] < end and span[1] > start


def words_in_span(start: int, end: int, word_starts: Sequence[int],
                  word_ends: Sequence[int]) -> list[int]:
    """Indices of the words that overlap the character span [start, end)."""
    return [i for i, (ws, we) in enumerate(zip(word_starts, word_ends, strict=True))
            if ws < end and we > start]
