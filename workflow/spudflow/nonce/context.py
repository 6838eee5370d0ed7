"""Syntactic context of a word, the key of the candidate index.

spud: UPOS, DEPREL to the head and the sorted multiset of the dependents' DEPRELs (subtypes such
as nsubj:pass kept), plus what the language adds (French adjective position, Russian object
Case). pos: UPOS only (the Gulordava-style baseline). posfree: UPOS only, and no language
rules at all (nonce/make.py): the rule-free method of Gulordava et al. (2018) that the paper's
human evaluation (section 3.2) compares SPUD with.
"""

from __future__ import annotations

import polars as pl

from spudflow.nonce.languages.base import LanguageRules

METHODS = ("spud", "pos", "posfree")
# Methods that apply no language rules (no a/an, elision, German ending classes, ...).
RULE_FREE_METHODS = ("posfree",)


def with_context(words: pl.DataFrame, method: str, rules: LanguageRules) -> pl.DataFrame:
    """WORDS (from words.word_frame, one treebank) with a string column `context`."""
    if method in ("pos", "posfree"):
        return words.with_columns(context=pl.col("upos"))
    dependents = (words.filter(pl.col("head") > 0)
                  .group_by("sent_index", "head")
                  .agg(dependents=rules.dependent_label().sort().str.join(",")))
    words = words.join(dependents, left_on=["sent_index", "word_index"],
                       right_on=["sent_index", "head"], how="left", maintain_order="left")
    parts = [pl.col("upos"), pl.col("deprel"), pl.col("dependents").fill_null("")]
    extra = rules.context_extra()
    if extra is not None:
        parts.append(extra.fill_null(""))
    return words.with_columns(context=pl.concat_str(parts, separator="|")).drop("dependents")
