"""Type-token ratio in a tokenizer's tokens (paper App. D, Table 8 counts mBERT tokens) against an
independent count: the first sentences of the vendored English PUD treebank, ingested and made
nonce by the real commands, and a WordPiece tokenizer trained with `tokenizers` and saved."""

from __future__ import annotations

import gzip

import polars as pl
import pytest
from nonce_helpers import ingest, nonce

from conftest import VENDORED_UD

N_SENTENCES = 30
EWT_SENTENCES = 150


def _first_sentences(name: str, n: int) -> str:
    text = gzip.decompress((VENDORED_UD / f"{name}.conllu.gz").read_bytes()).decode("utf-8")
    return "\n\n".join(text.split("\n\n")[:n]) + "\n\n"


@pytest.fixture(scope="module")
def treebanks(tmp_path_factory):
    """The replacement statistics of two nonce versions (spud, pos) of 30 PUD sentences."""
    root = tmp_path_factory.mktemp("ttr")
    directory = ingest(root, _first_sentences("UD_English-PUD/en_pud-ud-test", N_SENTENCES))
    stats = []
    for method in ("spud", "pos"):
        out = root / "nonce" / method
        nonce(directory, "en", "--treebank", "en_pud", "--split", "test", method=method, out=out)
        stats.append(out / "replacement_stats.parquet")
    return root, stats


@pytest.fixture(scope="module")
def wordpiece(treebanks):
    """A WordPiece tokenizer (as mBERT's) trained by `tokenizers`, saved as transformers
    saves one; and the raw `tokenizers` object, for the independent count."""
    from scoring_models import hf_tokenizer

    tokenizer = hf_tokenizer("wordpiece")
    directory = treebanks[0] / "wordpiece"
    tokenizer.save_pretrained(directory)
    return directory, tokenizer.backend_tokenizer


def _count(forms: list[str], raw) -> tuple[int, int]:
    """(tokens, types): every word encoded by itself, no special tokens, no shortcut."""
    pieces = [piece for form in forms for piece in raw.encode(form, add_special_tokens=False).ids]
    return len(pieces), len(set(pieces))


def test_ttr_of_tokens_matches_an_independent_count(treebanks, wordpiece, run_cli):
    root, stats = treebanks
    directory, raw = wordpiece
    out = root / "tables" / "ttr_tokens"
    code, _, err = run_cli("table-nonce-ttr", *stats, "--out", out, "--tokenizer", directory)
    assert code == 0, err
    table = pl.read_parquet(out.with_suffix(".parquet")).filter(pl.col("split") == "test")
    assert table["method"].to_list() == ["pos", "spud"]
    assert set(table["unit"]) == {f"tokens of {directory}"}
    for row in table.iter_rows(named=True):
        words = pl.read_parquet(root / "nonce" / row["method"] / "tokens.parquet").filter(
            pl.col("token_type") == "word")
        tokens_orig, types_orig = _count(words["orig_form"].to_list(), raw)
        tokens_nonce, types_nonce = _count(words["form"].to_list(), raw)
        assert (row["tokens_orig"], row["types_orig"]) == (tokens_orig, types_orig)
        assert (row["tokens_nonce"], row["types_nonce"]) == (tokens_nonce, types_nonce)
        assert row["ttr_orig"] == pytest.approx(types_orig / tokens_orig)
        assert row["ttr_nonce"] == pytest.approx(types_nonce / tokens_nonce)
        assert row["words"] == words.height < tokens_orig  # subwords: more units than words
        # WordPiece splits at spaces and punctuation first: the words one by one are the text
        text = raw.encode(" ".join(words["orig_form"]), add_special_tokens=False).ids
        assert len(text) == tokens_orig


def test_word_forms_remain_the_default(treebanks, run_cli):
    root, stats = treebanks
    out = root / "tables" / "ttr_words"
    code, _, err = run_cli("table-nonce-ttr", *stats, "--out", out)
    assert code == 0, err
    table = pl.read_parquet(out.with_suffix(".parquet")).filter(pl.col("split") == "test")
    for row in table.iter_rows(named=True):
        words = pl.read_parquet(root / "nonce" / row["method"] / "tokens.parquet").filter(
            pl.col("token_type") == "word")
        assert row["unit"] == "word forms"
        assert row["tokens_orig"] == row["tokens_nonce"] == row["words"] == words.height
        assert row["types_orig"] == words["orig_form"].n_unique()
        assert row["ttr_nonce"] == pytest.approx(words["form"].n_unique() / words.height)


def test_a_tokenizer_that_cannot_be_loaded_is_bad_input(treebanks, run_cli):
    root, stats = treebanks
    empty = root / "no_tokenizer"
    empty.mkdir(exist_ok=True)
    out = root / "tables" / "bad"
    code, _, err = run_cli("table-nonce-ttr", *stats, "--out", out, "--tokenizer", empty)
    assert code == 2
    assert err.strip().startswith(f"{empty}: cannot load a tokenizer")
    assert len(err.strip().splitlines()) == 1
    assert not out.with_suffix(".parquet").exists()


@pytest.mark.slow
def test_pooled_rows_count_the_distinct_units_of_every_split(tmp_path, wordpiece, run_cli):
    """Table 8 pools a treebank's splits (App. D): EWT dev and test (their first sentences), one
    nonce version each; the `dev+test` row counts the union of their types, not a mean of
    ratios."""
    directory, raw = wordpiece
    stats, words = [], []
    for split in ("dev", "test"):
        ingested = ingest(tmp_path / split, _first_sentences(f"UD_English-EWT/en_ewt-ud-{split}",
                                                             EWT_SENTENCES), name=split)
        out = tmp_path / "nonce" / split
        nonce(ingested, "en", "--treebank", "en_ewt", "--split", split, out=out)
        stats.append(out / "replacement_stats.parquet")
        words.append(pl.read_parquet(out / "tokens.parquet").filter(pl.col("token_type") == "word"))
    for tokenizer, count in ((None, lambda forms: (len(forms), len(set(forms)))),
                             (directory, lambda forms: _count(forms, raw))):
        out = tmp_path / "tables" / ("words" if tokenizer is None else "tokens")
        options = [] if tokenizer is None else ["--tokenizer", tokenizer]
        code, _, err = run_cli("table-nonce-ttr", *stats, "--out", out, *options)
        assert code == 0, err
        table = pl.read_parquet(out.with_suffix(".parquet"))
        assert table["split"].to_list() == ["dev", "dev+test", "test"]
        assert table["splits"].to_list() == [1, 2, 1]
        pooled = table.row(1, named=True)
        for side, column in (("orig", "orig_form"), ("nonce", "form")):
            tokens, types = count([f for w in words for f in w[column].to_list()])
            assert (pooled[f"tokens_{side}"], pooled[f"types_{side}"]) == (tokens, types)
            assert pooled[f"ttr_{side}"] == pytest.approx(types / tokens)
            # more text, relatively fewer new types: below every split's own ratio
            assert pooled[f"ttr_{side}"] < min(table[f"ttr_{side}"][0], table[f"ttr_{side}"][2])
        assert pooled["words"] == sum(w.height for w in words)
