"""SLOR, NormLP and Word-LP Min-1 as Lau et al.'s code computes them (`score --measures lau`,
`ngram-train --kneser-ney lau`), against hand computation of their formulas
(jhlau/acceptability_prediction, bncpylib/ngrams.py: KneserNeySmoothingModel.raw_ngram_prob,
LanguageModel.tokenize_sentence and combined_scores), and their preprocessing (lowercasing, rare
words to signatures: replace_low_freq_tokens.py)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from spudflow.cli import main
from spudflow.core.errors import EXIT_BAD_INPUT
from spudflow.scoring.ngram import EOS, NgramModel, signature

# Lau et al.'s two-sentence corpus: <s> the cat sat </s> | <s> the dog sat </s>, bigram, D 0.7.
CORPUS = "the cat sat\nthe dog sat\n"
D = 0.7
# Their counts, position by position (ngrams_interpolated_kneser_ney): the bigram level holds
# raw counts, the unigram level the continuation counts (a bigram's first sighting):
#   c(<s> the) 2, c(the cat) 1, c(the dog) 1, c(cat sat) 1, c(dog sat) 1, c(sat </s>) 2;
#   c_1: the 1 (after <s>), cat 1, dog 1, sat 2 (after cat, dog), </s> 1; total 6.
P1 = {"the": 1 / 6, "cat": 1 / 6, "dog": 1 / 6, "sat": 2 / 6, EOS: 1 / 6}
# raw_ngram_prob: (c(h w) - D) / c(h) + T(h) D / c(h) * P1(w); T(<s>) 1, T(the) 2, T(dog) 1,
# T(sat) 1.
P_THE_DOG_SAT = [  # <s> the dog sat </s>
    (2 - D) / 2 + 1 * D / 2 * P1["the"],     # 17/24
    (1 - D) / 2 + 2 * D / 2 * P1["dog"],     # 4/15
    (1 - D) / 1 + 1 * D / 1 * P1["sat"],     # 8/15
    (2 - D) / 2 + 1 * D / 2 * P1[EOS],       # 17/24
]
U_THE_DOG_SAT = [P1["the"], P1["dog"], P1["sat"], P1[EOS]]


def lau_measures(p: list[float], u: list[float], length: int) -> dict[str, float]:
    """combined_scores, in natural logs: SLOR divides by len(tokens) (the words, n-1 <s> and
    </s>), NormLP is `norm_logprob_div`, Word-LP Min-1 `wlogprob-bot-1`."""
    lp, lu = [math.log(x) for x in p], [math.log(x) for x in u]
    return {"slor": (sum(lp) - sum(lu)) / length, "normlp": sum(lp) / -sum(lu),
            "word_lp_min1": min(-(a / b) for a, b in zip(lp, lu, strict=True)),
            "logprob_sum": sum(lp), "mean_logprob": sum(lp) / len(lp)}


def test_hand_computed_fractions():
    assert pytest.approx(P_THE_DOG_SAT, abs=1e-15) == [17 / 24, 4 / 15, 8 / 15, 17 / 24]


@pytest.fixture
def lau_bigram(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text(CORPUS, encoding="utf-8")
    out = tmp_path / "bigram.parquet"
    assert main(["ngram-train", str(text), "--order", "2", "--lang", "en", "--discount", str(D),
                 "--kneser-ney", "lau", "--words", "whitespace", "--out", str(out)]) == 0
    return out


def test_model_probabilities_are_lau_kneser_ney(lau_bigram):
    model = NgramModel.load(lau_bigram)
    words = ["the", "dog", "sat", EOS]
    got = [math.exp(model.logprob("kn", model.history(words, i), w)) for i, w in
           enumerate(words)]
    assert got == pytest.approx(P_THE_DOG_SAT, abs=1e-12)
    assert [math.exp(model.order1_logprob("kn", w)) for w in words] == pytest.approx(
        U_THE_DOG_SAT, abs=1e-12)


def test_score_measures_lau_equal_lau_formulas(tmp_path, lau_bigram):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("the dog sat\nthe cat sat\n", encoding="utf-8")
    out = tmp_path / "scores"
    assert main(["score", str(sentences), "--model", str(lau_bigram), "--kind", "ngram",
                 "--method", "kn", "--measures", "lau", "--out", str(out)]) == 0
    items = pl.read_parquet(out / "item_scores.parquet").sort("item_id")
    tokens = pl.read_parquet(out / "token_scores.parquet")
    # </s> is scored, as a token of no word after the last one.
    first = tokens.filter(pl.col("item_id") == "1")
    assert first["token"].to_list() == ["the", "dog", "sat", EOS]
    assert first["word_index"].to_list() == [0, 1, 2, None]
    row = items.row(0, named=True)
    expected = lau_measures(P_THE_DOG_SAT, U_THE_DOG_SAT, length=3 + 2)
    for name, value in expected.items():
        assert row[name] == pytest.approx(value, abs=1e-9), name
    assert (row["n_tokens"], row["n_words"], row["n_unseen"]) == (4, 3, 0)
    # The second sentence by the same formulas: the cat sat.
    p = [(2 - D) / 2 + D / 2 * P1["the"], (1 - D) / 2 + 2 * D / 2 * P1["cat"],
         (1 - D) / 1 + D * P1["sat"], (2 - D) / 2 + D / 2 * P1[EOS]]
    u = [P1["the"], P1["cat"], P1["sat"], P1[EOS]]
    second = items.row(1, named=True)
    for name, value in lau_measures(p, u, length=5).items():
        assert second[name] == pytest.approx(value, abs=1e-9), name


def test_lau_slor_is_log10_slor_times_ln10(tmp_path, lau_bigram):
    """Their logarithms are base 10: SLOR scales by ln 10, the ratios do not."""
    lp10 = [math.log10(x) for x in P_THE_DOG_SAT]
    lu10 = [math.log10(x) for x in U_THE_DOG_SAT]
    slor10 = (sum(lp10) - sum(lu10)) / 5
    natural = lau_measures(P_THE_DOG_SAT, U_THE_DOG_SAT, 5)
    assert natural["slor"] == pytest.approx(slor10 * math.log(10), abs=1e-12)
    assert natural["normlp"] == pytest.approx(sum(lp10) / -sum(lu10), abs=1e-12)


def test_words_measures_stay_the_default(tmp_path, lau_bigram):
    """Without --measures lau: </s> is not scored and SLOR needs a --unigram model."""
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("the dog sat\n", encoding="utf-8")
    out = tmp_path / "scores"
    assert main(["score", str(sentences), "--model", str(lau_bigram), "--kind", "ngram",
                 "--method", "kn", "--unigram", str(lau_bigram), "--out", str(out)]) == 0
    row = pl.read_parquet(out / "item_scores.parquet").row(0, named=True)
    assert row["n_tokens"] == 3
    assert row["logprob_sum"] == pytest.approx(sum(math.log(p) for p in P_THE_DOG_SAT[:3]))


@pytest.mark.parametrize("args, where", [
    (["--kind", "causal", "--method", "ppl", "--measures", "lau"], "--measures"),
    (["--kind", "ngram", "--method", "kn", "--measures", "lau", "--unigram", "MODEL"],
     "--unigram"),
])
def test_measures_lau_bad_input(tmp_path, lau_bigram, capsys, args, where):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("the dog sat\n", encoding="utf-8")
    args = [str(lau_bigram) if a == "MODEL" else a for a in args]
    code = main(["score", str(sentences), "--model", str(lau_bigram), *args,
                 "--out", str(tmp_path / "out")])
    assert code == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(where)
    assert not (tmp_path / "out").exists()


def test_interpolated_and_lau_kneser_ney_differ_where_lau_says():
    sentences = [["a", "b"], ["b", "a"], ["a", "a"]]
    ours = NgramModel.train(sentences, order=3, discount=0.5)
    lau = NgramModel.train(sentences, order=3, discount=0.5, kneser_ney="lau")
    # (<s>, a) is always preceded by <s>: Lau counts its continuation (1), KenLM its raw count.
    assert ours._kn[2].counts[("<s>", "a")] == 2
    assert lau._kn[2].counts[("<s>", "a")] == 1
    # Lau's unigram level is the undiscounted continuation distribution.
    # Bigram types: (<s> a) (a b) (b </s>) (<s> b) (b a) (a </s>) (a a): c_1(a) = 3 of 7.
    assert math.exp(lau.order1_logprob("kn", "a")) == pytest.approx(3 / 7)
    assert math.exp(ours.order1_logprob("kn", "a")) != pytest.approx(3 / 7)


def test_lau_unigram_level_sums_to_one_over_the_training_symbols():
    model = NgramModel.train([s.split() for s in ["the cat sat", "a dog ran", "the dog sat down"]],
                             order=3, discount=0.7, kneser_ney="lau", unknown="signature")
    assert sum(math.exp(model.order1_logprob("kn", w)) for w in model.vocab) == \
        pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("word, expected", [
    ("dogs", "UNK-s"), ("as", "UNK"), ("walked", "UNK-ed"), ("nation", "UNK-ion"),
    ("x-rays", "UNK-DASH-s"), ("1990s", "UNK-NUM-s"), ("quickly", "UNK-ly"), ("Paris", "UNK-TC-s"),
    ("quality", "UNK-ity"), ("happy", "UNK-y"), ("walk", "UNK"), ("3-d", "UNK-DASH-NUM"),
])
def test_signatures_as_lau_et_al(word, expected):
    assert signature(word) == expected


def test_lowercase_and_rare_words_to_signatures(tmp_path):
    """replace_low_freq_tokens.py: lowercase, words seen fewer than 4 times become their
    signature, in training and when scoring (with the training lexicon)."""
    corpus = ["The dog sat"] * 4 + ["the Cats sat", "the dogs ran"]
    model = NgramModel.train([s.split() for s in corpus], order=2, min_count=4, lowercase=True,
                             unknown="signature", kneser_ney="lau", discount=D)
    assert model.words == {"the", "dog", "sat"}
    assert model.vocab == {"the", "dog", "sat", "UNK-s", "UNK", EOS}
    assert model.counts[("the", "UNK-s")] == 2     # cats, dogs
    assert model.symbol("DOG") == "dog" and model.symbol("Birds") == "UNK-s"
    assert model.symbol("ran") == "UNK" and model.symbol(EOS) == EOS
    model.save(tmp_path / "m.parquet")
    sentences = tmp_path / "s.txt"
    sentences.write_text("The Birds sat\n", encoding="utf-8")
    assert main(["score", str(sentences), "--model", str(tmp_path / "m.parquet"), "--kind",
                 "ngram", "--method", "kn", "--measures", "lau", "--out",
                 str(tmp_path / "out")]) == 0
    tokens = pl.read_parquet(tmp_path / "out" / "token_scores.parquet")
    assert tokens["unseen"].to_list() == [False, True, False, False]
    words = ["the", "birds", "sat", EOS]
    assert tokens["logprob"].to_list() == pytest.approx(
        [model.logprob("kn", model.history(words, i), w) for i, w in enumerate(words)],
        abs=1e-12)
    assert model.logprob("kn", ("the",), "birds") == model.logprob("kn", ("the",), "cats")
    assert pl.read_parquet(tmp_path / "out" / "item_scores.parquet")["n_unseen"].to_list() == [1]


def test_lau_gives_a_symbol_training_never_made_the_smallest_unigram_probability():
    """Lau et al.'s code gives an unseen signature probability 0 (log -inf); we give it the
    probability of a symbol seen once, 1 / c_1(.)."""
    model = NgramModel.train([["a", "b"]], order=2, kneser_ney="lau", unknown="signature")
    assert signature("walking") == "UNK-ing" and "UNK-ing" not in model.vocab
    # continuation counts: a 1, b 1, </s> 1
    assert math.exp(model.order1_logprob("kn", "walking")) == pytest.approx(1 / 3)


def test_items_cola_whitespace_words(tmp_path):
    tsv = tmp_path / "in_domain_dev.tsv"
    tsv.write_text("gj04\t1\t\tthe doll does n't wriggle , cannot it ?\n", encoding="utf-8")
    for words, expected in (("whitespace", ["the", "doll", "does", "n't", "wriggle", ",",
                                            "cannot", "it", "?"]),
                            ("spacy", ["the", "doll", "does", "n't", "wriggle", ",", "can",
                                       "not", "it", "?"])):
        out = tmp_path / f"{words}.parquet"
        assert main(["items", "cola", str(tsv), "--words", words, "--out", str(out)]) == 0
        assert pl.read_parquet(out)["words"].to_list() == [expected]


def test_measures_lau_is_its_own_cache_setting_and_run_key(tmp_path, lau_bigram):
    """With </s> scored an item has one more token score: never the cache entries or resumed
    blocks of the words measures."""
    from spudflow.scoring.cache_setting import build_setting
    from spudflow.scoring.file_hashes import FileHashes
    from spudflow.scoring.run_key import ScoreJob, job_content_key

    hashes = FileHashes(tmp_path / "memo.jsonl")
    settings = [build_setting(None, model=str(lau_bigram), gguf_file=None, kind="ngram",
                              name="m", trust_remote_code=False, hashes=hashes,
                              sentence_end=end) for end in (False, True)]
    assert settings[0].id() != settings[1].id()
    sentences = tmp_path / "s.txt"
    sentences.write_text("the dog sat\n", encoding="utf-8")
    keys = {job_content_key(ScoreJob(
        input=sentences, model=str(lau_bigram), name="m", gguf_file=None, revision=None,
        kind="ngram", methods=("kn",), dtype="auto", lang="en", languages=None, sample=None,
        sample_seed=0, block_size=10, unigram=(), measures=measures, shard=None))
        for measures in ("words", "lau")}
    assert len(keys) == 2
    cache = tmp_path / "cache"
    for measures, n_tokens in (("words", 3), ("lau", 4), ("words", 3)):
        out = tmp_path / measures
        assert main(["score", str(sentences), "--model", str(lau_bigram), "--kind", "ngram",
                     "--method", "kn", "--measures", measures, "--cache", str(cache),
                     "--out", str(out)]) == 0
        assert pl.read_parquet(out / "item_scores.parquet")["n_tokens"].to_list() == [n_tokens]


def test_lau_measures_are_of_whole_sentences_region_rows_have_none(lau_bigram):
    from scoring_models import make_item

    from spudflow.scoring.ngram_scorer import NgramScorer
    from spudflow.scoring.run import Job, score_block

    scorer = NgramScorer(lau_bigram, sentence_end=True)
    job = Job(scorer, "m", ["kn"], lambda _: None, None, "key", 10, measures="lau")
    item = make_item("1", "the dog sat", ["the", "dog", "sat"], regions=[("verb", "sat")])
    tokens, rows = score_block(job, [item], "block")
    rows = rows.to_pylist()
    assert [r["region"] for r in rows] == [None, "verb"]
    assert rows[0]["slor"] == pytest.approx(lau_measures(P_THE_DOG_SAT, U_THE_DOG_SAT, 5)["slor"])
    assert (rows[1]["slor"], rows[1]["normlp"], rows[1]["word_lp_min1"]) == (None, None, None)
    assert rows[1]["logprob_sum"] == pytest.approx(math.log(P_THE_DOG_SAT[2]))
    assert tokens.column("token").to_pylist() == ["the", "dog", "sat", EOS]
