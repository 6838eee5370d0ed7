"""French: elision both ways (accents, mute and aspirated h), ce/cet, ma/mon, beau/bel, du ->
de l', adjective position, protected `ne`, and a final `le`."""

from __future__ import annotations

import polars as pl
import pytest
from nonce_helpers import conllu, ingest, nonce, run_texts, texts

from spudflow.nonce.languages.fr import starts_with_vowel_sound

VERB_3SG = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
MASC, FEM = "Gender=Masc|Number=Sing", "Gender=Fem|Number=Sing"


def voit(article: str, lemma_article: str, noun: str, feats: str, article_feats: str = "_",
         article_misc: str = "_") -> str:
    """`Il voit ARTICLE NOUN .`"""
    return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 voit voir VERB {VERB_3SG} 0 root
3 {article} {lemma_article} DET {article_feats} 4 det {article_misc}
4 {noun} {noun} NOUN {feats} 2 obj SpaceAfter=No
5 . . PUNCT _ 2 punct
"""


ELIDED = "SpaceAfter=No"


@pytest.mark.parametrize(("first", "second", "expected"), [
    # le <-> l' (masculine), la <-> l' (feminine), with é and mute h
    (("le", "le", "chien", MASC), ("l'", "le", "arbre", MASC, "_", ELIDED),
     ["Il voit l'arbre.", "Il voit le chien."]),
    (("la", "le", "table", FEM), ("l'", "le", "école", FEM, "_", ELIDED),
     ["Il voit l'école.", "Il voit la table."]),
    (("le", "le", "livre", MASC), ("l'", "le", "hôtel", MASC, "_", ELIDED),
     ["Il voit l'hôtel.", "Il voit le livre."]),
    (("la", "le", "porte", FEM), ("l'", "le", "île", FEM, "_", ELIDED),
     ["Il voit l'île.", "Il voit la porte."]),
    # aspirated h: no elision
    (("le", "le", "héros", MASC), ("l'", "le", "ami", MASC, "_", ELIDED),
     ["Il voit l'ami.", "Il voit le héros."]),
    # ce -> cet, cet -> ce
    (("ce", "ce", "livre", MASC), ("cet", "ce", "arbre", MASC),
     ["Il voit cet arbre.", "Il voit ce livre."]),
    # ma -> mon before a vowel-initial feminine noun, mon -> ma before a consonant
    (("ma", "mon", "table", FEM), ("mon", "mon", "école", FEM),
     ["Il voit mon école.", "Il voit ma table."]),
])
def test_function_words_fit_the_swapped_noun(tmp_path, first, second, expected):
    assert run_texts(tmp_path, "fr", voit(*first), voit(*second)) == expected


def test_elided_forms_get_no_space_and_restored_forms_get_one(tmp_path):
    directory = ingest(tmp_path, conllu(voit("le", "le", "chien", MASC),
                                        voit("l'", "le", "arbre", MASC, "_", ELIDED)))
    tokens, _ = nonce(directory, "fr")
    articles = tokens.filter(pl.col("word_index") == 3).sort("sent_index")
    assert articles.get_column("form").to_list() == ["l'", "le"]
    assert articles.get_column("misc").to_list() == ["SpaceAfter=No", "_"]
    assert not articles.get_column("replaced").any()


def phrase(preposition: str, noun: str, feats: str, misc: str = "_") -> str:
    """`Il parle PREPOSITION NOUN .`"""
    lemma = {"d'": "de", "de": "de"}.get(preposition, preposition)
    return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 parle parler VERB {VERB_3SG} 0 root
3 {preposition} {lemma} ADP _ 4 case {misc}
4 {noun} {noun} NOUN {feats} 2 obl SpaceAfter=No
5 . . PUNCT _ 2 punct
"""


def test_de_elides_before_mute_h_and_comes_back_before_a_consonant(tmp_path):
    texts = run_texts(tmp_path, "fr", phrase("de", "bonheur", MASC),
                      phrase("d'", "honneur", MASC, ELIDED))
    assert texts == ["Il parle d'honneur.", "Il parle de bonheur."]


