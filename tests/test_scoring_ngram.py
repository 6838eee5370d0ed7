"""Word n-gram models: probabilities against hand computation, normalisation, training from
ingested treebanks (surface tokens) and text, the model file, and the ngram scorer."""

from __future__ import annotations

import gzip
import math

import polars as pl
import pytest
from scoring_models import make_item

from spudflow.cli import main
from spudflow.scoring.ngram import EOS, UNK, NgramModel
from spudflow.scoring.ngram_scorer import NgramScorer

# Predicted sequences: <s> a b </s> | <s> a c </s> | <s> b </s>
TOY = [["a", "b"], ["a", "c"], ["b"]]


@pytest.fixture
def bigram():
    return NgramModel.train(TOY, order=2, k=1.0, discount=0.5, lang="xx")


def test_vocabulary_is_training_words_plus_end_and_unknown(bigram):
    assert bigram.vocab == {"a", "b", "c", EOS, UNK}


def test_add_k_by_hand(bigram):
    # c(a b) = 1, c(a ·) = 2, |V| = 5, k = 1
    assert bigram.logprob("addk", ("a",), "b") == pytest.approx(math.log(2 / 7))
    # c(<s> a) = 2, c(<s> ·) = 3
    assert bigram.logprob("addk", ("<s>",), "a") == pytest.approx(math.log(3 / 8))
    # unseen history and unknown word
    assert bigram.logprob("addk", ("zzz",), "qqq") == pytest.approx(math.log(1 / 5))
    # unigram counts a 2, b 2, c 1, </s> 3 (N = 8): P_u(a) = 3 / 13
    assert bigram.unigram_logprob("a") == pytest.approx(math.log(3 / 13))
    assert bigram.unigram_logprob("never-seen") == pytest.approx(math.log(1 / 13))


def test_kneser_ney_by_hand(bigram):
    # Continuation counts: N(·a) = 1 {<s>}, N(·b) = 2 {a, <s>}, N(·c) = 1 {a},
    # N(·</s>) = 2 {b, c}; total 6, 4 types. D = 0.5, |V| = 5:
    # P1(w) = max(N(·w) - D, 0) / 6 + D * 4 / 6 * 1/5
    p1 = {"a": 0.5 / 6 + 1 / 15, "b": 1.5 / 6 + 1 / 15, "c": 0.5 / 6 + 1 / 15,
          EOS: 1.5 / 6 + 1 / 15, UNK: 1 / 15}
    assert sum(p1.values()) == pytest.approx(1.0)
    # History a: c(a b) = 1, c(a c) = 1, total 2, 2 types.
    assert bigram.logprob("kn", ("a",), "b") == pytest.approx(
        math.log(0.5 / 2 + 0.5 * 2 / 2 * p1["b"]))
    # History <s>: c(<s> a) = 2, c(<s> b) = 1, total 3, 2 types.
    assert bigram.logprob("kn", ("<s>",), "a") == pytest.approx(
        math.log(1.5 / 3 + 0.5 * 2 / 3 * p1["a"]))
    assert bigram.logprob("kn", ("<s>",), "c") == pytest.approx(math.log(0.5 * 2 / 3 * p1["c"]))
    # Unseen history: the unigram level alone; unknown word: its share of the uniform floor.
    assert bigram.logprob("kn", ("zzz",), "b") == pytest.approx(math.log(p1["b"]))
    assert bigram.logprob("kn", ("a",), "qqq") == pytest.approx(
        math.log(0.5 * 2 / 2 * p1[UNK]))


def test_trigram_keeps_raw_counts_for_grams_after_sentence_start():
    model = NgramModel.train([["a", "b"], ["b", "a"], ["a", "a"]], order=3, discount=0.5)
    # Bigram (<s>, a) cannot be extended to the left: raw count 2, not continuation count 1.
    assert model._kn[2].counts[("<s>", "a")] == 2
    # Bigram (a, b) follows <s> only: continuation count 1.
    assert model._kn[2].counts[("a", "b")] == 1


@pytest.mark.parametrize("method", ["kn", "addk"])
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_distributions_sum_to_one(method, order):
    sentences = [s.split() for s in ["the cat sat", "the dog sat down", "a cat ran",
                                     "the cat ran down the hill", "dogs bark"]]
    model = NgramModel.train(sentences, order=order, k=0.3, discount=0.7, min_count=1)
    histories = {model.history(s, i) for s in sentences for i in range(len(s) + 1)}
    histories |= {("<s>",) * (order - 1), ("zzz",) * (order - 1)}
    for history in histories:
        total = sum(math.exp(model.logprob(method, history, w)) for w in model.vocab)
        assert total == pytest.approx(1.0, abs=1e-9), history


def test_min_count_maps_rare_words_to_unknown():
    model = NgramModel.train([["a", "b"], ["a", "c"]], order=2, min_count=2)
    assert model.vocab == {"a", EOS, UNK}
    assert model.counts[("a", UNK)] == 2


