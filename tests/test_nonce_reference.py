"""What the reference implementation (TaniaBladier/spud) writes, as options of the nonce stage:
its case (`--case reference`, src/replacement.py) and its text of syntactic words
(`--multiword-tokens split`, the README's preprocessing), against the defaults."""

from __future__ import annotations

import polars as pl
from nonce_helpers import conllu, ingest, nonce, texts

from spudflow.cli import main
from spudflow.nonce import surface

PRES = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"


def knows(subject: str, verb: str, adjective: str, noun: str) -> str:
    """`SUBJECT VERB ADJECTIVE NOUN.`: one candidate per context in the other sentence."""
    return f"""
1 {subject} she PRON Case=Nom|Number=Sing|Person=3|PronType=Prs 2 nsubj
2 {verb} {verb.lower().removesuffix('s')} VERB {PRES} 0 root
3 {adjective} {adjective.lower()} ADJ Degree=Pos 4 amod
4 {noun} {noun.lower()} NOUN Number=Sing 2 obj SpaceAfter=No
5 . . PUNCT _ 2 punct
"""


INTERJECTIONS = """
1 oh oh INTJ _ 0 root
2 OK ok INTJ _ 1 discourse
3 WOW wow INTJ _ 1 discourse
"""


def test_reference_case_writes_the_lexicon_form_as_table_12(tmp_path):
    """App. Table 12: "SHE KNOWS GREAT FOOD…" -> "She solicits Swedish election…": a shouted
    sentence gets the replacements in their own case, and every English word but the last is
    lowercased after its first letter, replaced or not, in every sentence."""
    directory = ingest(tmp_path, conllu(knows("SHE", "KNOWS", "GREAT", "FOOD"),
                                        knows("she", "likes", "good", "wine"), INTERJECTIONS))
    tokens, sentences = nonce(directory, "en", "--case", "reference", out=tmp_path / "reference")
    assert texts(sentences) == ["She likes good wine.", "She knows great food.", "Oh Ok WOW"]
    # the case alone is no adjustment of a function word
    stats = pl.read_parquet(tmp_path / "reference" / "replacement_stats.parquet")
    assert stats.filter(pl.col("upos") == "ALL")["adjusted"].to_list() == [0]
    # match (the default): the shouted sentence's capitals, no other word touched
    _, matched = nonce(directory, "en", out=tmp_path / "match")
    assert texts(matched) == ["SHE LIKES GOOD WINE.", "she knows great food.", "oh OK WOW"]


def test_reference_case_folds_every_french_word(tmp_path):
    directory = ingest(tmp_path, conllu("""
1 OUI oui INTJ _ 0 root
2 NON non INTJ _ 1 discourse
"""))
    assert texts(nonce(directory, "fr", "--case", "reference")[1]) == ["Oui Non"]


def test_initial_case_fold_keeps_only_the_first_letters_case():
    assert [surface.initial_case_fold(w) for w in ("SHE", "iPhone", "U.S.", "McCain", "", "a")] == [
        "She", "iphone", "U.s.", "Mccain", "", "a"]


def parle(noun: str) -> str:
    return f"""
1 Il il PRON Number=Sing|Person=3|PronType=Prs 2 nsubj
2 parle parler VERB {PRES} 0 root
3-4 du _
3 de de ADP _ 5 case
4 le le DET Definite=Def|Gender=Masc|Number=Sing|PronType=Art 5 det
5 {noun} {noun} NOUN Gender=Masc|Number=Sing 2 obl SpaceAfter=No
6 . . PUNCT _ 2 punct
"""


def test_split_multiword_tokens_write_the_words_as_the_reference(tmp_path):
    """The reference removed multiword-token lines before making its nonce treebanks and
    rebuilt every sentence's text from the words: `du chat` -> `de le chat`."""
    directory = ingest(tmp_path, conllu(parle("chien"), parle("chat"), """
1 Oui oui INTJ _ 0 root
2-3 du _
2 de de ADP _ 4 case
3 le le DET Definite=Def|Gender=Masc|Number=Sing|PronType=Art 4 det
4 pain pain NOUN Gender=Masc|Number=Sing 1 nmod
"""))
    out = tmp_path / "split"
    tokens, sentences = nonce(directory, "fr", "--multiword-tokens", "split", out=out)
    assert texts(sentences) == ["Il parle de le chat.", "Il parle de le chien.",
                                "Oui de le pain"]
    assert sentences["orig_text"].to_list()[0] == "Il parle du chien."
    assert not (tokens["token_type"] == "mwt").any()
    assert sentences["n_tokens"].to_list() == sentences["n_words"].to_list()
    assert tokens.filter(pl.col("sent_index") == 0)["token_index"].to_list() == list(range(6))
    assert "3-4\t" not in (out / "nonce.conllu").read_text(encoding="utf-8")
    # the words, the tree and the statistics are those of the default
    kept_tokens, kept = nonce(directory, "fr", out=tmp_path / "keep")
    assert texts(kept) == ["Il parle du chat.", "Il parle du chien.", "Oui du pain"]
    words = pl.col("token_type") == "word"
    assert tokens.filter(words).drop("token_index").equals(
        kept_tokens.filter(words).drop("token_index"))
    assert pl.read_parquet(out / "replacement_stats.parquet").equals(
        pl.read_parquet(tmp_path / "keep" / "replacement_stats.parquet"))


