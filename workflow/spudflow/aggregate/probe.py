"""DepProbe (SPUD paper Tables 3–5, 14–20, App. F.6): probe metrics on original and nonce test
sets, mean and sd over seeds, and Δ = original − nonce per probe run (the paper's "performance
drop": positive when the nonce set is harder).

A probe run is (treebank, model, baseline, distance layer, label layer, seed); its Δ on a nonce
eval set is its original-set metric minus its metric on that set. Means and sample sds (ddof=1) go
over every run and, for nonce rows, every nonce seed of the method (SPUD or POS-only).
"""

from __future__ import annotations

import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.outputs import Table
from spudflow.aggregate.probe_intervals import (
    SCORES,
    interval_columns,
    intervals,
    read_sentences,
)
from spudflow.aggregate.uncertainty import Uncertainty
from spudflow.core.artifacts import LM_BASELINE
from spudflow.core.errors import InputError

RUN = ["treebank", "model", "baseline", "dist_layer", "label_layer", "auto_layers"]
METRICS = ("relacc", "uas", "las", "root_acc")
DELTA_METRICS = ("relacc", "uas", "las")


def with_eval(metrics: pl.DataFrame) -> pl.DataFrame:
    """eval_set pooled over nonce seeds: `orig` or the nonce method ("spud/seed1" -> "spud");
    the file's own name kept as eval_version (for messages)."""
    is_orig = pl.col("eval_set") == columns.PROBE_ORIG_EVAL_SET
    method = pl.col("eval_set").str.split(columns.PROBE_EVAL_SET_SEPARATOR).list.first()
    # an eval set without words (every sentence too short) has no score: the probe writes 0
    measured = pl.col("n_words") > 0
    return metrics.with_columns(
        pl.col("treebank", "model").cast(pl.String),
        pl.col("eval_set").cast(pl.String).alias("eval_version"),
        pl.col("dist_layer", "label_layer").cast(pl.Int64),
        *[pl.when(measured).then(pl.col(m).cast(pl.Float64)).alias(m) for m in METRICS],
        pl.col("auto_layers").cast(pl.Boolean),
        pl.col("baseline").cast(pl.String),
        pl.when(is_orig).then(pl.lit("orig")).otherwise(method).alias("eval_set"),
    )


def _run(row: dict) -> str:
    return ", ".join(f"{k}={row[k]}" for k in [*RUN, "seed"])


def run_deltas(metrics: pl.DataFrame) -> pl.DataFrame:
    """Each row with its run's original-set metrics subtracted: delta_* (null on orig rows)."""
    orig = metrics.filter(pl.col("eval_set") == "orig")
    twice = orig.filter(pl.struct(*RUN, "seed").is_duplicated())
    if twice.height:
        row = twice.row(0, named=True)
        raise InputError(row["source_file"], None, f"probe run {_run(row)} has more than one "
                         "original-set row")
    orig = orig.select(*RUN, "seed", *[pl.col(m).alias(f"orig_{m}") for m in DELTA_METRICS],
                       pl.lit(True).alias("has_orig"))
    joined = metrics.join(orig, on=[*RUN, "seed"], how="left", nulls_equal=True)
    missing = joined.filter(pl.col("eval_set") != "orig").filter(pl.col("has_orig").is_null())
    if missing.height:
        row = missing.row(0, named=True)
        raise InputError(row["source_file"], None, f"probe run {_run(row)} has a "
                         f"{row['eval_version']!r} row but no original-set row")
    is_nonce = pl.col("eval_set") != "orig"
    return joined.drop("has_orig").with_columns([
        pl.when(is_nonce).then(pl.col(f"orig_{m}") - pl.col(m)).alias(f"delta_{m}")
        for m in DELTA_METRICS])


def summary_table(metrics: pl.DataFrame) -> pl.DataFrame:
    keys = [*RUN, "eval_set"]
    aggregations = [pl.len().cast(pl.Int64).alias("n_runs")]
    for m in METRICS:
        aggregations += _mean_sd(m, m)
    for m in DELTA_METRICS:
        aggregations += _mean_sd(f"delta_{m}", f"delta_{m}")
    table = run_deltas(metrics).group_by(keys).agg(aggregations)
    return table.sort([*RUN, pl.col("eval_set") != "orig", "eval_set"], nulls_last=False)


