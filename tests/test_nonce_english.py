"""English: a/an follows the pronunciation of the next word (CMU dictionary, spelling fallback)."""

from __future__ import annotations

import pytest
from nonce_helpers import run_texts

from spudflow.nonce.languages.en import starts_with_vowel_sound


def saw(article: str, noun: str, lemma: str, upos: str = "NOUN", subject: str = "She") -> str:
    return f"""
1 {subject} she PRON Case=Nom|Number=Sing|Person=3|PronType=Prs 2 nsubj
2 saw see VERB Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin 0 root
3 {article} a DET Definite=Ind|PronType=Art 4 det
4 {noun} {lemma} {upos} Number=Sing 2 obj SpaceAfter=No
5 . . PUNCT _ 2 punct
"""


@pytest.mark.parametrize(("first", "second"), [
    (("an", "apple", "apple"), ("a", "university", "university")),
    (("a", "dog", "dog"), ("an", "hour", "hour")),
    (("a", "degree", "degree"), ("an", "MBA", "MBA")),
    (("a", "scan", "scan"), ("an", "X-ray", "x-ray")),
    (("a", "book", "book"), ("an", "honour", "honour")),
])
def test_article_follows_the_sound_of_the_swapped_noun(tmp_path, first, second):
    # Two words in one context: each must become the other, with the article fixed.
    texts = run_texts(tmp_path, "en", saw(*first), saw(*second))
    assert texts == [f"She saw {second[0]} {second[1]}.", f"She saw {first[0]} {first[1]}."]


def test_article_before_a_swapped_adjective_and_capital_article(tmp_path):
    def trip(article: str, adjective: str) -> str:
        return f"""
1 {article} a DET Definite=Ind|PronType=Art 3 det
2 {adjective} {adjective.lower()} ADJ Degree=Pos 3 amod
3 trip trip NOUN Number=Sing 0 root SpaceAfter=No
4 . . PUNCT _ 3 punct
"""
    texts = run_texts(tmp_path, "en", trip("An", "old"), trip("A", "one-day"))
    assert texts == ["A one-day trip.", "An old trip."]


def test_article_looks_past_an_opening_quote(tmp_path):
    def quoted(article: str, noun: str) -> str:
        return f"""
1 It it PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 is be VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
3 {article} a DET Definite=Ind|PronType=Art 5 det
4 “ “ PUNCT _ 5 punct SpaceAfter=No
5 {noun} {noun} NOUN Number=Sing 2 obj SpaceAfter=No
6 ” ” PUNCT _ 5 punct
"""
    texts = run_texts(tmp_path, "en", quoted("a", "merit"), quoted("an", "idea"))
    assert texts == ["It is an “idea”", "It is a “merit”"]


def test_without_the_rule_the_article_is_left_alone(tmp_path):
    # The same data under a language without rules: the swap happens, the article stays.
    texts = run_texts(tmp_path, "xx", saw("an", "apple", "apple"),
                      saw("a", "university", "university"))
    assert texts == ["She saw an university.", "She saw a apple."]


@pytest.mark.parametrize(("word", "vowel"), [
    ("university", False), ("hour", True), ("one-day", False), ("MBA", True), ("X-ray", True),
    ("apple", True), ("European", False), ("honest", True), ("UFO", False), ("FBI", True),
    ("8-year-old", True), ("11th", True), ("18", True), ("1990s", False), ("100", False),
    ("“idea", True), ("unicornish", False), ("Zxqvbn", False), ("ossuarylike", True),
    ("NXQ", True), ("KLPZ", False), ("heirloomish", True),
])
def test_vowel_sound(word, vowel):
    assert starts_with_vowel_sound(word) is vowel


@pytest.mark.parametrize(("word", "vowel"), [
    # letter by letter: the first letter's name decides, before the dictionary (which has the
    # words "us" and "un")
    ("US", False), ("UN", False), ("FBI", True), ("NBA", True), ("MRI", True), ("URL", False),
    ("USA", False), ("EU", True), ("HTML", True), ("NCAA", True), ("UNHCR", False),
    ("IAEA", True), ("MRIs", True), ("US-based", False), ("UN’s", False), ("SUV", True),
    # said as words: the dictionary, else U is "you"
    ("NASA", False), ("UNESCO", False), ("NATO", False), ("AIDS", True), ("OPEC", True),
    ("SCUBA", False), ("NASA's", False), ("SIM", False), ("RAM", False), ("UEFA", False),
    ("USAF", False), ("NIMBY", False),
    # a single capital before a hyphen is its letter's name
    ("U-turn", False), ("A-list", True), ("T-shirt", False), ("X", True),
])
def test_acronym_reading_is_decided_before_the_dictionary(word, vowel):
    assert starts_with_vowel_sound(word) is vowel


@pytest.mark.parametrize(("word", "vowel"), [
    ("hour", True), ("university", False), ("honest", True), ("one-off", False),
    ("8-year-old", True), ("11", True),
    # other digits count by their value: superscript, Arabic-Indic, full-width
    ("²nd", False), ("⁸", True), ("١١", True), ("８０", True), ("½", False),
])
def test_words_and_non_ascii_digits(word, vowel):
    assert starts_with_vowel_sound(word) is vowel


def test_article_before_a_swapped_acronym(tmp_path):
    texts = run_texts(tmp_path, "en", saw("an", "FBI", "FBI", upos="PROPN"),
                      saw("a", "US", "US", upos="PROPN"))
    assert texts == ["She saw a US.", "She saw an FBI."]
