"""Features filled in before matching, as the reference's preprocessing (TaniaBladier/spud,
prep/infer_case_german.py and prep/infer_feats_french.py): German nouns without Case take their
determiner's or preposition's, French adjectives without Number take their head's."""

from __future__ import annotations

import gzip

import polars as pl
import pytest
from nonce_helpers import conllu, ingest, nonce

from spudflow.core.feats import feature
from spudflow.nonce.languages import get_hooks
from spudflow.nonce.languages.de import infer_case
from spudflow.nonce.languages.fr import infer_number
from spudflow.nonce.languages.inferred_feats import with_feature
from spudflow.nonce.words import detect_mode, word_frame

from conftest import VENDORED_UD

VERB_3SG = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
MASC_SG = "Gender=Masc|Number=Sing"


def words(*rows: tuple[int, int, str, str, str]) -> pl.DataFrame:
    """One sentence's words: (word_index, head, upos, feats, deprel)."""
    return pl.DataFrame(
        [(0, *row) for row in rows], orient="row",
        schema={"sent_index": pl.Int64, "word_index": pl.Int64, "head": pl.Int64,
                "upos": pl.String, "feats": pl.String, "deprel": pl.String})


def feats_of(frame: pl.DataFrame) -> list[str]:
    return frame.sort("word_index").get_column("feats").to_list()


def test_a_feature_goes_where_ud_orders_it():
    assert with_feature(MASC_SG, "Case", "Gen") == "Case=Gen|Gender=Masc|Number=Sing"
    assert with_feature("Gender=Fem|PronType=Art", "Number", "Plur") == \
        "Gender=Fem|Number=Plur|PronType=Art"
    assert with_feature("Gender=Masc", "Number", "Sing") == "Gender=Masc|Number=Sing"
    assert with_feature("Definite=Def|NumType=Card", "Number", "Sing") == \
        "Definite=Def|Number=Sing|NumType=Card"


def test_german_case_comes_from_the_first_det_else_the_preposition():
    det_gen = "Case=Gen|Gender=Masc|Number=Sing|PronType=Art"
    filled = infer_case(words(
        (1, 2, "DET", det_gen, "det"),
        (2, 0, "NOUN", MASC_SG, "root"),                       # <- des: Gen
        (3, 5, "ADP", "AdpType=Prep|Case=Dat", "case"),
        (4, 5, "DET", "Case=Acc|Gender=Fem|Number=Sing|PronType=Art", "det"),
        (5, 2, "NOUN", "Gender=Fem|Number=Sing", "nmod"),      # <- the det wins: Acc
        (6, 7, "ADP", "AdpType=Prep|Case=Dat", "case"),
        (7, 2, "PROPN", "Gender=Fem|Number=Sing", "nmod"),     # <- no det: the ADP's Dat
        (8, 10, "DET", "_", "det"),
        (9, 10, "ADP", "AdpType=Prep|Case=Dat", "case"),
        (10, 2, "NOUN", "Gender=Neut|Number=Sing", "nmod"),    # det without FEATS: left
        (11, 12, "DET", det_gen, "det"),
        (12, 2, "NOUN", "Gender=Fem|Number=Sing", "nmod"),     # Gender disagrees: left
        (13, 14, "DET", "Case=Nom|Number=Plur|PronType=Art", "det"),
        (14, 2, "NOUN", "Gender=Neut", "nmod"),                # either lacks a feature: agrees
        (15, 2, "NOUN", "_", "nmod"),                          # no FEATS: not tried
        (16, 17, "DET", det_gen, "det"),
        (17, 2, "NOUN", "Case=Nom|Gender=Masc|Number=Sing", "nmod"),  # has Case: untouched
        (18, 20, "DET", "Gender=Masc|Number=Sing|PronType=Art", "det"),
        (19, 20, "DET", det_gen, "det"),
        (20, 2, "NOUN", MASC_SG, "nmod"),                      # first det has no Case: left
        (21, 22, "ADP", "AdpType=Prep|Case=Acc", "case"),
        (22, 2, "ADJ", "Degree=Pos", "amod"),                  # not a noun
    ))
    got = feats_of(filled.words)
    assert got[1] == "Case=Gen|Gender=Masc|Number=Sing"
    assert got[4] == "Case=Acc|Gender=Fem|Number=Sing"
    assert got[6] == "Case=Dat|Gender=Fem|Number=Sing"
    assert got[9] == "Gender=Neut|Number=Sing"
    assert got[11] == "Gender=Fem|Number=Sing"
    assert got[13] == "Case=Nom|Gender=Neut"
    assert got[14] == "_"
    assert got[16] == "Case=Nom|Gender=Masc|Number=Sing"
    assert got[19] == MASC_SG
    assert got[21] == "Degree=Pos"
    # Tried: the Case-less nouns with FEATS (the reference's counters).
    assert (filled.tried, filled.filled) == (7, 4)
    assert filled.what == "Case of NOUN/PROPN"


