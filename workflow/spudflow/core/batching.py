"""Batches of token sequences: right padding, and seeded length-bucketed batch orders for
training (shared by the control models and the probes)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
import torch


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int,
             length: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention_mask) of int64 rows right-padded with pad_id to the longest row, or to
    `length` when that is longer. Filled in one numpy step, not a tensor per row: a PPPL job
    pads millions of rows (one masked copy per token)."""
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    width = max(int(lengths.max(initial=0)), length)
    attention = np.arange(width) < lengths[:, None]
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    if len(rows):
        ids[attention] = (
            np.concatenate(rows) if isinstance(rows[0], np.ndarray)
            else np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum())))
    return torch.from_numpy(ids), torch.from_numpy(attention.astype(np.int64))


def length_bucketed_batches(lengths: Sequence[int] | np.ndarray, batch_size: int,
                            pool_batches: int, generator: torch.Generator) -> list[list[int]]:
    """One epoch's batches of indices: a seeded shuffle, cut into pools of `pool_batches`
    batches, each pool sorted by length (stably) and cut into batches of similar length (less
    padding), then the batches in a seeded order. Every draw comes from `generator`."""
    order = torch.randperm(len(lengths), generator=generator).tolist()
    pool_size = batch_size * pool_batches
    batches = []
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start:start + pool_size], key=lambda i: lengths[i])
        batches += [pool[i:i + batch_size] for i in range(0, len(pool), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
