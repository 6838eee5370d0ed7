"""What a language can add to the language-independent algorithm; every hook does nothing here.

Hooks that shape the candidate index are Polars expressions (evaluated on whole word tables, so
they cost nothing per word); hooks that look at one sentence get a `SentenceView`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, ClassVar

import polars as pl

from spudflow.nonce.feats_match import Feats, Level, includes

if TYPE_CHECKING:
    from spudflow.nonce.languages.inferred_feats import FilledFeats
    from spudflow.nonce.sentence import SentenceView


class LanguageHooks:
    """No hooks: the algorithm as the issue describes it, for any language."""

    code: ClassVar[str] = ""
    # Option name -> default; values come from `--option NAME=VALUE` / config `nonce.languages`.
    OPTIONS: ClassVar[dict[str, bool]] = {}
    # True when `accept` can reject a candidate (the replacement loop skips the call otherwise).
    filters_candidates: ClassVar[bool] = False

    def __init__(self, **options: bool) -> None:
        self.options = {**self.OPTIONS, **options}
        # True when the nonce text is written in syntactic words (`--multiword-tokens split`):
        # no multiword token needs its surface rebuilt, so none constrains a candidate.
        self.words_apart = False

    @property
    def lemma_as_form(self) -> bool:
        """True: a replacement is written as its lemma, matched on nothing but UPOS and context
        (no FEATS), as the reference does for Arabic."""
        return False

    @property
    def form_class_fallback(self) -> bool:
        """True: the form class is a preference, not a requirement: a word whose form has no
        class ("") takes a candidate's most frequent form of its FEATS, and one whose class the
        candidate lacks likewise (lexicon.build_lexicon)."""
        return False

    def ordered_dependents(self) -> bool:
        """True: the context lists the dependents' labels in word order with the word's own
        place marked (`MOTHER`), instead of sorted (spud method only)."""
        return False

    def case_folded(self, n_words: int) -> range:
        """Words the reference's case (`--case reference`) folds to lower case after their
        first letter (surface.initial_case_fold); none here."""
        return range(0)

    def fill_feats(self, words: pl.DataFrame) -> FilledFeats | None:
        """Features the treebank leaves out, filled in from related words before the lexicon
        and the words to replace are keyed on FEATS (German Case, French adjective Number, as
        the reference's preprocessing); columns: sent_index, word_index, head, upos, feats,
        deprel. None: nothing to fill."""
        return None

    def normalise(self, text: pl.Expr) -> pl.Expr:
        """FORM and LEMMA as indexed and matched (e.g. Arabic without diacritics)."""
        return text

    def dependent_label(self) -> pl.Expr:
        """How a dependent appears in its head's context; columns: deprel, feats."""
        return pl.col("deprel")

    def context_extra(self) -> pl.Expr | None:
        """Extra context of a word (SPUD method only); columns: upos, deprel, feats, word_index,
        head. Return a string expression ("" where nothing is added) or None."""
        return None

    def form_class(self) -> pl.Expr | None:
        """A class of the written form that a replacement must share (e.g. German adjective
        endings); columns: form, upos. Return a string expression ("" = no class) or None."""
        return None

    def feats_levels(self, upos: str, feats: Feats) -> list[Level]:
        """`--feats-match reference`: the tests a lexicon form's FEATS must pass to replace a word
        of UPOS with FEATS, tried in order (the next only for a candidate with no form passing the
        previous): here the reference's plain all1in2, the form's features include the word's."""
        return [partial(includes, feats)]

    def protected(self) -> pl.Expr | None:
        """Words of a replaced UPOS that are never replaced; columns: form, lemma, upos."""
        return None

    def accept(self, sentence: SentenceView, index: int, form: str) -> bool:
        """May the word at `index` become `form`? Called only when `filters_candidates`."""
        return True

    def adjust(self, sentence: SentenceView) -> None:
        """Fix function words after the replacements of a sentence (a/an, elision, ...)."""

    def join_mwt(self, forms: list[str], orig_forms: list[str], orig_surface: str) -> str:
        """Surface of a multiword token whose parts changed. Without a rule: written together
        when the original parts were (don't = do + n't), else apart (zum = zu + dem)."""
        if "".join(orig_forms).lower() == orig_surface.lower():
            return "".join(forms)
        return " ".join(forms)
