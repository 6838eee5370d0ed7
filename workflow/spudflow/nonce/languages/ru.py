"""Russian. Verb case government is not modelled by default: a verb whose object is genitive may
be swapped for one that takes an accusative object, because the context sees only `obj`. With
`strict_case=true` a dependent obj/iobj carries its Case in its head's context (`obj=Gen`), so
verbs are only swapped for verbs seen with objects in the same Case.

Also: the prepositions fit the next word when it changed: о -> об before a vowel (об этом),
в -> во and с -> со before a consonant cluster starting with the same sound (во время, со
всеми, со стороны), and back."""

from __future__ import annotations

from functools import partial

import polars as pl

from spudflow.core.feats import feature
from spudflow.nonce.feats_match import Feats, Level, includes
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.sentence import SentenceView

OBJECTS = ("obj", "iobj")
# Vowel letters said without a leading [j] (е, ё, ю, я start with one: о ёлке).
PLAIN_VOWELS = "аоуэиы"
VOWELS = "аеёиоуыэюя"
# в/с take -о before a cluster whose first consonant is (nearly) their own sound.
CLUSTER_STARTS = {"в": "вф", "с": "сзшж"}


class RussianHooks(LanguageHooks):
    code = "ru"
    OPTIONS = {"strict_case": False}

    def dependent_label(self) -> pl.Expr:
        if not self.options["strict_case"]:
            return pl.col("deprel")
        case = feature("Case")
        is_object = pl.col("deprel").str.split(":").list.first().is_in(OBJECTS)
        return (pl.when(is_object & case.is_not_null())
                .then(pl.concat_str(pl.col("deprel"), pl.lit("="), case))
                .otherwise(pl.col("deprel")))

    def feats_levels(self, upos: str, feats: Feats) -> list[Level]:
        """RussianMorphDict.lang_specific_lookup's fallbacks, each only where the ones before
        found no form: a proper noun without Animacy; an ADJ or ADV of Degree=Pos without
        Degree; a verb step by step without a finite VerbForm, an imperfective Aspect, an
        indicative Mood and an active Voice, each time keeping only forms whose value is that
        one or none. (Its filter of reflexive -ся/-сь forms by the word's ending is left out:
        the reference drops it again wherever the VerbForm step runs.)"""
        wanted = dict(feats)
        levels = [partial(includes, dict(wanted))]
        if upos == "PROPN":
            wanted.pop("Animacy", None)
            levels.append(partial(includes, dict(wanted)))
        if upos in ("ADJ", "ADV") and wanted.get("Degree") == "Pos":
            del wanted["Degree"]
            levels.append(partial(includes, dict(wanted)))
        if upos != "VERB":
            return levels
        kept: list[tuple[str, tuple[str | None, ...]]] = []
        for name, values in (("VerbForm", ("Fin", None)), ("Aspect", ("Imp",)),
                             ("Mood", ("Ind", None)), ("Voice", ("Act", None))):
            if wanted.get(name) not in values:
                continue
            wanted.pop(name, None)
            kept.append((name, values if None in values else (*values, None)))
            levels.append(partial(_verb_level, dict(wanted), tuple(kept)))
        return levels

    def adjust(self, sentence: SentenceView) -> None:
        for i in range(sentence.n - 1):
            if not sentence.changed(i + 1) or sentence.upos(i) != "ADP":
                continue
            preposition = sentence.form(i)
            base = {"во": "в", "со": "с"}.get(preposition.lower(), preposition.lower())
            if base in CLUSTER_STARTS:
                nxt = sentence.form(i + 1).lower()
                cluster = (len(nxt) > 1 and nxt[0] in CLUSTER_STARTS[base]
                           and nxt[1].isalpha() and nxt[1] not in VOWELS)
                sentence.set_form(i, preposition[0] + ("о" if cluster else ""))
                continue
            vowel = sentence.form(i + 1)[:1].lower() in PLAIN_VOWELS
            # об + accusative means "against" and stays; only the prepositional о/об alternates.
            head = sentence.head(i)
            locative = head is not None and sentence.feature(head, "Case") == "Loc"
            if preposition.lower() == "о" and vowel and locative:
                sentence.set_form(i, preposition + "б")
            elif preposition.lower() == "об" and not vowel and locative:
                sentence.set_form(i, preposition[0])


def _verb_level(wanted: Feats, kept: tuple[tuple[str, tuple[str | None, ...]], ...],
                have: Feats) -> bool:
    return includes(wanted, have) and all(have.get(name) in values for name, values in kept)