def test_french_number_comes_from_the_head_as_the_reference_fills_in_order():
    filled = infer_number(words(
        (1, 2, "ADJ", "Gender=Masc", "amod"),         # head later, itself without Number: left
        (2, 4, "ADJ", "Gender=Masc", "amod"),         # head later: the noun's Plur
        (3, 2, "ADJ", "Gender=Masc", "conj"),         # head earlier, filled first: Plur
        (4, 0, "NOUN", "Gender=Masc|Number=Plur", "root"),
        (5, 4, "ADJ", "_", "amod"),                   # no FEATS: not tried
        (6, 4, "ADJ", "Gender=Fem|Number=Sing", "amod"),  # has Number: untouched
        (7, 0, "ADJ", "Gender=Fem", "root"),          # no head: left
        (8, 9, "ADJ", "Gender=Fem", "amod"),          # head without Number: left
        (9, 4, "NOUN", "Gender=Fem", "nmod"),
    ))
    got = feats_of(filled.words)
    assert got[:3] == ["Gender=Masc", "Gender=Masc|Number=Plur", "Gender=Masc|Number=Plur"]
    assert got[4:] == ["_", "Gender=Fem|Number=Sing", "Gender=Fem", "Gender=Fem",
                       "Gender=Fem"]
    assert (filled.tried, filled.filled) == (5, 2)


# `Der Hund des Mannes bellt`: Mannes has no Case, its article is genitive. Baum is the only
# other noun seen in its context (NOUN|nmod|det); Baum's only Case-less form is the nominative.
GENITIVE = ["""
1 Der der DET Case=Nom|Gender=Masc|Number=Sing|PronType=Art 2 det
2 Hund Hund NOUN Case=Nom|Gender=Masc|Number=Sing 5 nsubj
3 des der DET Case=Gen|Gender=Masc|Number=Sing|PronType=Art 4 det
4 Mannes Mann NOUN Gender=Masc|Number=Sing 2 nmod
5 bellt bellen VERB {verb} 0 root
""", """
1 Der der DET Case=Nom|Gender=Masc|Number=Sing|PronType=Art 2 det
2 Hund Hund NOUN Case=Nom|Gender=Masc|Number=Sing 5 nsubj
3 des der DET Case=Gen|Gender=Masc|Number=Sing|PronType=Art 4 det
4 Baumes Baum NOUN Case=Gen|Gender=Masc|Number=Sing 2 nmod
5 bellt bellen VERB {verb} 0 root
""", """
1 Der der DET Case=Nom|Gender=Masc|Number=Sing|PronType=Art 2 det
2 Baum Baum NOUN Gender=Masc|Number=Sing 3 nsubj
3 wächst wachsen VERB {verb} 0 root
"""]


def _nonce_word(tokens: pl.DataFrame, sentence: int, word: int) -> dict:
    return tokens.filter((pl.col("sent_index") == sentence) & (pl.col("word_index") == word)
                         ).row(0, named=True)


@pytest.mark.parametrize("method", ["spud", "pos"])
def test_a_german_genitive_slot_without_case_gets_the_genitive_form(tmp_path, method):
    directory = ingest(tmp_path, conllu(*(s.format(verb=VERB_3SG) for s in GENITIVE)))
    tokens, _ = nonce(directory, "de", method=method, out=tmp_path / "on")
    # pos: Hund is a candidate too, but has no genitive form.
    word = _nonce_word(tokens, 0, 4)
    assert (word["form"], word["lemma"]) == ("Baumes", "Baum")
    # The written treebank keeps its own FEATS.
    assert word["feats"] == MASC_SG
    # Without the filling the slot asks for Baum's Case-less form: the nominative.
    off, _ = nonce(directory, "de", "--option", "infer_case=false", method=method,
                   out=tmp_path / "off")
    assert _nonce_word(off, 0, 4)["form"] == "Baum"


