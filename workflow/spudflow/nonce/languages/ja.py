"""Japanese. The treebanks have no FEATS, so candidates are word forms (see words.py); a verb's
or adjective's form depends on what follows it (書い+た, 読ん+だ, 書か+ない), which UD attaches as
aux/mark dependents. Their forms join the head's context, so a form is only replaced by forms
seen before the same auxiliaries."""

from __future__ import annotations

import polars as pl

from spudflow.nonce.languages.base import LanguageHooks

GOVERNING = ("aux", "mark", "cop")


class JapaneseHooks(LanguageHooks):
    code = "ja"

    def dependent_label(self) -> pl.Expr:
        governing = pl.col("deprel").str.split(":").list.first().is_in(GOVERNING)
        return (pl.when(governing)
                .then(pl.concat_str(pl.col("deprel"), pl.lit("="), pl.col("form")))
                .otherwise(pl.col("deprel")))