def test_the_split_text_is_what_the_spud_items_score(tmp_path):
    directory = ingest(tmp_path, conllu(parle("chien"), parle("chat")))
    out = tmp_path / "nonce" / "spud" / "seed1"
    nonce(directory, "fr", "--multiword-tokens", "split", out=out)
    items = tmp_path / "items.parquet"
    assert main(["items", "spud", "--orig", str(directory), "--nonce", str(out), "--lang", "fr",
                 "--dataset", "spud_fr_test", "--min-words", "1", "--out", str(items)]) == 0
    rows = pl.read_parquet(items).sort("item_id")
    nonce_rows = rows.filter(pl.col("method") == "spud")
    assert nonce_rows["sentence"].to_list() == ["Il parle de le chat.", "Il parle de le chien."]
    # the originals keep their own text
    assert rows.filter(pl.col("method") != "spud")["sentence"].to_list() == [
        "Il parle du chien.", "Il parle du chat."]


def test_reference_case_folds_a_multiword_token_as_one_token(tmp_path):
    """Kept, a shouted contraction is folded as one token (DON'T -> Don't, not DoN't); split,
    each word is, as the reference's words were; the last English word keeps its case."""
    def eat(do: str, nt: str, rest: str) -> str:
        eat_, noun, now = rest.split()
        return f"""
1-2 {do}{nt} _
1 {do} do AUX Mood=Ind|Tense=Pres|VerbForm=Fin 3 aux
2 {nt} not PART _ 3 advmod
3 {eat_} eat VERB VerbForm=Inf 0 root
4 {noun} {noun.lower()} NOUN Number=Sing 3 obj
5 {now} now ADV _ 3 advmod
"""
    directory = ingest(tmp_path, conllu(eat("DO", "N'T", "EAT FOOD NOW"),
                                        eat("do", "n't", "eat wine now")))
    kept = nonce(directory, "en", "--case", "reference", out=tmp_path / "kept")[1]
    assert texts(kept) == ["Don't Eat wine NOW", "Don't eat food now"]
    split = nonce(directory, "en", "--case", "reference", "--multiword-tokens", "split",
                  out=tmp_path / "split")[1]
    assert texts(split) == ["Do N't Eat wine NOW", "Do n't eat food now"]


PAST = "Mood=Ind|Tense=Past|VerbForm=Fin"


def they(form: str, lemma: str, feats: str = PAST) -> str:
    """`they FORM it`: every verb in the same context (VERB, root, nsubj and obj)."""
    return f"""
1 they they PRON _ 2 nsubj
2 {form} {lemma} VERB {feats} 0 root
3 it it PRON _ 2 obj
"""


# In the verbs' one context: `see` with 3 forms, `eat` 3 times with 1 form, `hold` once, and the
# 300 targets, `like`.
WEIGHTED = [they("saw", "see"), they("sees", "see", f"{PRES}"),
            they("see", "see", "Mood=Ind|Tense=Pres|VerbForm=Fin"),
            *[they("ate", "eat")] * 3, they("held", "hold"), *[they("liked", "like")] * 300]


def test_candidate_weights_count_distinct_forms_as_the_reference(tmp_path):
    """The reference's SyntacticPatterns lists each distinct (form, lemma) of a context once
    (`list(set(patterns))`), and its Replacer shuffles that list and takes the first lemma with
    a form: `see` (saw, sees, see) comes first 3 times in 5, `eat` (ate, ate, ate) and `hold`
    once in 5 each. `uniform`: each lemma once, 1 in 3."""
    from spudflow.nonce.candidates import UNIFORM, unit_weights
    from spudflow.nonce.context import with_context
    from spudflow.nonce.languages import get_hooks
    from spudflow.nonce.words import WordMode, word_frame

    directory = ingest(tmp_path, conllu(*WEIGHTED))
    hooks = get_hooks("en", {})
    words = with_context(word_frame(pl.read_parquet(directory / "tokens.parquet"), hooks,
                                    WordMode(unit="lemma", morph="feats")), "spud", hooks)
    verbs = words.filter(pl.col("upos") == "VERB")
    weights = dict(unit_weights([verbs]).select("unit", "weight").iter_rows())
    assert weights == {"see": 3, "eat": 1, "hold": 1, "like": 1}
    assert set(unit_weights([verbs], UNIFORM)["weight"]) == {1}

    def drawn(*args: str) -> dict[str, float]:
        tokens = nonce(directory, "en", *args, out=tmp_path / (args[-1] if args else "forms"))[0]
        liked = tokens.filter((pl.col("orig_lemma") == "like") & pl.col("replaced"))
        assert liked.height == 300
        return {lemma: liked.filter(pl.col("lemma") == lemma).height / 300
                for lemma in ("see", "eat", "hold")}

    forms = drawn()
    assert 0.52 < forms["see"] < 0.68  # 3/5; counting occurrences too would give 3/7 (.43)
    assert 0.13 < forms["eat"] < 0.27 and 0.13 < forms["hold"] < 0.27  # 1/5 each
    uniform = drawn("--candidate-weights", "uniform")
    assert all(0.26 < share < 0.41 for share in uniform.values())  # 1/3 each
