"""Running many model inputs (rows.py) in batches under a token budget.

Rows are sorted longest first and cut into batches of at most `batch_tokens` padded tokens, so
that a batch too big for the device fails at once rather than near the end. On CUDA
out-of-memory the batch is halved and retried, and the budget for the remaining batches is
halved too.

A row is padded to its own length rounded up to a multiple of LENGTH_STEP, and a batch holds only
rows of one such padded length: the padded length changes a row's float results in their last
bits (attention over more masked positions), the number of rows does not, so a row's values do
not depend on the other rows of its batch, the budget, the block or the shard
(tests/test_scoring_invariance.py). That is what lets the score cache (cache.py) return, for an
item scored in another batch, the bits a cold run computes.

On a GPU (BatchPolicy.for_device) the host keeps ahead of the device: a thread builds the next
batches into pinned memory while the device runs the current one, the copies do not wait, and
the values stay on the device until the whole call is done (one copy back, not a synchronising
copy per batch). SDPA is kept off cuDNN's attention, which builds a plan for every new input
shape: a job meets about two shapes per padded length (a full batch and the rest), 12 to 22 for
EWT test. `same_shape` fills the last batch of a length up with copies of its last row (values
dropped), one shape per length, at a price in padding measured on EWT test with 16,384-token
batches: masked PPPL 12% -> 24% padding, causal PPL 21% -> 85% (few rows per length).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from spudflow.core.gpu_feed import attention_backends, prefetched, square_mask
from spudflow.core.logs import get_logger
from spudflow.scoring.rows import Rows

log = get_logger(__name__)

# Rows are padded to a multiple of this many tokens (at most LENGTH_STEP - 1 pad tokens each).
LENGTH_STEP = 8


def padded_length(n_tokens):
    """n_tokens (an int or an array) rounded up to a multiple of LENGTH_STEP."""
    return -(-n_tokens // LENGTH_STEP) * LENGTH_STEP


# forward(input_ids (B, L), attention_mask (B, L), flat_positions (N,), targets (N,)) -> (N,)
# values for the gathered positions (flat position = row * L + column).
Forward = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]

@dataclass(frozen=True)
class BatchPolicy:
    """How batches are shaped and run. None of it changes a score on the CPU (rows are
    independent there); on a GPU the last bits of a value follow the kernels, and so the
    shapes and the attention backend."""

    same_shape: bool = False   # fill a padded length's last batch up to its full row count
    attention: str = "auto"    # SDPA backends allowed (core/gpu_feed.py ATTENTION_BACKENDS)
    prefetch: int = 0          # batches a host thread prepares ahead (0: none)
    pinned: bool = False       # host batches in page-locked memory, copied without waiting
    compile: bool = False      # torch.compile the base model (a compilation per shape)
    # a padded batch's mask as SDPA's (B, 1, L, L) one and an unpadded batch's as none, so that
    # transformers does not sync with the device per batch to look for padding (models whose
    # attention is SDPA only: gpu_feed.square_mask)
    square_mask: bool = False

    @staticmethod
    def for_device(device: torch.device, sdpa: bool = True) -> BatchPolicy:
        if device.type == "cuda":
            return BatchPolicy(attention="flash", prefetch=2, pinned=True, square_mask=sdpa)
        return BatchPolicy()


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


@dataclass
class HostBatch:
    """One batch as the model takes it, built on the host."""

    rows: np.ndarray          # which rows (their ids, before any filler rows)
    length: int               # padded length
    size: int                 # rows in the batch, filler rows included
    tensors: tuple[torch.Tensor, ...]  # input_ids, attention_mask, flat_positions, targets
    destinations: np.ndarray  # per gathered value: its index in the flat result array
    real_tokens: int
    padded: bool = True       # some row has pad tokens


class BatchRunner:
    def __init__(self, forward: Forward, *, pad_id: int, mask_id: int | None,
                 device: torch.device, batch_tokens: int, policy: BatchPolicy | None = None,
                 causal: bool = False):
        self.forward = forward
        self.causal = causal  # the model attends only to earlier positions (its square mask)
        self.pad_id = pad_id
        self.mask_id = mask_id
        self.device = device
        self.batch_tokens = batch_tokens
        self.policy = policy or BatchPolicy.for_device(device)
        self.stats = BatchStats()

    def run(self, rows: Rows, sizes: list[int], bar=None) -> list[np.ndarray]:
        """Per sentence, an array of `sizes[s]` values (NaN where no row gathers one): each
        row's gathered values at its slots of its owner's array. `bar` counts sentences whose
        rows are all done. The arrays are views of one array."""
        offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
        flat = np.full(int(offsets[-1]), np.nan)
        remaining = np.bincount(rows.owner, minlength=len(sizes))
        order = np.argsort(-rows.lengths, kind="stable")  # longest first, ties in order
        padded = padded_length(rows.lengths)
        # every token a row can read, then pad ids for a filler row's reach past the end
        tokens = np.concatenate([rows.tokens, np.full(int(padded.max(initial=0)), self.pad_id)])
        values, destinations = [], []
        done = 0
        while done < len(order):
            plan = self._plan(order[done:], padded)
            batches = prefetched((self._host_batch(rows, tokens, b, padded, offsets)
                                  for b in plan), self.policy.prefetch)
            with contextlib.closing(batches):
                for batch in batches:
                    halved = self._run_batch(rows, tokens, batch, padded, offsets, values,
                                             destinations)
                    done += len(batch.rows)
                    if bar is not None:
                        owners, counts = np.unique(rows.owner[batch.rows], return_counts=True)
                        remaining[owners] -= counts
                        if finished := int((remaining[owners] == 0).sum()):
                            bar.update(finished)
                    if halved:
                        break  # plan the rest under the halved budget
        if values:  # one copy back for the whole call
            flat[np.concatenate(destinations)] = torch.cat(values).double().cpu().numpy()
        bounds = offsets.tolist()
        return [flat[bounds[i]:bounds[i + 1]] for i in range(len(sizes))]

    def _plan(self, order: np.ndarray, padded: np.ndarray) -> list[np.ndarray]:
        """`order` (longest first) cut into runs of one padded length, each into batches of as
        many rows as the budget allows at that length."""
        cuts = np.flatnonzero(np.diff(padded[order])) + 1
        batches = []
        for group in np.split(order, cuts):
            size = self._rows_per_batch(int(padded[group[0]]))
            batches += [group[i:i + size] for i in range(0, len(group), size)]
        return batches

    def _rows_per_batch(self, length: int) -> int:
        return max(1, self.batch_tokens // length)

    def _host_batch(self, rows: Rows, tokens: np.ndarray, batch: np.ndarray, padded: np.ndarray,
                    offsets: np.ndarray, fill: bool | None = None) -> HostBatch:
        length = int(padded[batch[0]])
        picked = batch
        if self.policy.same_shape if fill is None else fill:
            extra = self._rows_per_batch(length) - len(batch)
            if extra > 0:  # copies of the last row: the same input, nothing gathered
                picked = np.concatenate([batch, np.repeat(batch[-1:], extra)])
        columns = np.arange(length)
        attention = columns < rows.lengths[picked][:, None]
        ids = tokens[rows.starts[picked][:, None] + columns]
        ids[~attention] = self.pad_id
        where, counts = rows.masked.take(picked)
        if len(where):
            ids[np.repeat(np.arange(len(picked)), counts), rows.masked.values[where]] = \
                self.mask_id
        where, counts = rows.gather.take(batch)
        flat_positions = (np.repeat(np.arange(len(batch)) * length, counts)
                          + rows.gather.values[where])
        destinations = offsets[np.repeat(rows.owner[batch], counts)] + rows.slots[where]
        tensors = tuple(torch.from_numpy(a) for a in (
            ids, attention.astype(np.int64), flat_positions, rows.targets[where]))
        if self.policy.pinned:
            tensors = tuple(t.pin_memory() for t in tensors)
        return HostBatch(batch, length, len(picked), tensors, destinations,
                         int(rows.lengths[batch].sum()), not bool(attention.all()))

    def _launch(self, batch: HostBatch) -> torch.Tensor:
        """The batch's values, left on the device (the kernels may still be running)."""
        inputs = [t.to(self.device, non_blocking=self.policy.pinned) for t in batch.tensors]
        if self.policy.square_mask:
            inputs[1] = square_mask(inputs[1], self.causal) if batch.padded else None
        with torch.inference_mode(), attention_backends(self.policy.attention, self.device):
            values = self.forward(*inputs)
        self.stats.batches += 1
        self.stats.rows += len(batch.rows)
        self.stats.padded_tokens += batch.size * batch.length
        self.stats.real_tokens += batch.real_tokens
        return values

    def _run_batch(self, rows: Rows, tokens: np.ndarray, batch: HostBatch, padded: np.ndarray,
                   offsets: np.ndarray, values: list, destinations: list) -> bool:
        """Launch `batch`, appending its values and destinations; one that does not fit runs in
        halves. Whether the budget was halved."""
        try:
            values.append(self._launch(batch))
            destinations.append(batch.destinations)
            return False
        except torch.cuda.OutOfMemoryError as error:
            self._halve(rows, tokens, batch, padded, offsets, values, destinations, error)
            return True

    def _halve(self, rows: Rows, tokens: np.ndarray, batch: HostBatch, padded: np.ndarray,
               offsets: np.ndarray, values: list, destinations: list,
               error: torch.cuda.OutOfMemoryError) -> None:
        """Run `batch`, which did not fit, in halves (recursively), without filler rows, and
        halve the budget."""
        if len(batch.rows) == 1:
            raise error
        torch.cuda.empty_cache()
        self.batch_tokens = max(batch.length, len(batch.rows) * batch.length // 2)
        self.stats.halvings += 1
        log.warning("CUDA out of memory on %d rows x %d tokens: halving the batch; token "
                    "budget now %d", len(batch.rows), batch.length, self.batch_tokens)
        half = len(batch.rows) // 2
        for part in (batch.rows[:half], batch.rows[half:]):
            smaller = self._host_batch(rows, tokens, part, padded, offsets, fill=False)
            self._run_batch(rows, tokens, smaller, padded, offsets, values, destinations)

