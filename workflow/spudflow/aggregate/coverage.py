"""What a scoring function's figures can show: how many of the words it scored its model never saw
in training, and how many of its pairs it cannot tell apart.

- `unseen_fraction`: Σ n_unseen / Σ n_words over the score rows a table row rests on (item_scores:
  n_unseen counts the row's words the n-gram model has no symbol for, scored as <unk> or their
  signature). Null for models without a training vocabulary of words (transformers: n_unseen
  null; their subwords spell every word) and where no word was scored.
- `tie_fraction`: the fraction of the row's pairs whose two scores are equal: the scoring
  function cannot tell the sentences apart (a tie counts as wrong in an accuracy and as 1/2 in an
  AUC).

A word n-gram model trained on a few thousand sentences has never seen most content words, and
two sentences that differ only in words it never saw get the same score: its figures then say
more about its training text than about syntax. Where either fraction is above MOSTLY, or where the
headline median is itself a tie, the front page adds a note.
"""

from __future__ import annotations

import numpy as np
import polars as pl

MOSTLY = 0.5


def unseen_fraction(unseen: str = "n_unseen", words: str = "n_words") -> pl.Expr:
    """Aggregation: Σ unseen / Σ words of the group; null when a row has no `unseen` count (a
    transformer's) or no word was scored."""
    total = pl.col(words).sum()
    return (pl.when(pl.col(unseen).is_null().any() | (total == 0)).then(None)
            .otherwise(pl.col(unseen).sum() / total)).cast(pl.Float64)


def tied_pairs(labels: np.ndarray, scores: np.ndarray) -> tuple[int, int]:
    """(pairs of a positive and a negative item, those with equal scores): the pairs a ROC AUC
    or a threshold compares."""
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, dtype=float)
    positive, negative = scores[labels], scores[~labels]
    values, counts = np.unique(negative, return_counts=True)
    negatives_at = dict(zip(values.tolist(), counts.tolist(), strict=True))
    tied = sum(negatives_at.get(v, 0) for v in positive.tolist())
    return int(len(positive) * len(negative)), int(tied)


def note(what: str, tied: float | None, unseen: float | None,
         median_tied: bool = False) -> str | None:
    """The front page's line for a scoring function that decides mostly by ties or unseen words,
    or whose headline median is itself a tie (a SPUD median ratio of exactly 1: the tied pairs
    sit in the middle of the ratios); None for one that does not. TIED and UNSEEN are the
    row's tie_fraction and unseen_fraction."""
    by_ties = tied is not None and tied > MOSTLY
    by_unseen = unseen is not None and unseen > MOSTLY
    if not (by_ties or by_unseen or median_tied):
        return None
    facts = []
    if tied is not None:
        facts.append(f"{tied:.0%} of its pairs tied")
    if unseen is not None:
        facts.append(f"{unseen:.0%} of the words it scored never seen in training")
    reasons = []
    if by_ties or by_unseen:
        mostly = " and ".join(r for r, on in (("ties", by_ties), ("unseen words", by_unseen))
                              if on)
        reasons.append(f"it decides mostly by {mostly}")
    if median_tied:
        reasons.append("its median is one of the tied pairs")
    return (f"{what}: {', '.join(facts)}; {' and '.join(reasons)}, so its figure says little "
            "about what the model knows of syntax.")
