"""CoLA (seed 001, Tables 4 and 5): acceptability from a threshold on a normalised sentence score.

For each score normalisation (Lau et al.) and split, a threshold is fitted on the training folds of
a seeded K-fold cross-validation (sklearn KFold) and applied to the held-out fold (section 6.3); a
sentence is predicted acceptable when its score is at least the threshold (higher scores = more
acceptable). Accuracy and Matthews correlation (sklearn) of the held-out predictions are reported
per CoLA split (Table 4: cola_thresholds), per phenomenon set (section 8, Table 5: cola_phenomena;
each set is cross-validated on its own, as every set the Lau et al. baselines are evaluated on:
they use no training data, section 7) and per source within each CoLA split (section 7, the
per-source MCC of the development sets: cola_sources; the split's held-out predictions grouped by
the source column).

Intervals over the held-out sentences (uncertainty.py, config aggregate.uncertainty): Wilson's for
the accuracy with lm-eval's stderr beside it, and a bootstrap of the MCC, each sentence's label and
held-out prediction resampled together; the folds' thresholds stay as fitted (docs/aggregate.md,
"Intervals", says why).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl
from sklearn.metrics import roc_curve
from sklearn.model_selection import KFold

from spudflow.aggregate.coverage import tied_pairs, unseen_fraction
from spudflow.aggregate.derived_once import derived_once
from spudflow.aggregate.group_status import Skipped, computed, unscored_rows
from spudflow.aggregate.inputs import scored_items, unusable_functions
from spudflow.aggregate.outputs import Table
from spudflow.aggregate.uncertainty import (
    NO_INTERVAL,
    Uncertainty,
    accuracy_stderr,
    counts_bootstrap_interval,
    wilson,
)
from spudflow.core.dataset_families import DATASET_FAMILIES
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.table_artifacts import TABLES

log = get_logger(__name__)

# Table name -> score column (inputs.py names).
NORMALISATIONS = {
    "LogProb": "logprob_sum",
    "MeanLP": "mean_logprob",
    "NormLP": "norm_lp",
    "SLOR": "slor",
    "Word-LP Min-1": "word_lp_min1",
}


def fit_threshold(scores: np.ndarray, labels: np.ndarray, criterion: str = "mcc") -> float:
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
                    criterion: str) -> tuple[np.ndarray, list[float], np.ndarray]:
    """Held-out predictions of every item, the threshold of every fold and each item's
    threshold: the one its fold's training folds fitted, which made its prediction."""
    kfold = KFold(n_splits=min(folds, len(scores)), shuffle=True, random_state=seed)
    predictions = np.zeros(len(scores), dtype=int)
    thresholds, held_out = [], np.empty(len(scores))
    for train, test in kfold.split(scores):
        threshold = fit_threshold(scores[train], labels[train], criterion)
        predictions[test] = scores[test] >= threshold
        held_out[test] = threshold
        thresholds.append(threshold)
    return predictions, thresholds, held_out


KEYS = ["dataset", "model", "method", "split"]


@derived_once
def fits(scored: pl.DataFrame, folds: int, seed: int, criterion: str
         ) -> tuple[tuple[dict, bool, pl.DataFrame, list[float] | None, dict], ...]:
    """Per split and normalisation: its key, whether it is a phenomenon set, the items with a
    finite score (with their labels, `source`, held-out `prediction` and its fold's
    `threshold`, null unless computed), the folds' thresholds (None unless computed) and the
    status (group_status: a split with fewer than 2 such items is `skipped`, one whose fit fails
    `failed`). The tables, comparisons and per-item data of a command read the same fits."""
    return tuple(_fits(scored, folds, seed, criterion))


def _fits(scored: pl.DataFrame, folds: int, seed: int, criterion: str
          ) -> Iterator[tuple[dict, bool, pl.DataFrame, list[float] | None, dict]]:
    groups = scored.filter(pl.col("label").is_not_null()).partition_by(KEYS, as_dict=True)
    for key in progress(sorted(groups), desc="cola thresholds", unit="split"):
        group = groups[key]
        for name, column in NORMALISATIONS.items():
            frame = group.filter(pl.col(column).is_not_null() & pl.col(column).is_finite())
            if frame.is_empty() and group[column].is_null().all():
                continue  # no score of this normalisation at all (no unigram model: no SLOR)
            infinite = group.filter(pl.col(column).is_infinite()).height
            if infinite:
                log.warning("cola %s %s: %d items with an infinite score left out",
                            "/".join(map(str, key)), name, infinite)
            scores = frame[column].cast(pl.Float64).to_numpy()
            labels = frame["label"].cast(pl.Int64).to_numpy()

            def fit(scores=scores, labels=labels):
                if len(scores) < 2:
                    raise Skipped(f"{len(scores)} item(s) with a finite score: cross-validation "
                                  "needs 2")
                return cross_validated(scores, labels, folds, seed, criterion)

            named = {**dict(zip(KEYS, key, strict=True)), "normalisation": name}
            result, status = computed(f"cola {'/'.join(map(str, key))} {name}", fit)
            predictions, thresholds, each = result if result is not None else (None,) * 3
            held_out = (pl.lit(None, dtype=pl.Int64) if predictions is None
                        else pl.Series(predictions, dtype=pl.Int64))
            threshold = (pl.lit(None, dtype=pl.Float64) if each is None
                         else pl.Series(each, dtype=pl.Float64))
            yield (named, bool(group["phenomenon_set"].all()),
                   # item_id and sentence (scored items have them): the per-item data's
                   frame.select(*[c for c in ("item_id", "sentence") if c in frame.columns],
                                "label", "source", "n_unseen", "n_words",
                                pl.col(column).cast(pl.Float64).alias("score"),
                                held_out.alias("prediction"), threshold.alias("threshold")),
                   thresholds, status)