def test_model_file_round_trip_and_determinism(tmp_path, bigram):
    bigram.save(tmp_path / "one.parquet")
    bigram.save(tmp_path / "two.parquet")
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "two.parquet").read_bytes()
    loaded = NgramModel.load(tmp_path / "one.parquet")
    assert loaded.settings() == bigram.settings()
    for history, word in [(("a",), "b"), (("<s>",), "c"), (("b",), "zzz")]:
        for method in ("kn", "addk"):
            assert loaded.logprob(method, history, word) == bigram.logprob(method, history, word)


@pytest.mark.parametrize("change, message", [
    (lambda f: f.with_columns(pl.when(pl.col("ngram") == ["a"]).then(0)
                              .otherwise(pl.col("count")).alias("count")),
     "n-gram 'a' has count 0: n-gram counts are positive"),
    (lambda f: f.with_columns(pl.when(pl.col("ngram") == ["a", "b"]).then(-3)
                              .otherwise(pl.col("count")).alias("count")),
     "n-gram 'a b' has count -3: n-gram counts are positive"),
    (lambda f: f.with_columns(pl.when(pl.col("ngram") == ["a", "b"]).then(["x", "a", "b"])
                              .otherwise(pl.col("ngram")).alias("ngram")),
     "n-gram 'x a b' has 3 words in a model of order 2"),
])
def test_a_model_file_with_a_count_of_zero_or_less_is_bad_input(tmp_path, bigram, change,
                                                                 message):
    from artifact_files import tamper

    from spudflow.core.errors import InputError

    path = tmp_path / "model.parquet"
    bigram.save(path)
    tamper(path, change)
    with pytest.raises(InputError) as error:
        NgramModel.load(path)
    assert error.value.source == str(path) and message in error.value.message
    assert error.value.message.startswith("row ")


def test_scorer_scores_words_with_their_offsets(tmp_path, bigram):
    bigram.save(tmp_path / "model.parquet")
    scorer = NgramScorer(tmp_path / "model.parquet")
    item = make_item("1", "a  b qqq", ["a", "b", "qqq"])
    [encoded] = scorer.encode([item])
    assert encoded.tokens == ["a", "b", "qqq"]
    assert encoded.char_starts == [0, 3, 5] and encoded.char_ends == [1, 4, 8]
    assert encoded.word_index == [0, 1, 2]
    [scores] = scorer.score([encoded], "addk", [[0, 1, 2]])
    # </s> is not scored: the three words only.
    assert list(scores) == pytest.approx([math.log(3 / 8), math.log(2 / 7), math.log(1 / 7)])


CONLLU = """\
# sent_id = 1
# text = Il parle du chat.
1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tparle\tparler\tVERB\t_\t_\t0\troot\t_\t_
3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\t_\t5\tdet\t_\t_
5\tchat\tchat\tNOUN\t_\t_\t2\tobl\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = 2
# text = Il parle.
1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tparle\tparler\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def test_train_command_on_an_ingested_treebank_uses_surface_tokens(tmp_path):
    conllu = tmp_path / "fr.conllu.gz"
    with gzip.open(conllu, "wt", encoding="utf-8") as handle:
        handle.write(CONLLU)
    assert main(["ingest", str(conllu), "--out", str(tmp_path / "tb")]) == 0
    out = tmp_path / "model.parquet"
    assert main(["ngram-train", str(tmp_path / "tb"), "--order", "2", "--lang", "fr",
                 "--out", str(out)]) == 0
    model = NgramModel.load(out)
    assert model.lang == "fr"
    assert model.vocab == {"Il", "parle", "du", "chat", ".", EOS, UNK}
    assert model.counts[("parle", "du")] == 1
    assert model.counts[("parle", ".")] == 1
    assert model.counts[("Il",)] == 2


def test_train_command_on_text_and_bad_settings(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("The cat's toy.\n\nA cat.\n", encoding="utf-8")
    out = tmp_path / "model.parquet"
    assert main(["ngram-train", str(text), "--order", "1", "--lang", "en", "--out",
                 str(out)]) == 0
    model = NgramModel.load(out)
    assert model.counts[("cat",)] == 2 and model.counts[("'s",)] == 1
    for order in ("0", "11"):  # config/schema.yaml's bounds of ngrams.*.order, by argparse
        with pytest.raises(SystemExit) as stop:
            main(["ngram-train", str(text), "--order", order, "--lang", "en", "--out",
                  str(tmp_path / "bad.parquet")])
        assert stop.value.code == 2
    assert main(["ngram-train", str(text), "--discount", "1.5", "--lang", "en", "--out",
                 str(tmp_path / "bad.parquet")]) == 2
    assert main(["ngram-train", str(tmp_path / "missing"), "--lang", "en", "--out",
                 str(tmp_path / "bad.parquet")]) == 2
    assert not (tmp_path / "bad.parquet").exists()
    errors = capsys.readouterr().err.strip().splitlines()
    assert [e.split(" (`")[0] for e in errors[-4:-2]] == [
        "spudflow ngram-train: argument --order: 0 is less than the minimum of 1",
        "spudflow ngram-train: argument --order: 11 is greater than the maximum of 10"]
    assert errors[-2:] == ["--discount: must be in (0, 1], not 1.5",
                           f"{tmp_path / 'missing'}: no such file or directory"]