def test_que_and_je_elide_and_come_back(tmp_path):
    def pense(que: str, name: str, misc: str = "_") -> str:
        return f"""
1 Je je PRON Number=Sing|Person=1|PronType=Prs 2 nsubj
2 pense penser VERB Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin 0 root
3 {que} que SCONJ _ 5 mark {misc}
4 {name} {name} PROPN {FEM} 5 nsubj
5 part partir VERB {VERB_3SG} 2 ccomp SpaceAfter=No
6 . . PUNCT _ 2 punct
"""

    def je(subject: str, verb: str, lemma: str, misc: str = "_") -> str:
        return f"""
1 {subject} je PRON Number=Sing|Person=1|PronType=Prs 2 nsubj {misc}
2 {verb} {lemma} VERB Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin 0 root SpaceAfter=No
3 . . PUNCT _ 2 punct
"""
    assert run_texts(tmp_path / "que", "fr", pense("que", "Marie"), pense("qu'", "Anne", ELIDED)) \
        == ["Je pense qu'Anne part.", "Je pense que Marie part."]
    assert run_texts(tmp_path / "je", "fr", je("Je", "mange", "manger"),
                     je("J'", "aime", "aimer", ELIDED)) == ["J'aime.", "Je mange."]


def test_ne_is_never_replaced_and_elides(tmp_path):
    def negated(ne: str, verb: str, lemma: str, misc: str = "_") -> str:
        return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 3 nsubj
2 {ne} ne ADV Polarity=Neg 3 advmod {misc}
3 {verb} {lemma} VERB {VERB_3SG} 0 root
4 pas pas ADV Polarity=Neg 3 advmod SpaceAfter=No
5 . . PUNCT _ 3 punct
"""
    directory = ingest(tmp_path, conllu(negated("ne", "mange", "manger"),
                                        negated("n'", "aime", "aimer", ELIDED),
                                        negated("ne", "voit", "voir")))
    tokens, sentences = nonce(directory, "fr", seed=3)
    ne = tokens.filter(pl.col("word_index") == 2)
    assert ne.get_column("lemma").to_list() == ["ne"] * 3 and not ne["replaced"].any()
    for text in texts(sentences):
        # `ne` is not a candidate either: `pas` (same context and FEATS) cannot become `ne`.
        assert text.startswith(("Il ne mange", "Il ne voit", "Il n'aime"))
        assert text.endswith(" pas.")
    stats = pl.read_parquet(tmp_path / "nonce" / "tb-fr-spud-3" / "replacement_stats.parquet")
    assert stats.filter(pl.col("upos") == "ADV").get_column("protected").item() == 3


def test_du_becomes_de_l_and_de_l_never_needs_du(tmp_path):
    du = f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 parle parler VERB {VERB_3SG} 0 root
3-4 du _
3 de de ADP _ 5 case
4 le le DET Definite=Def|{MASC}|PronType=Art 5 det
5 chien chien NOUN {MASC} 2 obl SpaceAfter=No
6 . . PUNCT _ 2 punct
"""
    de_l = f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 parle parler VERB {VERB_3SG} 0 root
