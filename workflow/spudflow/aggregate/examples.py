"""The items behind a number: for each scoring function, the k items where it is most confidently
wrong. Pure functions over polars frames; the same frames and seed give the same rows, in the
same order, to the byte.

- Pairs (BLiMP, Japanese obligatory pairs): the wrong pairs (the wrong sentence scored at least
  as high: ties count wrong, as in the accuracy) with the largest margin for the wrong sentence.
- German: per scoring function, the template with the lowest AUC and its worst (grammatical,
  violation) pairs: the violation scored highest above the grammatical sentence.
- SPUD: the largest perplexity ratios (nonce over original).

Ties in the ordering (equal margins are common: n-gram models, a pair scored twice alike) are
broken by a seeded hash of each item's id (blake2b of seed and id), not by the id itself, which
would favour the paradigm or file whose ids sort first; the hash depends on the item alone, so a
function's examples do not change when other functions or items are added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import polars as pl

RANK = "rank"
MARGIN = "margin"
_TIEBREAK = "__tiebreak"


def tiebreak_key(seed: int, item_id: str) -> int:
    """A stable pseudo-random 63-bit key of (seed, id): the same in every process and version."""
    digest = hashlib.blake2b(f"{seed}\x1f{item_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def top_k(frame: pl.DataFrame, keys: Sequence[str], score: str, ids: Sequence[str], k: int,
          seed: int, descending: bool = True) -> pl.DataFrame:
    """Per group of `keys`, the k rows with the highest (or lowest) `score`, ranked 1..k; equal
    scores ordered by the seeded hash of the `ids` columns. Rows with a null score are no
    candidates. Keys, rank, then the frame's other columns."""
    if k < 1:
        raise ValueError(f"k = {k}: at least one example")
    keys = list(keys)
    ids = [c for c in ids if c not in keys]  # an id within its group
    duplicated = frame.select(*keys, *ids).is_duplicated()
    if duplicated.any():
        raise ValueError(f"{frame.filter(duplicated).row(0, named=True)} is twice in the frame")
    candidates = frame.filter(pl.col(score).is_not_null() & pl.col(score).is_not_nan())
    # only the rows that can be among the k (all rows tied with the k-th) need a hash
    rank = pl.col(score).rank("min", descending=descending)
    candidates = candidates.filter((rank.over(keys) if keys else rank) <= k)
    id_text = candidates.select(pl.concat_str([pl.col(c).cast(pl.String) for c in ids],
                                              separator="\x1f")).to_series()
    candidates = candidates.with_columns(pl.Series(
        _TIEBREAK, [tiebreak_key(seed, text) for text in id_text], dtype=pl.Int64))
    ordered = candidates.sort([*keys, score, _TIEBREAK],
                              descending=[False] * len(keys) + [descending, False])
    top = ordered.group_by(keys, maintain_order=True).head(k) if keys else ordered.head(k)
    top = top.with_columns(
        (pl.int_range(1, pl.len() + 1).over(keys) if keys else pl.int_range(1, pl.len() + 1))
        .cast(pl.Int64).alias(RANK)).drop(_TIEBREAK)
    return top.select(*keys, RANK, pl.exclude(*keys, RANK))


def confidently_wrong_pairs(pairs: pl.DataFrame, keys: Sequence[str], ids: Sequence[str],
                            right: str, wrong: str, k: int, seed: int) -> pl.DataFrame:
    """The k wrong pairs per group of `keys` with the largest margin = wrong - right (the scores,
    higher preferred, of the sentence that should win and the one that should lose); pairs
    with a score missing are left out."""
    both = pairs.filter(pl.col(right).is_not_null() & pl.col(wrong).is_not_null())
    wrong_pairs = both.with_columns((pl.col(wrong) - pl.col(right)).alias(MARGIN)).filter(
        pl.col(MARGIN) >= 0)
    return top_k(wrong_pairs, keys, MARGIN, ids, k, seed)


