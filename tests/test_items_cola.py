"""CoLA TSVs -> items with split and source; the phenomenon sets (paper section 8, Table 5) with
an empty source column, read only when named as such."""

from __future__ import annotations

from collections import Counter

import pytest
from items_support import SHARED_DATA, assert_bad_input, needs_shared, read_items, run_cli

TRAIN = ("gj04\t1\t\tThe sailors rode the breeze clear of the rocks.\n"
         "gj04\t0\t*\tThe sailors rode the breeze clear of.\n"
         "clc95\t0\t??\tMary wonders that Bill left.\n")
DEV = "bc01\t1\t\tHe left.\n\n"
SVO = "\t1\t\tjohn read the book .\n\t0\t\tjohn the book read .\n"


@pytest.fixture
def cola_files(tmp_path):
    train = tmp_path / "in_domain_train.tsv"
    dev = tmp_path / "out_of_domain_dev.tsv"
    train.write_text(TRAIN, encoding="utf-8")
    dev.write_text(DEV, encoding="utf-8")
    return train, dev


def test_cola_items(cola_files, tmp_path, capsys):
    out = tmp_path / "cola.parquet"
    code, err = run_cli(capsys, "items", "cola", *cola_files, "--out", out)
    assert code == 0, err
    rows = read_items(out)
    assert [r["split"] for r in rows] == ["in_domain_train"] * 3 + ["out_of_domain_dev"]
    assert [r["label"] for r in rows] == [1, 0, 0, 1]
    assert [r["original_mark"] for r in rows] == [None, "*", "??", None]
    assert [r["source"] for r in rows] == ["gj04", "gj04", "clc95", "bc01"]
    assert not any(r["phenomenon_set"] for r in rows)
    assert rows[1]["item_id"] == rows[1]["group_id"] == "cola:in_domain_train:2"
    assert rows[3]["sentence"] == "He left." and rows[3]["words"] == ["He", "left", "."]
    assert rows[3]["word_starts"] == [0, 3, 7] and rows[3]["word_ends"] == [2, 7, 8]
    assert {r["language"] for r in rows} == {"en"} and all(r["regions"] == [] for r in rows)
    again = tmp_path / "again.parquet"
    assert run_cli(capsys, "items", "cola", *cola_files, "--out", again)[0] == 0
    assert again.read_bytes() == out.read_bytes()


def test_wrong_column_count_exits_2(cola_files, tmp_path, capsys):
    train, dev = cola_files
    train.write_text(TRAIN + "gj04\t1\tThe sailors rode.\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "cola.parquet", ["items", "cola", dev, train],
                     f"{train}:4", "expected 4 tab-separated columns")


def test_bad_label_exits_2(cola_files, tmp_path, capsys):
    train, _ = cola_files
    train.write_text("gj04\tyes\t\tThe sailors rode.\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "cola.parquet", ["items", "cola", train],
                     f"{train}:1", "label 'yes' is not 0 or 1")


def test_phenomenon_sets_have_no_source(cola_files, tmp_path, capsys):
    svo = tmp_path / "svo.tsv"
    svo.write_text(SVO, encoding="utf-8")
    out = tmp_path / "cola.parquet"
    code, err = run_cli(capsys, "items", "cola", *cola_files, "--phenomena", svo, "--out", out)
    assert code == 0, err
    rows = read_items(out)
    assert [r["split"] for r in rows] == ["in_domain_train"] * 3 + ["out_of_domain_dev"] + \
        ["svo"] * 2
    assert [r["phenomenon_set"] for r in rows] == [False] * 4 + [True] * 2
    assert [r["source"] for r in rows[4:]] == [None, None]
    assert [r["label"] for r in rows[4:]] == [1, 0]
    assert rows[5]["item_id"] == "cola:svo:2" and rows[5]["sentence"] == "john the book read ."


def test_phenomenon_file_among_the_splits_exits_2(cola_files, tmp_path, capsys):
    svo = tmp_path / "svo.tsv"
    svo.write_text(SVO, encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "cola.parquet", ["items", "cola", *cola_files, svo],
                     f"{svo}:1", "empty source; a phenomenon set")


def test_split_among_the_phenomena_exits_2(cola_files, tmp_path, capsys):
    train, dev = cola_files
    assert_bad_input(capsys, tmp_path / "cola.parquet",
                     ["items", "cola", train, "--phenomena", dev],
                     f"{dev}:1", "source 'bc01' in a phenomenon set")


def test_phenomenon_named_like_a_split_exits_2(cola_files, tmp_path, capsys):
    train, _ = cola_files
    same = tmp_path / "other" / train.name
    same.parent.mkdir()
    same.write_text(SVO, encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "cola.parquet",
                     ["items", "cola", train, "--phenomena", same],
                     str(same), "split name 'in_domain_train'")


@needs_shared
@pytest.mark.shared
def test_public_phenomenon_sets(tmp_path, capsys):
    """The five sets of the paper's Table 5 as distributed with the CoLA baselines (sizes as in
    section 8.1: SVO 100 triples x 5 orders, 260 wh pairs, 91 causative pairs, 169 agreement
    quadruples, 144 reflexive sentences with 1 in 6 acceptable)."""
    folder = SHARED_DATA / "cola" / "phenomena"
    names = ("svo", "wh_extraction", "inchoative", "singular_pl", "reflexive")
    out = tmp_path / "cola.parquet"
    code, err = run_cli(capsys, "items", "cola", SHARED_DATA / "cola" / "in_domain_dev.tsv",
                        "--phenomena", *[folder / f"{n}.tsv" for n in names], "--out", out)
    assert code == 0, err
    rows = [r for r in read_items(out) if r["phenomenon_set"]]
    assert Counter(r["split"] for r in rows) == {"svo": 500, "wh_extraction": 520,
                                                 "inchoative": 182, "singular_pl": 676,
                                                 "reflexive": 144}
    assert {r["source"] for r in rows} == {None}
    acceptable = Counter(r["split"] for r in rows if r["label"] == 1)
    assert acceptable == {"svo": 100, "wh_extraction": 260, "inchoative": 127,
                          "singular_pl": 338, "reflexive": 24}


@needs_shared
@pytest.mark.shared
def test_public_cola_counts(tmp_path, capsys):
    files = [SHARED_DATA / "cola" / f"{s}.tsv"
             for s in ("in_domain_train", "in_domain_dev", "out_of_domain_dev")]
    out = tmp_path / "cola.parquet"
    assert run_cli(capsys, "items", "cola", *files, "--out", out)[0] == 0
    rows = read_items(out)
    assert Counter(r["split"] for r in rows) == {"in_domain_train": 8551, "in_domain_dev": 527,
                                                 "out_of_domain_dev": 516}
    assert {r["label"] for r in rows} == {0, 1}
