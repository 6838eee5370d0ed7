"""Intervals of the DepProbe tables over evaluation sentences (issue: a seed sd says nothing of
the test set's own sampling error).

Each probe run writes, next to metrics.parquet, its counts per evaluated sentence
(sentence_counts.parquet: words, right heads, labels, both); they are read here and must sum to
the run's metrics row. A table row's figure is a mean over runs (probe seeds, and nonce seeds on
nonce rows) of micro-averaged scores; the bootstrap resamples the test sentences, the same
draw for every run of the row, and recomputes every run's score on it: each sentence is drawn
with its original and all its nonce versions (they share the treebank's sent_index), so the
Δ = orig − nonce is paired by sentence. BCa where defined for every figure of the row, the
percentile interval otherwise (`interval`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.resampling import (
    BLOCK,
    interval_of,
    resample_counts,
    resample_indices,
)
from spudflow.aggregate.uncertainty import Uncertainty
from spudflow.core.artifacts import PROBE_METRICS, PROBE_SENTENCES, PROBE_SENTENCES_FILE
from spudflow.core.contract import read_artifact
from spudflow.core.errors import InputError

RUN = ["treebank", "model", "baseline", "dist_layer", "label_layer", "auto_layers"]
SCORES = ("relacc", "uas", "las")
COUNTS = ["n_words", *(f"n_{m}" for m in SCORES), "root_right"]


KEY = ["treebank", "model", "baseline", "seed", "dist_layer", "label_layer", "eval_set"]


def read_sentences(metrics: pl.DataFrame) -> pl.DataFrame:
    """The per-sentence counts of every run of `metrics` (read_probe_metrics's frame, before
    with_eval), from the sentence_counts.parquet next to each metrics file: one row per run,
    eval set and sentence, every metrics row's counts checked against it and none left over."""
    frames = []
    for source in metrics["source_file"].unique(maintain_order=True):
        path = Path(source).parent / PROBE_SENTENCES_FILE
        if not path.is_file():
            raise InputError(path, None, "no per-sentence counts (written by `probe train` "
                             "next to metrics.parquet; a run trained before they were: rerun it)")
        counts = read_artifact(path, PROBE_SENTENCES, [*KEY, "sent_index", *COUNTS])
        rows = read_artifact(source, PROBE_METRICS,
                             [*KEY, "auto_layers", *SCORES, "n_words", "n_sentences"])
        _check(counts, rows, path)
        frames.append(counts.join(rows.select(*KEY, "auto_layers"), on=KEY).with_columns(
            pl.col("eval_set").alias("eval_version")))
    return pl.concat(frames).with_columns(
        pl.col("treebank", "model", "baseline", "eval_version").cast(pl.String),
        pl.col("dist_layer", "label_layer").cast(pl.Int64), pl.col("auto_layers").cast(pl.Boolean))


def _check(counts: pl.DataFrame, rows: pl.DataFrame, path: Path) -> None:
    """Summed per run and eval set, the counts must give the metrics (same words, sentences
    and scores), for every metrics row and no other."""
    sums = counts.group_by(KEY).agg(pl.len().alias("sentences"), *[pl.col(c).sum() for c in COUNTS])
    joined = rows.join(sums, on=KEY, how="full", suffix="_counted", coalesce=True)
    for row in joined.sort(KEY).iter_rows(named=True):
        where = f"run {', '.join(f'{k}={row[k]}' for k in KEY)}"
        if row["sentences"] is None and row["n_sentences"] == 0:
            continue  # an eval set without sentences (every one too short): no rows, no words
        if row["n_words"] is None or row["sentences"] is None:
            raise InputError(path, None, f"{where}: in one of metrics.parquet and this file only")
        n = row["n_words_counted"]
        problems = [] if n == row["n_words"] else [f"{n} words, the metrics {row['n_words']}"]
        if row["sentences"] != row["n_sentences"]:
            problems.append(f"{row['sentences']} sentences, the metrics {row['n_sentences']}")
        for m in SCORES:
            if abs(row[f"n_{m}"] / max(n, 1) - row[m]) > 1e-9:
                problems.append(f"{m} {row[f'n_{m}'] / max(n, 1):.6f}, the metrics {row[m]:.6f}")
        if problems:
            raise InputError(path, None, f"{where}: the counts do not give metrics.parquet ("
                             + "; ".join(problems) + ")")


def _eval_method(version: str) -> str:
    if version == columns.PROBE_ORIG_EVAL_SET:
        return "orig"
    return version.split(columns.PROBE_EVAL_SET_SEPARATOR)[0]


def _matrices(runs: list[pl.DataFrame], sentences: np.ndarray):
    """Per run, words and right counts by sentence (0 where a run did not evaluate one):
    words (n, R) and right (n, R, 3)."""
    position = {int(s): i for i, s in enumerate(sentences)}
    words = np.zeros((len(sentences), len(runs)))
    right = np.zeros((len(sentences), len(runs), len(SCORES)))
    for r, run in enumerate(runs):
        rows = [position[int(s)] for s in run["sent_index"]]
        words[rows, r] = run["n_words"].to_numpy()
        for k, m in enumerate(SCORES):
            right[rows, r, k] = run[f"n_{m}"].to_numpy()
    return words, right


def resampled_counts(n: int, settings: Uncertainty, drawn: dict | None = None) -> np.ndarray:
    """How often each of n sentences is in each resample (resamples, n), as uint8 (a count
    above 255 is refused): resample_indices' draws, kept in `drawn` for the next configuration
    of as many sentences (same seed: the same draws), one n at a time."""
    if drawn is not None and drawn.get("n") == n:
        return drawn["counts"]
    blocks = []
    for indices in resample_indices(n, settings.resamples, settings.seed):
        counts = resample_counts(indices, n)
        if counts.max(initial=0) > np.iinfo(np.uint8).max:
            raise ValueError(f"a sentence drawn {counts.max()} times in one resample")
        blocks.append(counts.astype(np.uint8))
    counts = np.concatenate(blocks)
    if drawn is not None:
        drawn.clear()
        drawn.update(n=n, counts=counts)
    return counts


