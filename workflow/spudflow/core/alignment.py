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
from itertools import chain

import numpy as np


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


# The same rules for every token of many texts at once, in numpy: a PPPL job aligns every token
# of every sentence, and one Python call per token cost more than the tokenizer itself.

def anchor_spans(texts: Sequence[str], text_of: np.ndarray, starts: np.ndarray,
                 ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """anchor_span of token k, whose offsets (starts[k], ends[k]) point into texts[text_of[k]],
    for every k: (anchor starts, anchor ends)."""
    text_of, starts, ends = (np.asarray(a, dtype=np.int64) for a in (text_of, starts, ends))
    if not len(starts):
        return starts.copy(), ends.copy()
    # The texts end to end, each followed by a character that is not whitespace, so that no
    # search for the next non-space character runs into the following text.
    joined = "\0".join(texts) + "\0"
    space = _is_space(np.frombuffer(joined.encode("utf-32-le", "surrogatepass"),
                                    dtype=np.uint32))
    index = np.arange(len(space))
    # next_solid[i]: first non-space character at or after i; last_solid[i]: last at or before i
    next_solid = np.minimum.accumulate(np.where(space, len(space), index)[::-1])[::-1]
    last_solid = np.maximum.accumulate(np.where(space, -1, index))
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    base = (np.cumsum(lengths + 1) - (lengths + 1))[text_of]
    first = next_solid[base + starts]
    solid = first < base + ends  # some non-space character inside the token
    inside_end = last_solid[np.maximum(base + ends - 1, 0)] + 1
    # a token of whitespace only: the first non-space character after it, if its text has one
    after = next_solid[base + np.maximum(starts, ends)]
    found = after < base + lengths[text_of]
    anchor_start = np.where(solid, first - base, np.where(found, after - base, ends))
    anchor_end = np.where(solid, inside_end - base, np.where(found, after - base + 1, ends))
    return anchor_start, anchor_end


def _is_space(codes: np.ndarray) -> np.ndarray:
    """str.isspace of each code point."""
    space = np.zeros(len(codes), dtype=bool)
    ascii_ = codes < 128
    space[ascii_] = _ASCII_SPACE[codes[ascii_]]
    if not ascii_.all():
        unique, inverse = np.unique(codes[~ascii_], return_inverse=True)
        space[~ascii_] = np.array([chr(c).isspace() for c in unique.tolist()])[inverse]
    return space


_ASCII_SPACE = np.array([chr(c).isspace() for c in range(128)])


def words_of_spans(span_starts: np.ndarray, span_ends: np.ndarray, text_of: np.ndarray,
                   word_starts: Sequence[Sequence[int]],
                   word_ends: Sequence[Sequence[int]]) -> np.ndarray:
    """word_of_span of span k in text text_of[k], whose words are word_starts[text] and
    word_ends[text], for every k; -1 where it overlaps no word.

    Where a text's words are in order without overlaps (every loader checks this), the words a
    span overlaps are the run from the first word ending after its start to the last starting
    before its end, found by binary search over all texts' words at once (texts laid end to end
    with a gap of one character). Other texts take the word-by-word loop."""
    span_starts, span_ends, text_of = (np.asarray(a, dtype=np.int64)
                                       for a in (span_starts, span_ends, text_of))
    result = np.full(len(span_starts), -1, dtype=np.int64)
    counts = np.fromiter(map(len, word_starts), dtype=np.int64, count=len(word_starts))
    starts = np.fromiter(chain.from_iterable(word_starts), dtype=np.int64, count=counts.sum())
    ends = np.fromiter(chain.from_iterable(word_ends), dtype=np.int64, count=counts.sum())
    text_of_word = np.repeat(np.arange(len(counts)), counts)
    first_word = np.cumsum(counts) - counts
    # A text is in order when each word starts before it ends and no earlier than the previous
    # word's end.
    bad_word = starts >= ends
    bad_word[1:] |= (starts[1:] < ends[:-1]) & (text_of_word[1:] == text_of_word[:-1])
    ordered = np.bincount(text_of_word[bad_word], minlength=len(counts)) == 0
    # Global coordinates: text t from base[t]; one character between texts, so a span of one
    # text never reaches a word of another. The words of texts not in order are left out.
    extent = max(ends.max(initial=0), span_ends.max(initial=0), span_starts.max(initial=0)) + 1
    base = np.arange(len(counts), dtype=np.int64) * extent
    keep = ordered[text_of_word]
    global_starts = (starts + base[text_of_word])[keep]
    global_ends = (ends + base[text_of_word])[keep]
    fast = ordered[text_of] & (span_starts < span_ends)
    s = span_starts[fast] + base[text_of[fast]]
    e = span_ends[fast] + base[text_of[fast]]
    low = np.searchsorted(global_ends, s, side="right")   # first word ending after s
    high = np.searchsorted(global_starts, e, side="left")  # first word starting at or after e
    best = np.full(len(s), -1, dtype=np.int64)
    best_overlap = np.zeros(len(s), dtype=np.int64)
    for step in range(int((high - low).max(initial=0))):  # the run: rarely over 2 words
        word = low + step
        inside = word < high
        word = np.minimum(word, len(global_starts) - 1)
        overlap = np.minimum(e, global_ends[word]) - np.maximum(s, global_starts[word])
        better = inside & (overlap > best_overlap)
        best = np.where(better, word, best)
        best_overlap = np.where(better, overlap, best_overlap)
    # each text's first word among the kept ones (a text's words are all kept or none)
    first_kept = np.concatenate([[0], np.cumsum(keep)])[first_word]
    result[fast] = np.where(best >= 0, best - first_kept[text_of[fast]], -1)
    for k in np.flatnonzero(~ordered[text_of]).tolist():
        text = text_of[k]
        word = word_of_span((int(span_starts[k]), int(span_ends[k])), word_starts[text],
                            word_ends[text])
        result[k] = -1 if word is None else word
    return result
