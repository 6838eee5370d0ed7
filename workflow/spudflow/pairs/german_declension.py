"""Declension of German masculine singular noun phrases in nominative, accusative and dative.

Three noun classes matter in these cases:
- strong nouns keep their form (der Mann, den Mann, dem Mann);
- weak nouns (n-declension) take -(e)n outside the nominative (der Polizist, den/dem Polizisten;
  der Junge, den Jungen; der Herr, den Herrn): the listed nouns, masculine nouns in -e (but not
  -ee: der Kaffee) and nouns in -ist; the mixed nouns in -e (Name, Gedanke) decline alike here;
- nominalised adjectives decline as adjectives: after der/dieser/jeder the weak endings
  (der Abgeordnete, den/dem Abgeordneten), after ein-words the mixed ones (ein Abgeordneter,
  einen/einem Abgeordneten). They are recognised by their stem (Abgeordnet-) and may be given as
  `Abgeordneter` or `Abgeordnete`.
"""

from __future__ import annotations

CASES = ("N", "A", "D")
CASE_NAMES = {"N": "nominative", "A": "accusative", "D": "dative"}

# Masculine singular endings: definite-type determiners (der-words) and ein-words.
_DER_WORDS = {"der": ("der", "den", "dem"), "dieser": ("dieser", "diesen", "diesem"),
              "jeder": ("jeder", "jeden", "jedem")}
_EIN_WORDS = {
    "ein": ("ein", "einen", "einem"), "kein": ("kein", "keinen", "keinem"),
    "mein": ("mein", "meinen", "meinem"), "dein": ("dein", "deinen", "deinem"),
    "sein": ("sein", "seinen", "seinem"), "ihr": ("ihr", "ihren", "ihrem"),
    "unser": ("unser", "unseren", "unserem"),
    # euer drops the e of its stem before an ending.
    "euer": ("euer", "euren", "eurem"),
}
DETERMINERS = {**_DER_WORDS, **_EIN_WORDS}

# Weak nouns whose oblique form is not simply noun + "en" / noun + "n" for final -e.
_WEAK_N = {"Herr": "Herrn", "Nachbar": "Nachbarn", "Bauer": "Bauern", "Bayer": "Bayern",
           "Ungar": "Ungarn"}
# Weak nouns not caught by the -e / -ist rules.
_WEAK_EN = frozenset({
    "Advokat", "Agent", "Architekt", "Assistent", "Astronaut", "Astronom", "Athlet", "Automat",
    "Bandit", "Bär", "Bürokrat", "Christ", "Demokrat", "Demonstrant", "Diamant", "Diplomat",
    "Dirigent", "Elefant", "Fotograf", "Fürst", "Graf", "Held", "Hirt", "Kamerad", "Kandidat",
    "Katholik", "Komet", "Konkurrent", "Lieferant", "Mensch", "Monarch", "Musikant", "Narr",
    "Patient", "Philosoph", "Pilot", "Planet", "Poet", "Praktikant", "Prinz", "Produzent",
    "Präsident", "Soldat", "Student",
})
# Nouns in -e or -ist that are strong all the same.
_STRONG_EXCEPTIONS = frozenset({"Käse", "Mist", "Zwist"})

# Stems of masculine nominalised adjectives and participles.
_ADJECTIVAL_STEMS = frozenset({
    "Abgeordnet", "Angehörig", "Angeklagt", "Angestellt", "Arbeitslos", "Auszubildend",
    "Beamt", "Bekannt", "Beschuldigt", "Betroffen", "Deutsch", "Erwachsen", "Fremd",
    "Gefangen", "Geliebt", "Jugendlich", "Krank", "Obdachlos", "Reisend", "Sachverständig",
    "Verdächtig", "Verletzt", "Verlobt", "Verstorben", "Vertraut", "Verwandt", "Vorgesetzt",
    "Vorsitzend", "Überlebend",
})


class DeclensionError(ValueError):
    """An unknown determiner or an unusable noun."""


def adjectival_stem(noun: str) -> str | None:
    for ending in ("er", "e"):
        if noun.endswith(ending) and noun[: -len(ending)] in _ADJECTIVAL_STEMS:
            return noun[: -len(ending)]
    return None


def noun_class(noun: str) -> str:
    """"adjectival", "weak" or "strong" for a masculine noun in the nominative singular."""
    if adjectival_stem(noun) is not None:
        return "adjectival"
    if noun in _WEAK_N or noun in _WEAK_EN:
        return "weak"
    if noun in _STRONG_EXCEPTIONS:
        return "strong"
    if (noun.endswith("e") and not noun.endswith("ee")) or noun.endswith("ist"):
        return "weak"
    return "strong"


def decline_determiner(lemma: str, case: str) -> str:
    if lemma not in DETERMINERS:
        raise DeclensionError(f"unknown determiner {lemma!r} (known: {', '.join(DETERMINERS)})")
    return DETERMINERS[lemma][CASES.index(case)]


def decline_noun(noun: str, case: str, determiner: str) -> str:
    """The noun's form in `case` after the determiner lemma `determiner`."""
    if determiner not in DETERMINERS:
        raise DeclensionError(f"unknown determiner {determiner!r}")
    kind = noun_class(noun)
    if kind == "adjectival":
        stem = adjectival_stem(noun)
        if case != "N":
            return stem + "en"
        # Weak adjective ending after der-words, strong (mixed) ending after ein-words.
        return stem + ("e" if determiner in _DER_WORDS else "er")
    if kind == "weak" and case != "N":
        if noun in _WEAK_N:
            return _WEAK_N[noun]
        return noun + ("n" if noun.endswith("e") else "en")
    return noun


def noun_phrase(determiner: str, noun: str, case: str) -> str:
    """`noun_phrase("der", "Polizist", "D")` -> "dem Polizisten"."""
    if case not in CASES:
        raise DeclensionError(f"unknown case {case!r}")
    return f"{decline_determiner(determiner, case)} {decline_noun(noun, case, determiner)}"