LAYER_KEYS = ["treebank", "model", "baseline", "layer"]


def _mean_sd(column: str, name: str) -> list[pl.Expr]:
    """Mean and sample sd over the group; null where a run has no value (an eval set without
    words), never a mean of fewer runs than n_runs counts. Delta rows of orig: all null."""
    value = pl.col(column)
    complete = value.null_count() == 0
    return [pl.when(complete).then(value.mean()).alias(f"{name}_mean"),
            pl.when(complete).then(value.std(ddof=1)).alias(f"{name}_sd")]


def language_table(metrics: pl.DataFrame) -> pl.DataFrame:
    """Tables 3/4 and 14–16 across languages: one row per treebank x model x baseline x layers x
    nonce method, orig and nonce RelAcc/UAS/LAS side by side with Δ = orig − nonce per run;
    orig over the probe seeds, nonce and Δ over probe seeds x nonce seeds (as Tables 17–19).
    A run tested on no nonce set has one row with nonce and Δ null (probe.nonce false)."""
    deltas = run_deltas(metrics)
    orig = deltas.filter(pl.col("eval_set") == "orig").group_by(RUN).agg(
        pl.len().cast(pl.Int64).alias("n_probe_seeds"),
        *[e for m in DELTA_METRICS for e in _mean_sd(m, f"orig_{m}")])
    nonce = deltas.filter(pl.col("eval_set") != "orig").group_by([*RUN, "eval_set"]).agg(
        pl.len().cast(pl.Int64).alias("n_nonce_runs"),
        *[e for m in DELTA_METRICS for e in _mean_sd(m, f"nonce_{m}")],
        *[e for m in DELTA_METRICS for e in _mean_sd(f"delta_{m}", f"delta_{m}")])
    # Left out of every eval set of a run alike (probe/run.py): the most over the runs.
    too_long = deltas.group_by(RUN).agg(pl.col("n_too_long").max().cast(pl.Int64))
    table = (orig.join(nonce.rename({"eval_set": "nonce"}), on=RUN, how="left", nulls_equal=True)
             .join(too_long, on=RUN, how="left", nulls_equal=True))
    order = ["n_probe_seeds", "n_nonce_runs", "n_too_long"]
    for m in DELTA_METRICS:
        order += [f"{part}_{m}_{stat}" for part in ("orig", "nonce", "delta")
                  for stat in ("mean", "sd")]
    baseline_order = pl.col("baseline").replace_strict(
        {LM_BASELINE: 0, "M0": 1, "MRC": 2, "MR": 3}, default=4, return_dtype=pl.Int64)
    return (table.with_columns(baseline_order.alias("_order"))
            .sort(["model", "_order", "baseline", "treebank", "dist_layer", "label_layer",
                   "auto_layers", "nonce"], nulls_last=False)
            .select("treebank", "model", "baseline", "dist_layer", "label_layer", "auto_layers",
                    "nonce", *order))



def _same_layer(frame: pl.DataFrame) -> pl.DataFrame:
    same = frame.filter((pl.col("dist_layer") == pl.col("label_layer")) & ~pl.col("auto_layers"))
    return same.rename({"dist_layer": "layer"})


