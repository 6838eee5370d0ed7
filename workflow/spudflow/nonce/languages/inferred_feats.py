"""Features a treebank leaves out, filled in from a related word before anything is matched.

The reference ran such a step over its German and French treebanks before making nonce data
(TaniaBladier/spud, README "Preprocess UD treebanks": prep/infer_case_german.py,
prep/infer_feats_french.py). Here a language's `fill_feats` hook does it on the word tables, so
the lexicon and the words to replace both see the filled-in FEATS; the written nonce treebank
keeps the treebank's own FEATS (docs/nonce.md, "Inferred features").
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from spudflow.core.feats import feature

MISSING = "_"


@dataclass(frozen=True)
class FilledFeats:
    words: pl.DataFrame  # the word table, `feats` with the features filled in
    what: str            # what was filled, for the log: "Case of NOUN/PROPN"
    tried: int           # words that lacked the feature (the reference's `tried`)
    filled: int          # words that got it (the reference's `matched`)


def has_feats() -> pl.Expr:
    """A word with FEATS (the reference skips words whose FEATS are `_`)."""
    return pl.col("feats").is_not_null() & (pl.col("feats") != MISSING)


def lacks(name: str) -> pl.Expr:
    """A word with FEATS, none of them NAME (a layered `Case[psor]` is another feature)."""
    return has_feats() & feature(name).is_null()


def with_feature(feats: str, name: str, value: str) -> str:
    """FEATS with NAME=VALUE inserted where UD's order (by name, case-insensitive) puts it, the
    others left as written: the lexicon matches the whole FEATS string, so a filled-in word must
    read like the words that had the feature all along (`Gender=Fem|Number=Sing` + Case=Gen ->
    `Case=Gen|Gender=Fem|Number=Sing`)."""
    items = feats.split("|")
    key = name.lower()
    at = next((i for i, item in enumerate(items) if item.split("=", 1)[0].lower() > key),
              len(items))
    return "|".join([*items[:at], f"{name}={value}", *items[at:]])


def fill(words: pl.DataFrame, name: str, value: pl.Expr, tried: pl.Expr, what: str
         ) -> FilledFeats:
    """WORDS with NAME=VALUE added to FEATS where VALUE is not null (and TRIED holds)."""
    marked = words.with_columns(_value=pl.when(tried).then(value), _tried=tried)
    pairs = marked.filter(pl.col("_value").is_not_null()).select("feats", "_value").unique()
    pairs = pairs.with_columns(_filled=pl.Series(
        [with_feature(feats, name, v) for feats, v in pairs.iter_rows()], dtype=pl.String))
    out = (marked.join(pairs, on=["feats", "_value"], how="left", maintain_order="left")
           .with_columns(feats=pl.coalesce("_filled", "feats")))
    counts = out.select(tried=pl.col("_tried").sum(), filled=pl.col("_filled").is_not_null().sum())
    return FilledFeats(words=out.drop("_value", "_tried", "_filled"), what=what,
                       tried=int(counts.item(0, "tried")), filled=int(counts.item(0, "filled")))
