"""The layer sweep's choice for config `auto` (SPUD paper App. F.6): the distance probe reads
the layer with the best selection-data UAS (attachment), the label probe the layer with the best
selection-data RelAcc (relation labelling), each averaged over the probe seeds of the sweep runs
(probes of the model itself with distance and label on the same layer). Ties go to the lower
layer. The paper selects on the original test data; we select on the selection (dev) data, so
the test sets stay unseen (docs/probe.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from spudflow.core.artifacts import LM_BASELINE, PROBE_LAYER_CHOICE, PROBE_METRICS
from spudflow.core.contract import read_artifact, write_artifact
from spudflow.core.errors import InputError

# part -> the selection-data metric it maximises
CRITERIA = {"dist": "dev_uas", "label": "dev_relacc"}
SWEEP_COLUMNS = ["treebank", "model", "baseline", "seed", "dist_layer", "label_layer",
                 "auto_layers", "eval_set", "dev_uas", "dev_relacc"]


def read_sweep(paths: list[Path]) -> pl.DataFrame:
    """One row per sweep run (its `orig` row; the dev metrics repeat on every row of a run)."""
    runs = []
    for path in paths:
        metrics = read_artifact(path, PROBE_METRICS, SWEEP_COLUMNS)
        orig = metrics.filter(pl.col("eval_set") == "orig")
        if orig.height != 1:
            raise InputError(path, None, f"{orig.height} `orig` rows; a probe run has one")
        row = orig.row(0, named=True)
        if row["baseline"] != LM_BASELINE or row["auto_layers"] \
                or row["dist_layer"] != row["label_layer"]:
            raise InputError(path, None, "not a layer-sweep run (the model itself, distance "
                             "and label on the same configured layer)")
        runs.append(orig.with_columns(pl.lit(str(path)).alias("source_file")))
    if not runs:
        raise InputError("metrics", None, "no metrics files given")
    return pl.concat(runs)


def choose_layers(runs: pl.DataFrame) -> pl.DataFrame:
    """The probe_layer_choice rows of one (treebank, model)'s sweep runs."""
    first = runs.row(0, named=True)
    for key in ("treebank", "model"):
        other = runs.filter(pl.col(key) != first[key])
        if other.height:
            raise InputError(other["source_file"][0], None, f"{key} {other[key][0]!r}, but "
                             f"{first['source_file']} has {first[key]!r}: one {key} per choice")
    twice = runs.filter(pl.struct("dist_layer", "seed").is_duplicated())
    if twice.height:
        raise InputError(twice["source_file"][0], None, f"layer {twice['dist_layer'][0]}, seed "
                         f"{twice['seed'][0]} given twice")
    per_layer = runs.group_by(pl.col("dist_layer").alias("layer")).agg(
        pl.len().alias("n_seeds"), *[pl.col(c).mean() for c in CRITERIA.values()]).sort("layer")
    seeds = per_layer["n_seeds"].unique()
    if seeds.len() > 1:
        raise InputError(first["source_file"], None, "the layers have different numbers of "
                         f"probe seeds ({sorted(seeds.to_list())}): a sweep run is missing")
    rows = []
    for part, criterion in CRITERIA.items():
        # numpy's argmax returns the first maximum: the lower layer on a tie (polars' arg_max
        # promises no order among ties)
        best = per_layer.row(int(np.argmax(per_layer[criterion].to_numpy())), named=True)
        rows.append({"treebank": first["treebank"], "model": first["model"], "part": part,
                     "layer": best["layer"], "criterion": criterion, "score": best[criterion],
                     "n_seeds": best["n_seeds"], "n_layers": per_layer.height})
    return pl.DataFrame(rows, schema=PROBE_LAYER_CHOICE.polars_schema())


def write_choice(path: Path, choice: pl.DataFrame) -> None:
    write_artifact(choice, path, PROBE_LAYER_CHOICE)


def chosen_layer(path: Path, treebank: str, model: str, part: str) -> int:
    """The layer a --layer-choice file chose for one probe part of this treebank and model."""
    choice = read_artifact(path, PROBE_LAYER_CHOICE)
    row = choice.filter((pl.col("treebank") == treebank) & (pl.col("model") == model)
                        & (pl.col("part") == part))
    if row.height != 1:
        raise InputError(path, None, f"{row.height} choices for treebank {treebank!r}, model "
                         f"{model!r}, part {part!r}; one is needed")
    return int(row["layer"][0])
