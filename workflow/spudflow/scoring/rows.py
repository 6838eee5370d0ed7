"""Model inputs as arrays: one row per model input (a sentence, or one masked copy of it).

A PPPL job has a row per token of every sentence; they are built and batched as numpy arrays,
never as one Python object per row. Row r is a slice of its sentence's token ids (the copies of
a sentence share them), with the mask id at its masked positions; the model's value at each of
its gathered positions (for the token id in `targets`) goes to slot `slots` of sentence
`owner[r]`'s result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from spudflow.scoring.encoding import EncodedItem


@dataclass
class Ragged:
    """A list of int64 lists: list r is values[offsets[r]:offsets[r + 1]]."""

    values: np.ndarray
    offsets: np.ndarray
    singles: bool = False  # every list has one entry (offsets 0, 1, 2, ...)

    @staticmethod
    def singletons(values: np.ndarray) -> Ragged:
        return Ragged(values, np.arange(len(values) + 1), singles=True)

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indices into `values` of lists `rows` end to end, how many each list has)."""
        if self.singles:
            return rows, np.ones(len(rows), dtype=np.int64)
        begin = self.offsets[rows]
        counts = self.offsets[rows + 1] - begin
        ends = np.cumsum(counts)
        return np.arange(ends[-1] if len(ends) else 0) + np.repeat(begin - ends + counts,
                                                                    counts), counts


@dataclass
class Rows:
    tokens: np.ndarray    # every sentence's ids end to end
    starts: np.ndarray    # (R,) where row r's ids begin in tokens
    lengths: np.ndarray   # (R,) row r's input length
    owner: np.ndarray     # (R,) sentence (index into the caller's list)
    masked: Ragged        # per row: positions replaced by the mask id
    gather: Ragged        # per row: positions whose output is needed
    targets: np.ndarray   # per gathered position: the token id expected there
    slots: np.ndarray     # per gathered position: where it goes in the owner's result

    def __len__(self) -> int:
        return len(self.owner)


@dataclass
class Wanted:
    """The sentences' ids end to end and every wanted token, flat: the parts rows are cut from.
    Sentences without wanted tokens are kept (they own no row)."""

    tokens: np.ndarray      # every sentence's ids end to end
    starts: np.ndarray      # (S,) where sentence s's ids begin
    lengths: np.ndarray     # (S,) its input length
    owner: np.ndarray       # (W,) the sentence of each wanted token
    slot: np.ndarray        # (W,) its place in the sentence's result
    position: np.ndarray    # (W,) its input position
    target: np.ndarray      # (W,) its id

    @staticmethod
    def of(encoded: Sequence[EncodedItem], targets: Sequence[Sequence[int]]) -> Wanted:
        lengths = np.fromiter((len(e.input_ids) for e in encoded), dtype=np.int64,
                              count=len(encoded))
        tokens = _flat((e.input_ids for e in encoded), int(lengths.sum()))
        starts = np.cumsum(lengths) - lengths
        n_scored = np.fromiter((e.n_tokens for e in encoded), dtype=np.int64,
                               count=len(encoded))
        positions = _flat((e.positions for e in encoded), int(n_scored.sum()))
        counts = np.fromiter(map(len, targets), dtype=np.int64, count=len(targets))
        wanted = _flat(targets, int(counts.sum()))
        owner = np.repeat(np.arange(len(encoded)), counts)
        slot = np.arange(len(wanted)) - np.repeat(np.cumsum(counts) - counts, counts)
        position = positions[(np.cumsum(n_scored) - n_scored)[owner] + wanted]
        return Wanted(tokens, starts, lengths, owner, slot, position,
                      tokens[starts[owner] + position])

    def one_row_each(self, lengths: np.ndarray | None = None, shift: int = 0) -> Rows:
        """One row per sentence with wanted tokens, gathering them all (at position - shift),
        of the sentence's length or `lengths`."""
        sentences, first = np.unique(self.owner, return_index=True)
        offsets = np.append(first, len(self.owner))
        return Rows(self.tokens, self.starts[sentences],
                    self.lengths[sentences] if lengths is None else lengths, sentences,
                    Ragged(np.empty(0, dtype=np.int64), np.zeros(len(sentences) + 1,
                                                                 dtype=np.int64)),
                    Ragged(self.position - shift, offsets), self.target, self.slot)

    def one_row_per_token(self, masked: Ragged) -> Rows:
        """A masked copy of its sentence per wanted token, gathering that token only."""
        return Rows(self.tokens, self.starts[self.owner], self.lengths[self.owner], self.owner,
                    masked, Ragged.singletons(self.position), self.target, self.slot)


def _flat(lists, count: int) -> np.ndarray:
    return np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=count)
