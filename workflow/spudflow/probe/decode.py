"""Trees from predicted distances and labels (DepProbe's decoding, SPUD paper App. F.2).

The root is the word with the highest log-probability of `root`; then, repeatedly, the uncovered
word with the smallest predicted distance to any covered word is attached to that covered word
(Prim's algorithm grown from the root; ties go to the lower word index). Every other word gets its
most probable label other than `root`.
"""

from __future__ import annotations

import numpy as np


def decode_heads(distances: np.ndarray, root: int) -> np.ndarray:
    """1-based heads (0 for the root) of an (n, n) distance matrix grown from `root` (0-based)."""
    n = distances.shape[0]
    heads = np.zeros(n, dtype=np.int64)
    covered = np.zeros(n, dtype=bool)
    covered[root] = True
    best = distances[root].astype(np.float64).copy()
    best_head = np.full(n, root)
    for _ in range(n - 1):
        candidates = np.where(covered, np.inf, best)
        word = int(np.argmin(candidates))
        heads[word] = best_head[word] + 1
        covered[word] = True
        closer = distances[word] < best
        best = np.where(closer, distances[word], best)
        best_head = np.where(closer, word, best_head)
    return heads


def decode(distances: np.ndarray, label_scores: np.ndarray, root_label: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """(1-based heads, label indices) of one sentence; label_scores: (n, labels) log-probs or
    logits."""
    root = int(np.argmax(label_scores[:, root_label]))
    heads = decode_heads(distances, root)
    others = label_scores.copy()
    others[:, root_label] = -np.inf
    labels = np.argmax(others, axis=1)
    labels[root] = root_label
    return heads, labels
