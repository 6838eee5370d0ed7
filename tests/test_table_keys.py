"""A table command given a file with a row twice (a stage artifact or a result table, each with
its key: core/contract.py) stops with exit 2 and one line naming the file and the rows, and
writes nothing: the row would be counted twice (a doubled statistics row doubled the words of
table-nonce-ratio, or ended in a traceback)."""

from __future__ import annotations

import polars as pl
import pytest
from artifact_files import tamper
from nonce_helpers import ingest, nonce

from aggregate_inputs import blimp_inputs


def _doubled(path):
    """The file with its first row once more at the end, as a broken writer would leave it."""
    return tamper(path, lambda frame: pl.concat([frame, frame.head(1)]))


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def nonce_stats(tmp_path):
    from nonce_helpers import conllu
    from test_nonce_algorithm import obj, subject

    directory = ingest(tmp_path, conllu(subject("dog", "dog"), subject("cat", "cat"),
                                        obj("tree", "tree")))
    out = tmp_path / "spud"
    nonce(directory, "en", "--treebank", "mini", "--split", "test", method="spud", out=out)
    return out / "replacement_stats.parquet"


@pytest.mark.parametrize("command", ["table-nonce-ratio", "table-nonce-ttr"])
def test_a_doubled_nonce_statistics_row_is_bad_input(tmp_path, run_cli, nonce_stats, command):
    _doubled(nonce_stats)
    out = tmp_path / "tables" / "ratio"
    code, _, err = run_cli(command, nonce_stats, "--out", out)
    assert code == 2, err
    rows = pl.read_parquet(nonce_stats).height
    assert _one_line(err) == (
        f"{nonce_stats}: rows 1 and {rows} are one row twice (treebank 'mini', split 'test', "
        "language 'en', method 'spud', seed 1, upos 'DET'): nonce_stats files have one row per "
        "treebank, split, language, method, seed, upos")
    assert not (tmp_path / "tables").exists()


@pytest.fixture
def blimp_tables(tmp_path, run_cli):
    items, scores = blimp_inputs(tmp_path)
    tables = tmp_path / "tables"
    assert run_cli("table-blimp", "--items", items, "--scores", *scores,
                   "--out-dir", tables)[0] == 0
    return tables


def test_a_doubled_table_row_is_bad_input_for_a_figure(tmp_path, run_cli, blimp_tables):
    """Before: one more bar (or a traceback); the table's key refuses the row."""
    path = _doubled(blimp_tables / "blimp_field.parquet")
    first = pl.read_parquet(path).row(0, named=True)
    code, _, err = run_cli("figure-blimp-field", path, "--out", tmp_path / "figures" / "f")
    assert code == 2, err
    assert _one_line(err) == (
        f"{path}: rows 1 and {pl.read_parquet(path).height} are one row twice (dataset "
        f"{first['dataset']!r}, model {first['model']!r}, method {first['method']!r}, field "
        f"{first['field']!r}): blimp_field files have one row per dataset, model, method, field")
    assert not (tmp_path / "figures").exists()


def test_a_doubled_table_row_is_bad_input_for_the_front_page(tmp_path, run_cli, blimp_tables):
    path = _doubled(blimp_tables / "blimp_overall.parquet")
    page = tmp_path / "index.html"
    code, _, err = run_cli("front-page", "--table", f"blimp_overall={path}", "--out", page)
    assert code == 2, err
    assert _one_line(err).startswith(f"{path}: rows 1 and ")
    assert "are one row twice (dataset " in err
    assert not page.exists()
