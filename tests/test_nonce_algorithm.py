"""The language-independent algorithm: contexts, candidates, the lexicon, seeds, the POS-only
baseline, treebanks without lemmas or FEATS, casing, text and flags."""

from __future__ import annotations

import logging

import polars as pl
import pytest
from nonce_helpers import conllu, ingest, nonce, run_texts, texts

from spudflow.nonce.lexicon import build_lexicon
from spudflow.nonce.replace import NO_FORM, REPLACED, RULE, copy_keys, draw, word_key

SLEEPS = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"


def subject(noun: str, lemma: str, feats: str = "Number=Sing", verb: str = "sleeps",
            det: str = "The") -> str:
    return f"""
1 {det} the DET Definite=Def|PronType=Art 2 det
2 {noun} {lemma} NOUN {feats} 3 nsubj
3 {verb} sleep VERB {SLEEPS} 0 root SpaceAfter=No
4 . . PUNCT _ 3 punct
"""


def obj(noun: str, lemma: str) -> str:
    return f"""
1 I I PRON Case=Nom|Number=Sing|Person=1|PronType=Prs 2 nsubj
2 saw see VERB Mood=Ind|Tense=Past|VerbForm=Fin 0 root
3 {noun} {lemma} NOUN Number=Sing 2 obj SpaceAfter=No
4 . . PUNCT _ 2 punct
"""


def test_words_swap_within_their_context_only(tmp_path):
    directory = ingest(tmp_path, conllu(subject("dog", "dog"), subject("cat", "cat"),
                                        obj("tree", "tree")))
    tokens, sentences = nonce(directory, "en")
    assert texts(sentences) == ["The cat sleeps.", "The dog sleeps.", "I saw tree."]
    # The swapped nouns have the other's lemma; `tree` has no other word in its context.
    nouns = tokens.filter(pl.col("upos") == "NOUN").sort("sent_index")
    assert nouns.get_column("lemma").to_list() == ["cat", "dog", "tree"]
    assert nouns.get_column("orig_lemma").to_list() == ["dog", "cat", "tree"]
    assert nouns.get_column("replaced").to_list() == [True, True, False]
    stats = pl.read_parquet(tmp_path / "nonce" / "tb-en-spud-1" / "replacement_stats.parquet")
    noun = stats.filter(pl.col("upos") == "NOUN").row(0, named=True)
    assert (noun["words"], noun["replaced"], noun["no_candidate"]) == (3, 2, 1)
    total = stats.filter(pl.col("upos") == "ALL").row(0, named=True)
    assert total["words"] == 12 and total["replacement_ratio"] == pytest.approx(2 / 12)


def test_pos_method_ignores_the_syntactic_context(tmp_path):
    texts_pos = run_texts(tmp_path, "en", subject("dog", "dog"), obj("tree", "tree"),
                          method="pos")
    assert texts_pos == ["The tree sleeps.", "I saw dog."]
    assert run_texts(tmp_path / "spud", "en", subject("dog", "dog"), obj("tree", "tree")) == [
        "The dog sleeps.", "I saw tree."]


def test_a_form_must_exist_with_exactly_the_same_feats(tmp_path):
    # `cats` is plural; no singular form of `cat` is known, so `dog` stays (reason no_form).
    directory = ingest(tmp_path, conllu(subject("dog", "dog"),
                                        subject("cats", "cat", "Number=Plur", "sleep")))
    tokens, sentences = nonce(directory, "en")
    assert texts(sentences) == ["The dog sleeps.", "The cats sleep."]
    stats = pl.read_parquet(tmp_path / "nonce" / "tb-en-spud-1" / "replacement_stats.parquet")
    assert stats.filter(pl.col("upos") == "NOUN").get_column("no_form").item() == 2
    # An external lexicon supplies the missing forms.
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text("# form lemma upos feats\ncat\tcat\tNOUN\tNumber=Sing\n"
                       "dogs\tdog\tNOUN\tNumber=Plur\n", encoding="utf-8")
    _, sentences = nonce(directory, "en", "--lexicon", str(lexicon), out=tmp_path / "lex")
    assert texts(sentences) == ["The cat sleeps.", "The dogs sleep."]
    # So does another treebank of the language (--lexicon-from), without adding candidates.
    other = ingest(tmp_path, conllu(obj("cat", "cat")), name="other")
    _, sentences = nonce(directory, "en", "--lexicon-from", str(other), out=tmp_path / "from")
    assert texts(sentences) == ["The cat sleeps.", "The cats sleep."]