def defined_mcc(labels: np.ndarray, predictions: np.ndarray) -> float | None:
    """sklearn's Matthews correlation of labels and predictions in {0, 1}; None when the labels
    are all of one class (no contrast to correlate with: sklearn would say 0)."""
    if labels.min() == labels.max():
        return None
    return mcc_as_sklearn(np.bincount(2 * labels + predictions, minlength=4))


def threshold_mean(thresholds: list[float]) -> float | None:
    """The folds' mean threshold; None when a fold's is ±inf (its training folds were best served
    by calling every sentence one class), where a mean would be ±inf or NaN."""
    if not np.isfinite(thresholds).all():
        return None
    return float(np.mean(thresholds))


def mcc_of_counts(counts: np.ndarray, axis: int = -1) -> np.ndarray:
    """Matthews correlation from the counts of sentences with (label, prediction) = (0, 0),
    (0, 1), (1, 0), (1, 1) along `axis` (a bootstrap's statistic: resampling sentences resamples
    these counts); 0 where a margin is empty, as sklearn."""
    tn, fp, fn, tp = np.moveaxis(np.asarray(counts, dtype=np.float64), axis, 0)
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)


def mcc_as_sklearn(cells: np.ndarray) -> float:
    """sklearn's matthews_corrcoef from the counts of (label, prediction) = (0, 0), (0, 1),
    (1, 0), (1, 1): its own arithmetic on its confusion matrix, to the bit, without its input
    checks (a millisecond a call, for the hundreds of splits, sources and normalisations).
    mcc_of_counts, vectorised over resamples, uses another formula: its last bit may differ,
    and the tables keep sklearn's."""
    table = np.asarray(cells, dtype=np.int64).reshape(2, 2)
    t_sum = table.sum(axis=1, dtype=np.float64)
    p_sum = table.sum(axis=0, dtype=np.float64)
    n_correct = np.trace(table, dtype=np.float64)
    n_samples = p_sum.sum()
    cov_ytyp = n_correct * n_samples - np.dot(t_sum, p_sum)
    cov_ypyp = n_samples ** 2 - np.dot(p_sum, p_sum)
    cov_ytyt = n_samples ** 2 - np.dot(t_sum, t_sum)
    product = cov_ypyp * cov_ytyt
    return 0.0 if product == 0 else float(cov_ytyp / np.sqrt(product))


def intervals(labels: np.ndarray, predictions: np.ndarray, mcc: float | None,
              settings: Uncertainty) -> dict:
    """Wilson's interval and lm-eval's stderr of the accuracy; the bootstrap interval of the MCC
    (none where the MCC is null: labels of one class)."""
    n, correct = len(labels), int((labels == predictions).sum())
    low, high = wilson(correct, n, settings.level)
    stderr = float(accuracy_stderr(correct, n))
    cells = np.bincount(2 * labels + predictions, minlength=4)
    mcc_low, mcc_high, method = (NO_INTERVAL if mcc is None else counts_bootstrap_interval(
        cells, mcc_of_counts, settings))
    return {"accuracy_ci_low": float(low), "accuracy_ci_high": float(high),
            "accuracy_stderr": None if np.isnan(stderr) else stderr,
            "mcc_ci_low": mcc_low, "mcc_ci_high": mcc_high, "mcc_interval": method}


def _counts(frame: pl.DataFrame) -> tuple[dict, np.ndarray, np.ndarray]:
    labels = frame["label"].cast(pl.Int64).to_numpy()
    predictions = frame["prediction"].to_numpy()
    return ({"n_items": frame.height, "n_acceptable": int(labels.sum()),
             # sklearn's accuracy_score: the mean of exact 0/1 sums, the same division
             "accuracy": float(np.count_nonzero(labels == predictions) / len(labels))},
            labels, predictions)


