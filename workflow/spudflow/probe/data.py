"""Probe data: the features of one split joined with its gold trees, and padded batches.

Words live in flat tensors (n_words, d); a batch gathers its sentences' rows into (batch, words,
d) with one index tensor, so training runs on padded tensors without per-word Python loops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from spudflow.core.batching import pad_rows
from spudflow.core.errors import InputError
from spudflow.core.sampling import sample_indices
from spudflow.probe.feature_file import Features, FileCap, cap_of, read_features
from spudflow.probe.labels import label_of
from spudflow.probe.loss import IGNORE
from spudflow.probe.words import SentenceWords, read_words


def tree_distances(heads: np.ndarray) -> np.ndarray:
    """Path lengths between all words of a tree given 1-based heads (0 = root).

    With A[i, k] = 1 when k is i or one of its ancestors, (A Aᵀ)[i, j] counts the common
    ancestors-or-self of i and j (depth of their lowest common ancestor + 1), so
    distance = depth(i) + depth(j) − 2 depth(lca). Matrix products instead of a graph search:
    scipy's shortest_path costs ~1 ms per sentence in call overhead alone (checked against it in
    tests/test_probe_decode.py)."""
    n = len(heads)
    parent = np.where(heads > 0, heads - 1, np.arange(n))  # the root is its own parent
    ancestors = np.eye(n, dtype=np.int64)
    current = np.arange(n)
    for _ in range(n):
        current = parent[current]
        if ancestors[np.arange(n), current].all():
            break
        ancestors[np.arange(n), current] = 1
    common = ancestors @ ancestors.T
    depth = np.diag(common)
    return (depth[:, None] + depth[None, :] - 2 * common).astype(np.float32)


@dataclass
class ProbeSet:
    """One split ready for the probe; sentences filtered out are counted, not kept."""

    name: str
    words: SentenceWords        # only the kept sentences
    dist: torch.Tensor          # (n_words + 1, d) float16; the last row is zero padding
    label: torch.Tensor
    offsets: np.ndarray         # (n_sentences + 1,)
    lengths: np.ndarray
    n_too_long: int
    n_short: int
    # per sentence, computed once: gold distances, gold label indices
    trees: dict[int, np.ndarray] = field(default_factory=dict)
    gold_labels: dict[int, np.ndarray] = field(default_factory=dict)
    # the file's sentences are the probe's sample already (probe features --max-sentences)
    cap: FileCap | None = None

    def tree(self, i: int) -> np.ndarray:
        if i not in self.trees:
            self.trees[i] = tree_distances(self.words.heads[i])
        return self.trees[i]

    def labels(self, i: int, label_index: dict[str, int], subtypes: bool) -> np.ndarray:
        if i not in self.gold_labels:
            self.gold_labels[i] = np.array([label_index.get(label_of(d, subtypes), IGNORE)
                                            for d in self.words.deprels[i]], dtype=np.int64)
        return self.gold_labels[i]

    def __len__(self) -> int:
        return len(self.lengths)


def load_set(name: str, features_path: Path, treebank_dir: Path, dist_layer: int,
             label_layer: int, min_words: int, too_long: frozenset[int] = frozenset()
             ) -> ProbeSet:
    """Features and gold trees of one split; sentences with fewer than `min_words` words, those
    the feature file left out as too long and those of TOO_LONG (too long in another version of
    the same sentences) are dropped (and counted)."""
    features = read_features(features_path, sorted({dist_layer, label_layer}))
    return features_set(name, features, features_path, treebank_dir, dist_layer, label_layer,
                        min_words, too_long)


def features_set(name: str, features: Features, features_path: Path | str, treebank_dir: Path,
                 dist_layer: int, label_layer: int, min_words: int,
                 too_long: frozenset[int] = frozenset()) -> ProbeSet:
    """load_set of features read from a file or extracted in memory (`features_path` names
    their source in messages)."""
    too_long = too_long | set(features.too_long)
    file_cap = cap_of(features, features_path)
    if file_cap is not None and file_cap.min_words != min_words:
        raise InputError(features_path, None, f"holds a sample of the sentences with "
                         f"{file_cap.min_words} words or more, not {min_words} (--min-words)")
    words = read_words(treebank_dir, need_trees=True)
    position = {int(s): i for i, s in enumerate(words.sent_index)}
    kept, rows = [], []
    n_short = 0
    for k, sent in enumerate(features.sent_index.tolist()):
        if sent in too_long:
            continue
        i = position.get(sent)
        n = int(features.word_offsets[k + 1] - features.word_offsets[k])
        if i is None or len(words.forms[i]) != n:
            raise InputError(features_path, None, f"sentence {sent} does not match "
                             f"{treebank_dir}: features made from another treebank?")
        if n < min_words:
            n_short += 1
            continue
        kept.append(i)
        rows.append(np.arange(features.word_offsets[k], features.word_offsets[k + 1]))
    rows_all = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)

    def flat(layer: int) -> torch.Tensor:
        # Kept as the file's float16 (batches are made float32, make_batch): a third of the
        # memory of a float32 copy, the same values. The kept rows go straight into place.
        values = features.layers[layer]
        kept_rows = np.zeros((len(rows_all) + 1, values.shape[1]), dtype=values.dtype)
        np.take(values, rows_all, axis=0, out=kept_rows[:-1])
        return torch.from_numpy(kept_rows)

    lengths = np.array([len(words.forms[i]) for i in kept], dtype=np.int64)
    dist = flat(dist_layer)
    label = dist if label_layer == dist_layer else flat(label_layer)
    if file_cap is not None:  # the short ones were counted, not written
        n_short += file_cap.n_short
    return ProbeSet(name, words.subset(kept), dist, label,
                    np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), lengths,
                    len(too_long), n_short, cap=file_cap)


def split_off(data: ProbeSet, fraction: float, seed: int) -> tuple[ProbeSet, ProbeSet]:
    """(rest, held out): a seeded random `fraction` of the sentences held out for selection."""
    order = np.random.default_rng(seed).permutation(len(data))
    n_held = max(1, round(fraction * len(data)))
    return subset(data, np.sort(order[n_held:])), subset(data, np.sort(order[:n_held]))


def capped(data: ProbeSet, n: int | None, seed: int) -> ProbeSet:
    """At most n sentences of the set: a seeded sample in set order (core/sampling.py), the
    counts of sentences filtered out kept; n None keeps all. A set whose file holds the sample
    already (`probe features --max-sentences`, its n and seed checked by the caller) is kept."""
    if data.cap is not None or n is None or n >= len(data):
        return data
    kept = subset(data, sample_indices(len(data), n, seed))
    kept.n_too_long, kept.n_short = data.n_too_long, data.n_short
    return kept


def subset(data: ProbeSet, picks: np.ndarray) -> ProbeSet:
    rows = np.concatenate([np.arange(data.offsets[i], data.offsets[i + 1]) for i in picks])
    rows = torch.from_numpy(np.append(rows, len(data.dist) - 1))  # keep the padding row last
    lengths = data.lengths[picks]
    dist = data.dist[rows]
    label = dist if data.label is data.dist else data.label[rows]
    return ProbeSet(data.name, data.words.subset(picks), dist, label,
                    np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), lengths, 0, 0)


@dataclass
class Batch:
    sentences: np.ndarray       # positions in the set
    dist: torch.Tensor          # (b, n, d)
    label: torch.Tensor
    lengths: torch.Tensor
    gold_distances: torch.Tensor | None
    gold_labels: torch.Tensor | None


def make_batch(data: ProbeSet, picks: np.ndarray, label_index: dict[str, int] | None,
               subtypes: bool) -> Batch:
    """Padded tensors of the sentences `picks`; with label_index, also gold distances/labels."""
    lengths = data.lengths[picks]
    width = int(lengths.max())
    pad_row = len(data.dist) - 1
    index, _ = pad_rows([np.arange(data.offsets[i], data.offsets[i + 1]) for i in picks], pad_row)
    gold_d = gold_l = None
    if label_index is not None:
        distances = np.zeros((len(picks), width, width), dtype=np.float32)
        labels = np.full((len(picks), width), IGNORE, dtype=np.int64)
        for b, i in enumerate(picks):
            n = lengths[b]
            distances[b, :n, :n] = data.tree(i)
            labels[b, :n] = data.labels(i, label_index, subtypes)
        gold_d, gold_l = torch.from_numpy(distances), torch.from_numpy(labels)
    return Batch(picks, data.dist[index].float(), data.label[index].float(),
                 torch.from_numpy(lengths), gold_d, gold_l)
