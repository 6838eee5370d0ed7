"""`spudflow export` writes only CoNLL-U that ingests again, and a treebank or statistics file
with a row twice is bad input, never counted twice."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from artifact_files import tamper

MINI = Path(__file__).parent / "data" / "mini.conllu"


@pytest.fixture
def treebank(run_cli, tmp_path):
    out = tmp_path / "mini"
    assert run_cli("ingest", MINI, "--out", out)[0] == 0
    return out


def _set_word(column: str, value):
    first_word = (pl.col("token_type") == "word") & (pl.col("sent_index") == 0) & \
        (pl.col("word_index") == 2)
    return lambda f: f.with_columns(pl.when(first_word).then(pl.lit(value))
                                    .otherwise(pl.col(column)).cast(f.schema[column])
                                    .alias(column))


@pytest.mark.parametrize("column, value, message", [
    ("form", "a\tb", "expected 10 tab-separated columns, found 11"),
    ("form", "a\nb", "at line"),
    ("lemma", "x\ny", "at line"),
    ("head", -1, "HEAD '-1' is not a non-negative integer"),
    ("head", 99, "HEAD 99 points outside the sentence"),
])
def test_export_refuses_what_would_be_invalid_conllu(run_cli, treebank, tmp_path, column, value,
                                                     message):
    tamper(treebank / "tokens.parquet", _set_word(column, value))
    out = tmp_path / "back.conllu"
    code, _, err = run_cli("export", treebank, "--out", out)
    assert code == 2
    assert err.startswith(f"{treebank}: would export as invalid CoNLL-U (")
    assert message in err and err.count("\n") == 1
    assert not out.exists() and not list(tmp_path.glob(".back.conllu*"))


def test_doubled_sentence_rows_are_not_exported_twice(run_cli, treebank, tmp_path):
    tamper(treebank / "sentences.parquet", lambda f: pl.concat([f, f]).sort("sent_index"))
    code, _, err = run_cli("export", treebank, "--out", tmp_path / "back.conllu")
    assert code == 2
    assert "sentences.parquet: rows 1 and 2 are one row twice (sent_index 0)" in err
    assert not (tmp_path / "back.conllu").exists()


def test_a_doubled_statistics_row_is_bad_input(run_cli, treebank, tmp_path):
    stats = tmp_path / "stats.parquet"
    assert run_cli("stats", treebank, "--treebank", "mini", "--split", "test", "--lang", "de",
                   "--out", stats)[0] == 0
    tamper(stats, lambda f: pl.concat([f, f]))
    code, _, err = run_cli("table-treebank-stats", stats, "--out", tmp_path / "table")
    assert code == 2
    assert err == (f"{stats}: rows 1 and 2 are one row twice (treebank 'mini', split 'test'): "
                   "treebank_stats files have one row per treebank, split\n")
    assert not list(tmp_path.glob("table*"))