def test_pool_adds_candidates(tmp_path):
    directory = ingest(tmp_path, conllu(subject("dog", "dog")))
    pool = ingest(tmp_path, conllu(subject("cat", "cat")), name="pool")
    assert texts(nonce(directory, "en")[1]) == ["The dog sleeps."]
    assert texts(nonce(directory, "en", "--pool", str(pool), out=tmp_path / "p")[1]) == [
        "The cat sleeps."]


def test_capitals_follow_the_position_not_the_candidate(tmp_path):
    def initial(noun: str, lemma: str) -> str:
        return f"""
1 {noun} {lemma} NOUN Number=Plur 2 nsubj
2 sleep sleep VERB Mood=Ind|Tense=Pres|VerbForm=Fin 0 root SpaceAfter=No
3 . . PUNCT _ 2 punct
"""

    def inner(noun: str, lemma: str) -> str:
        return f"""
1 Now now ADV _ 3 advmod
2 {noun} {lemma} NOUN Number=Plur 3 nsubj
3 sleep sleep VERB Mood=Ind|Tense=Pres|VerbForm=Fin 0 root SpaceAfter=No
4 . . PUNCT _ 3 punct
"""
    # `Dogs` is capitalised by position: the lexicon learns `dogs`, the first word gets `Cats`.
    assert run_texts(tmp_path, "en", initial("Dogs", "dog"), inner("cats", "cat")) == [
        "Cats sleep.", "Now dogs sleep."]


def test_text_orig_text_and_short_flag(tmp_path):
    directory = ingest(tmp_path, conllu(subject("dog", "dog"), subject("cat", "cat"), """
1 Hi hi INTJ _ 0 root SpaceAfter=No
2 ! ! PUNCT _ 1 punct
"""))
    tokens, sentences = nonce(directory, "en")
    first = sentences.row(0, named=True)
    assert (first["text"], first["orig_text"], first["short"]) == (
        "The cat sleeps.", "The dog sleeps.", False)
    assert first["comments"] == ["# sent_id = s1", "# text = The cat sleeps.",
                                 "# orig_text = The dog sleeps."]
    assert sentences.get_column("short").to_list() == [False, False, True]
    export = (tmp_path / "nonce" / "tb-en-spud-1" / "nonce.conllu").read_text()
    assert "# text = The cat sleeps.\n# orig_text = The dog sleeps.\n" in export
    assert "2\tcat\tcat\tNOUN\t_\tNumber=Sing\t3\tnsubj\t_\t_\n" in export


def test_treebank_without_lemmas_uses_forms(tmp_path, caplog):
    def no_lemma(noun: str, feats: str = "Number=Sing") -> str:
        return subject(noun, "_", feats).replace(" the DET", " _ DET").replace(" sleep VERB",
                                                                               " _ VERB")
    directory = ingest(tmp_path, conllu(no_lemma("dog"), no_lemma("cat"),
                                        no_lemma("mice", "Number=Plur")))
    with caplog.at_level(logging.WARNING):
        tokens, sentences = nonce(directory, "en")
    assert "no lemmas" in caplog.text
    assert texts(sentences) == ["The cat sleeps.", "The dog sleeps.", "The mice sleeps."]
    assert set(tokens.filter(pl.col("upos") == "NOUN").get_column("lemma").to_list()) == {"_"}


def test_treebank_without_feats_matches_xpos(tmp_path, caplog):
    def no_feats(noun: str, lemma: str, tag: str) -> str:
        return f"""
1 The the DET DT _ 2 det
2 {noun} {lemma} NOUN {tag} _ 3 nsubj
3 slept sleep VERB VBD _ 0 root
"""
    directory = ingest(tmp_path, conllu(no_feats("dog", "dog", "NN"), no_feats("cat", "cat", "NN"),
                                        no_feats("mice", "mouse", "NNS"), xpos=True))
    with caplog.at_level(logging.WARNING):
        tokens, sentences = nonce(directory, "en")
    assert "no FEATS" in caplog.text
    # Forms are candidates, matched on XPOS: dog <-> cat; `mice` has no other NNS.
    assert texts(sentences) == ["The cat slept", "The dog slept", "The mice slept"]
    assert tokens.filter(pl.col("form") == "cat").get_column("lemma").item() == "cat"


