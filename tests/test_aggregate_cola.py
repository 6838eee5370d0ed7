"""CoLA thresholds: cross-validated accuracy and MCC against a brute-force search with sklearn."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import accuracy_score, matthews_corrcoef
from sklearn.model_selection import KFold

from spudflow.aggregate.cola import fit_threshold

from aggregate_inputs import assert_table_files, cola_inputs

NORMALISATIONS = {"LogProb": "logprob_sum", "MeanLP": "mean_logprob", "NormLP": "normlp",
                  "SLOR": "slor", "Word-LP Min-1": "word_lp_min1"}


def brute_force(scores, labels, folds, seed, metric):
    """Every threshold between two distinct training scores (and ±inf), scored by sklearn on
    the training folds; the best (highest on ties) predicts the held-out fold."""
    predictions = np.zeros(len(scores), dtype=int)
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(scores):
        values = np.unique(scores[train])
        candidates = [np.inf, *((values[1:] + values[:-1]) / 2)[::-1], -np.inf]
        quality = [metric(labels[train], (scores[train] >= t).astype(int)) for t in candidates]
        best = candidates[int(np.argmax(quality))]
        predictions[test] = scores[test] >= best
    return accuracy_score(labels, predictions), matthews_corrcoef(labels, predictions)


@pytest.mark.parametrize(("criterion", "metric"), [("accuracy", accuracy_score),
                                                   ("mcc", matthews_corrcoef)])
def test_cross_validated_thresholds(tmp_path, run_cli, criterion, metric):
    items, scores = cola_inputs(tmp_path, n_per_split=40)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out,
                           "--folds", 10, "--seed", 3, "--criterion", criterion)
    assert code == 0, err
    table = assert_table_files(out, "cola_thresholds")
    assert table.height == 2 * len(NORMALISATIONS)
    assert table["normalisation"].unique(maintain_order=True).to_list() == list(NORMALISATIONS)
    frame = pl.read_parquet(items).join(pl.read_parquet(scores[0]), on="item_id")
    for split in ("in_domain_dev", "out_of_domain_dev"):
        part = frame.filter(pl.col("split") == split)
        labels = part["label"].cast(pl.Int64).to_numpy()
        # few normalisations keep the brute force (a sklearn call per threshold) fast
        for name in ("LogProb", "SLOR") if criterion == "accuracy" else ("MeanLP",):
            column = NORMALISATIONS[name]
            accuracy, mcc = brute_force(part[column].to_numpy(), labels, 10, 3, metric)
            row = table.filter((pl.col("split") == split)
                               & (pl.col("normalisation") == name)).row(0, named=True)
            assert (row["n_items"], row["n_acceptable"], row["folds"]) == \
                (40, int(labels.sum()), 10)
            assert row["accuracy"] == pytest.approx(accuracy), (split, name)
            assert row["mcc"] == pytest.approx(mcc), (split, name)


def test_threshold_fit_on_a_hand_made_case():
    scores = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    labels = np.array([0, 0, 1, 0, 1, 1])
    # accuracy 5/6 either between 2 and 3 or between 4 and 5: the higher threshold wins
    assert fit_threshold(scores, labels, "accuracy") == 4.5
    assert fit_threshold(scores, np.ones(6), "accuracy") == -np.inf
    assert fit_threshold(scores, np.zeros(6), "mcc") == np.inf


def test_without_unigram_scores_only_logprob_and_meanlp(tmp_path, run_cli):
    items, scores = cola_inputs(tmp_path, n_per_split=20, unigram=False)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    table = pl.read_parquet(out / "cola_thresholds.parquet")
    assert table["normalisation"].to_list() == ["LogProb"] * 2 + ["MeanLP"] * 2


def test_one_fold_is_refused(tmp_path, run_cli):
    items, scores = cola_inputs(tmp_path, n_per_split=20)
    with pytest.raises(SystemExit) as exit_info:
        run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", tmp_path,
                "--folds", 1)
    assert exit_info.value.code == 2
