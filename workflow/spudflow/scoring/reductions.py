"""Item-level statistics from token log probabilities (natural log).

For a set of scored tokens (a whole sentence, or the tokens of one region) with log probabilities
lp_1 … lp_n, covering the words W (all words of the item, or those overlapping the region):
  logprob_sum  = Σ lp_i;  mean_logprob = logprob_sum / n;  ppl = exp(-logprob_sum / n)
and, with a word unigram model P_u for the item's language (Lau et al. 2017), where
log P_m(w) is the sum of the log probabilities of the tokens of word w and W' the words of W with
scored tokens:
  slor         = (Σ_{w∈W'} log P_m(w) - Σ_{w∈W'} log P_u(w)) / |W'|
  normlp       = -Σ_{w∈W'} log P_m(w) / Σ_{w∈W'} log P_u(w)
  word_lp_min1 = min over w ∈ W' of -log P_m(w) / log P_u(w)
Both sides count the same tokens: a token of no word (a transformer's trailing `Ġ` or `▁`, a
character between words) has no unigram term, so it is left out of the model side too; adding
its log probability would lower SLOR and raise NormLP for transformer scorers only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Unigram = Callable[[str], float]


def item_statistics(logprobs: Sequence[float], token_words: Sequence[int | None],
                    words: Sequence[str], word_indices: Sequence[int],
                    unigram: Unigram | None) -> dict[str, float | int | None]:
    """The item_scores statistics of one set of tokens; see the module docstring."""
    n = len(logprobs)
    total = float(sum(logprobs))
    row: dict[str, float | int | None] = {
        "logprob_sum": total, "n_tokens": n, "n_words": len(word_indices),
        "ppl": math.exp(-total / n) if n else None, "mean_logprob": total / n if n else None,
        "slor": None, "word_lp_min1": None, "normlp": None}
    if unigram is None or not word_indices:
        return row
    in_set = set(word_indices)
    word_lp: dict[int, float] = {}
    for lp, w in zip(logprobs, token_words, strict=True):
        if w in in_set:
            word_lp[w] = word_lp.get(w, 0.0) + lp
    if not word_lp:
        return row
    unigram_lp = {w: unigram(words[w]) for w in word_lp}
    model_sum, unigram_sum = sum(word_lp.values()), sum(unigram_lp.values())
    row["slor"] = (model_sum - unigram_sum) / len(word_lp)
    row["normlp"] = -model_sum / unigram_sum
    row["word_lp_min1"] = min(-lp / unigram_lp[w] for w, lp in word_lp.items())
    return row
