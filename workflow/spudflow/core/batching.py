"""Batches of token sequences: right padding, and seeded length-bucketed batch orders for
training (shared by the control models and the probes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int,
             length: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention_mask) of int64 rows right-padded with pad_id to the longest row, or to
    `length` when that is longer."""
    tensors = [torch.as_tensor(row, dtype=torch.long) for row in rows]
    ids = pad_sequence(tensors, batch_first=True, padding_value=pad_id)
    attention = pad_sequence([torch.ones(len(t), dtype=torch.long) for t in tensors],
                             batch_first=True, padding_value=0)
    extra = length - ids.shape[1]
    if extra > 0:
        ids = torch.nn.functional.pad(ids, (0, extra), value=pad_id)
        attention = torch.nn.functional.pad(attention, (0, extra), value=0)
    return ids, attention


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