3 de de ADP _ 5 case
4 l' le DET Definite=Def|Number=Sing|PronType=Art 5 det SpaceAfter=No
5 arbre arbre NOUN {MASC} 2 obl SpaceAfter=No
6 . . PUNCT _ 2 punct
"""
    directory = ingest(tmp_path, conllu(du, de_l))
    tokens, sentences = nonce(directory, "fr")
    # `du chien` takes `arbre`: the parts become de + l', the token `de l'`, glued to the noun.
    assert texts(sentences) == ["Il parle de l'arbre.", "Il parle de l'arbre."]
    mwt = tokens.filter(pl.col("token_type") == "mwt").row(0, named=True)
    assert (mwt["form"], mwt["orig_form"], mwt["misc"]) == ("de l'", "du", "SpaceAfter=No")
    # `de l'arbre` cannot take `chien` (it would need a new `du` token): kept, reason `rule`.
    stats = pl.read_parquet(tmp_path / "nonce" / "tb-fr-spud-1" / "replacement_stats.parquet")
    assert stats.filter(pl.col("upos") == "NOUN").select("replaced", "rule").row(0) == (1, 1)
    # The export is valid CoNLL-U again.
    again = ingest(tmp_path, (tmp_path / "nonce" / "tb-fr-spud-1" / "nonce.conllu").read_text(),
                   name="again")
    assert texts(pl.read_parquet(again / "sentences.parquet")) == texts(sentences)


def test_du_stays_before_a_consonant(tmp_path):
    def du(noun: str) -> str:
        return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 parle parler VERB {VERB_3SG} 0 root
3-4 du _
3 de de ADP _ 5 case
4 le le DET Definite=Def|{MASC}|PronType=Art 5 det
5 {noun} {noun} NOUN {MASC} 2 obl SpaceAfter=No
6 . . PUNCT _ 2 punct
"""
    assert run_texts(tmp_path, "fr", du("chien"), du("livre")) == ["Il parle du livre.",
                                                                   "Il parle du chien."]


def test_beau_becomes_bel_before_a_vowel(tmp_path):
    def beau(adjective: str, noun: str) -> str:
        return f"""
1 un un DET Definite=Ind|{MASC}|PronType=Art 3 det
2 {adjective} beau ADJ {MASC} 3 amod
3 {noun} {noun} NOUN {MASC} 0 root
"""
    assert run_texts(tmp_path, "fr", beau("beau", "chien"), beau("bel", "arbre")) == \
        ["un bel arbre", "un beau chien"]


def adjective_phrase(adjective: str, before: bool, noun: str = "chien") -> str:
    if before:
        return f"""
1 un un DET Definite=Ind|{MASC}|PronType=Art 3 det
2 {adjective} {adjective} ADJ {MASC} 3 amod
3 {noun} {noun} NOUN {MASC} 0 root
"""
    return f"""
1 un un DET Definite=Ind|{MASC}|PronType=Art 2 det
2 {noun} {noun} NOUN {MASC} 0 root
3 {adjective} {adjective} ADJ {MASC} 2 amod
"""


def test_adjectives_keep_their_side_of_the_noun_without_ordered_context(tmp_path):
    sentences = [adjective_phrase("grand", True), adjective_phrase("petit", True),
                 adjective_phrase("rouge", False), adjective_phrase("noir", False)]
    directory = ingest(tmp_path, conllu(*sentences))
    for seed in (1, 2, 3):
        out = tmp_path / f"fr{seed}"
        assert texts(nonce(directory, "fr", "--option", "ordered_context=false", seed=seed,
                           out=out)[1]) == [
            "un petit chien", "un grand chien", "un chien noir", "un chien rouge"]
    # Without the rule (any other language) the sides mix for some seed.
    mixed = [texts(nonce(directory, "xx", seed=seed, out=tmp_path / f"xx{seed}")[1])
             for seed in range(1, 6)]
    assert any(text[0] in ("un rouge chien", "un noir chien") for text in mixed)


def test_ordered_context_marks_the_word_among_its_dependents_as_the_reference(tmp_path):
    """syntactic_patterns.py, French: the dependents' relations in word order with the word
    itself (MOTHER) among them. A noun with its adjective before it (det,amod,MOTHER) only
    swaps with nouns seen so; the adjective's own context (MOTHER) says nothing of its side."""
    sentences = [adjective_phrase("grand", True, "chien"), adjective_phrase("petit", True, "chat"),
                 adjective_phrase("rouge", False, "loup"), adjective_phrase("noir", False, "ours")]
    directory = ingest(tmp_path, conllu(*sentences))
    outs = [texts(nonce(directory, "fr", seed=seed, out=tmp_path / f"fr{seed}")[1])
            for seed in range(1, 7)]
    for out in outs:
        assert out[0].split()[2] == "chat" and out[1].split()[2] == "chien"
        assert out[2].split()[1] == "ours" and out[3].split()[1] == "loup"
    assert any(out[0].split()[1] in ("rouge", "noir") for out in outs)
    # Sorted, the four nouns share one context.
    sorted_nouns = {texts(nonce(directory, "fr", "--option", "ordered_context=false", seed=seed,
                                out=tmp_path / f"sorted{seed}")[1])[0].split()[2]
                    for seed in range(1, 7)}
    assert sorted_nouns - {"chat"}


