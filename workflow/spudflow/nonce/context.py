"""Syntactic context of a word, the key of the candidate index.

spud: UPOS, DEPREL to the head and the sorted multiset of the dependents' DEPRELs (subtypes such
as nsubj:pass kept), plus what the language adds (Russian object Case, French adjective
position); where the language asks (French, as the reference's `pattern_configs` in
src/syntactic_patterns.py), the dependents' DEPRELs in word order with the word's own place
marked `MOTHER` instead of sorted. pos: UPOS only (the Gulordava-style baseline). posfree: UPOS
only, and no language hooks at all (nonce/make.py): the rule-free method of Gulordava et al.
(2018) that the paper's human evaluation (section 3.2) compares SPUD with.
"""

from __future__ import annotations

import polars as pl

from spudflow.nonce.languages.base import LanguageHooks

NONCE_METHODS = ("spud", "pos", "posfree")
# The word's own place among its dependents in an ordered context.
MOTHER = "MOTHER"
# Methods that apply no language hooks (no a/an, elision, German ending classes, ...).
HOOK_FREE_METHODS = ("posfree",)


def with_context(words: pl.DataFrame, method: str, hooks: LanguageHooks) -> pl.DataFrame:
    """WORDS (from words.word_frame, one treebank) with a string column `context`."""
    if method in ("pos", "posfree"):
        return words.with_columns(context=pl.col("upos"))
    if hooks.ordered_dependents():
        # The word itself among its dependents, at its place (the reference's
        # `find_deprels_to_children` with include_self_in_deprels): amod,MOTHER vs MOTHER,amod.
        labelled = words.filter(pl.col("head") > 0).select(
            "sent_index", "head", "word_index", label=hooks.dependent_label())
        itself = words.select("sent_index", pl.col("word_index").alias("head"), "word_index",
                              label=pl.lit(MOTHER))
        dependents = (pl.concat([labelled, itself])
                      .group_by("sent_index", "head")
                      .agg(dependents=pl.col("label").sort_by("word_index").str.join(",")))
    else:
        dependents = (words.filter(pl.col("head") > 0)
                      .group_by("sent_index", "head")
                      .agg(dependents=hooks.dependent_label().sort().str.join(",")))
    words = words.join(dependents, left_on=["sent_index", "word_index"],
                       right_on=["sent_index", "head"], how="left", maintain_order="left")
    parts = [pl.col("upos"), pl.col("deprel"), pl.col("dependents").fill_null("")]
    extra = hooks.context_extra()
    if extra is not None:
        parts.append(extra.fill_null(""))
    return words.with_columns(context=pl.concat_str(parts, separator="|")).drop("dependents")