def configuration_intervals(group: pl.DataFrame, versions: pl.DataFrame, nonce: str | None,
                            settings: Uncertainty, drawn: dict | None = None
                            ) -> tuple[np.ndarray, np.ndarray, str | None]:
    """One configuration's (RUN) intervals: with `nonce` None, of the orig RelAcc, UAS, LAS
    means over probe seeds (3 figures); else of those, of the nonce means over probe seeds ×
    nonce seeds of that method, and of the mean Δ over those runs (9 figures). `versions`: the
    configuration's metrics rows (seed, eval_version), so that a run without sentences (an eval
    set without words) is a run without a score, as in the tables, not one left out. `drawn`:
    resampled_counts' store, shared by the configurations of one table."""
    method = pl.col("eval_version").map_elements(_eval_method, return_dtype=pl.String)
    wanted = ["orig"] if nonce is None else ["orig", nonce]
    versions = versions.with_columns(method.alias("method")).filter(
        pl.col("method").is_in(wanted))
    runs = sorted(versions.select("method", "seed", "eval_version").iter_rows(),
                  key=lambda k: (k[0] != "orig", k[1], k[2]))
    used = group.filter(pl.col("eval_version").is_in(versions["eval_version"].implode()))
    sentences = np.unique(used["sent_index"].to_numpy())
    keyed = used.partition_by(["seed", "eval_version"], as_dict=True)
    empty = used.head(0)
    words, right = _matrices([keyed.get(k[1:], empty) for k in runs], sentences)
    orig_runs = [i for i, k in enumerate(runs) if k[0] == "orig"]
    seed_of = {k[1]: i for i, k in enumerate(runs) if k[0] == "orig"}
    nonce_runs = [i for i, k in enumerate(runs) if k[0] != "orig"]
    partner = [seed_of[runs[i][1]] for i in nonce_runs]
    flat_right = right.reshape(len(sentences), -1)
    # a resample's sums are integers below 2 ** 24 (its words, at most n x the longest
    # sentence's): float32 products sum them exactly, at twice float64's speed
    exact = np.float32 if len(sentences) * max(float(words.max(initial=0)), 1.0) < 2 ** 24 \
        else np.float64
    columns = np.concatenate([flat_right, words], axis=1).astype(exact)

    def figures_of(sums: np.ndarray) -> np.ndarray:
        """The row's figures from each resample's summed right counts and words (rows, R x
        (SCORES + 1))."""
        sums = sums.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = (sums[:, :-len(runs)].reshape(len(sums), len(runs), len(SCORES))
                      / sums[:, -len(runs):][:, :, None])
        figures = [scores[:, orig_runs].mean(axis=1)]
        if nonce is not None:
            figures += [scores[:, nonce_runs].mean(axis=1),
                        (scores[:, partner] - scores[:, nonce_runs]).mean(axis=1)]
        return np.concatenate(figures, axis=1)

    n = len(sentences)
    if n == 0:
        raise ValueError("a bootstrap over no cluster")
    totals = columns.astype(np.float64).sum(axis=0, keepdims=True)
    theta_hat = figures_of(totals)[0]
    if settings.resamples == 0:
        return np.full(theta_hat.shape, np.nan), np.full(theta_hat.shape, np.nan), None
    counts = resampled_counts(n, settings, drawn)
    theta_b = np.concatenate([figures_of(counts[start:start + BLOCK].astype(exact) @ columns)
                              for start in range(0, settings.resamples, BLOCK)])
    # leaving sentence i out: the totals less its own counts (integers: exact)
    jack = figures_of(totals - columns.astype(np.float64)) if n > 1 else None
    low, high, method = interval_of(theta_hat, theta_b, jack, settings.level, one_method=True)
    return low, high, method[0]


def interval_columns(prefixes: list[str]) -> list[str]:
    return [f"{p}{m}_mean_ci_{end}" for p in prefixes for m in SCORES for end in ("low", "high")]


def intervals(sentences: pl.DataFrame, metrics: pl.DataFrame, settings: Uncertainty
              ) -> pl.DataFrame:
    """Per configuration (RUN) and nonce method (null: orig only): the 9 (or 3) intervals
    as columns orig_*, nonce_*, delta_*_mean_ci_low/high and their method `interval`. A
    configuration whose runs have no nonce set has only the null row."""
    names = interval_columns(["orig_", "nonce_", "delta_"])
    rows = []
    by_run = sentences.partition_by(RUN, as_dict=True)
    empty = sentences.head(0)
    drawn = {}
    for key, own in sorted(metrics.partition_by(RUN, as_dict=True).items()):
        versions = own.select("seed", "eval_version")
        for nonce in [None, *sorted(own.filter(pl.col("eval_set") != "orig")["eval_set"]
                                    .unique())]:
            row = dict(zip(RUN, key, strict=True)) | {"nonce": nonce}
            if settings.resamples:
                low, high, method = configuration_intervals(by_run.get(key, empty), versions,
                                                            nonce, settings, drawn)
                values = [v for pair in zip(low, high, strict=True) for v in pair]
                row |= dict(zip(names, values, strict=False)) | {"interval": method}
            rows.append(row)
    schema = {**metrics.select(RUN).schema, "nonce": pl.String,
              **{c: pl.Float64 for c in names}, "interval": pl.String}
    return pl.DataFrame(rows, schema=schema).with_columns(pl.col(names).fill_nan(None))
