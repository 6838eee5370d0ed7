"""What a probe run writes: predictions as CoNLL-U, metrics, training history, probe weights
(their columns in docs/probe.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from safetensors.torch import save_file

from spudflow.core.artifacts import (
    PROBE_HISTORY,
    PROBE_METRICS,
    PROBE_PREDICTIONS,
    PROBE_SENTENCES,
)
from spudflow.core.contract import write_artifact
from spudflow.core.treebank import conllu_lines, read_treebank
from spudflow.probe.data import ProbeSet
from spudflow.probe.train import Predictions

METRICS_SCHEMA = PROBE_METRICS.polars_schema()
HISTORY_SCHEMA = PROBE_HISTORY.polars_schema()
SENTENCES_SCHEMA = PROBE_SENTENCES.polars_schema()
PREDICTIONS_SCHEMA = PROBE_PREDICTIONS.polars_schema()


def prediction_conllu(treebank_dir: Path, data: ProbeSet, predictions: Predictions) -> str:
    """The evaluated sentences of the treebank with predicted HEAD and DEPREL on every word
    (DEPS emptied to `_`, as it would contradict the new tree); other lines as they were."""
    tokens, sentences = read_treebank(treebank_dir)
    predicted = pl.DataFrame({
        "sent_index": [int(s) for s, h in zip(data.words.sent_index, predictions.heads,
                                              strict=True) for _ in h],
        "word_index": [k + 1 for h in predictions.heads for k in range(len(h))],
        "pred_head": [int(x) for h in predictions.heads for x in h],
        "pred_deprel": [x for labels in predictions.labels for x in labels],
        "token_type": "word",
    }, schema_overrides={"sent_index": pl.Int32, "word_index": pl.Int32, "pred_head": pl.Int32})
    kept = pl.Series(data.words.sent_index.tolist(), dtype=pl.Int32)
    tokens = tokens.filter(pl.col("sent_index").is_in(kept.implode()))
    tokens = tokens.join(predicted, on=["sent_index", "word_index", "token_type"], how="left")
    is_word = pl.col("token_type") == "word"
    tokens = tokens.with_columns(
        pl.when(is_word).then(pl.col("pred_head")).otherwise(pl.col("head")).alias("head"),
        pl.when(is_word).then(pl.col("pred_deprel")).otherwise(pl.col("deprel")).alias("deprel"),
        pl.when(is_word).then(pl.lit("_")).otherwise(pl.col("deps")).alias("deps"),
    ).drop("pred_head", "pred_deprel")
    sentences = sentences.filter(pl.col("sent_index").is_in(kept.implode()))
    return "".join(conllu_lines(tokens, sentences))


def prediction_rows(name: str, data: ProbeSet, predictions: Predictions) -> pl.DataFrame:
    """The eval set's predicted trees as predictions.parquet's rows: the words of
    prediction_conllu, one row each."""
    lengths = [len(h) for h in predictions.heads]
    return pl.DataFrame({
        "eval_set": name,
        "sent_index": np.repeat(np.asarray(data.words.sent_index, dtype=np.int64), lengths),
        "word_index": _flat([np.arange(1, n + 1) for n in lengths]),
        "form": [f for forms in data.words.forms for f in forms],
        "head": _flat(predictions.heads),
        "deprel": [x for labels in predictions.labels for x in labels],
    }, schema=PREDICTIONS_SCHEMA)


def _flat(arrays) -> np.ndarray:
    return np.concatenate([np.asarray(a, dtype=np.int64) for a in arrays]) if len(arrays) \
        else np.zeros(0, dtype=np.int64)


def write_predictions(path: Path, frames: list[pl.DataFrame]) -> None:
    """Every eval set's predicted trees (prediction_rows), in eval set order."""
    frame = pl.concat(frames) if frames else pl.DataFrame(schema=PREDICTIONS_SCHEMA)
    write_artifact(frame, path, PROBE_PREDICTIONS)


def write_metrics(path: Path, rows: list[dict]) -> None:
    write_artifact(pl.DataFrame(rows, schema=METRICS_SCHEMA), path, PROBE_METRICS)


def write_sentences(path: Path, frames: list[pl.DataFrame]) -> None:
    """Every eval set's per-sentence counts (seed_runs.py), in eval set order."""
    frame = pl.concat(frames) if frames else pl.DataFrame(schema=SENTENCES_SCHEMA)
    write_artifact(frame.select(list(SENTENCES_SCHEMA)).cast(SENTENCES_SCHEMA), path,
                   PROBE_SENTENCES)


def write_history(path: Path, history: list[dict]) -> None:
    write_artifact(pl.DataFrame(history, schema=HISTORY_SCHEMA), path, PROBE_HISTORY)


def write_probe(path: Path, probe, labels: list[str], info: dict[str, str]) -> None:
    state = {name: tensor.contiguous() for name, tensor in probe.state_dict().items()}
    # One metadata key, as in feature_file.py: safetensors orders several keys by hash.
    save_file(state, str(path),
              metadata={"spudflow": json.dumps({**info, "labels": labels}, sort_keys=True)})
