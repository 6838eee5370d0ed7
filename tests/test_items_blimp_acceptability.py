"""The acceptability set built from BLiMP's sentences (items/blimp_acceptability.py): CoLA items
the CoLA tables read unchanged, the same sentences as the BLiMP dataset with the same sample, and
a sentence repeated over pairs kept once (labelled both ways: left out), counted in the log."""

from __future__ import annotations

import json
import logging

import numpy as np
import polars as pl
from workflow_helpers import REPO

from spudflow.core.artifacts import ITEMS_COLA
from spudflow.core.contract import read_artifact
from spudflow.core.dataset_families import DATASET_FAMILIES
from spudflow.items.blimp import build_blimp_items
from spudflow.items.blimp_acceptability import build_blimp_acceptability_items

from aggregate_inputs import score_path, scores_frame, write

BLIMP = REPO / "resources" / "blimp"


def test_the_same_sample_gives_the_blimp_datasets_sentences_as_cola_items(tmp_path, run_cli):
    out = tmp_path / "blimp_acceptability.parquet"
    code, _, err = run_cli("items", "blimp-acceptability", BLIMP, "--sample", 40, "--seed", 3,
                           "--out", out)
    assert code == 0, err
    items = read_artifact(out, ITEMS_COLA)  # the CoLA items artifact, checked on read
    pairs = pl.from_arrow(build_blimp_items([BLIMP], sample=40, seed=3))
    assert items.height == 80
    assert items["sentence"].to_list() == pairs["sentence"].to_list()
    assert items["label"].to_list() == pairs["label"].to_list() == [1, 0] * 40
    assert set(items["dataset"]) == {"blimp_acceptability"}
    assert set(items["split"]) == {"blimp"} and not items["phenomenon_set"].any()
    assert items["source"].to_list() == pairs["UID"].to_list()  # the paradigm
    assert items["original_mark"].is_null().all() and set(items["language"]) == {"en"}
    first = pairs.row(0, named=True)
    assert items.row(0, named=True)["item_id"] == (
        f"blimp_acceptability:{first['UID']}:{first['pairID']}:good")
    # a pair's two sentences share its group: --sample draws pairs, as `items blimp` does
    assert items["group_id"].n_unique() == 40
    assert DATASET_FAMILIES["blimp_acceptability"].tables == "cola"


def test_split_by_field(tmp_path):
    table = pl.from_arrow(build_blimp_acceptability_items([BLIMP / "causative.jsonl",
                                                           BLIMP / "adjunct_island.jsonl"],
                                                          sample=10, split_by="field"))
    assert set(table["split"]) <= {"syntax", "morphology"} and table.height == 20
    lines = [json.loads(line) for line in (BLIMP / "causative.jsonl").read_text().splitlines()]
    causative = table.filter(pl.col("source") == "causative")
    assert set(causative["split"]) == {lines[0]["field"]}


