"""German: an adjective's inflection ending must survive the swap (FEATS alone do not pin it:
strong, weak and mixed declension share them)."""

from __future__ import annotations

import polars as pl

from spudflow.nonce.languages.base import LanguageRules

# -e, -em, -en, -er, -es; "-" stands for none of them (predicative `neu`).
ENDING = r"(em|en|er|es|e)$"


class GermanRules(LanguageRules):
    code = "de"

    def form_class(self) -> pl.Expr:
        ending = pl.col("form").str.to_lowercase().str.extract(ENDING, 1).fill_null("-")
        return pl.when(pl.col("upos") == "ADJ").then(ending).otherwise(pl.lit(""))

    def join_mwt(self, forms: list[str], orig_forms: list[str], orig_surface: str) -> str:
        return " ".join(forms)  # zum -> zu dem, im -> in dem
