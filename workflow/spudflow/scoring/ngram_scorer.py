"""The n-gram model behind the scorer interface: words are its tokens.

With `sentence_end` (scoring `--measures lau`) each sentence also gets the token `</s>` after its
last word, of no word (word_index null, the empty span at the sentence's end): Lau et al. score
the end of the sentence, so their sums and minima include its term."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spudflow.scoring.encoding import EncodedItem, aligned
from spudflow.scoring.items import Item
from spudflow.scoring.methods import scoring_function
from spudflow.scoring.ngram import EOS, NgramModel


class NgramScorer:
    kind = "ngram"

    def __init__(self, path: str | Path, sentence_end: bool = False):
        self.path = Path(path)
        self.model = NgramModel.load(self.path)
        self.sentence_end = sentence_end

    def method_key(self, method: str) -> str:
        """What the score cache keys `method`'s scores under (`</s>` is in the setting)."""
        return method

    def describe(self) -> str:
        s = self.model.settings()
        return (f"word {s['order']}-gram model {self.path} (lang {s['lang']}, k {s['k']}, "
                f"discount {s['discount']}, Kneser-Ney {s['kneser_ney']}, unknown words "
                f"{s['unknown']}, lowercase {s['lowercase']}, {len(self.model.vocab)} symbols"
                f"{', </s> scored' if self.sentence_end else ''})")

    def encode(self, items: Sequence[Item]) -> list[EncodedItem]:
        encoded = []
        for item in items:
            n = len(item.words)
            offsets = list(zip(item.word_starts, item.word_ends, strict=True))
            sentence = aligned(item, list(range(n)), list(range(n)), list(item.words),
                               offsets, max_length=None)
            if self.sentence_end and n:
                end = len(item.sentence)
                sentence.input_ids.append(n)
                sentence.positions.append(n)
                sentence.tokens.append(EOS)
                sentence.char_starts.append(end)
                sentence.char_ends.append(end)
                sentence.anchors.append((end, end))
                sentence.word_index.append(None)
            encoded.append(sentence)
        return encoded

    def _word(self, sentence: EncodedItem, token: int) -> str:
        words = sentence.item.words
        return words[token] if token < len(words) else EOS

    def score(self, encoded: Sequence[EncodedItem], method: str,
              targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
        """`method`'s log probabilities (its entry's function, core/scoring_methods.py)."""
        return scoring_function(method)(self, encoded, targets, bar)

    def logprobs(self, encoded: Sequence[EncodedItem], method: str,
                 targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
        """The wanted words' log probabilities under the model's `method` (NgramModel.logprob)."""
        results = []
        for sentence, wanted in zip(encoded, targets, strict=True):
            words = sentence.item.words
            results.append(np.array(
                [self.model.logprob(method, self.model.history(words, i),
                                    self._word(sentence, i), end=i >= len(words))
                 for i in wanted], dtype=np.float64))
            if bar is not None and wanted:
                bar.update(1)
        return results

    def unseen(self, sentence: EncodedItem) -> list[bool]:
        """Per token: a word the model has no symbol of its own for (never seen in training, or
        fewer than min_count times), scored as <unk> or its signature. `</s>` is never unseen."""
        return [i < len(sentence.item.words) and not self.model.known(sentence.item.words[i])
                for i in range(sentence.n_tokens)]

    def order1_logprobs(self, sentence: EncodedItem, method: str) -> list[float]:
        """Per token: log P_1 of the method's own order-1 distribution (the unigram term of Lau
        et al.'s measures)."""
        return [self.model.order1_logprob(method, self._word(sentence, i),
                                          end=i >= len(sentence.item.words))
                for i in range(sentence.n_tokens)]

    def padded_length(self, sentence: EncodedItem) -> int:
        """Lau et al.'s `len(tokens)`, SLOR's denominator: the words with n-1 `<s>` before them
        and `</s>` after (LanguageModel.tokenize_sentence)."""
        return len(sentence.item.words) + self.model.order


def score_kn(scorer: NgramScorer, encoded: Sequence[EncodedItem],
             targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    return scorer.logprobs(encoded, "kn", targets, bar)


def score_addk(scorer: NgramScorer, encoded: Sequence[EncodedItem],
               targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    return scorer.logprobs(encoded, "addk", targets, bar)