def _paradigm(path, pairs):
    records = [{"sentence_good": good, "sentence_bad": bad, "field": "syntax",
                "linguistics_term": "t", "UID": path.stem, "pairID": str(i)}
               for i, (good, bad) in enumerate(pairs)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_repeated_sentence_is_kept_once_and_one_labelled_both_ways_left_out(tmp_path, caplog):
    """Two pairs share their good sentence: kept at its first occurrence; a sentence good in
    one pair and bad in another: every occurrence left out. Both counted in the log."""
    paradigm = _paradigm(tmp_path / "p.jsonl", [
        ("The cat sleeps.", "The cat sleep."),
        ("The cat sleeps.", "Cat the sleeps."),  # the good sentence again
        ("The dogs bark.", "The dogs barks."),
        ("The dogs barks loudly.", "The dogs bark."),  # bad here, good above
    ])
    with caplog.at_level(logging.INFO):
        table = pl.from_arrow(build_blimp_acceptability_items([paradigm]))
    assert table.select("item_id", "sentence", "label").rows() == [
        ("blimp_acceptability:p:0:good", "The cat sleeps.", 1),
        ("blimp_acceptability:p:0:bad", "The cat sleep.", 0),
        ("blimp_acceptability:p:1:bad", "Cat the sleeps.", 0),
        ("blimp_acceptability:p:2:bad", "The dogs barks.", 0),
        ("blimp_acceptability:p:3:good", "The dogs barks loudly.", 1),
    ]
    assert table["line"].to_list() == [1, 1, 2, 3, 4]
    assert ("1 repeated sentences left out (a later occurrence of a sentence kept at its first); "
            "e.g. p:1 good: 'The cat sleeps.'") in caplog.text
    assert ("2 occurrences left out of sentences labelled both good and bad; e.g. p:2 good: "
            "'The dogs bark.'") in caplog.text


def test_no_sentence_left_is_bad_input(tmp_path, run_cli):
    paradigm = _paradigm(tmp_path / "p.jsonl", [("A b.", "B a."), ("B a.", "A b.")])
    out = tmp_path / "out.parquet"
    code, _, err = run_cli("items", "blimp-acceptability", paradigm, "--out", out)
    assert code == 2 and f"{paradigm}: no sentence with one label is left" in err
    assert not out.exists()


def test_the_cola_tables_read_the_set(tmp_path, run_cli):
    """table-cola on the set: a thresholds row per normalisation for the split `blimp`, a
    sources row per paradigm; no phenomenon set."""
    items_path = tmp_path / "results" / "items" / "blimp_acceptability.parquet"
    items_path.parent.mkdir(parents=True)
    code, _, err = run_cli("items", "blimp-acceptability", BLIMP / "causative.jsonl",
                           BLIMP / "adjunct_island.jsonl", BLIMP / "wh_island.jsonl",
                           "--sample", 60, "--out", items_path)
    assert code == 0, err
    items = pl.read_parquet(items_path)
    rng = np.random.default_rng(0)
    labels = items["label"].to_numpy()
    n_tokens = items["words"].list.len().to_numpy()
    logprob = -n_tokens * (4.0 - 0.5 * labels + rng.normal(0, 0.5, items.height))
    unigram = -n_tokens * (6.0 + rng.normal(0, 0.3, items.height))
    scores = write(scores_frame(items["item_id"].to_list(), "lm", "kn", logprob, n_tokens,
                                unigram=unigram),
                   score_path(tmp_path, "blimp_acceptability", "lm"))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items_path, "--scores", scores,
                           "--out-dir", out, "--resamples", 200)
    assert code == 0, err
    thresholds = pl.read_parquet(out / "cola_thresholds.parquet")
    assert set(thresholds["split"]) == {"blimp"}
    assert set(thresholds["normalisation"]) == {"LogProb", "MeanLP", "NormLP", "SLOR",
                                                "Word-LP Min-1"}
    assert set(thresholds["n_items"]) == {120} and set(thresholds["status"]) == {"ok"}
    assert thresholds["mcc"].is_not_null().all()
    sources = pl.read_parquet(out / "cola_sources.parquet")
    assert set(sources["source"]) == {"causative", "adjunct_island", "wh_island"}
    assert pl.read_parquet(out / "cola_phenomena.parquet").is_empty()
    # the captions say which data: not CoLA
    caption = (out / "cola_thresholds.caption.rst").read_text(encoding="utf-8")
    assert ("Data: blimp_acceptability is an acceptability set built from BLiMP's sentences"
            in caption)
    # the front page says which data the CoLA rows are: not CoLA
    page = tmp_path / "index.html"
    code, _, err = run_cli("front-page", "--table",
                           f"cola_thresholds={out / 'cola_thresholds.parquet'}", "--out", page)
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert ("Data: blimp_acceptability (split `blimp`) is an acceptability set built from "
            "BLiMP&#x27;s sentences") in text
    assert "not CoLA itself, which is not vendored." in text