def _coverage(frame: pl.DataFrame) -> dict:
    """tie_fraction: pairs of an acceptable and an unacceptable sentence with equal scores, which no
    threshold separates; unseen_fraction: the words the model never saw (coverage.py)."""
    pairs, tied = tied_pairs(frame["label"].to_numpy(), frame["score"].to_numpy())
    return {"tie_fraction": tied / pairs if pairs else None,
            "unseen_fraction": frame.select(unseen_fraction()).item()}


def _normalisation_order() -> pl.Expr:
    order = list(NORMALISATIONS)
    return pl.col("normalisation").replace_strict(order, list(range(len(order))),
                                                  return_dtype=pl.Int64)


def _frame(rows: list[dict], name: str, by: list[str]) -> pl.DataFrame:
    schema = TABLES[name].polars_schema()
    return pl.DataFrame(rows, schema=schema).sort(
        ["dataset", "model", "method", _normalisation_order(), *by])


def cola_frames(scored: pl.DataFrame, folds: int, seed: int, criterion: str,
                settings: Uncertainty | None = None) -> dict[str, pl.DataFrame]:
    """cola_thresholds, cola_phenomena and cola_sources from the same held-out predictions; a
    split that gives none has its row with its status in the first two, none in the third."""
    settings = settings or Uncertainty()
    splits, phenomena, sources = [], [], []
    for key, is_phenomenon, frame, thresholds, status in fits(scored, folds, seed, criterion):
        row = ({k: v for k, v in key.items() if k != "split"} | {"phenomenon": key["split"]}
               if is_phenomenon else dict(key))
        row |= {"n_items": frame.height, "n_acceptable": int(frame["label"].sum()), **status}
        if thresholds is not None:
            counts, labels, predictions = _counts(frame)
            mcc = defined_mcc(labels, predictions)
            row |= {**counts, "mcc": mcc, "folds": len(thresholds),
                    "threshold_mean": threshold_mean(thresholds),
                    **intervals(labels, predictions, mcc, settings)}
        if is_phenomenon:
            phenomena.append(row)
            continue
        splits.append(row | _coverage(frame))
        if thresholds is None:
            continue
        by_source = frame.partition_by("source", as_dict=True)
        for (source,), part in sorted(by_source.items()):
            counts, labels, predictions = _counts(part)
            mcc = defined_mcc(labels, predictions)
            sources.append({**key, "source": source, **counts, "mcc": mcc,
                            **intervals(labels, predictions, mcc, settings)})
    return {"cola_thresholds": _frame(splits, "cola_thresholds", ["split"]),
            "cola_phenomena": _frame(phenomena, "cola_phenomena", ["phenomenon"]),
            "cola_sources": _frame(sources, "cola_sources", ["split", "source"])}


def described_datasets(items: pl.DataFrame) -> list[str]:
    """What each dataset of the items that is not CoLA itself is (a family that feeds CoLA's
    tables with a description: core/dataset_families.py), for the captions."""
    return [f"{d} is {DATASET_FAMILIES[d].described}." for d in sorted(set(items["dataset"]))
            if d in DATASET_FAMILIES and DATASET_FAMILIES[d].described]


def cola_tables(items: pl.DataFrame, scores: pl.DataFrame, folds: int, seed: int,
                criterion: str, settings: Uncertainty | None = None) -> list[Table]:
    settings = settings or Uncertainty()
    unusable = unusable_functions(scores)
    frames = cola_frames(scored_items(items, scores), folds, seed, criterion, settings)
    if frames["cola_thresholds"].is_empty() and frames["cola_phenomena"].is_empty() \
            and unusable.is_empty():
        raise InputError("--scores", None, "no CoLA item with a label and a score")
    if not unusable.is_empty():
        splits = items.filter(~pl.col("phenomenon_set")).select("dataset", "split").unique()
        each = [{**split, "normalisation": "LogProb"}
                for split in splits.sort("dataset", "split").to_dicts()]
        frames["cola_thresholds"] = pl.concat([frames["cola_thresholds"], unscored_rows(
            "cola_thresholds", unusable, each, n_items=0, n_acceptable=0)]).sort(
            ["dataset", "model", "method", _normalisation_order(), "split"])
    method = (f"a threshold on each normalised score, fitted on the training folds of a "
              f"{folds}-fold cross-validation (maximising {criterion})")
    note = (f" Intervals at {settings.level:g} over the held-out sentences, the folds' "
            "thresholds as fitted: Wilson's for the accuracy (stderr: lm-eval's); for the MCC a "
            f"bootstrap of {settings.resamples} resamples (seed {settings.seed}) of the "
            "sentences, label and prediction together (mcc_interval: bca or percentile"
            + ("" if settings.resamples else "; none with 0 resamples") + ").")
    note += "".join(f" Data: {line}" for line in described_datasets(items))
    captions = dict(method=method, note=note)  # the captions are the registry's
    return [Table("cola_thresholds", frames["cola_thresholds"], captions),
            Table("cola_phenomena", frames["cola_phenomena"], captions),
            Table("cola_sources", frames["cola_sources"], captions)]
