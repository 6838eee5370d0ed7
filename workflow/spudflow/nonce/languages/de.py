"""German: an adjective's inflection ending should survive the swap (FEATS alone do not pin it:
strong, weak and mixed declension share them).

As the reference (src/morph_dict_tools/udlex_german.py, `GermanMorphDict.lang_specific_lookup`)
by default: only an adjective whose form ends in -e, -em, -en, -er or -es asks for the same
ending, and takes another form of the candidate's where it has none with that ending; one
without such an ending (predicative `neu`) takes any form. `strict_endings=true`: the ending
class (or none, "-") is required, and a candidate without a form of the class is no candidate.

`infer_case` (default true, the reference's prep/infer_case_german.py): a noun whose FEATS lack
Case takes its determiner's or preposition's Case before matching (`fill_feats`), so a genitive
slot asks for a genitive form, not the candidate's most frequent Case-less one."""

from __future__ import annotations

from functools import partial

import polars as pl

from spudflow.core.feats import feature
from spudflow.nonce.feats_match import Feats, Level, includes
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.languages.inferred_feats import MISSING, FilledFeats, fill, lacks

# -e, -em, -en, -er, -es; "-" stands for none of them (predicative `neu`).
ENDING = r"(em|en|er|es|e)$"


class GermanHooks(LanguageHooks):
    code = "de"
    OPTIONS = {"strict_endings": False, "infer_case": True}

    @property
    def form_class_fallback(self) -> bool:
        return not self.options["strict_endings"]

    def form_class(self) -> pl.Expr:
        # Strict: "-" is a class of its own (no ending); else no class, which asks for none.
        none = "-" if self.options["strict_endings"] else ""
        ending = pl.col("form").str.to_lowercase().str.extract(ENDING, 1).fill_null(none)
        return pl.when(pl.col("upos") == "ADJ").then(ending).otherwise(pl.lit(""))

    def fill_feats(self, words: pl.DataFrame) -> FilledFeats | None:
        return infer_case(words) if self.options["infer_case"] else None

    def feats_levels(self, upos: str, feats: Feats) -> list[Level]:
        """GermanMorphDict.lang_specific_lookup: a noun asks for no Person, a finite verb for no
        VerbForm; an adjective with no form is tried again with Degree=Pos given to the forms
        that lack a Degree. (The reference writes that Degree into its lexicon, so a later
        look-up of the lemma sees it at once; here each word's look-up starts afresh.)"""
        wanted = dict(feats)
        if upos in ("NOUN", "PROPN"):
            wanted.pop("Person", None)
        elif upos == "VERB" and wanted.get("VerbForm") == "Fin":
            del wanted["VerbForm"]
        levels = [partial(includes, wanted)]
        if upos == "ADJ":
            levels.append(lambda have: includes(wanted, {"Degree": "Pos", **have}))
        return levels

    def join_mwt(self, forms: list[str], orig_forms: list[str], orig_surface: str) -> str:
        return " ".join(forms)  # zum -> zu dem, im -> in dem


def _first_child(words: pl.DataFrame, which: pl.Expr, name: str) -> pl.DataFrame:
    """(sent_index, word_index of the head, NAME = FEATS of its first dependent in word order
    that is WHICH); "_" stays "_", so a head whose such child has no FEATS is told apart from
    one without such a child (null after the join)."""
    return (words.filter((pl.col("head") > 0) & which)
            .sort("sent_index", "word_index")
            .group_by("sent_index", "head", maintain_order=True)
            .agg(pl.col("feats").first().fill_null(MISSING).alias(name))
            .rename({"head": "word_index"}))


def infer_case(words: pl.DataFrame) -> FilledFeats:
    """The reference's prep/infer_case_german.py: a NOUN or PROPN with FEATS but no Case takes
    the Case of its first `det` dependent; without one, of its first `case` dependent that is an
    ADP. It does so only when that word has FEATS with a Case and agrees in Gender and Number
    (a feature either word lacks agrees). A first `det` without FEATS leaves the noun as it is,
    even when it has a preposition. (The reference stops at a sentence whose tree its library
    cannot build; an ingested treebank's trees are whole.)"""
    on = ["sent_index", "word_index"]
    donors = (words.select(on)
              .join(_first_child(words, pl.col("deprel") == "det", "det"), on=on, how="left")
              .join(_first_child(words, (pl.col("deprel") == "case") & (pl.col("upos") == "ADP"),
                                 "adp"), on=on, how="left")
              .select(*on, donor=pl.coalesce("det", "adp")))
    with_donor = words.join(donors, on=on, how="left", maintain_order="left")

    def agrees(name: str) -> pl.Expr:
        own, other = feature(name), feature(name, "donor")
        return own.is_null() | other.is_null() | (own == other)

    tried = pl.col("upos").is_in(["NOUN", "PROPN"]) & lacks("Case")
    value = pl.when(agrees("Gender") & agrees("Number")).then(feature("Case", "donor"))
    filled = fill(with_donor, "Case", value, tried, "Case of NOUN/PROPN")
    return FilledFeats(words=filled.words.drop("donor"), what=filled.what, tried=filled.tried,
                       filled=filled.filled)
