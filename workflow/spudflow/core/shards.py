"""Shards of a scatter/gather job: `--shard I/N` (1-based, as the rules' `I-of-N` outputs) is a
contiguous range of whole blocks, the resumable or batching units inside a job, so that the
shards together compute exactly what the unsharded job does. Used by scoring and probe."""

from __future__ import annotations

import re
from dataclasses import dataclass

from spudflow.core.errors import InputError


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


WHOLE = Shard(1, 1)


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 <= I <= N; an InputError naming `--shard` otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise InputError("--shard", None, f"must be I/N with 1 <= I <= N, not {text!r}")
    return Shard(int(match[1]), int(match[2]))


def shard_range(n_units: int, shard: Shard, block_size: int) -> tuple[int, int]:
    """[start, stop) of the shard's units: the blocks of `block_size` units are dealt out in
    order, each shard getting floor or ceil of blocks / N of them (the last ones may get none
    when there are fewer blocks than shards)."""
    blocks = -(-n_units // block_size)
    first = (shard.index - 1) * blocks // shard.count
    last = shard.index * blocks // shard.count
    return min(first * block_size, n_units), min(last * block_size, n_units)
