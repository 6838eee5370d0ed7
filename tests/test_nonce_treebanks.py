"""The stage on the vendored PUD treebanks: trees untouched, valid CoNLL-U, byte-identical
reruns, seeds that differ, and results that do not depend on sentence order."""

from __future__ import annotations

import bisect
import gzip
import shutil

import polars as pl
import pytest
from nonce_helpers import ingest, nonce

from spudflow.nonce.sentence import SentenceView, TokenColumns, spaces_after, with_space_after
from spudflow.nonce.surface import sentence_text

from conftest import VENDORED_UD

INVARIANT = ["sent_index", "token_index", "token_type", "id", "word_index", "mwt_end",
             "empty_minor", "upos", "xpos", "feats", "head", "deprel", "deps"]
TARGETS = ["NOUN", "PROPN", "ADJ", "ADV", "VERB"]


CODES = {"English": "en", "French": "fr", "German": "de", "Russian": "ru"}


def vendored(tmp_path, language: str, reverse: bool = False):
    text = gzip.decompress(
        (VENDORED_UD / f"UD_{language}-PUD" / f"{CODES[language]}_pud-ud-test.conllu.gz")
        .read_bytes()).decode("utf-8")
    if reverse:
        text = "\n\n".join(reversed(text.strip("\n").split("\n\n"))) + "\n\n"
    return ingest(tmp_path, text, name=f"{language}{'-reversed' if reverse else ''}")


@pytest.mark.slow
@pytest.mark.parametrize(("language", "lang"), [("French", "fr"), ("English", "en")])
def test_trees_are_untouched_and_the_export_is_valid(tmp_path, language, lang):
    directory = vendored(tmp_path, language)
    original = pl.read_parquet(directory / "tokens.parquet")
    tokens, sentences = nonce(directory, lang)
    assert tokens.select(INVARIANT).equals(original.select(INVARIANT))
    assert tokens.get_column("orig_form").equals(original.get_column("form"))
    changed = tokens.filter(pl.col("form") != pl.col("orig_form"))
    # Only replaced words of the replaced UPOS, function words fitted to them, and multiword
    # tokens around them change; lemmas change only on replaced words.
    assert changed.filter(pl.col("replaced")).get_column("upos").is_in(TARGETS).all()
    assert tokens.filter(pl.col("lemma") != pl.col("orig_lemma")).get_column("replaced").all()
    assert tokens.filter(pl.col("token_type") != "word").get_column("replaced").not_().all()
    assert tokens.get_column("replaced").sum() > 0.3 * tokens.filter(
        pl.col("upos").is_in(TARGETS)).height
    # The CoNLL-U export ingests again to the same table.
    out = tmp_path / "nonce" / f"{language}-{lang}-spud-1"
    again = pl.read_parquet(ingest(tmp_path, (out / "nonce.conllu").read_text(),
                                   name="again") / "tokens.parquet")
    columns = [c for c in original.columns if c != "line"]
    assert again.select(columns).equals(tokens.select(columns))
    again_sentences = pl.read_parquet(tmp_path / "ingest" / "again" / "sentences.parquet")
    assert again_sentences.get_column("text").equals(sentences.get_column("text"))
    assert (sentences.get_column("text") != sentences.get_column("orig_text")).sum() > 900
    # Text rebuilt from the original forms and spacing is the original text.
    columns = TokenColumns.from_frame(original)
    starts = original.get_column("sent_index").to_list()
    for sent_index, text in sentences.select("sent_index", "orig_text").iter_rows():
        view = SentenceView(columns, bisect.bisect_left(starts, sent_index),
                            bisect.bisect_right(starts, sent_index))
        assert sentence_text(view) == text


def test_spacing_in_misc():
    assert spaces_after("_") == " " and spaces_after("SpaceAfter=No") == ""
    assert spaces_after("SpacesAfter=\\u00A0|X=1") == "\xa0"
    assert spaces_after("SpacesAfter=\\s\\s") == "  "
    assert with_space_after("_", False) == "SpaceAfter=No"
    assert with_space_after("A=1|SpaceAfter=No|B=2", True) == "A=1|B=2"
    assert with_space_after("SpacesAfter=\\n|A=1", False) == "A=1|SpaceAfter=No"
    assert with_space_after("SpaceAfter=No", True) == "_"


