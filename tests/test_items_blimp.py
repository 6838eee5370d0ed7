"""BLiMP paradigm files -> good/bad pairs; the vendored subset and the full benchmark."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from items_support import REPO, SHARED_DATA, assert_bad_input, needs_shared, read_items, run_cli

from spudflow.items.blimp import paradigm_files, read_paradigm


def _record(uid, pair, good, bad, **extra):
    return {"sentence_good": good, "sentence_bad": bad, "field": "morphology",
            "linguistics_term": "anaphor_agreement", "UID": uid, "simple_LM_method": True,
            "one_prefix_method": True, "two_prefix_method": False, "lexically_identical": False,
            "pairID": str(pair), **extra}


@pytest.fixture
def paradigms(tmp_path):
    folder = tmp_path / "blimp"
    folder.mkdir()
    a = [_record("anaphor_gender_agreement", 0, "Bob saw himself.", "Bob saw herself."),
         _record("anaphor_gender_agreement", 1, "Sue hid herself.", "Sue hid himself.")]
    b = [_record("passive_1", 0, "Tom was seen.", "Tom was gone.")]
    (folder / "anaphor_gender_agreement.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in a), encoding="utf-8")
    (folder / "passive_1.jsonl").write_text(json.dumps(b[0]) + "\n", encoding="utf-8")
    return folder


def test_items_become_good_and_bad_items(paradigms, tmp_path, capsys):
    out = tmp_path / "blimp.parquet"
    code, err = run_cli(capsys, "items", "blimp", paradigms, "--out", out)
    assert code == 0, err
    rows = read_items(out)
    assert [(r["item_id"], r["label"]) for r in rows] == [
        ("blimp:anaphor_gender_agreement:0:good", 1), ("blimp:anaphor_gender_agreement:0:bad", 0),
        ("blimp:anaphor_gender_agreement:1:good", 1), ("blimp:anaphor_gender_agreement:1:bad", 0),
        ("blimp:passive_1:0:good", 1), ("blimp:passive_1:0:bad", 0)]
    assert rows[0]["group_id"] == rows[1]["group_id"] == "blimp:anaphor_gender_agreement:0"
    assert rows[1]["sentence"] == "Bob saw herself."
    assert rows[1]["words"] == ["Bob", "saw", "herself", "."]
    assert rows[5]["UID"] == "passive_1" and rows[5]["pairID"] == "0"
    assert rows[5]["field"] == "morphology" and rows[5]["linguistics_term"] == "anaphor_agreement"
    assert rows[5]["simple_LM_method"] is True and rows[5]["two_prefix_method"] is False
    assert [r["version"] for r in rows[:2]] == ["good", "bad"]
    again = tmp_path / "again.parquet"
    assert run_cli(capsys, "items", "blimp", paradigms, "--out", again)[0] == 0
    assert again.read_bytes() == out.read_bytes()


def test_line_without_sentence_good_exits_2(paradigms, tmp_path, capsys):
    path = paradigms / "passive_1.jsonl"
    record = _record("passive_1", 1, "x", "y")
    del record["sentence_good"]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    assert_bad_input(capsys, tmp_path / "blimp.parquet", ["items", "blimp", paradigms],
                     f"{path}:2", "no sentence_good")


@pytest.mark.parametrize("line, words", [
    ("{not json\n", "not JSON"),
    (json.dumps(_record("passive_1", 0, "a", "b")) + "\n", "pair passive_1:0 already on"),
    (json.dumps(_record("passive_1", 5, "a", "")) + "\n", "sentence_bad is not a non-empty"),
])
def test_other_bad_lines_exit_2(paradigms, tmp_path, capsys, line, words):
    path = paradigms / "passive_1.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)
    assert_bad_input(capsys, tmp_path / "blimp.parquet", ["items", "blimp", paradigms],
                     f"{path}:2", words)


def test_vendored_subset_has_100_pairs_of_each_of_67_paradigms(tmp_path, capsys):
    folder = REPO / "resources" / "blimp"
    assert (folder / "LICENSE").is_file() and (folder / "SOURCE.txt").is_file()
    files = paradigm_files([folder])
    assert len(files) == 67
    for path in files:
        records = read_paradigm(path)
        assert [r["pairID"] for r in records] == [str(i) for i in range(100)]
        assert {r["UID"] for r in records} == {path.stem}
    out = tmp_path / "blimp.parquet"
    assert run_cli(capsys, "items", "blimp", folder, "--sample", "500", "--out", out)[0] == 0
    rows = read_items(out)
    assert len(rows) == 1000 and Counter(r["label"] for r in rows) == {0: 500, 1: 500}


def test_a_field_spelled_two_ways_is_one_field(tmp_path, capsys, caplog):
    """BLiMP 1.0's principle_A_case_2 spells its field `syntax/semantics`, the other binding
    paradigms `syntax_semantics`: its items carry the one spelling, with a line in the log."""
    folder = REPO / "resources" / "blimp"
    raw = json.loads((folder / "principle_A_case_2.jsonl").read_text().splitlines()[0])
    assert raw["field"] == "syntax/semantics"
    caplog.set_level("INFO")
    out = tmp_path / "blimp.parquet"
    assert run_cli(capsys, "items", "blimp", folder, "--out", out)[0] == 0
    rows = read_items(out)
    fields = Counter(r["field"] for r in rows if r["label"] == 1)
    assert fields == {"morphology": 1800, "semantics": 900, "syntax": 2600,
                      "syntax_semantics": 1400}
    assert {r["field"] for r in rows if r["UID"] == "principle_A_case_2"} == {"syntax_semantics"}
    assert "principle_A_case_2.jsonl: field 'syntax/semantics' of 100 pairs read as " \
        "'syntax_semantics'" in caplog.text


@pytest.mark.slow
@needs_shared
@pytest.mark.shared
def test_full_blimp_has_67_paradigms_of_1000_pairs(tmp_path, capsys):
    out = tmp_path / "blimp.parquet"
    assert run_cli(capsys, "items", "blimp", SHARED_DATA / "blimp", "--out", out)[0] == 0
    rows = read_items(out)
    pairs = Counter(r["UID"] for r in rows if r["label"] == 1)
    assert len(pairs) == 67 and set(pairs.values()) == {1000}
    assert len(rows) == 2 * 67 * 1000
    # The vendored subset is the first 100 pairs of each paradigm, unchanged.
    vendored = REPO / "resources" / "blimp"
    for path in paradigm_files([vendored]):
        full = (SHARED_DATA / "blimp" / path.name).read_text(encoding="utf-8").splitlines(True)
        assert path.read_text(encoding="utf-8") == "".join(full[:100])
