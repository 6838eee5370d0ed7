"""Per-split treebank statistics: sentences, words, tokens, MWTs, UPOS counts, type-token ratio."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.core.input_files import read_parquet_checked

# The 17 universal POS tags; every statistics table has a column for each, in this order.
UPOS_TAGS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
             "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X")


# Columns of every statistics table before the UPOS counts.
STATISTICS_COLUMNS = ("treebank", "split", "language", "sentences", "words", "tokens", "mwts",
                      "empty_nodes", "word_types", "type_token_ratio")


def read_statistics(paths: list[Path]) -> pl.DataFrame:
    """One-row statistics files of `spudflow stats`, concatenated."""
    return pl.concat([read_parquet_checked(p, "treebank statistics (spudflow stats)",
                                           STATISTICS_COLUMNS) for p in paths])


def treebank_statistics(tokens: pl.DataFrame, sentences: pl.DataFrame, treebank: str, split: str,
                        lang: str) -> pl.DataFrame:
    words = tokens.filter(pl.col("kind") == "word")
    upos = dict(words.group_by("upos").len().iter_rows())
    forms = words.get_column("form")
    n_words = words.height
    row = {
        "treebank": treebank,
        "split": split,
        "language": lang,
        "sentences": sentences.height,
        "words": n_words,
        "tokens": int(sentences.get_column("n_tokens").sum()),
        "mwts": tokens.filter(pl.col("kind") == "mwt").height,
        "empty_nodes": tokens.filter(pl.col("kind") == "empty").height,
        "word_types": forms.n_unique(),
        # Types over tokens on word forms, case-sensitive (as written in the treebank).
        "type_token_ratio": forms.n_unique() / n_words if n_words else None,
        **{f"upos_{tag}": int(upos.get(tag, 0)) for tag in UPOS_TAGS},
        "upos_other": int(sum(v for k, v in upos.items() if k not in UPOS_TAGS)),
    }
    return pl.DataFrame([row])
