"""Seeded uniform samples: the one draw every stage uses to keep n of its groups (pairs' source
rows, scored items' groups, probe sentences, control training sentences)."""

from __future__ import annotations

import numpy as np


def sample_indices(total: int, n: int | None, seed: int) -> np.ndarray:
    """Indices of a seeded uniform sample of n out of `total` groups, in ascending order
    (numpy default_rng(seed).choice without replacement).

    n None (or n >= total) keeps everything. The sample depends only on (total, n, seed), so
    two datasets sampled with the same settings from the same population pick the same groups.
    """
    if n is None or n >= total:
        return np.arange(total)
    return np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))
