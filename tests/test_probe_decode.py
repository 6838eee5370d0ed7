"""DepProbe decoding: gold distances and gold labels rebuild the gold tree exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from spudflow.probe.data import tree_distances
from spudflow.probe.decode import decode, decode_heads
from spudflow.probe.labels import ROOT, UD_RELATIONS

LABELS = sorted(UD_RELATIONS)
ROOT_INDEX = LABELS.index(ROOT)

# SPUD paper App. F.2: "why does my snake refuse to eat ?"
SNAKE_WORDS = ["why", "does", "my", "snake", "refuse", "to", "eat", "?"]
SNAKE_HEADS = np.array([5, 5, 4, 5, 0, 7, 5, 5])
SNAKE_DEPRELS = ["advmod", "aux", "nmod", "nsubj", "root", "mark", "xcomp", "punct"]


def gold_scores(deprels: list[str]) -> np.ndarray:
    """Log-probabilities that put all mass on the gold label."""
    scores = np.full((len(deprels), len(LABELS)), -30.0)
    for i, deprel in enumerate(deprels):
        scores[i, LABELS.index(deprel)] = 0.0
    return scores


def random_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """Heads of a uniformly shuffled random tree: each word attaches to an earlier one in a
    random order, the first being the root."""
    order = rng.permutation(n)
    heads = np.zeros(n, dtype=np.int64)
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(0, k)] + 1
    return heads


def test_tree_distances_of_the_snake_sentence():
    d = tree_distances(SNAKE_HEADS)
    assert d[4, 4] == 0
    assert d[2, 3] == 1 and d[2, 4] == 2 and d[2, 6] == 3  # my-snake-refuse-eat
    assert (d == d.T).all()


@pytest.mark.parametrize("n", [1, 2, 5, 30])
def test_tree_distances_equal_scipy_shortest_paths(n):
    rng = np.random.default_rng(n)
    for _ in range(10):
        heads = random_tree(rng, n)
        children = np.flatnonzero(heads > 0)
        edges = csr_matrix((np.ones(len(children)), (children, heads[children] - 1)),
                           shape=(n, n))
        expected = shortest_path(edges, directed=False, unweighted=True)
        assert np.array_equal(tree_distances(heads), expected)


def test_gold_distances_and_labels_rebuild_the_snake_tree():
    heads, labels = decode(tree_distances(SNAKE_HEADS), gold_scores(SNAKE_DEPRELS), ROOT_INDEX)
    assert heads.tolist() == SNAKE_HEADS.tolist()
    assert [LABELS[k] for k in labels] == SNAKE_DEPRELS


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 60])
def test_gold_distances_rebuild_random_trees(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        heads = random_tree(rng, n)
        root = int(np.flatnonzero(heads == 0)[0])
        assert decode_heads(tree_distances(heads), root).tolist() == heads.tolist()


def test_root_is_the_most_probable_root_and_others_never_get_root():
    scores = np.log(np.full((3, len(LABELS)), 1.0 / len(LABELS)))
    scores[1, ROOT_INDEX] = 0.0           # word 2 is the root
    scores[0, ROOT_INDEX] = -0.1          # word 1 likes `root` best, but is not the root
    distances = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)
    heads, labels = decode(distances, scores, ROOT_INDEX)
    assert heads.tolist() == [2, 0, 2]
    assert labels[1] == ROOT_INDEX and ROOT_INDEX not in (labels[0], labels[2])
