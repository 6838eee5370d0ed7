"""CoLA (seed 001, Table 4): acceptability from a threshold on a normalised sentence score.

For each score normalisation (Lau et al.) and split, a threshold is fitted on the training folds of
a seeded K-fold cross-validation (sklearn KFold) and applied to the held-out fold; accuracy and
Matthews correlation (sklearn) are computed on the held-out predictions of all folds. A sentence is
predicted acceptable when its score is at least the threshold (higher scores = more acceptable).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from sklearn.metrics import accuracy_score, matthews_corrcoef, roc_curve
from sklearn.model_selection import KFold

from spudflow.aggregate.inputs import scored_items
from spudflow.aggregate.outputs import Table
from spudflow.core.errors import InputError
from spudflow.core.progress import progress

# Table name -> score column (inputs.py names).
NORMALISATIONS = {
    "LogProb": "logprob_sum",
    "MeanLP": "mean_logprob",
    "NormLP": "norm_lp",
    "SLOR": "slor",
    "Word-LP Min-1": "word_lp_min1",
}


def fit_threshold(scores: np.ndarray, labels: np.ndarray, criterion: str = "accuracy") -> float:
    """The threshold that maximises the criterion on these items (prediction: score >= t).

    Candidates are sklearn's roc_curve thresholds (each a score); the best one is returned as the
    midpoint between it and the next lower score, so that held-out scores in between go to the
    nearer side. Ties between candidates go to the highest threshold."""
    labels = np.asarray(labels, dtype=int)
    if labels.min() == labels.max():
        return -np.inf if labels[0] == 1 else np.inf
    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    positives = labels.sum()
    negatives = len(labels) - positives
    tp, fp = np.rint(tpr * positives), np.rint(fpr * negatives)
    tn, fn = negatives - fp, positives - tp
    if criterion == "accuracy":
        value = (tp + tn) / len(labels)
    elif criterion == "mcc":
        denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)
    else:
        raise ValueError(f"unknown criterion {criterion!r}")
    best = int(np.argmax(value))
    lower = thresholds[best + 1] if best + 1 < len(thresholds) else -np.inf
    return float((thresholds[best] + lower) / 2)


def cross_validated(scores: np.ndarray, labels: np.ndarray, folds: int, seed: int,
                    criterion: str) -> tuple[np.ndarray, list[float]]:
    """Held-out predictions of every item and the threshold of every fold."""
    kfold = KFold(n_splits=min(folds, len(scores)), shuffle=True, random_state=seed)
    predictions = np.zeros(len(scores), dtype=int)
    thresholds = []
    for train, test in kfold.split(scores):
        threshold = fit_threshold(scores[train], labels[train], criterion)
        predictions[test] = scores[test] >= threshold
        thresholds.append(threshold)
    return predictions, thresholds


def cola_rows(scored: pl.DataFrame, folds: int, seed: int, criterion: str) -> pl.DataFrame:
    rows = []
    keys = ["dataset", "model", "method", "split"]
    groups = scored.filter(pl.col("label").is_not_null()).partition_by(keys, as_dict=True)
    for key in progress(sorted(groups), desc="cola thresholds", unit="split"):
        group = groups[key]
        for name, column in NORMALISATIONS.items():
            frame = group.filter(pl.col(column).is_not_null() & pl.col(column).is_finite())
            if frame.height < 2:
                continue
            scores = frame[column].cast(pl.Float64).to_numpy()
            labels = frame["label"].cast(pl.Int64).to_numpy()
            predictions, thresholds = cross_validated(scores, labels, folds, seed, criterion)
            rows.append({
                **dict(zip(keys, key, strict=True)), "normalisation": name,
                "n_items": frame.height, "n_acceptable": int(labels.sum()),
                "folds": len(thresholds),
                "accuracy": float(accuracy_score(labels, predictions)),
                "mcc": float(matthews_corrcoef(labels, predictions)),
                "threshold_mean": float(np.mean(thresholds)),
            })
    schema = {"dataset": pl.String, "model": pl.String, "method": pl.String, "split": pl.String,
              "normalisation": pl.String, "n_items": pl.Int64, "n_acceptable": pl.Int64,
              "folds": pl.Int64, "accuracy": pl.Float64, "mcc": pl.Float64,
              "threshold_mean": pl.Float64}
    order = list(NORMALISATIONS)
    return pl.DataFrame(rows, schema=schema).sort(
        ["dataset", "model", "method", pl.col("normalisation").replace_strict(
            order, list(range(len(order))), return_dtype=pl.Int64), "split"])


def cola_tables(items: pl.DataFrame, scores: pl.DataFrame, folds: int, seed: int,
                criterion: str) -> list[Table]:
    table = cola_rows(scored_items(items, scores), folds, seed, criterion)
    if table.is_empty():
        raise InputError("--scores", None, "no CoLA item with a label and a score")
    return [Table(
        "cola_thresholds", table,
        f"CoLA: a threshold on each normalised score, fitted on the training folds of a "
        f"{folds}-fold cross-validation (maximising {criterion}); accuracy and Matthews "
        "correlation of the held-out predictions, per split.")]
