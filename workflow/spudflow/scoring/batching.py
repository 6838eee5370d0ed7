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
        order = sorted(range(len(rows)), key=lambda i: (-len(rows[i].input_ids), i))
        remaining = Counter(row.owner for row in rows)
        start = 0
        while start < len(order):
            batch = self._next_batch(rows, order, start)
            self._run_halving(batch, results)
            finished = 0
            for row in batch:
                remaining[row.owner] -= 1
                finished += remaining[row.owner] == 0
            if bar is not None and finished:
                bar.update(finished)
            start += len(batch)

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

    def _run_halving(self, batch: list[Row], results: list[np.ndarray]) -> None:
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
            self._run_halving(batch[:half], results)
            self._run_halving(batch[half:], results)
            return
        position = 0
        for row in batch:
            n = len(row.gather)
            results[row.owner][list(row.slots)] = values[position:position + n]
            position += n

    def _forward(self, batch: list[Row]) -> np.ndarray:
        ids, attention = pad_rows([row.input_ids for row in batch], self.pad_id,
                                  padded_length(len(batch[0].input_ids)))
        longest = ids.shape[1]
        flat, targets = [], []
        for b, row in enumerate(batch):
            if row.masked:
                ids[b, list(row.masked)] = self.mask_id
            flat.extend(b * longest + p for p in row.gather)
            targets.extend(row.targets)
        self.stats.batches += 1
        self.stats.rows += len(batch)
        self.stats.padded_tokens += ids.numel()
        self.stats.real_tokens += int(attention.sum())
        device = self.device
        with torch.inference_mode():
            values = self.forward(ids.to(device), attention.to(device),
                                  torch.tensor(flat, dtype=torch.long, device=device),
                                  torch.tensor(targets, dtype=torch.long, device=device))
        return values.double().cpu().numpy()