def test_a_french_adjective_without_number_takes_its_nouns_plural(tmp_path):
    def sentence(det: str, noun: str, noun_lemma: str, noun_feats: str, adj: str, adj_lemma: str,
                 adj_feats: str) -> str:
        return f"""
1 {det} le DET Definite=Def|PronType=Art 2 det
2 {noun} {noun_lemma} NOUN {noun_feats} 4 nsubj
3 {adj} {adj_lemma} ADJ {adj_feats} 2 amod
4 dorment dormir VERB Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin 0 root
"""
    directory = ingest(tmp_path, conllu(
        # noirs has no Number; blanc's only Number-less form is singular.
        sentence("les", "chats", "chat", "Gender=Masc|Number=Plur", "noirs", "noir",
                 "Gender=Masc"),
        sentence("les", "chiens", "chien", "Gender=Masc|Number=Plur", "blancs", "blanc",
                 "Gender=Masc|Number=Plur"),
        sentence("le", "chat", "chat", "Gender=Masc|Number=Sing", "blanc", "blanc",
                 "Gender=Masc")))
    tokens, _ = nonce(directory, "fr", out=tmp_path / "on")
    word = _nonce_word(tokens, 0, 3)
    assert (word["form"], word["feats"]) == ("blancs", "Gender=Masc")
    off, _ = nonce(directory, "fr", "--option", "infer_number=false", out=tmp_path / "off")
    assert _nonce_word(off, 0, 3)["form"] == "blanc"


def test_the_lexicon_and_the_slots_see_the_filled_features_and_posfree_does_not(tmp_path):
    directory = ingest(tmp_path, conllu(*(s.format(verb=VERB_3SG) for s in GENITIVE)))
    tokens = pl.read_parquet(directory / "tokens.parquet").sort("sent_index", "token_index")
    mode = detect_mode(tokens, ["NOUN"])
    morph = word_frame(tokens, get_hooks("de"), mode).filter(pl.col("upos") == "NOUN")
    assert morph.get_column("morph").to_list() == [
        "Case=Nom|Gender=Masc|Number=Sing", "Case=Gen|Gender=Masc|Number=Sing",
        "Case=Nom|Gender=Masc|Number=Sing", "Case=Gen|Gender=Masc|Number=Sing",
        "Case=Nom|Gender=Masc|Number=Sing"]
    off = word_frame(tokens, get_hooks("de", {"infer_case": "false"}), mode)
    assert off.filter(pl.col("upos") == "NOUN").get_column("morph").to_list()[1] == MASC_SG
    # posfree applies no language rule: Mannes keeps its Case-less FEATS, and Baum's Case-less
    # nominative form is what it gets (the only other noun of a Masc Sg form without Case).
    posfree, _ = nonce(directory, "de", method="posfree", out=tmp_path / "posfree")
    assert _nonce_word(posfree, 0, 4)["form"] == "Baum"


def _without(text: str, name: str, upos: set[str]) -> str:
    """CoNLL-U TEXT with feature NAME taken out of the FEATS of every word of UPOS."""
    lines = []
    for line in text.split("\n"):
        fields = line.split("\t")
        if len(fields) == 10 and fields[3] in upos and fields[5] != "_":
            kept = [f for f in fields[5].split("|") if not f.startswith(f"{name}=")]
            fields[5] = "|".join(kept) or "_"
        lines.append("\t".join(fields))
    return "\n".join(lines)


def test_german_pud_fills_what_the_reference_fills(tmp_path):
    """Counts of the reference's loop (prep/infer_case_german.py, re-run with conllu on the same
    file; its FEATS word for word the same): 1 of German PUD's 41 nouns without Case gets one;
    with every noun's Case taken out, 2,683 of 5,404 get one back, 2,677 of them the treebank's."""
    text = gzip.decompress((VENDORED_UD / "UD_German-PUD" / "de_pud-ud-test.conllu.gz")
                           .read_bytes()).decode("utf-8")
    counts, frames = {}, {}
    for name, source in (("as_is", text), ("stripped", _without(text, "Case", {"NOUN", "PROPN"}))):
        tokens = pl.read_parquet(ingest(tmp_path, source, name=name) / "tokens.parquet")
        frame = tokens.filter(pl.col("token_type") == "word").select(
            "sent_index", "word_index", "head", "upos", "feats", "deprel")
        filled = infer_case(frame)
        counts[name], frames[name] = (filled.tried, filled.filled), filled.words
    assert counts == {"as_is": (41, 1), "stripped": (5404, 2683)}
    truth = frames["as_is"].select("sent_index", "word_index", truth="feats")
    got = frames["stripped"].join(truth, on=["sent_index", "word_index"])
    refilled = got.filter(pl.col("upos").is_in(["NOUN", "PROPN"]) & feature("Case").is_not_null())
    assert refilled.height == 2683
    assert refilled.filter(feature("Case") == feature("Case", "truth")).height == 2677
