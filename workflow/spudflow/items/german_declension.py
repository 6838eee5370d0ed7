"""Declension of German masculine singular noun phrases in the four cases.

The templates use nominative, accusative and dative (`CASES`); the genitive is declined too
(`ALL_CASES`). Four noun classes:
- strong nouns keep their form but take -s or -es in the genitive (der Mann, den/dem Mann,
  des Manns; der Tisch, des Tisches);
- weak nouns (n-declension) take -(e)n outside the nominative (der Student, den/dem/des
  Studenten; der Kollege, den/dem/des Kollegen; der Herr, den/dem/des Herrn);
- mixed nouns decline weak but take -ns in the genitive (der Name, den/dem Namen, des Namens);
- nominalised adjectives decline as adjectives: after der/dieser/jeder the weak endings
  (der Abgeordnete, den/dem/des Abgeordneten), after ein-words the mixed ones (ein Abgeordneter,
  einen/einem/eines Abgeordneten). They are recognised by their stem (Abgeordnet-, also as the
  last part of a compound: Bundesabgeordneter) and may be given as `Abgeordneter` or `Abgeordnete`.

A noun's class comes from its last part: the longest listed word or ending the noun ends in
(Präsidentschaftskandidat declines as Kandidat, Technokrat by -krat, Stadtrat as Rat), else from
productive patterns: -e (not -ee, -ie) is weak; -ent, -ant, -ist, -at, -ot are weak when the noun
is animate or its animacy is not given, strong when it is inanimate (the inanimate strong ones
that templates may meet without animacy, der Moment, Zement, Kontinent, Apparat, ..., are listed).
"""

from __future__ import annotations

CASES = ("N", "A", "D")
ALL_CASES = ("N", "A", "D", "G")

# Masculine singular endings: definite-type determiners (der-words) and ein-words.
_DER_WORDS = {"der": ("der", "den", "dem", "des"),
              "dieser": ("dieser", "diesen", "diesem", "dieses"),
              "jeder": ("jeder", "jeden", "jedem", "jedes")}
_EIN_WORDS = {
    "ein": ("ein", "einen", "einem", "eines"), "kein": ("kein", "keinen", "keinem", "keines"),
    "mein": ("mein", "meinen", "meinem", "meines"),
    "dein": ("dein", "deinen", "deinem", "deines"),
    "sein": ("sein", "seinen", "seinem", "seines"), "ihr": ("ihr", "ihren", "ihrem", "ihres"),
    "unser": ("unser", "unseren", "unserem", "unseres"),
    # euer drops the e of its stem before an ending.
    "euer": ("euer", "euren", "eurem", "eures"),
}
DETERMINERS = {**_DER_WORDS, **_EIN_WORDS}

# Weak nouns whose oblique form is noun + "n" although they do not end in -e.
_WEAK_N = frozenset({"herr", "nachbar", "bauer", "bayer", "ungar",
                     # farmers, unlike the strong builders (Orgelbauer) that also end in -bauer
                     "bergbauer", "biobauer", "großbauer", "jungbauer", "kleinbauer"})
# Weak nouns and endings (lower case) that the patterns below would miss or get wrong.
_WEAK = frozenset({
    "advokat", "agent", "architekt", "assistent", "astronom", "athlet", "automat", "bandit",
    "barbar", "bär", "brillant", "christ", "demonstrant", "diamant", "diplomat", "dirigent",
    "elefant", "fink", "fürst", "gepard", "gigant", "graf", "graph", "greif", "held", "hirt",
    "kamerad", "kandidat", "kastrat", "katholik", "komet", "konkurrent", "konsonant", "krat",
    "kurat", "leopard", "lieferant", "literat", "mensch", "monarch", "musikant", "narr", "naut",
    "obelisk", "patient", "pilot", "pirat", "planet", "poet", "praktikant", "prinz", "produzent",
    "präsident", "quadrant", "quotient", "rebell", "satellit", "sextant", "soldat", "soph",
    "spatz", "student", "trabant", "tyrann", "vagabund", "ökonom",
    # weak only as whole words (see _WHOLE_WORD_ONLY)
    "bub", "zar",
})
# Mixed nouns: weak, genitive -ns.
_MIXED = frozenset({"buchstabe", "friede", "funke", "gedanke", "glaube", "haufe", "name", "same",
                    "wille"})
# Strong nouns that a pattern would make weak: inanimate -ent/-ant/-at/-ot/-ist/-e nouns, and
# animate ones (Stadtrat, Leutnant, Geist, Single).
_STRONG = frozenset({
    "advent", "akzent", "apparat", "bot", "brokat", "charme", "client", "event", "geist", "gott",
    "kontinent", "konvent", "kot", "käse", "leutnant", "maat", "magistrat", "mist", "moment",
    "monat", "okzident", "orient", "ornat", "pierrot", "proviant", "rat", "sabbat", "salat",
    "schrot", "senat", "service", "single", "spinat", "staat", "twist", "zement", "zwist",
})
# Listed words that are not the last part of every noun ending in them (Optimist is not a Mist,
# Orgelbauer not a Bauer, Bazar not a Zar): they count only as whole words.
_WHOLE_WORD_ONLY = frozenset({"bauer", "bub", "mist", "zar"})
_LEXICON = {
    **{w: "weak" for w in _WEAK}, **{w: "weak" for w in _WEAK_N},
    **{w: "mixed" for w in _MIXED}, **{w: "strong" for w in _STRONG},
}
# Endings of animate weak masculines (der Dozent, Passant, Polizist, Kandidat, Patriot).
_ANIMATE_WEAK_ENDINGS = ("ent", "ant", "ist", "at", "ot")
# A final s after these takes -es in the genitive (des Preises); after another vowel it varies.
_DIPHTHONG_S = ("ais", "eis", "aus", "eus", "äus", "ies")
# Genitives not made by the rule below.
_STRONG_GENITIVE = {"gott": "es"}

