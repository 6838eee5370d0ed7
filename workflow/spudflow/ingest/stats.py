"""Per-split treebank statistics: sentences, words, tokens, MWTs, UPOS counts, type-token ratio."""

from __future__ import annotations

import polars as pl

# The 17 universal POS tags; every statistics table has a column for each, in this order.
from spudflow.core.artifacts import UPOS_TAGS


def treebank_statistics(tokens: pl.DataFrame, sentences: pl.DataFrame, treebank: str, split: str,
                        lang: str) -> pl.DataFrame:
    words = tokens.filter(pl.col("token_type") == "word")
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
        "mwts": tokens.filter(pl.col("token_type") == "mwt").height,
        "empty_nodes": tokens.filter(pl.col("token_type") == "empty").height,
        "word_types": forms.n_unique(),
        # Types over tokens on word forms, case-sensitive (as written in the treebank).
        "type_token_ratio": forms.n_unique() / n_words if n_words else None,
        **{f"upos_{tag}": int(upos.get(tag, 0)) for tag in UPOS_TAGS},
        "upos_other": int(sum(v for k, v in upos.items() if k not in UPOS_TAGS)),
    }
    return pl.DataFrame([row])
