"""Item-level statistics from token log probabilities (natural log).

For a set of scored tokens (a whole sentence, or the tokens of one region) with log probabilities
lp_1 … lp_n, covering the words W (all words of the item, or those overlapping the region):
  logprob_sum  = Σ lp_i;  mean_logprob = logprob_sum / n;  ppl = exp(-logprob_sum / n)
and, with a word unigram model P_u for the item's language (Lau et al. 2017), where
log P_m(w) is the sum of the log probabilities of the tokens of word w (each token's word: the
word it overlaps most) and W' the words of W with scored tokens:
  slor         = (Σ_{w∈W'} log P_m(w) - Σ_{v∈V} log P_u(v)) / |V|
  normlp       = -Σ_{w∈W'} log P_m(w) / Σ_{v∈V} log P_u(v)
  word_lp_min1 = min over w ∈ W' of -log P_m(w) / Σ_{v∈V(w)} log P_u(v)
where V(w) is w with the words of W that w's tokens also cover but that are no token's word
(`cannot` is one token, CoLA's words `can` `not`: V(can) = {can, not}) and V the union of the
V(w). Both sides count the same text: a token of no word (a transformer's trailing `Ġ` or `▁`, a
character between words) has no unigram term, so it is left out of the model side too; a word
inside another word's token keeps its unigram term, as the token's log probability covers it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Unigram = Callable[[str], float]


def item_statistics(logprobs: Sequence[float], token_words: Sequence[int | None],
                    words: Sequence[str], word_indices: Sequence[int],
                    unigram: Unigram | None,
                    token_covers: Sequence[Sequence[int]] | None = None,
                    ) -> dict[str, float | int | None]:
    """The item_scores statistics of one set of tokens; see the module docstring.
    `token_covers`: every word each token overlaps (default: its own word only)."""
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
    covers = token_covers if token_covers is not None else [[w] for w in token_words]
    unit: dict[int, list[int]] = {w: [w] for w in word_lp}  # w -> V(w)
    attached: set[int] = set(word_lp)
    for w, covered in zip(token_words, covers, strict=True):
        if w not in word_lp:
            continue
        for v in covered:
            if v in in_set and v not in attached:
                unit[w].append(v)
                attached.add(v)
    unit_lp = {w: sum(unigram(words[v]) for v in vs) for w, vs in unit.items()}
    model_sum, unigram_sum = sum(word_lp.values()), sum(unit_lp.values())
    row["slor"] = (model_sum - unigram_sum) / len(attached)
    row["normlp"] = -model_sum / unigram_sum
    row["word_lp_min1"] = min(-lp / unit_lp[w] for w, lp in word_lp.items())
    return row