# Stems of masculine nominalised adjectives and participles.
_ADJECTIVAL_STEMS = frozenset({
    "Abgeordnet", "Angehörig", "Angeklagt", "Angestellt", "Arbeitslos", "Auszubildend",
    "Beamt", "Bekannt", "Beschuldigt", "Betroffen", "Deutsch", "Erwachsen", "Fremd",
    "Gefangen", "Geliebt", "Jugendlich", "Krank", "Obdachlos", "Reisend", "Sachverständig",
    "Verdächtig", "Verletzt", "Verlobt", "Verstorben", "Vertraut", "Verwandt", "Vorgesetzt",
    "Vorsitzend", "Überlebend",
})
_ADJECTIVAL_TAILS = frozenset(s.lower() for s in _ADJECTIVAL_STEMS)


class DeclensionError(ValueError):
    """An unknown determiner or case, or a form the rules cannot decide."""


def adjectival_stem(noun: str) -> str | None:
    """Abgeordneter -> Abgeordnet, Bundesbeamte -> Bundesbeamt; None for other nouns."""
    for ending in ("er", "e"):
        if not noun.endswith(ending):
            continue
        stem = noun[: -len(ending)]
        lower = stem.lower()
        if any(lower.endswith(tail) for tail in _ADJECTIVAL_TAILS):
            return stem
    return None


def _listed_head(noun: str) -> str | None:
    """The longest listed word or ending that ends the noun (its last compound part)."""
    lower = noun.lower()
    for size in range(len(lower), 1, -1):
        tail = lower[-size:]
        if tail in _LEXICON and (size == len(lower) or tail not in _WHOLE_WORD_ONLY):
            return tail
    return None


def noun_class(noun: str, animate: bool | None = None) -> str:
    """"adjectival", "weak", "mixed" or "strong" for a masculine noun in the nominative singular.

    `animate` (from the template's flags) decides the -ent/-ant/-ist/-at/-ot pattern; None means
    not given, and the pattern applies."""
    if adjectival_stem(noun) is not None:
        return "adjectival"
    head = _listed_head(noun)
    if head is not None:
        return _LEXICON[head]
    lower = noun.lower()
    if lower.endswith("e") and not lower.endswith(("ee", "ie")):
        return "weak"
    if lower.endswith(_ANIMATE_WEAK_ENDINGS) and animate is not False:
        return "weak"
    return "strong"


def _strong_genitive(noun: str) -> str:
    lower = noun.lower()
    head = _listed_head(noun)
    if head in _STRONG_GENITIVE:
        return noun + _STRONG_GENITIVE[head]
    if lower.endswith(("ß", "x", "z", "sch")):
        return noun + "es"
    if lower.endswith("s"):
        # Kurs, Preis, Mais: -es; Bus (Busses), Kaktus, Atlas, Kosmos (no ending, -ses) vary.
        if lower[-2] not in "aeiouäöüy" or lower.endswith(_DIPHTHONG_S):
            return noun + "es"
        raise DeclensionError(f"the genitive of {noun!r} is not decided by rule")
    # Duden allows -s beside -es after any other ending (des Mann[e]s, des Brief[e]s).
    return noun + "s"


def decline_determiner(lemma: str, case: str) -> str:
    if lemma not in DETERMINERS:
        raise DeclensionError(f"unknown determiner {lemma!r} (known: {', '.join(DETERMINERS)})")
    return DETERMINERS[lemma][ALL_CASES.index(case)]


def decline_noun(noun: str, case: str, determiner: str, animate: bool | None = None) -> str:
    """The noun's form in `case` after the determiner lemma `determiner`."""
    if determiner not in DETERMINERS:
        raise DeclensionError(f"unknown determiner {determiner!r}")
    declension = noun_class(noun, animate)
    if declension == "adjectival":
        stem = adjectival_stem(noun)
        if case != "N":
            return stem + "en"
        # Weak adjective ending after der-words, strong (mixed) ending after ein-words.
        return stem + ("e" if determiner in _DER_WORDS else "er")
    if case == "N":
        return noun
    if declension == "strong":
        return _strong_genitive(noun) if case == "G" else noun
    oblique = noun + ("n" if noun.endswith("e") or _listed_head(noun) in _WEAK_N else "en")
    return oblique + "s" if declension == "mixed" and case == "G" else oblique


def noun_phrase(determiner: str, noun: str, case: str, animate: bool | None = None) -> str:
    """`noun_phrase("der", "Polizist", "D")` -> "dem Polizisten"."""
    if case not in ALL_CASES:
        raise DeclensionError(f"unknown case {case!r}")
    return f"{decline_determiner(determiner, case)} {decline_noun(noun, case, determiner, animate)}"
