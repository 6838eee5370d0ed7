"""Replacement statistics of one nonce treebank and the tables built from many of them.

Per split: one row per UPOS and one row `ALL` (every word, function words included) with word
counts, replacements, unreplaced words by reason and word-form types before and after.
"""

from __future__ import annotations

import polars as pl

from spudflow.core.artifacts import NONCE_REASONS
from spudflow.nonce.replace import REPLACED

ALL = "ALL"
LABELS = ["treebank", "split", "language", "method", "seed"]


def _counts(words: pl.DataFrame, upos: list[str]) -> list[pl.Expr]:
    return [
        pl.len().alias("words"),
        pl.col("upos").is_in(upos).sum().alias("targeted"),
        (pl.col("outcome") == REPLACED).sum().alias("replaced"),
        # function words whose form a language rule changed (a -> an, le -> l'); not the
        # case alone, which the reference's case (--case reference) changes on any word
        ((pl.col("form").str.to_lowercase() != pl.col("orig_form").str.to_lowercase())
         & ~pl.col("replaced")).sum().alias("adjusted"),
        *[(pl.col("outcome") == reason).sum().alias(reason) for reason in NONCE_REASONS],
        pl.col("orig_form").n_unique().alias("types_orig"),
        pl.col("form").n_unique().alias("types_nonce"),
    ]


def replacement_statistics(tokens: pl.DataFrame, outcomes: pl.Series, upos: list[str],
                           labels: dict[str, object]) -> pl.DataFrame:
    """TOKENS: the nonce token table; OUTCOMES: per token row, REPLACED, a reason or null."""
    words = tokens.with_columns(outcomes).filter(pl.col("token_type") == "word")
    per_upos = words.group_by("upos").agg(_counts(words, upos)).sort("upos")
    total = words.select(pl.lit(ALL).alias("upos"), *_counts(words, upos))
    table = pl.concat([per_upos, total], how="vertical_relaxed")
    label_columns = [pl.lit(labels[name]).alias(name) for name in LABELS]
    return table.select(
        *label_columns, "upos",
        *[pl.col(c).cast(pl.Int64) for c in table.columns if c != "upos"],
    ).with_columns(
        replacement_ratio=pl.col("replaced") / pl.col("words"),
        type_token_ratio_orig=pl.col("types_orig") / pl.col("words"),
        type_token_ratio_nonce=pl.col("types_nonce") / pl.col("words"),
    )



def ratio_table(stats: pl.DataFrame) -> pl.DataFrame:
    """Table 7 layout: per treebank, split, method and seed the replacement ratio of each
    replaced UPOS and of all words, and the unreplaced words by reason."""
    targeted = (stats.filter((pl.col("upos") != ALL) & (pl.col("targeted") > 0))
                .get_column("upos").unique().sort().to_list())
    # A UPOS a split did not replace (nonce.splits' upos) has no ratio there, not 0.
    wide = (stats.filter(pl.col("upos").is_in(targeted) & (pl.col("targeted") > 0))
            .pivot(on="upos", index=LABELS, values="replacement_ratio",
                   sort_columns=True))
    total = stats.filter(pl.col("upos") == ALL).select(
        *LABELS, "words", "targeted", "replaced", pl.col("replacement_ratio").alias("total"),
        *[pl.col(reason).alias(f"unreplaced_{reason}") for reason in NONCE_REASONS], "adjusted")
    return (total.join(wide, on=LABELS, how="left")
            .select(*LABELS, "words", "targeted", "replaced", *targeted, "total",
                    *[f"unreplaced_{reason}" for reason in NONCE_REASONS], "adjusted")
            .sort(LABELS))


WORD_FORMS = "word forms"


def ttr_table(counts: pl.DataFrame, unit: str = WORD_FORMS) -> pl.DataFrame:
    """Table 8 layout: type-token ratio, original vs nonce, from the counts of
    nonce/ttr_tokens.py (per split, and pooled over a treebank's splits where it has two or
    more)."""
    return (counts.select(
        *LABELS, "splits", "words", pl.lit(unit).alias("unit"), "tokens_orig", "tokens_nonce",
        "types_orig", "types_nonce",
        (pl.col("types_orig") / pl.col("tokens_orig")).alias("ttr_orig"),
        (pl.col("types_nonce") / pl.col("tokens_nonce")).alias("ttr_nonce"))
        .sort(LABELS))