def layer_table(metrics: pl.DataFrame, summary: pl.DataFrame,
                choices: pl.DataFrame | None = None) -> pl.DataFrame:
    """Runs whose distance and label probes use the same configured layer (the layer sweep,
    App. F.6): the eval sets' means, plus `dev` rows (the selection data the layers are chosen
    on), and the layers a layer-choice file chose marked."""
    dev = _same_layer(metrics.filter(pl.col("eval_set") == "orig")).group_by(LAYER_KEYS).agg(
        pl.lit("dev").alias("eval_set"), pl.len().cast(pl.Int64).alias("n_runs"),
        *[pl.col(f"dev_{m}").mean().alias(f"{m}_mean") for m in METRICS])
    tested = _same_layer(summary).select(*LAYER_KEYS, "eval_set", "n_runs",
                                         *[f"{m}_mean" for m in METRICS])
    table = pl.concat([dev.select(tested.columns), tested])
    if choices is None:
        choices = pl.DataFrame(schema={"treebank": pl.String, "model": pl.String,
                                       "part": pl.String, "layer": pl.Int64,
                                       "source_file": pl.String})
    unmatched = choices.join(table.filter(pl.col("eval_set") == "dev"),
                             on=["treebank", "model", "layer"], how="anti")
    if unmatched.height:
        row = unmatched.row(0, named=True)
        raise InputError(row.get("source_file", "--layer-choice"), None, f"{row['part']} layer "
                         f"{row['layer']} of {row['treebank']}/{row['model']}: no sweep run "
                         "with that layer among the metrics")
    for part in ("dist", "label"):
        chosen = choices.filter(pl.col("part") == part).select(
            "treebank", "model", "layer", pl.lit(LM_BASELINE).alias("baseline"),
            pl.lit(True).alias(f"{part}_chosen"))
        table = table.join(chosen, on=LAYER_KEYS, how="left").with_columns(
            pl.col(f"{part}_chosen").fill_null(False))
    return table.sort(["treebank", "model", "baseline", pl.col("eval_set") != "dev",
                       pl.col("eval_set") != "orig", "eval_set", "layer"])


NO_INTERVALS = Uncertainty(resamples=0)
LANGUAGE_INTERVALS = [*interval_columns(["orig_", "nonce_", "delta_"]), "interval"]
SUMMARY_INTERVALS = [*interval_columns(["", "delta_"]), "interval"]


def with_language_intervals(table: pl.DataFrame, found: pl.DataFrame) -> pl.DataFrame:
    """probe_languages with each row's intervals (probe_intervals.intervals)."""
    return table.join(found, on=[*RUN, "nonce"], how="left", nulls_equal=True)


def with_summary_intervals(table: pl.DataFrame, found: pl.DataFrame) -> pl.DataFrame:
    """probe_summary with its intervals: an orig row the orig figures' (of its configuration's
    orig-only bootstrap), a nonce row its method's nonce and Δ figures."""
    def renamed(prefix: str) -> dict[str, str]:
        return {f"{prefix}{m}_mean_ci_{end}": f"{m}_mean_ci_{end}" for m in SCORES
                for end in ("low", "high")}
    orig = found.filter(pl.col("nonce").is_null()).select(
        *RUN, pl.lit("orig").alias("eval_set"), *renamed("orig_"),
        *[pl.lit(None, pl.Float64).alias(c) for c in interval_columns(["delta_"])], "interval")
    orig = orig.rename(renamed("orig_"))
    nonce = found.filter(pl.col("nonce").is_not_null()).select(
        *RUN, pl.col("nonce").alias("eval_set"), *renamed("nonce_"),
        *interval_columns(["delta_"]), "interval").rename(renamed("nonce_"))
    return table.join(pl.concat([orig, nonce]), on=[*RUN, "eval_set"], how="left",
                      nulls_equal=True)


def probe_tables(metrics: pl.DataFrame, choices: pl.DataFrame | None = None,
                 settings: Uncertainty = NO_INTERVALS) -> list[Table]:
    """With settings.resamples, the runs' per-sentence counts are read (next to each metrics
    file: probe_intervals.read_sentences) once the metrics themselves have passed."""
    raw = metrics
    metrics = with_eval(metrics)
    summary = summary_table(metrics)
    languages = language_table(metrics)
    sentences = read_sentences(raw) if settings.resamples else metrics.head(0)
    found = intervals(sentences, metrics, settings)
    languages = with_language_intervals(languages, found)
    summary_with = with_summary_intervals(summary, found)
    return [  # the captions are the registry's
        Table("probe_languages", languages),
        Table("probe_summary", summary_with),
        Table("probe_layers", layer_table(metrics, summary, choices)),
    ]
