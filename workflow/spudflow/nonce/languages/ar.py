"""Arabic: forms and lemmas are matched without diacritics (the treebanks vowel lemmas but not
forms); clitics are written together with their host.

`lemma_forms` (default true, the reference: src/morph_dict_tools/universal.py, `MorphDict.lookup`
returns the candidate's lemma for the ArabicMorphDict, and the paper's Fig. 3 shows `waziran`
replaced by `janub`): a replacement is written as its lemma, whatever the word's FEATS. False: a
form with exactly the word's FEATS, as in the other languages."""

from __future__ import annotations

import polars as pl

from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.sentence import SentenceView

# Harakat, tanwin, shadda, sukun, superscript alef and Quranic annotation marks.
DIACRITICS = r"[\u0610-\u061A\u064B-\u065F\u0670\u06D6-\u06DC\u06DF-\u06E8\u06EA-\u06ED]"


class ArabicHooks(LanguageHooks):
    code = "ar"
    OPTIONS = {"strip_diacritics": True, "lemma_forms": True}

    @property
    def lemma_as_form(self) -> bool:
        return self.options["lemma_forms"]

    def normalise(self, text: pl.Expr) -> pl.Expr:
        if not self.options["strip_diacritics"]:
            return text
        return text.str.replace_all(DIACRITICS, "")

    def adjust(self, sentence: SentenceView) -> None:
        """After the clitic preposition li- the article loses its alif: ل + المنطقة -> للمنطقة
        (the treebanks split it as ل + لمنطقة)."""
        for i in range(1, sentence.n):
            form = sentence.form(i)
            if (sentence.replaced(i) and form.startswith("ال") and sentence.form(i - 1) == "ل"
                    and not sentence.space_after(i - 1)):
                sentence.set_form(i, form[1:])

    def join_mwt(self, forms: list[str], orig_forms: list[str], orig_surface: str) -> str:
        return "".join(forms)