def test_a_final_le_does_not_crash(tmp_path):
    def ends_with_le(verb: str, lemma: str) -> str:
        return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 {verb} {lemma} VERB {VERB_3SG} 0 root
3 le le PRON {MASC}|Person=3|PronType=Prs 2 obj
"""
    assert run_texts(tmp_path, "fr", ends_with_le("mange", "manger"),
                     ends_with_le("aime", "aimer")) == ["Il aime le", "Il mange le"]


@pytest.mark.parametrize(("word", "vowel"), [
    ("arbre", True), ("école", True), ("Élysée", True), ("être", True), ("âme", True),
    ("île", True), ("œuvre", True), ("hôtel", True), ("homme", True), ("héros", False),
    ("haricots", False), ("hache", False), ("Hollande", False), ("onze", False),
    ("yaourt", False), ("Yves", True), ("chien", False), ("«ami", True),
])
def test_vowel_sound(word, vowel):
    assert starts_with_vowel_sound(word) is vowel


def test_ne_is_an_adverb_like_any_other_without_protect_ne(tmp_path):
    """The reference's FrenchReplacer replaces `ne` and draws it as a candidate (its French ADV
    ratio counts it): with protect_ne=false `ne` and `pas` swap places for some seed."""
    def negated(verb: str, lemma: str) -> str:
        return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 3 nsubj
2 ne ne ADV Polarity=Neg 3 advmod
3 {verb} {lemma} VERB {VERB_3SG} 0 root
4 pas pas ADV Polarity=Neg 3 advmod SpaceAfter=No
5 . . PUNCT _ 3 punct
"""
    directory = ingest(tmp_path, conllu(negated("mange", "manger"), negated("voit", "voir")))
    swapped = False
    for seed in range(1, 6):
        out = tmp_path / f"free{seed}"
        tokens, _ = nonce(directory, "fr", "--option", "protect_ne=false", seed=seed, out=out)
        swapped |= tokens.filter((pl.col("orig_form") == "ne") & pl.col("replaced")).height > 0
        stats = pl.read_parquet(out / "replacement_stats.parquet")
        assert stats.filter(pl.col("upos") == "ADV").get_column("protected").item() == 0
    assert swapped


def test_de_l_takes_a_consonant_noun_when_the_text_is_written_in_words(tmp_path):
    """Under --multiword-tokens split (the reference's text) `de l'arbre` may become `de le
    chien`, as the reference writes `du` (de le); with kept tokens that candidate is refused."""
    de_l = f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 parle parler VERB {VERB_3SG} 0 root
3 de de ADP _ 5 case
4 l' le DET Definite=Def|Number=Sing|PronType=Art 5 det SpaceAfter=No
5 arbre arbre NOUN {MASC} 2 obl SpaceAfter=No
6 . . PUNCT _ 2 punct
"""
    other = de_l.replace("5 arbre arbre", "5 chien chien").replace(
        "l' le DET Definite=Def|Number=Sing|PronType=Art 5 det SpaceAfter=No",
        f"le le DET Definite=Def|{MASC}|PronType=Art 5 det")
    directory = ingest(tmp_path, conllu(de_l, other))
    _, split = nonce(directory, "fr", "--multiword-tokens", "split", out=tmp_path / "split")
    assert texts(split)[0] == "Il parle de le chien."
    _, kept = nonce(directory, "fr", out=tmp_path / "keep")
    assert texts(kept)[0] == "Il parle de l'arbre."
