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

`--measures lau` (n-gram models): Lau et al.'s own definitions, as their bncpylib/ngrams.py
(LanguageModel.combined_scores) computes them for the whole sentence. The tokens are the words
and `</s>`; lp_i their log probabilities, u_i the log probability of the same symbol under the
model's own order-1 distribution (`tokens_logprob(tokens, 1)`), L = m + n the length of the
sentence padded with n-1 `<s>` and one `</s>` (`len(tokens)`):
  slor         = (Σ lp_i - Σ u_i) / L                       (`syntactic_log_odds_ratio`)
  normlp       = -Σ lp_i / Σ u_i                             (`norm_logprob_div`, w_norm_logprob)
  word_lp_min1 = min over i of -lp_i / u_i                   (`wlogprob-bot-1`)
and logprob_sum, mean_logprob and ppl over the same tokens (`logprob`, `mean_logprob`, the
perplexity over m+1 predictions). Their logarithms are base 10; ours natural: slor is theirs
times ln 10, normlp and word_lp_min1 (ratios) are equal.
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


def lau_statistics(logprobs: Sequence[float], order1: Sequence[float], padded_length: int,
                   n_words: int) -> dict[str, float | int | None]:
    """The item_scores statistics of a whole sentence by Lau et al.'s definitions (see the
    module docstring): `logprobs` and `order1` per token, `</s>` included."""
    n = len(logprobs)
    total = float(sum(logprobs))
    row: dict[str, float | int | None] = {
        "logprob_sum": total, "n_tokens": n, "n_words": n_words,
        "ppl": math.exp(-total / n) if n else None, "mean_logprob": total / n if n else None,
        "slor": None, "word_lp_min1": None, "normlp": None}
    if not n:
        return row
    unigram_sum = float(sum(order1))
    row["slor"] = (total - unigram_sum) / padded_length
    # A symbol with P_1 = 1 (log 0) has no ratio; never in a model of more than one symbol.
    row["normlp"] = -total / unigram_sum if unigram_sum else None
    if all(order1):
        row["word_lp_min1"] = min(-lp / u for lp, u in zip(logprobs, order1, strict=True))
    return row
