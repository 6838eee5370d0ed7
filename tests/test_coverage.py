"""What a scoring function's figures can show: the n-gram scorer marks the words its model never
saw (token_scores `unseen`, item_scores `n_unseen`), the headline tables give the fraction of such
words and of tied pairs per model and dataset, and the front page notes a scoring function that
decides mostly by ties or unseen words. Real n-gram scores of small hand-made items, so every
fraction is counted by hand below."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_front_page import read_page

from spudflow.aggregate.coverage import note, tied_pairs
from spudflow.core import artifacts

from aggregate_inputs import blimp_inputs, items_frame, score_path, write

CORPUS = "the cat sat on the mat\nthe dog sat on the mat\na cat ran\n"
# Words the corpus never had: zorp blick florp glim dax wug tupa mib.
SPUD_GROUPS = [  # (original, nonce version): two of three pairs differ only in unseen words
    ("the zorp sat on the blick", "the dax sat on the wug"),
    ("the florp sat on the glim", "the tupa sat on the mib"),
    ("the cat sat on the mat", "the dax sat on the wug"),
]
# 6 sentences x 6 words; unseen: 2 in each but the third original
SPUD_UNSEEN = 10 / 36
BLIMP_PAIRS = [  # (good, bad)
    ("the cat sat", "the sat cat"),
    ("the zorp sat", "the blick sat"),
    ("the dax ran", "the wug ran"),
    ("a cat ran", "a ran cat"),
]
BLIMP_UNSEEN = 4 / 24  # zorp blick dax wug of 8 three-word sentences


@pytest.fixture
def trigram(tmp_path, run_cli) -> Path:
    text = tmp_path / "corpus.txt"
    text.write_text(CORPUS, encoding="utf-8")
    model = tmp_path / "tri.parquet"
    code, _, err = run_cli("ngram-train", text, "--lang", "en", "--order", "3", "--out", model)
    assert code == 0, err
    return model


def _score(run_cli, items: Path, model: Path, out: Path) -> Path:
    code, _, err = run_cli("score", items, "--model", model, "--name", "tri", "--kind", "ngram",
                           "--method", "addk,kn", "--out", out)
    assert code == 0, err
    return out / "item_scores.parquet"


def spud_items(root: Path) -> Path:
    rows = []
    for g, (orig, nonce) in enumerate(SPUD_GROUPS):
        rows.append({"item_id": f"{g}-orig", "group_id": f"g{g}", "sentence": orig,
                     "label": None, "method": "orig", "seed": None})
        rows.append({"item_id": f"{g}-spud-1", "group_id": f"g{g}", "sentence": nonce,
                     "label": None, "method": "spud", "seed": 1})
    return write(items_frame(rows, "spud_en", "en"),
                 root / "results" / "items" / "spud_en.parquet", artifacts.ITEMS_SPUD)


def blimp_items(root: Path) -> Path:
    rows = []
    for i, (good, bad) in enumerate(BLIMP_PAIRS):
        for label, kind, sentence in ((1, "good", good), (0, "bad", bad)):
            rows.append({"item_id": f"p{i}-{kind}", "group_id": f"p{i}", "sentence": sentence,
                         "label": label, "field": "syntax", "linguistics_term": "order",
                         "UID": "word_order", "pairID": str(i)})
    return write(items_frame(rows, "blimp", "en"), root / "results" / "items" / "blimp.parquet",
                 artifacts.ITEMS_BLIMP)


def test_the_scorer_marks_words_the_model_never_saw(tmp_path, run_cli, trigram):
    items = spud_items(tmp_path)
    scores = _score(run_cli, items, trigram, tmp_path / "scores")
    tokens = pl.read_parquet(scores.parent / "token_scores.parquet").filter(
        (pl.col("item_id") == "2-orig") | (pl.col("item_id") == "2-spud-1"))
    unseen = {(r["item_id"], r["token"]): r["unseen"] for r in tokens.iter_rows(named=True)}
    assert unseen[("2-orig", "cat")] is False and unseen[("2-spud-1", "dax")] is True
    rows = pl.read_parquet(scores).filter(pl.col("method") == "addk")
    assert dict(rows.select("item_id", "n_unseen").iter_rows()) == {
        "0-orig": 2, "0-spud-1": 2, "1-orig": 2, "1-spud-1": 2, "2-orig": 0, "2-spud-1": 2}


def test_transformer_scores_have_no_unseen_count(tmp_path, run_cli):
    from scoring_models import tiny_model_dir

    text = tmp_path / "s.txt"
    text.write_text("the cat sat\n", encoding="utf-8")
    code, _, err = run_cli("score", text, "--model", tiny_model_dir("causal", "bytebpe"),
                           "--kind", "causal", "--method", "ppl", "--out", tmp_path / "out")
    assert code == 0, err
    assert pl.read_parquet(tmp_path / "out" / "item_scores.parquet")["n_unseen"].to_list() == [
        None]
    assert set(pl.read_parquet(tmp_path / "out" / "token_scores.parquet")["unseen"]) == {None}


def test_spud_and_blimp_tables_count_ties_and_unseen_words(tmp_path, run_cli, trigram):
    out = tmp_path / "results" / "tables"
    spud = spud_items(tmp_path)
    spud_scores = _score(run_cli, spud, trigram, score_path(tmp_path, "spud_en", "tri").parent)
    code, _, err = run_cli("table-spud-scores", "--items", spud, "--scores", spud_scores,
                           "--out-dir", out)
    assert code == 0, err
    summary = pl.read_parquet(out / "spud_ratio_summary.parquet").filter(
        pl.col("outliers") == "kept")
    assert summary.height == 2 * 2  # seed 1 and all, addk and kn
    for row in summary.iter_rows(named=True):
        assert row["tie_fraction"] == pytest.approx(2 / 3), row
        assert row["unseen_fraction"] == pytest.approx(SPUD_UNSEEN), row

    blimp = blimp_items(tmp_path)
    blimp_scores = _score(run_cli, blimp, trigram, score_path(tmp_path, "blimp", "tri").parent)
    code, _, err = run_cli("table-blimp", "--items", blimp, "--scores", blimp_scores,
                           "--out-dir", out)
    assert code == 0, err
    overall = pl.read_parquet(out / "blimp_overall.parquet")
    for row in overall.iter_rows(named=True):
        assert (row["n_pairs"], row["n_ties"]) == (4, 2)  # the pairs of unseen words tie
        assert row["tie_fraction"] == pytest.approx(0.5)
        assert row["unseen_fraction"] == pytest.approx(BLIMP_UNSEEN)


def test_front_page_shows_the_shares_and_notes_who_decides_by_ties(tmp_path, run_cli, trigram):
    out = tmp_path / "results" / "tables"
    spud = spud_items(tmp_path)
    scores = _score(run_cli, spud, trigram, score_path(tmp_path, "spud_en", "tri").parent)
    assert run_cli("table-spud-scores", "--items", spud, "--scores", scores,
                   "--out-dir", out)[0] == 0
    # BLiMP of a transformer-like model (no unseen count) with one tie in 36 pairs
    items, blimp_scores = blimp_inputs(tmp_path / "blimp")
    assert run_cli("table-blimp", "--items", items, "--scores", *blimp_scores,
                   "--out-dir", out)[0] == 0
    page = tmp_path / "results" / "index.html"
    code, _, err = run_cli("front-page", "--table",
                           f"spud_ratio_summary={out / 'spud_ratio_summary.parquet'}",
                           "--table", f"blimp_overall={out / 'blimp_overall.parquet'}",
                           "--out", page)
    assert code == 0, err
    sections = read_page(page)
    header, *body = sections["spud_ratio_summary"]["rows"]
    assert header == ["language", "model", "addk", "kn", "unseen", "tied addk", "tied kn"]
    # the add-k median (with its interval over the originals) is a tie: 1
    assert body == [["en", "tri", body[0][2], body[0][3], f"{SPUD_UNSEEN:.3f}", "0.667", "0.667"]]
    assert body[0][2].split(" [")[0] == "1.000"
    text = sections["spud_ratio_summary"]["text"]
    assert "en: tri · addk: 67% of its pairs tied, 28% of the words it scored never seen in " \
           "training; it decides mostly by ties" in text
    assert "en: tri · kn: 67% of its pairs tied" in text

    header, *body = sections["blimp_overall"]["rows"]
    assert header[4:] == ["accuracy", "n_ties", "unseen", "tied"]
    assert body[0][6:] == ["n/a", f"{1 / 36:.3f}"]
    assert "decides mostly" not in sections["blimp_overall"].get("text", "")


def test_tied_pairs_counts_positive_negative_pairs_of_equal_score():
    labels = np.array([1, 1, 0, 0, 0])
    scores = np.array([-1.0, -2.0, -1.0, -1.0, -3.0])
    assert tied_pairs(labels, scores) == (6, 2)
    assert tied_pairs(np.array([1, 1]), np.array([0.0, 0.0])) == (0, 0)


def test_note_only_for_a_function_that_decides_mostly_by_ties_or_unseen_words():
    assert note("x", 0.5, 0.5) is None
    assert note("x", None, None) is None
    assert note("x", 0.2, 0.9).startswith("x: 20% of its pairs tied, 90% of the words it scored")
    assert "mostly by ties and unseen words" in note("x", 0.95, 0.9)
    assert note("x", 0.95, None) == ("x: 95% of its pairs tied; it decides mostly by ties, so "
                                     "its figure says little about what the model knows of "
                                     "syntax.")
    # the default run's English add-k SPUD ratio: median exactly 1 with 14% of the pairs tied
    assert note("en: m · addk", 0.14, 0.26, median_tied=True) == (
        "en: m · addk: 14% of its pairs tied, 26% of the words it scored never seen in "
        "training; its median is one of the tied pairs, so its figure says little about what "
        "the model knows of syntax.")


def test_a_spud_median_ratio_of_exactly_one_is_noted_as_a_tie():
    from spudflow.aggregate.front_page import spud_coverage

    summary = pl.DataFrame({
        "nonce_method": ["spud"] * 3, "nonce_seed": ["all"] * 3, "outliers": ["kept"] * 3,
        "language": ["en"] * 3, "model": ["m"] * 3, "method": ["addk", "kn", "x"],
        "ratio_median": [1.0, 1.1, 1.0], "tie_fraction": [0.14, 0.004, 0.0],
        "unseen_fraction": [0.26, 0.26, None]})
    rows = spud_coverage(summary).sort("what")
    assert rows["median_tied"].to_list() == [True, False, False]
    assert [note(*row) is not None for row in rows.iter_rows()] == [True, False, False]


def test_german_case_ties_are_grammatical_violation_pairs_of_one_template():
    from spudflow.aggregate.german_case import analysis_coverage

    scored = pl.DataFrame({
        "dataset": ["gc"] * 4, "model": ["tri"] * 4, "method": ["addk"] * 4,
        "template": ["t1"] * 4, "grammatical": [True, True, False, False],
        "cases": ["NDA", "DNA", "NNA", "AAD"], "logprob_sum": [-10.0, -12.0, -10.0, -11.0],
        "n_unseen": [1, 0, 2, 1], "n_words": [4, 4, 4, 4]})
    rows = {r["analysis"]: r for r in analysis_coverage(scored).iter_rows(named=True)}
    # all: 2 x 2 pairs, (NDA, NNA) tied; restricted: NDA against both violations
    assert (rows["all"]["tie_fraction"], rows["restricted"]["tie_fraction"]) == (1 / 4, 1 / 2)
    assert (rows["all"]["unseen_fraction"], rows["restricted"]["unseen_fraction"]) == \
        (4 / 16, 4 / 12)
    transformer = scored.with_columns(pl.lit(None, dtype=pl.Int32).alias("n_unseen"))
    assert analysis_coverage(transformer)["unseen_fraction"].to_list() == [None, None]


def test_cola_ties_are_acceptable_unacceptable_pairs_of_equal_score():
    from spudflow.aggregate.cola import cola_frames

    n = 6
    scored = pl.DataFrame({
        "dataset": ["cola"] * n, "model": ["tri"] * n, "method": ["kn"] * n,
        "split": ["in_domain_dev"] * n, "label": [1, 1, 1, 0, 0, 0],
        "source": ["s"] * n, "phenomenon_set": [False] * n,
        "logprob_sum": [-5.0, -6.0, -7.0, -5.0, -5.0, -9.0],
        "mean_logprob": [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], "norm_lp": [None] * n,
        "slor": [None] * n, "word_lp_min1": [None] * n,
        "n_unseen": [0, 1, 0, 2, 1, 0], "n_words": [3] * n},
        schema_overrides={"norm_lp": pl.Float64, "slor": pl.Float64, "word_lp_min1": pl.Float64})
    thresholds = cola_frames(scored, folds=2, seed=0, criterion="accuracy")["cola_thresholds"]
    rows = {r["normalisation"]: r for r in thresholds.iter_rows(named=True)}
    assert rows["LogProb"]["tie_fraction"] == 2 / 9  # -5 against the two unacceptable -5
    assert rows["MeanLP"]["tie_fraction"] == 0.0
    assert rows["LogProb"]["unseen_fraction"] == 4 / 18


def test_cola_items_with_an_infinite_score_are_left_out_with_a_warning(caplog):
    from spudflow.aggregate.cola import cola_frames

    n = 6
    scored = pl.DataFrame({
        "dataset": ["cola"] * n, "model": ["tri"] * n, "method": ["kn"] * n,
        "split": ["in_domain_dev"] * n, "label": [1, 1, 1, 0, 0, 0],
        "source": ["s"] * n, "phenomenon_set": [False] * n,
        "logprob_sum": [-5.0, -6.0, -float("inf"), -5.0, -5.0, -9.0],
        "mean_logprob": [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], "norm_lp": [None] * n,
        "slor": [None] * n, "word_lp_min1": [None] * n,
        "n_unseen": [0, 1, 0, 2, 1, 0], "n_words": [3] * n},
        schema_overrides={"norm_lp": pl.Float64, "slor": pl.Float64, "word_lp_min1": pl.Float64})
    caplog.set_level("WARNING")
    thresholds = cola_frames(scored, folds=2, seed=0, criterion="mcc")["cola_thresholds"]
    rows = {r["normalisation"]: r for r in thresholds.iter_rows(named=True)}
    assert (rows["LogProb"]["n_items"], rows["MeanLP"]["n_items"]) == (5, 6)
    assert "cola cola/tri/kn/in_domain_dev LogProb: 1 items with an infinite score left out" \
        in caplog.text
    assert "MeanLP" not in caplog.text
