"""German: an adjective's inflection ending should survive the swap (FEATS alone do not pin it:
strong, weak and mixed declension share them).

As the reference (src/morph_dict_tools/udlex_german.py, `GermanMorphDict.lang_specific_lookup`)
by default: only an adjective whose form ends in -e, -em, -en, -er or -es asks for the same
ending, and takes another form of the candidate's where it has none with that ending; one
without such an ending (predicative `neu`) takes any form. `strict_endings=true`: the ending
class (or none, "-") is required, and a candidate without a form of the class is no candidate."""

from __future__ import annotations

import polars as pl

from spudflow.nonce.languages.base import LanguageRules

# -e, -em, -en, -er, -es; "-" stands for none of them (predicative `neu`).
ENDING = r"(em|en|er|es|e)$"


class GermanRules(LanguageRules):
    code = "de"
    OPTIONS = {"strict_endings": False}

    @property
    def form_class_fallback(self) -> bool:
        return not self.options["strict_endings"]

    def form_class(self) -> pl.Expr:
        # Strict: "-" is a class of its own (no ending); else no class, which asks for none.
        none = "-" if self.options["strict_endings"] else ""
        ending = pl.col("form").str.to_lowercase().str.extract(ENDING, 1).fill_null(none)
        return pl.when(pl.col("upos") == "ADJ").then(ending).otherwise(pl.lit(""))

    def join_mwt(self, forms: list[str], orig_forms: list[str], orig_surface: str) -> str:
        return " ".join(forms)  # zum -> zu dem, im -> in dem
