"""BLiMP ties and skipped pairs: counted and shown, and n_pairs is the denominator of
accuracy. Inputs are what the real stages write: vendored BLiMP records made into items by
`pairs blimp` and scored by `score` with a tiny causal model whose input limit some sentence
exceeds."""

from __future__ import annotations

import json

import polars as pl
import pytest
from artifact_files import rewrite
from scoring_models import tiny_model_dir

from aggregate_inputs import REPO, assert_table_files

BLIMP = REPO / "resources" / "blimp"
N_PAIRS = 6
LONG = " ".join(["word"] * 60) + "."  # more tokens than the tiny model takes


def _records(uid: str) -> list[dict]:
    lines = (BLIMP / f"{uid}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:N_PAIRS]]


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """(item_scores frame joined with items, tables directory)."""
    from spudflow.cli import main

    root = tmp_path_factory.mktemp("blimp_skipped")
    folder = root / "blimp"
    folder.mkdir()
    island = _records("adjunct_island")
    island[1]["sentence_good"] = LONG  # pair 1: too long to score -> skipped
    anaphor = _records("anaphor_gender_agreement")
    anaphor[2]["sentence_bad"] = anaphor[2]["sentence_good"]  # pair 2: the same sentence -> tie
    for uid, records in (("adjunct_island", island), ("anaphor_gender_agreement", anaphor)):
        (folder / f"{uid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records),
                                             encoding="utf-8")
    items = root / "results" / "items" / "blimp.parquet"
    assert main(["items", "blimp", str(folder), "--out", str(items)]) == 0
    out = root / "results" / "scores" / "blimp" / "tiny"
    assert main(["score", str(items), "--model", str(tiny_model_dir("causal", "bytebpe")),
                 "--kind", "causal", "--method", "ppl", "--name", "tiny", "--out", str(out),
                 "--threads", "1"]) == 0
    scores = out / "item_scores.parquet"
    # pair 3 of anaphor_gender_agreement loses its bad sentence's row -> skipped
    missing = "blimp:anaphor_gender_agreement:3:bad"
    assert missing in pl.read_parquet(scores)["item_id"].to_list()
    rewrite(scores, lambda f: f.filter(pl.col("item_id") != missing))
    tables = root / "tables"
    assert main(["table-blimp", "--items", str(items), "--scores", str(scores), "--out-dir",
                 str(tables)]) == 0
    scored = pl.read_parquet(items).join(pl.read_parquet(scores), on="item_id", how="left")
    return scored, tables


def test_the_producers_wrote_a_skipped_row_and_a_tie(produced):
    scored, _ = produced
    skipped = scored.filter(pl.col("skipped").is_not_null())
    # the long good sentence, and the pair's bad one (49 tokens with the tiny tokenizer) too
    assert skipped["item_id"].to_list() == ["blimp:adjunct_island:1:good",
                                            "blimp:adjunct_island:1:bad"]
    assert skipped["skipped"].to_list() == ["too_long"] * 2
    assert skipped["logprob_sum"].is_null().all()
    tie = scored.filter(pl.col("item_id").str.starts_with("blimp:anaphor_gender_agreement:2:"))
    assert tie["logprob_sum"][0] == tie["logprob_sum"][1]


def _expected(scored: pl.DataFrame, uid: str, skip: set[str]) -> dict:
    pairs = scored.filter(pl.col("UID") == uid)
    correct = ties = 0
    for pair in sorted(set(pairs["pairID"]) - skip):
        good = pairs.filter(pl.col("pairID") == pair, pl.col("label") == 1)["logprob_sum"][0]
        bad = pairs.filter(pl.col("pairID") == pair, pl.col("label") == 0)["logprob_sum"][0]
        correct += good > bad
        ties += good == bad
    n_pairs = N_PAIRS - len(skip)
    return {"n_pairs": n_pairs, "n_correct": correct, "n_ties": ties, "n_skipped": len(skip),
            "accuracy": pytest.approx(correct / n_pairs)}


def test_skipped_pairs_are_counted_apart_and_accuracy_has_one_denominator(produced):
    scored, tables = produced
    expected = {"adjunct_island": _expected(scored, "adjunct_island", {"1"}),
                "anaphor_gender_agreement": _expected(scored, "anaphor_gender_agreement", {"3"})}
    assert expected["anaphor_gender_agreement"]["n_ties"] == 1
    paradigm = assert_table_files(tables, "blimp_paradigm")
    for row in paradigm.iter_rows(named=True):
        got = {k: row[k] for k in ("n_pairs", "n_correct", "n_ties", "n_skipped", "accuracy")}
        assert got == expected[row["uid"]]
    overall = assert_table_files(tables, "blimp_overall").row(0, named=True)
    assert (overall["n_pairs"], overall["n_skipped"], overall["n_ties"]) == (10, 2, 1)
    assert overall["accuracy"] == pytest.approx(overall["n_correct"] / overall["n_pairs"])
    field = assert_table_files(tables, "blimp_field")
    for row in field.iter_rows(named=True):
        assert row["accuracy"] == pytest.approx(row["n_correct"] / row["n_pairs"])
        assert row["n_pairs"] + row["n_skipped"] == N_PAIRS


def test_the_items_not_scored_are_counted_in_the_log(produced, caplog):
    """The tables leave out the rows a scorer skipped; the log says how many, and why."""
    from spudflow.aggregate.inputs import warn_not_scored

    scored, _ = produced
    caplog.set_level("WARNING")
    warn_not_scored(scored)
    assert "blimp, tiny/ppl: 2 items not scored (too_long), left out of the tables" \
        in caplog.text
