"""UAS, LAS, RelAcc and root accuracy on hand-made predictions."""

from __future__ import annotations

import numpy as np
import pytest

from spudflow.probe.metrics import attachment_scores

GOLD_HEADS = [np.array([2, 0, 2, 3]), np.array([0, 1])]
GOLD_LABELS = [["nsubj", "root", "obj", "punct"], ["root", "punct"]]


def test_known_scores():
    # Sentence 1: heads right on words 1, 2, 4; labels right on 1, 2, 3; both on 1, 2.
    # Sentence 2: root wrong (word 2 predicted as root), label right on word 1 only.
    pred_heads = [np.array([2, 0, 1, 3]), np.array([2, 0])]
    pred_labels = [["nsubj", "root", "obj", "obj"], ["root", "root"]]
    scores = attachment_scores(GOLD_HEADS, GOLD_LABELS, pred_heads, pred_labels)
    assert scores["n_words"] == 6 and scores["n_sentences"] == 2
    assert scores["uas"] == pytest.approx(3 / 6)
    assert scores["las"] == pytest.approx(2 / 6)
    assert scores["relacc"] == pytest.approx(4 / 6)
    assert scores["root_acc"] == pytest.approx(1 / 2)


def test_perfect_predictions_and_excluded_words():
    perfect = attachment_scores(GOLD_HEADS, GOLD_LABELS, GOLD_HEADS, GOLD_LABELS)
    assert perfect["uas"] == perfect["las"] == perfect["relacc"] == perfect["root_acc"] == 1.0
    # Leaving out the punctuation words: only they were wrong.
    pred_heads = [np.array([2, 0, 2, 1]), np.array([0, 0])]
    pred_labels = [["nsubj", "root", "obj", "obj"], ["root", "obj"]]
    counted = [np.array([True, True, True, False]), np.array([True, False])]
    scores = attachment_scores(GOLD_HEADS, GOLD_LABELS, pred_heads, pred_labels, counted)
    assert scores["n_words"] == 4
    assert scores["uas"] == scores["las"] == scores["relacc"] == 1.0
