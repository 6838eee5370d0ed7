"""CoLA TSVs -> items with split and source."""

from __future__ import annotations

from collections import Counter

import pytest
from pairs_support import SHARED_DATA, assert_bad_input, needs_shared, read_items, run_cli

TRAIN = ("gj04\t1\t\tThe sailors rode the breeze clear of the rocks.\n"
         "gj04\t0\t*\tThe sailors rode the breeze clear of.\n"
         "clc95\t0\t??\tMary wonders that Bill left.\n")
DEV = "bc01\t1\t\tHe left.\n\n"


@pytest.fixture
def cola_files(tmp_path):
    train = tmp_path / "in_domain_train.tsv"
    dev = tmp_path / "out_of_domain_dev.tsv"
    train.write_text(TRAIN, encoding="utf-8")
    dev.write_text(DEV, encoding="utf-8")
    return train, dev


def test_cola_items(cola_files, tmp_path, capsys):
    out = tmp_path / "cola.parquet"
    code, err = run_cli(capsys, "pairs", "cola", *cola_files, "--out", out)
    assert code == 0, err
    rows = read_items(out)
    assert [r["split"] for r in rows] == ["in_domain_train"] * 3 + ["out_of_domain_dev"]
    assert [r["label"] for r in rows] == [1, 0, 0, 1]
    assert [r["original_mark"] for r in rows] == [None, "*", "??", None]
    assert [r["source"] for r in rows] == ["gj04", "gj04", "clc95", "bc01"]
    assert rows[1]["item_id"] == rows[1]["group_id"] == "cola:in_domain_train:2"
    assert rows[3]["sentence"] == "He left." and rows[3]["words"] == ["He", "left", "."]
    assert rows[3]["word_starts"] == [0, 3, 7] and rows[3]["word_ends"] == [2, 7, 8]
    assert {r["language"] for r in rows} == {"en"} and all(r["regions"] == [] for r in rows)
    again = tmp_path / "again.parquet"
    assert run_cli(capsys, "pairs", "cola", *cola_files, "--out", again)[0] == 0
    assert again.read_bytes() == out.read_bytes()


def test_wrong_column_count_exits_2(cola_files, tmp_path, capsys):
    train, dev = cola_files
    train.write_text(TRAIN + "gj04\t1\tThe sailors rode.\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "cola.parquet", ["pairs", "cola", dev, train],
                     f"{train}:4", "expected 4 tab-separated columns")


def test_bad_label_exits_2(cola_files, tmp_path, capsys):
    train, _ = cola_files
    train.write_text("gj04\tyes\t\tThe sailors rode.\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "cola.parquet", ["pairs", "cola", train],
                     f"{train}:1", "label 'yes' is not 0 or 1")


@needs_shared
@pytest.mark.shared
def test_public_cola_counts(tmp_path, capsys):
    files = [SHARED_DATA / "cola" / f"{s}.tsv"
             for s in ("in_domain_train", "in_domain_dev", "out_of_domain_dev")]
    out = tmp_path / "cola.parquet"
    assert run_cli(capsys, "pairs", "cola", *files, "--out", out)[0] == 0
    rows = read_items(out)
    assert Counter(r["split"] for r in rows) == {"in_domain_train": 8551, "in_domain_dev": 527,
                                                 "out_of_domain_dev": 516}
    assert {r["label"] for r in rows} == {0, 1}
