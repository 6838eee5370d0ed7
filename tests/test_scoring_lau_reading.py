"""`--kneser-ney lau` reads text as Lau et al.'s code does (jhlau/acceptability_prediction:
replace_low_freq_tokens.py in Python 2 on bytes, then bncpylib's KneserNeySmoothingModel.train
over every line): a blank training line is an empty sentence `<s> </s>`, a literal `</s>` is an
unknown word, lowercasing and splitting are ASCII-only. The default (`interpolated`) keeps the
Unicode-correct reading."""

from __future__ import annotations

import pytest

from spudflow.cli import main
from spudflow.core.training_text import text_sentences
from spudflow.scoring.items import Item
from spudflow.scoring.ngram import BOS, EOS, UNK, NgramModel, signature
from spudflow.scoring.ngram_scorer import NgramScorer


def train_file(tmp_path, text: str, kneser_ney: str, *extra: str) -> NgramModel:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    out = tmp_path / f"{kneser_ney}.parquet"
    assert main(["ngram-train", str(corpus), "--order", "3", "--lang", "en", "--kneser-ney",
                 kneser_ney, "--words", "whitespace", *extra, "--out", str(out)]) == 0
    return NgramModel.load(out)


def test_a_blank_training_line_is_an_empty_sentence_in_lau_mode(tmp_path):
    text = "the cat sat\n\nthe dog sat\n"
    lau = train_file(tmp_path, text, "lau")
    # their tokenize_sentence('') is <s> <s> </s>: one more sentence, one more </s>
    assert lau.counts[(BOS, BOS, EOS)] == 1
    assert lau.counts[(EOS,)] == 3
    assert lau.counts == NgramModel.train(
        [["the", "cat", "sat"], [], ["the", "dog", "sat"]], order=3, kneser_ney="lau").counts
    ours = train_file(tmp_path, text, "interpolated")
    assert (BOS, BOS, EOS) not in ours.counts and ours.counts[(EOS,)] == 2
    # the empty sentence moves a probability (<s> <s> then `the`: 2 of 3 continuations now)
    without = NgramModel.train([["the", "cat", "sat"], ["the", "dog", "sat"]], order=3,
                               kneser_ney="lau")
    assert lau.logprob("kn", (BOS, BOS), "the") != pytest.approx(
        without.logprob("kn", (BOS, BOS), "the"))


def test_a_literal_end_marker_is_an_unknown_word_in_lau_mode(tmp_path):
    text = "a </s> b\n" * 3 + "a b\n"
    lau = train_file(tmp_path, text, "lau")
    assert ("a", EOS) not in lau.counts and lau.counts[("a", UNK)] == 3
    assert lau.symbol(EOS, end=False) == UNK and lau.symbol(EOS, end=True) == EOS
    ours = train_file(tmp_path, text, "interpolated")
    assert ours.counts[("a", EOS)] == 3 and ours.symbol(EOS, end=False) == EOS
    # the scorer: the literal word is scored as <unk>, the sentence end as </s>
    model_file = tmp_path / "lau.parquet"
    scorer = NgramScorer(model_file, sentence_end=True)
    item = Item("i", "a </s> b", ("a", "</s>", "b"), (0, 2, 7), (1, 6, 8), (), "en")
    encoded = scorer.encode([item])
    got = scorer.logprobs(encoded, "kn", [[0, 1, 2, 3]])[0]
    assert got[1] == pytest.approx(lau.logprob("kn", (BOS, "a"), "never-seen"))
    assert got[2] == pytest.approx(lau.logprob("kn", ("a", UNK), "b"))
    assert got[3] == pytest.approx(lau.logprob("kn", (UNK, "b"), EOS))
    assert got[1] != pytest.approx(lau.logprob("kn", (BOS, "a"), EOS))


def test_lau_lowercases_ascii_letters_only(tmp_path):
    text = "Élan ÉTÉ Cat\n" * 2
    lau = train_file(tmp_path, text, "lau", "--lowercase")
    assert lau.words == {"Élan", "ÉtÉ", "cat"}     # bytes.lower(): É stays, T becomes t
    assert lau.symbol("ÉLAN") == "Élan"
    ours = train_file(tmp_path, text, "interpolated", "--lowercase")
    assert ours.words == {"élan", "été", "cat"}


def test_lau_signatures_read_bytes():
    # str.istitle() of Python 2 bytes sees ASCII letters only; len() counts bytes
    assert signature("Éclair") == "UNK-TC"
    assert signature("Éclair", as_bytes=True) == "UNK"
    assert signature("café") == "UNK"
    assert signature("cafés", as_bytes=True) == "UNK-s"
    assert signature("naïy") == "UNK"                     # 4 characters
    assert signature("naïy", as_bytes=True) == "UNK-y"    # 5 bytes
    assert signature("és") == "UNK" and signature("és", as_bytes=True) == "UNK-s"
    assert signature("Paris", as_bytes=True) == signature("Paris") == "UNK-TC-s"


def test_lau_splits_training_lines_at_ascii_white_space_only(tmp_path):
    from spudflow.core.training_text import ascii_split

    line = "a\u00a0b c\u3000d\te\n"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(line, encoding="utf-8")
    assert ascii_split(line) == ["a\u00a0b", "c\u3000d", "e"]
    assert text_sentences(corpus, "en", "whitespace", lau=True) == [["a\u00a0b", "c\u3000d", "e"]]
    assert text_sentences(corpus, "en", "whitespace") == [["a", "b", "c", "d", "e"]]
    lau = train_file(tmp_path, line, "lau")
    assert "a\u00a0b" in lau.words
