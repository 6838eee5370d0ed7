"""Word tables: one row per word with the keys the index and the lexicon match on.

- unit: what candidates are (the lemma; the form when the treebank has no lemmas or no FEATS)
- morph: what a replacement form must share (FEATS; XPOS when the treebank has no FEATS)
- form_class: a class of the written form from the language hooks ("" = none)
- lex_form / lex_lemma: the form and lemma a replacement writes
- seen_form: the form as written, normalised (capitals kept): the candidate weights count these
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from spudflow.core.logs import get_logger
from spudflow.nonce.languages.base import LanguageHooks

log = get_logger(__name__)

MISSING = "_"


@dataclass(frozen=True)
class WordMode:
    unit: str   # "lemma" or "form"
    morph: str  # "feats", "xpos" or "none"


def _has_values(words: pl.DataFrame, column: str) -> bool:
    return words.filter(pl.col(column).is_not_null() & (pl.col(column) != MISSING)).height > 0


def detect_mode(tokens: pl.DataFrame, upos: list[str], source: str = "") -> WordMode:
    """Lemma + FEATS when the treebank has them on its replaceable words; fall back otherwise."""
    words = tokens.filter((pl.col("token_type") == "word") & pl.col("upos").is_in(upos))
    if words.is_empty():
        log.warning("%s: no words of %s to replace", source or "treebank", ",".join(upos))
        return WordMode(unit="lemma", morph="feats")
    has_lemmas, has_feats = _has_values(words, "lemma"), _has_values(words, "feats")
    morph = "feats" if has_feats else ("xpos" if _has_values(words, "xpos") else "none")
    if not has_lemmas:
        log.warning("%s: no lemmas; candidates are word forms seen in the same context",
                    source or "treebank")
    if not has_feats:
        log.warning("%s: no FEATS on words of %s; candidates are word forms seen in the same "
                    "context, matched on %s", source or "treebank", ",".join(upos),
                    "XPOS" if morph == "xpos" else "UPOS only")
    return WordMode(unit="lemma" if has_lemmas and has_feats else "form", morph=morph)


def _position_case_removed(form: pl.Expr, lexical_case: pl.Expr) -> pl.Expr:
    """FORM without the capitals that come from its place (as decided by
    surface.match_case): the first word of a sentence in title case, every word of a shouted
    sentence. Words whose capitals are LEXICAL_CASE (proper names, German nouns) keep them."""
    first, rest = form.str.slice(0, 1), form.str.slice(1)
    cased = (form.str.count_matches(r"\p{L}") > 1) & (form.str.to_uppercase()
                                                       != form.str.to_lowercase())
    upper = cased & (form == form.str.to_uppercase())
    shouted = (upper.cast(pl.Int32).sum().over("sent_index") * 2
               > cased.cast(pl.Int32).sum().over("sent_index")) & \
        (cased.cast(pl.Int32).sum().over("sent_index") > 1)
    first_word = pl.col("word_index") == pl.col("word_index").filter(
        pl.col("upos") != "PUNCT").min().over("sent_index")
    titlecase = (first != first.str.to_lowercase()) & (rest == rest.str.to_lowercase())
    return (pl.when(lexical_case).then(form)
            .when(shouted & upper).then(form.str.to_lowercase())
            .when(first_word & titlecase).then(pl.concat_str(first.str.to_lowercase(), rest))
            .otherwise(form))


def word_frame(tokens: pl.DataFrame, hooks: LanguageHooks, mode: WordMode,
               source: str = "") -> pl.DataFrame:
    """Words of an ingested treebank with unit, morph, form_class, lex_form, lex_lemma; `row` is
    the token row (tokens in sent_index, token_index order). `feats` holds what the language
    fills in (LanguageHooks.fill_feats); SOURCE names the treebank in the log."""
    frame = (tokens.with_row_index("row")
             .filter(pl.col("token_type") == "word")
             .select("row", "sent_index", "word_index", "head", "form", "lemma", "upos", "xpos",
                     "feats", "deprel"))
    filled = hooks.fill_feats(frame) if mode.morph == "feats" else None
    if filled is not None:
        frame = filled.words
        log.info("%s: %s filled in for %d of the %d words without it", source or "treebank",
                 filled.what, filled.filled, filled.tried)
    form = hooks.normalise(pl.col("form"))
    has_lemma = pl.col("lemma").is_not_null() & (pl.col("lemma") != MISSING)
    lemma = pl.when(has_lemma).then(hooks.normalise(pl.col("lemma"))).otherwise(pl.lit(MISSING))
    # Capitals that only mark the start of a sentence or shouting should not reach the lexicon.
    if mode.unit == "lemma":
        first = pl.col("lex_lemma").str.slice(0, 1)
        lexical_case = ~has_lemma | (first != first.str.to_lowercase())
    else:
        lexical_case = pl.col("upos") == "PROPN"
    frame = frame.with_columns(lex_lemma=lemma).with_columns(
        lex_form=_position_case_removed(form, lexical_case))
    unit = (pl.when(pl.col("lex_lemma") != MISSING).then(pl.col("lex_lemma"))
            .otherwise(pl.col("lex_form")) if mode.unit == "lemma" else pl.col("lex_form"))
    morph = {"feats": pl.col("feats"), "xpos": pl.col("xpos"), "none": pl.lit(MISSING)}[mode.morph]
    if hooks.lemma_as_form and mode.unit == "lemma":
        # A candidate is written as its lemma, whatever the word's features: no morph to match.
        morph = pl.lit(MISSING)
        frame = frame.with_columns(lex_form=pl.when(pl.col("lex_lemma") != MISSING)
                                   .then(pl.col("lex_lemma")).otherwise(pl.col("lex_form")))
    form_class = hooks.form_class()
    return frame.with_columns(
        unit=unit,
        seen_form=form,
        morph=morph.fill_null(MISSING),
        form_class=pl.lit("") if form_class is None else form_class.fill_null(""),
    )
