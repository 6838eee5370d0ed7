"""French: elision and its undoing, ce/cet, ma/mon, bel/beau, and adjective position.

Function words before a changed word are made to fit its first sound: le/la -> l', de -> d',
que -> qu', ne -> n', je -> j', se -> s', me -> m', te -> t' before a vowel or mute h (not before
an aspirated h, see fr_aspirated_h.txt), and back before a consonant (le or la from the Gender of
the article's head noun). `du`/`au` become `de l'`/`à l'` through the multiword-token parts;
the reverse (de l' -> du) would need a new multiword token, so a candidate that would need it is
rejected instead, unless the text is written in words (`--multiword-tokens split`, the
reference's), where `de l'` simply becomes `de le`, as `du` is written there.

`protect_ne` (default true): `ne` is never replaced and is no candidate (an ADV in UD, but a
clitic of the negation). False: it is an ADV like any other, as the reference's (its
FrenchReplacer knows no such word), which the paper's French ADV ratio (.92) counts.

`infer_number` (default true, the reference's prep/infer_feats_french.py): an adjective whose
FEATS lack Number takes its head's Number before matching (`fill_feats`).
"""

from __future__ import annotations

import unicodedata
from functools import cache
from importlib import resources

import polars as pl

from spudflow.core.feats import feature
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.languages.inferred_feats import FilledFeats, fill, lacks
from spudflow.nonce.sentence import SentenceView

VOWELS = frozenset("aàâäeéèêëiîïoôöuùûüœæ")
APOSTROPHES = ("'", "’")
# full form -> elided stem (the apostrophe is added in the sentence's own style)
ELISION = {"le": "l", "la": "l", "de": "d", "que": "qu", "ne": "n", "je": "j", "se": "s",
           "me": "m", "te": "t"}
ELIDING_UPOS = frozenset({"DET", "PRON", "ADP", "SCONJ", "ADV", "PART"})
UNELIDED = {"d": "de", "qu": "que", "n": "ne", "j": "je", "s": "se", "m": "me", "t": "te"}
POSSESSIVE = {"ma": "mon", "ta": "ton", "sa": "son"}
# Adjectives with a form of their own before a vowel-initial masculine singular noun.
PRE_VOCALIC_ADJ = {"beau": "bel", "nouveau": "nouvel", "vieux": "vieil", "fou": "fol",
                   "mou": "mol"}
# Vowel-initial words that still block elision (le onze, le oui, le yaourt).
NO_ELISION = frozenset({"onze", "onzième", "oui", "ouistiti", "uhlan", "ululement", "yacht",
                        "yaourt", "yoga", "yen", "yéti", "yod"})


@cache
def aspirated_h() -> frozenset[str]:
    text = resources.files(__package__).joinpath("fr_aspirated_h.txt").read_text("utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines()
                     if line.strip() and not line.startswith("#"))


def _lookup_forms(word: str) -> list[str]:
    """The word and the word without a plural/feminine ending (héros, haches, hautes)."""
    out = [word]
    for ending in ("es", "s", "x", "e"):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            out.append(word[: -len(ending)])
    return out


def starts_with_vowel_sound(word: str) -> bool:
    """True where a preceding le/de/que... elides: a vowel letter or a mute h."""
    word = word.strip("\"«»“”()[]").lower()
    if not word:
        return False
    if word in NO_ELISION:
        return False
    first = word[0]
    if first == "h":
        base = unicodedata.normalize("NFC", word)
        return not any(form in aspirated_h() for form in _lookup_forms(base))
    if first == "y":  # y before a consonant is a vowel (Yves, ypérite); before a vowel, not
        return len(word) > 1 and word[1] not in VOWELS and word[1] != "y"
    return first in VOWELS


def _elided(form: str) -> tuple[str, str] | None:
    """`l'` -> ("l", "'"); `L’` -> ("L", "’"); other forms -> None."""
    for apostrophe in APOSTROPHES:
        if form.endswith(apostrophe) and len(form) > 1:
            return form[:-1], apostrophe
    return None


def _apostrophe(sentence: SentenceView) -> str:
    """The apostrophe this sentence already uses (typographic or straight)."""
    for i in range(sentence.n):
        if "’" in sentence.orig_form(i):
            return "’"
    return "'"


def _with_case(form: str, like: str) -> str:
    return form[:1].upper() + form[1:] if like[:1].isupper() else form


def _gender(sentence: SentenceView, i: int) -> str | None:
    """Gender of the head noun of a determiner/adjective, else its own."""
    head = sentence.head(i)
    if sentence.upos(i) in ("DET", "ADJ") and head is not None:
        gender = sentence.feature(head, "Gender")
        if gender:
            return gender
    return sentence.feature(i, "Gender")