@pytest.mark.slow
def test_same_seed_same_bytes_other_seed_other_words(tmp_path):
    directory = vendored(tmp_path, "German")
    outs = [tmp_path / name for name in ("a", "b", "c")]
    for out, seed in zip(outs, (1, 1, 2), strict=True):
        nonce(directory, "de", seed=seed, out=out)
    for name in ("tokens.parquet", "sentences.parquet", "nonce.conllu",
                 "replacement_stats.parquet"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    first, other = (pl.read_parquet(out / "tokens.parquet") for out in (outs[0], outs[2]))
    differ = (first.get_column("form") != other.get_column("form")).sum()
    assert differ > 0.5 * first.get_column("replaced").sum()


@pytest.mark.slow
def test_a_sentence_does_not_depend_on_the_order_of_the_others(tmp_path):
    forward = nonce(vendored(tmp_path, "Russian"), "ru", out=tmp_path / "f")[1]
    backward = nonce(vendored(tmp_path, "Russian", reverse=True), "ru", out=tmp_path / "b")[1]
    assert forward.select("sent_id", "text").sort("sent_id").equals(
        backward.select("sent_id", "text").sort("sent_id"))


def test_tables_from_statistics(tmp_path, run_cli):
    from nonce_helpers import conllu
    from test_nonce_algorithm import obj, subject

    directory = ingest(tmp_path, conllu(subject("dog", "dog"), subject("cat", "cat"),
                                        obj("tree", "tree")))
    stats = []
    for method in ("spud", "pos"):
        out = tmp_path / method
        nonce(directory, "en", "--treebank", "mini", "--split", "test", method=method, out=out)
        stats.append(out / "replacement_stats.parquet")
    code, _, err = run_cli("table-nonce-ratio", *stats, "--out", tmp_path / "tables" / "ratio")
    assert code == 0, err
    ratio = pl.read_parquet(tmp_path / "tables" / "ratio.parquet")
    assert ratio.columns == ["treebank", "split", "language", "method", "seed", "words",
                             "targeted", "replaced", "NOUN", "VERB", "total",
                             "unreplaced_no_candidate", "unreplaced_no_form", "unreplaced_rule",
                             "unreplaced_protected", "adjusted"]
    rows = {row["method"]: row for row in ratio.iter_rows(named=True)}
    assert rows["spud"]["NOUN"] == pytest.approx(2 / 3) and rows["pos"]["NOUN"] == 1.0
    assert rows["spud"]["total"] == pytest.approx(2 / 12)
    assert rows["spud"]["unreplaced_no_candidate"] == 4  # tree, and 3 verbs of one lemma
    code, _, err = run_cli("table-nonce-ttr", *stats, "--out", tmp_path / "tables" / "ttr")
    assert code == 0, err
    ttr = pl.read_parquet(tmp_path / "tables" / "ttr.parquet")
    # one split: its own rows, and no pooled row (it would be the split under another name)
    assert ttr.get_column("split").to_list() == ["test", "test"]
    assert ttr.get_column("splits").to_list() == [1, 1]
    assert ttr.get_column("ttr_orig").to_list() == [pytest.approx(8 / 12)] * 2
    for ext in ("csv", "md", "tex"):
        assert (tmp_path / "tables" / f"ttr.{ext}").is_file()
    # the same nonce treebank twice would pool a split with itself: the same path, or a copy
    code, _, err = run_cli("table-nonce-ttr", stats[0], stats[0], "--out",
                           tmp_path / "tables" / "twice")
    assert code == 2 and err.strip() == f"{stats[0]}: given twice"
    copy = tmp_path / "copy" / stats[0].name
    copy.parent.mkdir()
    shutil.copy(stats[0], copy)
    code, _, err = run_cli("table-nonce-ttr", stats[0], copy, "--out",
                           tmp_path / "tables" / "twice")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "statistics of treebank" in err and "an input given twice" in err
    assert not (tmp_path / "tables" / "twice.parquet").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--option", "colour=red"], "--option: language 'en' has no option 'colour'"),
    (["--option", "nonsense"], "--option: expected NAME=VALUE"),
    (["--lexicon", "LEXICON"], "lexicon.tsv:2: expected 4 non-empty tab-separated fields"),
    (["--lexicon", "MISSING"], "missing.tsv: no such file"),
    (["--upos", ","], "--upos: no UPOS tag given"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, run_cli, args, message):
    from nonce_helpers import conllu
    from test_nonce_algorithm import subject

    directory = ingest(tmp_path, conllu(subject("dog", "dog")))
    (tmp_path / "lexicon.tsv").write_text("dog\tdog\tNOUN\tNumber=Sing\ncat\tcat\tNOUN\n")
    args = [{"LEXICON": str(tmp_path / "lexicon.tsv"),
             "MISSING": str(tmp_path / "missing.tsv")}.get(a, a) for a in args]
    out = tmp_path / "out"
    code, _, err = run_cli("nonce", directory, "--lang", "en", "--seed", "1", "--out", out, *args)
    assert code == 2
    assert message in err.strip().splitlines()[-1]
    assert not out.exists()


def test_not_an_ingested_treebank(tmp_path, run_cli):
    code, _, err = run_cli("nonce", tmp_path, "--lang", "en", "--seed", "1", "--out",
                           tmp_path / "out")
    assert code == 2 and "tokens.parquet: no such file" in err


def test_commands_are_registered():
    from spudflow.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    assert {"nonce", "table-nonce-ratio", "table-nonce-ttr"} <= set(commands)


def test_a_nonce_treebank_is_refused_as_the_input(tmp_path, run_cli):
    """A nonce version of a nonce version would pass for one of the original sentences: the
    nonce stage's marker (Parquet metadata) names it even when its columns are gone."""
    from artifact_files import tamper
    from nonce_helpers import conllu
    from test_nonce_algorithm import subject

    from spudflow.core.artifacts import NONCE_SENTENCE_COLUMNS, NONCE_TOKEN_COLUMNS
    from spudflow.core.treebank import nonce_marker

    directory = ingest(tmp_path, conllu(subject("dog", "dog"), subject("cat", "cat")))
    first = tmp_path / "nonce" / "spud" / "seed1"
    nonce(directory, "en", out=first)
    assert nonce_marker(first) == {"method": "spud", "seed": 1, "language": "en"}
    assert nonce_marker(directory) is None
    out = tmp_path / "again"
    code, _, err = run_cli("nonce", first, "--lang", "en", "--seed", "2", "--out", out)
    assert code == 2 and not out.exists()
    assert err == (f"{first / 'tokens.parquet'}: a nonce treebank (made by spudflow nonce, "
                   "method 'spud' seed 1), not an original one; spudflow nonce makes nonce "
                   "versions of an ingested treebank\n")
    tamper(first / "tokens.parquet", lambda f: f.drop(NONCE_TOKEN_COLUMNS))
    tamper(first / "sentences.parquet", lambda f: f.drop(NONCE_SENTENCE_COLUMNS))
    code, _, err = run_cli("nonce", first, "--lang", "en", "--seed", "2", "--out", out)
    assert code == 2 and "a nonce treebank (made by spudflow nonce" in err
    assert not out.exists()
