"""Attachment scores, micro-averaged over words: UAS, LAS, RelAcc (label right, head regardless)
and root accuracy (fraction of sentences whose predicted root is the gold root)."""

from __future__ import annotations

import numpy as np


def attachment_scores(gold_heads: list[np.ndarray], gold_labels: list[list[str]],
                      pred_heads: list[np.ndarray], pred_labels: list[list[str]],
                      counted: list[np.ndarray] | None = None) -> dict[str, float | int]:
    """`counted`: per sentence, which words count (e.g. punctuation excluded); all by default."""
    heads_right = labels_right = both_right = words = roots_right = 0
    for i, (gh, gl, ph, pl) in enumerate(zip(gold_heads, gold_labels, pred_heads, pred_labels,
                                             strict=True)):
        keep = np.ones(len(gh), dtype=bool) if counted is None else counted[i]
        head_ok = (np.asarray(gh) == np.asarray(ph)) & keep
        label_ok = (np.asarray(gl, dtype=object) == np.asarray(pl, dtype=object)) & keep
        heads_right += int(head_ok.sum())
        labels_right += int(label_ok.sum())
        both_right += int((head_ok & label_ok).sum())
        words += int(keep.sum())
        roots_right += int(np.array_equal(np.asarray(gh) == 0, np.asarray(ph) == 0))
    n = max(words, 1)
    return {"uas": heads_right / n, "las": both_right / n, "relacc": labels_right / n,
            "root_acc": roots_right / max(len(gold_heads), 1), "n_words": words,
            "n_sentences": len(gold_heads)}


def sentence_counts(gold_heads: list[np.ndarray], gold_labels: list[list[str]],
                    pred_heads: list[np.ndarray], pred_labels: list[list[str]],
                    counted: list[np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """attachment_scores's counts per sentence (summed, they give its scores): words counted,
    right heads, right labels, both, and whether the predicted root is the gold one."""
    columns: dict[str, list] = {"n_words": [], "n_uas": [], "n_relacc": [], "n_las": [],
                                "root_right": []}
    for i, (gh, gl, ph, pl) in enumerate(zip(gold_heads, gold_labels, pred_heads, pred_labels,
                                             strict=True)):
        keep = np.ones(len(gh), dtype=bool) if counted is None else counted[i]
        head_ok = (np.asarray(gh) == np.asarray(ph)) & keep
        label_ok = (np.asarray(gl, dtype=object) == np.asarray(pl, dtype=object)) & keep
        columns["n_words"].append(int(keep.sum()))
        columns["n_uas"].append(int(head_ok.sum()))
        columns["n_relacc"].append(int(label_ok.sum()))
        columns["n_las"].append(int((head_ok & label_ok).sum()))
        columns["root_right"].append(bool(np.array_equal(np.asarray(gh) == 0,
                                                         np.asarray(ph) == 0)))
    return {k: np.asarray(v, dtype=bool if k == "root_right" else np.int64)
            for k, v in columns.items()}
