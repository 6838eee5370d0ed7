"""Running many model inputs in batches under a token budget.

Rows (one model input each: a sentence, or one masked copy of it) are sorted longest first and
cut into batches of at most `batch_tokens` padded tokens, so that a batch too big for the device
fails at once rather than near the end. On CUDA out-of-memory the batch is halved and retried,
and the budget for the remaining batches is halved too.

A row is padded to its own length rounded up to a multiple of LENGTH_STEP, and a batch holds only
rows of one such padded length: the padded length changes a row's float results in their last
bits (attention over more masked positions), the number of rows does not, so a row's values do
not depend on the other rows of its batch, the budget, the block or the shard
(tests/test_scoring_invariance.py). That is what lets the score cache (cache.py) return, for an
item scored in another batch, the bits a cold run computes.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import torch

from spudflow.core.batching import pad_rows
from spudflow.core.logs import get_logger

log = get_logger(__name__)

# Rows are padded to a multiple of this many tokens (at most LENGTH_STEP - 1 pad tokens each).
LENGTH_STEP = 8


def padded_length(n_tokens: int) -> int:
    return -(-n_tokens // LENGTH_STEP) * LENGTH_STEP

# forward(input_ids (B, L), attention_mask (B, L), flat_positions (N,), targets (N,)) -> (N,)
# values for the gathered positions (flat position = row * L + column).
Forward = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass
class Row:
    owner: int                  # which sentence (index into the caller's list)
    input_ids: Sequence[int]    # shared with the other rows of the sentence
    masked: Sequence[int]       # positions replaced by the mask token in this row
    gather: Sequence[int]       # positions whose output is needed
    targets: Sequence[int]      # token id expected at each gathered position
    slots: Sequence[int]        # where each gathered value goes in the owner's result array


@dataclass
class BatchStats:
    batches: int = 0
    rows: int = 0
    padded_tokens: int = 0
    real_tokens: int = 0
    halvings: int = 0

    def since(self, earlier: BatchStats) -> BatchStats:
        return BatchStats(*(getattr(self, f.name) - getattr(earlier, f.name)
                            for f in dataclasses.fields(self)))

    def describe(self) -> str:
        if not self.batches:
            return "no batches"
        padding = 1 - self.real_tokens / max(self.padded_tokens, 1)
        return (f"{self.batches} batches, {self.rows / self.batches:.1f} rows and "
                f"{self.padded_tokens / self.batches:.0f} padded tokens per batch, "
                f"{padding:.1%} padding, {self.halvings} out-of-memory halvings")


class BatchRunner:
    def __init__(self, forward: Forward, *, pad_id: int, mask_id: int | None,
                 device: torch.device, batch_tokens: int):
        self.forward = forward
        self.pad_id = pad_id
        self.mask_id = mask_id
        self.device = device
        self.batch_tokens = batch_tokens
        self.stats = BatchStats()

    def run(self, rows: list[Row], results: list[np.ndarray], bar=None) -> None:
        """Fill results[row.owner][row.slots] with each row's values; `bar` counts items
        (owners) whose rows are all done."""
        lengths = np.fromiter((len(row.input_ids) for row in rows), dtype=np.int64,
                              count=len(rows))
        order = np.argsort(-lengths, kind="stable").tolist()  # longest first, ties in order
        # One flat array of every result, written a batch at a time, copied back at the end.
        offsets = np.cumsum([0] + [len(r) for r in results])
        flat = np.concatenate(results) if results else np.empty(0)
        remaining = Counter(row.owner for row in rows)
        start = 0
        while start < len(order):
            batch = self._next_batch(rows, order, start)
            self._run_halving(batch, flat, offsets)
            finished = 0
            for row in batch:
                remaining[row.owner] -= 1
                finished += remaining[row.owner] == 0
            if bar is not None and finished:
                bar.update(finished)
            start += len(batch)
        for i, result in enumerate(results):
            result[:] = flat[offsets[i]:offsets[i + 1]]

    def _next_batch(self, rows: list[Row], order: list[int], start: int) -> list[Row]:
        """Rows from order[start:] (longest first) of the first row's padded length, as many
        as the budget allows."""
        length = padded_length(len(rows[order[start]].input_ids))
        size = max(1, self.batch_tokens // length)
        batch = []
        for i in order[start:start + size]:
            if padded_length(len(rows[i].input_ids)) != length:
                break
            batch.append(rows[i])
        return batch

    def _run_halving(self, batch: list[Row], flat: np.ndarray, offsets: np.ndarray) -> None:
        try:
            values = self._forward(batch)
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise
            torch.cuda.empty_cache()
            longest = padded_length(len(batch[0].input_ids))
            self.batch_tokens = max(longest, len(batch) * longest // 2)
            self.stats.halvings += 1
            log.warning("CUDA out of memory on %d rows x %d tokens: halving the batch; token "
                        "budget now %d", len(batch), longest, self.batch_tokens)
            half = len(batch) // 2
            self._run_halving(batch[:half], flat, offsets)
            self._run_halving(batch[half:], flat, offsets)
            return
        counts = _counts(row.gather for row in batch)
        owners = np.repeat(np.fromiter((row.owner for row in batch), dtype=np.int64,
                                       count=len(batch)), counts)
        flat[offsets[owners] + _joined((row.slots for row in batch), counts)] = values

    def _forward(self, batch: list[Row]) -> np.ndarray:
        ids, attention = pad_rows([row.input_ids for row in batch], self.pad_id,
                                  padded_length(len(batch[0].input_ids)))
        longest = ids.shape[1]
        row_numbers = np.arange(len(batch))
        masked = _counts(row.masked for row in batch)
        if masked.any():
            ids.numpy()[np.repeat(row_numbers, masked),
                        _joined((row.masked for row in batch), masked)] = self.mask_id
        gathered = _counts(row.gather for row in batch)
        flat = (np.repeat(row_numbers * longest, gathered)
                + _joined((row.gather for row in batch), gathered))
        targets = _joined((row.targets for row in batch), gathered)
        self.stats.batches += 1
        self.stats.rows += len(batch)
        self.stats.padded_tokens += ids.numel()
        self.stats.real_tokens += int(attention.sum())
        device = self.device
        with torch.inference_mode():
            values = self.forward(ids.to(device), attention.to(device),
                                  torch.from_numpy(flat).to(device),
                                  torch.from_numpy(targets).to(device))
        return values.double().cpu().numpy()


def _counts(parts) -> np.ndarray:
    """How many entries each of `parts` (sequences) has."""
    return np.fromiter(map(len, parts), dtype=np.int64)


def _joined(parts, counts: np.ndarray) -> np.ndarray:
    """`parts` (sequences of ints) end to end, as one int64 array of counts.sum() entries."""
    return np.fromiter(chain.from_iterable(parts), dtype=np.int64, count=int(counts.sum()))
