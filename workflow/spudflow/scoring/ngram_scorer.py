"""The n-gram model behind the scorer interface: words are its tokens."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spudflow.scoring.encoding import EncodedItem, aligned
from spudflow.scoring.items import Item
from spudflow.scoring.ngram import NgramModel


class NgramScorer:
    kind = "ngram"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.model = NgramModel.load(self.path)

    def describe(self) -> str:
        s = self.model.settings()
        return (f"word {s['order']}-gram model {self.path} (lang {s['lang']}, k {s['k']}, "
                f"discount {s['discount']}, {len(self.model.vocab)} symbols)")

    def encode(self, items: Sequence[Item]) -> list[EncodedItem]:
        encoded = []
        for item in items:
            n = len(item.words)
            offsets = list(zip(item.word_starts, item.word_ends, strict=True))
            encoded.append(aligned(item, list(range(n)), list(range(n)), list(item.words),
                                   offsets, max_length=None))
        return encoded

    def score(self, encoded: Sequence[EncodedItem], method: str,
              targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
        results = []
        for sentence, wanted in zip(encoded, targets, strict=True):
            words = sentence.item.words
            results.append(np.array(
                [self.model.logprob(method, self.model.history(words, i), words[i])
                 for i in wanted], dtype=np.float64))
            if bar is not None and wanted:
                bar.update(1)
        return results
