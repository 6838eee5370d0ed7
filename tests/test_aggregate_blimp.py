"""BLiMP accuracy per paradigm, field and overall against sklearn's accuracy_score."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from artifact_files import rewrite
from sklearn.metrics import accuracy_score

from aggregate_inputs import BLIMP_PARADIGMS, assert_table_files, blimp_inputs, run_command


@pytest.fixture(scope="module")
def blimp(tmp_path_factory):
    """The pairs and the folder of their tables, made once for the tests that only read them."""
    tmp_path = tmp_path_factory.mktemp("blimp")
    items, scores = blimp_inputs(tmp_path)
    out = tmp_path / "tables"
    assert run_command("table-blimp", "--items", items, "--scores", *scores, "--out-dir",
                       out) == 0
    frame = pl.read_parquet(items).join(pl.read_parquet(scores[0]), on="item_id")
    good = frame.filter(pl.col("label") == 1).select("group_id", "UID", "field",
                                                     pl.col("logprob_sum").alias("good"))
    bad = frame.filter(pl.col("label") == 0).select("group_id", pl.col("logprob_sum").alias("bad"))
    return good.join(bad, on="group_id"), out


def _accuracy(pairs):
    correct = (pairs["good"] > pairs["bad"]).to_numpy()
    return accuracy_score(np.ones(len(correct), dtype=bool), correct)


def test_paradigm_field_overall(blimp):
    pairs, out = blimp
    paradigm = assert_table_files(out, "blimp_paradigm")
    field = assert_table_files(out, "blimp_field")
    overall = assert_table_files(out, "blimp_overall")
    assert paradigm["uid"].to_list() == [uid for _, _, uid in sorted(BLIMP_PARADIGMS)]
    by_uid = {}
    for row in paradigm.iter_rows(named=True):
        part = pairs.filter(pl.col("UID") == row["uid"])
        by_uid[row["uid"]] = _accuracy(part)
        assert row["n_pairs"] == part.height == 12
        assert row["accuracy"] == pytest.approx(by_uid[row["uid"]])
        assert row["n_correct"] == int((part["good"] > part["bad"]).sum())
    morphology = field.filter(pl.col("field") == "morphology").row(0, named=True)
    part = pairs.filter(pl.col("field") == "morphology")
    assert morphology["n_paradigms"] == 2 and morphology["n_pairs"] == 24
    assert morphology["accuracy"] == pytest.approx(_accuracy(part))
    assert morphology["paradigm_mean_accuracy"] == pytest.approx(
        np.mean([by_uid["anaphor_gender_agreement"], by_uid["anaphor_number_agreement"]]))
    total = overall.row(0, named=True)
    assert total["n_pairs"] == 36 and total["n_paradigms"] == 3
    assert total["accuracy"] == pytest.approx(_accuracy(pairs))


def test_ties_count_as_wrong_and_are_reported(blimp):
    pairs, out = blimp
    tied = pairs.filter(pl.col("good") == pl.col("bad"))
    assert tied.height == 1
    paradigm = pl.read_parquet(out / "blimp_paradigm.parquet")
    row = paradigm.filter(pl.col("uid") == tied["UID"][0]).row(0, named=True)
    assert row["n_ties"] == 1
    assert pl.read_parquet(out / "blimp_overall.parquet")["n_ties"][0] == 1
    # the tie is not among the correct pairs
    part = pairs.filter(pl.col("UID") == tied["UID"][0])
    assert row["n_correct"] == int((part["good"] > part["bad"]).sum())
    assert row["n_correct"] < int((part["good"] >= part["bad"]).sum())


def test_a_pair_without_its_bad_sentence_is_bad_input(tmp_path, run_cli):
    items, scores = blimp_inputs(tmp_path, n_pairs=3)
    rewrite(items, lambda f: f.filter(pl.col("item_id") != "adjunct_island-2-bad"))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 2
    assert err.strip() == f"{items}: group 'adjunct_island-2' is not one good and one bad " \
        "sentence (1 good, 0 bad, 1 items)"
    assert not out.exists()


def test_a_paradigm_without_a_scored_pair_keeps_its_row(tmp_path, run_cli):
    """Every sentence of one paradigm too long for the model (`skipped`): its row stays, with
    its skipped pairs counted and no accuracy (null, not 0), and it is left out of the
    paradigm means; the other paradigms and the tables are as before."""
    items, scores = blimp_inputs(tmp_path)
    rewrite(scores[0], lambda f: f.with_columns(
        pl.when(pl.col("item_id").str.starts_with("adjunct_island")).then(pl.lit("too_long"))
        .otherwise(pl.col("skipped")).alias("skipped"),
        pl.when(pl.col("item_id").str.starts_with("adjunct_island")).then(None)
        .otherwise(pl.col("logprob_sum")).alias("logprob_sum")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    paradigm = assert_table_files(out, "blimp_paradigm")
    island = paradigm.filter(pl.col("uid") == "adjunct_island").row(0, named=True)
    assert (island["n_pairs"], island["n_skipped"], island["accuracy"]) == (0, 12, None)
    assert paradigm.filter(pl.col("uid") != "adjunct_island")["accuracy"].null_count() == 0
    syntax = assert_table_files(out, "blimp_field").filter(pl.col("field") == "syntax")
    assert syntax.select("n_paradigms", "accuracy", "paradigm_mean_accuracy").row(0) == (
        0, None, None)
    overall = assert_table_files(out, "blimp_overall").row(0, named=True)
    assert (overall["n_paradigms"], overall["n_pairs"], overall["n_skipped"]) == (2, 24, 12)


def test_a_nan_log_probability_is_not_scored_rather_than_correct(tmp_path, run_cli):
    """polars orders NaN above every number: a good sentence's NaN log-probability would make
    its pair correct. It counts as not scored (a skipped pair), with a warning."""
    items, scores = blimp_inputs(tmp_path)
    before = pl.read_parquet(scores[0])
    bad = before.filter(pl.col("item_id") == "adjunct_island-3-bad")["logprob_sum"][0]
    good = before.filter(pl.col("item_id") == "adjunct_island-3-good")["logprob_sum"][0]
    assert good < bad  # a wrong pair, which NaN would have made right
    rewrite(scores[0], lambda f: f.with_columns(
        pl.when(pl.col("item_id") == "adjunct_island-3-good").then(float("nan"))
        .otherwise(pl.col("logprob_sum")).alias("logprob_sum")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    island = assert_table_files(out, "blimp_paradigm").filter(
        pl.col("uid") == "adjunct_island").row(0, named=True)
    assert (island["n_pairs"], island["n_skipped"]) == (11, 1)