def test_draw_tries_every_candidate_once_in_a_seeded_order():
    units = [f"u{i}" for i in range(50)]
    keys = copy_keys(units)
    word = word_key(1, "s1", 3)
    tried = []

    def reject(pick):
        tried.append(pick)
        return False
    assert draw(word, units, keys, "u7", reject) == (None, RULE)
    assert sorted(tried) == [i for i in range(50) if i != 7]
    first = draw(word, units, keys, "u7", None)
    assert first == draw(word, units, keys, "u7", None) and first[1] == REPLACED
    assert draw(word, ["u7"], copy_keys(["u7"]), "u7", None) == (None, NO_FORM)
    orders = {draw(word_key(seed, "s1", 3), units, keys, "u7", None)[0] for seed in range(20)}
    assert len(orders) > 5
    # The stream is the word's own: another word of the sentence or another sentence draws
    # differently, the same (seed, sentence, word) always the same.
    assert len({word_key(1, "s1", 3), word_key(1, "s1", 4), word_key(1, "s2", 3),
                word_key(2, "s1", 3)}) == 4
    # BLAKE2b of "1\x1fs1\x1f3": pinned, so a platform or Python version cannot move it
    assert word_key(1, "s1", 3) == 0x573A0E00CAC08AE6


def test_draw_is_stable_when_the_list_changes_elsewhere():
    # An entry's rank depends on the word and the entry alone: adding candidates changes the
    # pick only when an added one ranks first, removing them only when the pick is removed.
    units = sorted(f"u{i:02}" for i in range(40))
    added = sorted([*units, "zz", "aa"])
    kept = [u for u in units if u not in ("u03", "u17")]
    moved = 0
    for sentence in range(300):
        word = word_key(1, f"s{sentence}", 2)
        pick = units[draw(word, units, copy_keys(units), "u00", None)[0]]
        new = added[draw(word, added, copy_keys(added), "u00", None)[0]]
        assert new in (pick, "zz", "aa")
        moved += new != pick
        fewer = kept[draw(word, kept, copy_keys(kept), "u00", None)[0]]
        assert fewer == pick or pick in ("u03", "u17")
    assert 0 < moved < 40  # about 2 in 41


def test_draw_follows_the_weights():
    # A unit listed w times (its weight) comes first w times in (sum of weights).
    units = ["a"] * 3 + ["b"] + ["c"]
    keys = copy_keys(units)
    firsts = [units[draw(word_key(1, f"s{i}", 1), units, keys, "own", None)[0]]
              for i in range(3000)]
    assert 0.56 < firsts.count("a") / 3000 < 0.64
    assert 0.17 < firsts.count("b") / 3000 < 0.23


def test_lexicon_most_frequent_form_wins_ties_by_code_point():
    def words(*forms):
        return pl.DataFrame({"unit": ["x"] * len(forms), "upos": ["NOUN"] * len(forms),
                             "morph": ["_"] * len(forms), "form_class": [""] * len(forms),
                             "lex_form": list(forms), "lex_lemma": ["x"] * len(forms)})
    lexicon = build_lexicon([words("b", "c", "b", "a", "c", "a", "c")], ["NOUN"])
    assert lexicon.get_column("lex_form").to_list() == ["c"]
    lexicon = build_lexicon([words("b", "a", "b", "a")], ["NOUN"])
    assert lexicon.get_column("lex_form").to_list() == ["a"]
    # External entries never override the treebank's form.
    external = words("z").with_columns(pl.lit("y").alias("unit"))
    lexicon = build_lexicon([words("b")], ["NOUN"], [words("z"), external])
    assert lexicon.sort("unit").get_column("lex_form").to_list() == ["b", "z"]


def test_a_treebank_with_nothing_to_replace(tmp_path, caplog):
    directory = ingest(tmp_path, conllu("""
1 Hi hi INTJ _ 0 root SpaceAfter=No
2 ! ! PUNCT _ 1 punct
"""))
    with caplog.at_level(logging.WARNING):
        tokens, sentences = nonce(directory, "fr")
    assert "no words of NOUN,PROPN,ADJ,ADV,VERB to replace" in caplog.text
    assert texts(sentences) == ["Hi!"] and not tokens.get_column("replaced").any()
