"""Masked LMs: `pppl` (Salazar et al. 2020: each token masked once), `pppl_l2r` (Kauf & Ivanova
2023: also mask the tokens to its right within the same word) and `unmasked` (each token's
probability given the whole, unmasked sentence).

pppl_l2r's words are, by default, the tokenizer's own (its pre-tokenizer's split of the
sentence, the fast tokenizer's `word_ids()`), as Kauf & Ivanova's code and minicons group the
tokens: BERT's pre-tokenizer splits `U.S.` into `U . S .`, so `U` is scored with only itself
masked. `l2r_words="items"` groups by the items' words instead (for SPUD, UD surface tokens).

For the pseudo-log-likelihoods every masked copy of every sentence is one row; rows of all
sentences are batched together by length, and the LM head runs only at the masked position of
each copy (heads.outputs_at).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from spudflow.core.errors import InputError
from spudflow.core.scoring_methods import uses_l2r_words
from spudflow.scoring.encoding import EncodedItem
from spudflow.scoring.heads import lm_forward
from spudflow.scoring.methods import L2R_WORDS
from spudflow.scoring.rows import Ragged, Wanted
from spudflow.scoring.transformer import TransformerScorer


def l2r_words_of(sentence: EncodedItem, words: str) -> list[int | None]:
    """Each scored token's word under pppl_l2r: the tokenizer's (`tokenizer`) or the item's
    (`items`, by character offsets)."""
    if words == "items":
        return sentence.word_index
    if words != "tokenizer":
        raise ValueError(f"no {words!r} words for pppl_l2r")
    if sentence.tokenizer_word_index is None:  # a slow tokenizer: its words are not guessed
        raise InputError("scoring.l2r_words", None,
                         "the model's tokenizer has no fast version, so no words of its own "
                         "(word_ids) for pppl_l2r: score it with l2r_words: items")
    return sentence.tokenizer_word_index


def l2r_masked_positions(sentence: EncodedItem, token: int, words: str = "tokenizer"
                         ) -> list[int]:
    """Positions masked when scoring `token` under pppl_l2r: itself and every later token of the
    same word (`words`: l2r_words_of; a token outside every word masks only itself)."""
    word_of = l2r_words_of(sentence, words)
    word = word_of[token]
    later = [] if word is None else [
        j for j in range(token + 1, sentence.n_tokens) if word_of[j] == word]
    return [sentence.positions[j] for j in (token, *later)]


class MaskedScorer(TransformerScorer):
    kind = "masked"

    def __init__(self, tokenizer, model, device, batch_tokens, l2r_words: str = "tokenizer"):
        if tokenizer.mask_token_id is None:
            raise InputError(getattr(tokenizer, "name_or_path", "model"), None,
                             "the tokenizer has no mask token")
        if l2r_words not in L2R_WORDS:
            raise InputError("--l2r-words", None,
                             f"unknown {l2r_words!r} (one of {', '.join(L2R_WORDS)})")
        super().__init__(tokenizer, model, device, batch_tokens)
        self.l2r_words = l2r_words

    def method_key(self, method: str) -> str:
        """What the score cache keys `method`'s scores under: pppl_l2r's with its words."""
        if uses_l2r_words([method]):
            return f"{method} words={self.l2r_words}"
        return method

    def forward(self):
        return lm_forward(self.model)


def score_pppl(scorer: MaskedScorer, encoded: Sequence[EncodedItem],
               targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    wanted = Wanted.of(encoded, targets)
    rows = wanted.one_row_per_token(Ragged.singletons(wanted.position))
    return scorer.run_rows(rows, [len(t) for t in targets], bar)


def score_pppl_l2r(scorer: MaskedScorer, encoded: Sequence[EncodedItem],
                   targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    rows = Wanted.of(encoded, targets).one_row_per_token(
        l2r_masked(encoded, targets, scorer.l2r_words))
    return scorer.run_rows(rows, [len(t) for t in targets], bar)


def score_unmasked(scorer: MaskedScorer, encoded: Sequence[EncodedItem],
                   targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    rows = Wanted.of(encoded, targets).one_row_each()
    return scorer.run_rows(rows, [len(t) for t in targets], bar)


def l2r_masked(encoded: Sequence[EncodedItem], targets: Sequence[Sequence[int]],
               words: str = "tokenizer") -> Ragged:
    """l2r_masked_positions of every wanted token (`words`: l2r_words_of), as one Ragged (in
    Wanted's order).

    The scored tokens of all sentences are sorted by (sentence, word, token); a token masks the
    run from itself to the end of its (sentence, word) group. A token of no word is a group of
    its own."""
    n_scored = np.fromiter((e.n_tokens for e in encoded), dtype=np.int64, count=len(encoded))
    total = int(n_scored.sum())
    first = np.cumsum(n_scored) - n_scored
    sentence = np.repeat(np.arange(len(encoded)), n_scored)
    token = np.arange(total) - first[sentence]
    word = np.fromiter((-1 if w is None else w
                        for e in encoded for w in l2r_words_of(e, words)),
                       dtype=np.int64, count=total)
    word = np.where(word >= 0, word, -1 - token)  # a word of its own
    position = np.fromiter(chain.from_iterable(e.positions for e in encoded), dtype=np.int64,
                           count=total)
    order = np.lexsort((token, word, sentence))
    rank = np.empty(total, dtype=np.int64)
    rank[order] = np.arange(total)
    new_group = np.ones(total, dtype=bool)
    new_group[1:] = (sentence[order][1:] != sentence[order][:-1]) | (
        word[order][1:] != word[order][:-1])
    group_end = np.append(np.flatnonzero(new_group)[1:], total)[np.cumsum(new_group) - 1]
    counts = np.fromiter(map(len, targets), dtype=np.int64, count=len(targets))
    flat = first[np.repeat(np.arange(len(targets)), counts)] + np.fromiter(
        chain.from_iterable(targets), dtype=np.int64, count=int(counts.sum()))
    starts = rank[flat]
    lengths = group_end[starts] - starts
    ends = np.cumsum(lengths)
    picked = np.arange(ends[-1] if len(ends) else 0) + np.repeat(starts - ends + lengths, lengths)
    return Ragged(position[order[picked]], np.append(0, ends))