class FrenchHooks(LanguageHooks):
    code = "fr"
    filters_candidates = True
    OPTIONS = {"ordered_context": True, "infer_number": True, "protect_ne": True}

    def case_folded(self, n_words: int) -> range:
        # The reference's FrenchReplacer.postprocess loops over every token.
        return range(n_words)

    def ordered_dependents(self) -> bool:
        """The reference's French pattern config (src/syntactic_patterns.py, `pattern_configs`:
        include_self_in_deprels, not ignore_dependent_order)."""
        return self.options["ordered_context"]

    def context_extra(self) -> pl.Expr | None:
        """Without ordered_context: adjectives before their noun (grand, petit, beau) and after
        it are different contexts, so a pre-nominal adjective only gets adjectives seen before
        their head (the rule the paper describes, App. A.2). With it (the reference) the
        adjective's own context says nothing of its side: only its head's context does."""
        if self.options["ordered_context"]:
            return None
        amod = (pl.col("upos") == "ADJ") & (pl.col("deprel").str.split(":").list.first() == "amod")
        side = pl.when(pl.col("word_index") < pl.col("head")).then(pl.lit("pre")) \
            .otherwise(pl.lit("post"))
        return pl.when(amod).then(side).otherwise(pl.lit(""))

    def fill_feats(self, words: pl.DataFrame) -> FilledFeats | None:
        return infer_number(words) if self.options["infer_number"] else None

    def protected(self) -> pl.Expr | None:
        # `ne` is an ADV in UD but a clitic that elides; swapping it breaks negation.
        if not self.options["protect_ne"]:
            return None
        return pl.col("lemma").str.to_lowercase().is_in(["ne", "n'", "n’"])

    def accept(self, sentence: SentenceView, index: int, form: str) -> bool:
        """Reject a consonant-initial masculine replacement after `de l'` / `à l'` written apart:
        it would need `du`/`au`, a multiword token the input does not have. Text written in
        words has no such tokens: `de le` is what it writes for `du` too."""
        if self.words_apart or index < 2 or starts_with_vowel_sound(form):
            return True
        article = index - 1
        elided = _elided(sentence.form(article))
        if elided is None or elided[0].lower() != "l" or sentence.upos(article) != "DET":
            return True
        before = index - 2
        if sentence.form(before).lower() not in ("de", "à") or sentence.mwt(before) is not None:
            return True
        return _gender(sentence, article) == "Fem"

    def adjust(self, sentence: SentenceView) -> None:
        apostrophe = _apostrophe(sentence)
        # Right to left, so that each word is fitted to the final form of the next one.
        for i in reversed(range(sentence.n - 1)):
            if not (sentence.changed(i + 1) or sentence.changed(i)):
                continue
            form, nxt = sentence.form(i), sentence.form(i + 1)
            vowel = starts_with_vowel_sound(nxt)
            lower = form.lower()
            upos = sentence.upos(i)
            elided = _elided(form)
            if upos in ELIDING_UPOS and lower in ELISION and vowel:
                sentence.set_form(i, _with_case(ELISION[lower], form) + apostrophe)
                sentence.set_space_after(i, False)
            elif upos in ELIDING_UPOS and elided and not vowel:
                stem = elided[0].lower()
                if stem == "l":
                    full = "la" if _gender(sentence, i) == "Fem" else "le"
                elif stem == "s" and sentence.lemma(i).lower() == "si":
                    continue  # s'il: si only elides before il(s), which is never replaced
                else:
                    full = UNELIDED.get(stem)
                if full:
                    sentence.set_form(i, _with_case(full, form))
                    sentence.set_space_after(i, True)
            elif upos == "DET" and lower in ("ce", "cet"):
                sentence.set_form(i, _with_case("cet" if vowel else "ce", form))
            elif upos == "DET" and lower in POSSESSIVE and vowel:
                sentence.set_form(i, _with_case(POSSESSIVE[lower], form))
            elif (upos == "DET" and lower in POSSESSIVE.values() and not vowel
                  and _gender(sentence, i) == "Fem"):
                feminine = {v: k for k, v in POSSESSIVE.items()}[lower]
                sentence.set_form(i, _with_case(feminine, form))
            elif upos == "ADJ" and sentence.feature(i, "Number") != "Plur":
                self._pre_vocalic_adjective(sentence, i, vowel)

    @staticmethod
    def _pre_vocalic_adjective(sentence: SentenceView, i: int, vowel: bool) -> None:
        """beau -> bel before a vowel-initial masculine noun (bel homme), and back."""
        form = sentence.form(i)
        lower = form.lower()
        head = sentence.head(i)
        if head is None or head <= i or _gender(sentence, i) != "Masc":
            return
        if lower in PRE_VOCALIC_ADJ and vowel:
            sentence.set_form(i, _with_case(PRE_VOCALIC_ADJ[lower], form))
        elif lower in PRE_VOCALIC_ADJ.values() and not vowel:
            base = {v: k for k, v in PRE_VOCALIC_ADJ.items()}[lower]
            sentence.set_form(i, _with_case(base, form))

    def join_mwt(self, forms: list[str], orig_forms: list[str], orig_surface: str) -> str:
        """du = de + le -> `de l'` before a vowel: apart, but nothing after an apostrophe."""
        out = forms[0]
        for previous, form in zip(forms, forms[1:], strict=False):
            out += form if previous.endswith(APOSTROPHES) else " " + form
        return out


def infer_number(words: pl.DataFrame) -> FilledFeats:
    """The reference's prep/infer_feats_french.py: an ADJ with FEATS but no Number takes its
    head's Number where the head has one. The reference fills a sentence's words in order, so an
    adjective whose head is an earlier adjective sees the Number that head was given, and one
    whose head comes later sees the head's own; the loop below resolves such chains so."""
    on = ["sent_index", "word_index"]
    tried = (pl.col("upos") == "ADJ") & lacks("Number")
    frame = words.select(*on, "head", tried=tried, own=feature("Number"))
    number = frame.get_column("own")
    while True:
        heads = frame.with_columns(number=number).select(
            "sent_index", pl.col("word_index").alias("head"), head_now=pl.col("number"),
            head_own=pl.col("own"))
        resolved = (frame.join(heads, on=["sent_index", "head"], how="left",
                               maintain_order="left")
                    .select(pl.when(pl.col("tried"))
                            .then(pl.when(pl.col("head") < pl.col("word_index"))
                                  .then(pl.col("head_now")).otherwise(pl.col("head_own")))
                            .otherwise(pl.col("own")))
                    .to_series())
        if resolved.equals(number, check_names=False, null_equal=True):
            break
        number = resolved
    return fill(words, "Number", pl.lit(number), tried, "Number of ADJ")