def blimp_examples(pairs: pl.DataFrame, items: pl.DataFrame, k: int, seed: int) -> pl.DataFrame:
    """BLiMP's most confidently wrong pairs per scoring function (blimp.pair_outcomes' rows, the
    scored ones), with both sentences."""
    from spudflow.aggregate.blimp import DATASET_SCORING

    text = {side: items.filter(pl.col("label") == label).select(
        "dataset", "group_id", pl.col("sentence").alias(f"sentence_{side}"))
        for side, label in (("good", 1), ("bad", 0))}
    top = confidently_wrong_pairs(pairs.filter(pl.col("scored")), DATASET_SCORING,
                                  ["group_id"], "logprob_good", "logprob_bad", k, seed)
    for side in ("good", "bad"):
        top = top.join(text[side], on=["dataset", "group_id"], how="left")
    return top.select(*DATASET_SCORING, RANK, "uid", "group_id", "sentence_good", "sentence_bad",
                      "logprob_good", "logprob_bad", MARGIN).sort([*DATASET_SCORING, RANK])


def worst_template_pairs(scored: pl.DataFrame, keys: Sequence[str], k: int, seed: int,
                         score: str = "logprob_sum") -> pl.DataFrame:
    """German: per group of `keys` (a scoring function), the template with the lowest AUC
    (grammatical sentences positive; ties by the seeded hash of the template) and its k worst
    (grammatical, violation) pairs, the violation's score above the grammatical one's by the
    largest margin (ties count half in the AUC and are candidates, as a tie in the pairs).
    `scored`: one row per (function, sentence) with template, grammatical, item_id, sentence
    and the score."""
    keys = list(keys)
    sides = {}
    for side, grammatical in (("grammatical", True), ("violation", False)):
        sides[side] = scored.filter((pl.col("grammatical") == grammatical)
                                    & pl.col(score).is_not_null()).select(
            *keys, "template", pl.col("item_id").alias(f"item_id_{side}"),
            pl.col("sentence").alias(f"sentence_{side}"), pl.col(score).alias(f"{score}_{side}"))
    pairs = sides["grammatical"].join(sides["violation"], on=[*keys, "template"], how="inner")
    pairs = pairs.with_columns(
        (pl.col(f"{score}_violation") - pl.col(f"{score}_grammatical")).alias(MARGIN))
    # AUC = P(grammatical above violation) + P(tie) / 2 over the template's pairs
    aucs = pairs.group_by([*keys, "template"]).agg(
        ((pl.col(MARGIN) < 0).cast(pl.Float64) + 0.5 * (pl.col(MARGIN) == 0).cast(pl.Float64))
        .mean().alias("template_auc"))
    worst = top_k(aucs, keys, "template_auc", ["template"], 1, seed, descending=False)
    pairs = pairs.join(worst.select(*keys, "template", "template_auc"), on=[*keys, "template"])
    top = top_k(pairs, keys, MARGIN, ["item_id_grammatical", "item_id_violation"], k, seed)
    return top.select(*keys, RANK, "template", "template_auc", "item_id_grammatical",
                      "item_id_violation", "sentence_grammatical", "sentence_violation",
                      f"{score}_grammatical", f"{score}_violation", MARGIN).sort([*keys, RANK])


def largest_ratios(pairs: pl.DataFrame, keys: Sequence[str], k: int, seed: int) -> pl.DataFrame:
    """SPUD: per group of `keys` (pair set, scoring function and nonce seed), the k nonce
    sentences with the largest perplexity ratio over their original (spud_scores.pair_ratios'
    rows), the groups' numeric seeds in numeric order (2 before 10)."""
    listed = [c for c in ("nonce_seed", "group_id", "nonce_item_id", "orig_sentence",
                          "nonce_sentence", "ppl_orig", "ppl_nonce", "ratio") if c not in keys]
    order = [pl.col(c).cast(pl.Int64, strict=False) if c == "nonce_seed" else pl.col(c)
             for c in keys]
    return top_k(pairs, keys, "ratio", ["nonce_item_id"], k, seed).select(
        *keys, RANK, *listed).sort([*order, *keys, RANK])
