"""Projected bytes of a config's probe features at the real models' widths, from its plan.

    python bench/bench_probe_footprint.py [CONFIG] [--rehearsal DIR]

The projection is spudflow.rehearse.footprint's, the one `rehearsal.md` gives: per feature
job (model, treebank, split trained or selected on), per baseline, the split's words x the
layers it stores (spudflow.probe.plan.ProbePlan) x the real model's width
(spudflow.rehearse.families) x bytes per word, layer and hidden unit; a test split's eval sets
are never stored (each probe job extracts them in memory). A split's words are its real
sentences (UD 2.10's counts) times their mean length in the treebanks a rehearsal cuts its
stand-ins from, over the sentences of probe.min_words words or more where the probes cap the
split. The bytes per unit are measured on a feature file written here (EWT test, 768 wide) or,
with `--rehearsal DIR`, on a rehearsal's own files (32 wide: their index arrays weigh more).

Prints the projection with `probe.layer_sweep` as the config has it, false, [en_ewt] and true,
per treebank: now the same bytes, as a sweep's run of a layer outside the task's pair extracts
its training and selection splits itself (`probe train --train-extract`); then the same
settings as before that, when a swept model's feature files held every layer, and earlier
plans. Last, what the sweep costs instead: its runs that extract their splits, and the words
they run through the encoder.

Measured on the SPUD preset (the shared treebanks' sentence lengths, 2.0008 bytes per word,
layer and unit; PADT, HDT and SynTagRus at their real mean lengths): 31.7 GB with its sweep of
mBERT and mGPT on EWT (57.5 GB when the sweep's layers were stored; 65.1 with `[en_ewt]`,
274.8 with `true`, now all 31.7); the sweep's 35
runs outside the pairs (mBERT 11 layers, mGPT 24) extract EWT train and dev, 7.8M words.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from spudflow.rehearse.footprint import (  # noqa: E402
    Projection,
    filled,
    measured_rate,
    projected,
    sweep_extractions,
)


def rehearsal_rate(rehearsal: Path) -> float:
    """Bytes per (word x layer x hidden unit) of a rehearsal's feature files."""
    from safetensors import safe_open

    files = sorted((rehearsal / "results" / "probe" / "features").rglob("*.safetensors"))
    if not files:
        raise SystemExit(f"{rehearsal}: no results/probe/features/**/*.safetensors")
    size = units = 0
    for path in files:
        size += path.stat().st_size
        with safe_open(str(path), framework="numpy") as f:
            units += sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys()  # noqa: SIM118
                         if k.startswith("layer"))
    return size / units


def checked(projection: Projection) -> dict[str, float]:
    if projection.left_out:
        raise SystemExit("not projected: " + "; ".join(projection.left_out))
    return projection.per_treebank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path, nargs="?",
                        default=REPO / "config" / "papers" / "spud.yaml")
    parser.add_argument("--rehearsal", type=Path, help="a full rehearsal's folder")
    args = parser.parse_args()
    if args.rehearsal is not None:
        rate, measured_on = rehearsal_rate(args.rehearsal), f"the feature files of {args.rehearsal}"
    else:
        rate, measured_on = measured_rate(REPO), "a file written here (EWT test, 768 x 2)"
    config = filled(yaml.safe_load(args.config.read_text(encoding="utf-8")), REPO)
    print(f"{args.config}: {rate:.4f} bytes per word x layer x hidden unit, measured on "
          f"{measured_on}")
    sweep = config["probe"]["layer_sweep"]
    settings = {f"layer_sweep: {sweep}": sweep, "layer_sweep: false": False,
                "layer_sweep: [en_ewt]": ["en_ewt"], "layer_sweep: true": True}
    rows, extractions = {}, {}
    for label, value in settings.items():
        changed = copy.deepcopy(config)
        changed["probe"]["layer_sweep"] = value
        rows[label] = checked(projected(changed, REPO, rate))
        extractions[label] = sweep_extractions(changed, REPO)
    for label, value in settings.items():
        if value is not False:
            changed = copy.deepcopy(config)
            changed["probe"]["layer_sweep"] = value
            rows[f"{label}, the sweep's layers stored (before)"] = checked(projected(
                changed, REPO, rate, sweeps_stored=True))
    rows[f"layer_sweep: {sweep}, sweep's layers and test splits' eval sets stored (before "
         "that)"] = checked(projected(config, REPO, rate, stored_tests=True, sweeps_stored=True))
    rows[f"layer_sweep: {sweep}, those stored, every sentence of the capped splits "
         "extracted (before that)"] = checked(projected(config, REPO, rate, every_sentence=True,
                                                         stored_tests=True, sweeps_stored=True))
    borrowed = projected(config, REPO, rate).borrowed
    if borrowed:
        print("Lengths from other treebanks of the language: " + "; ".join(borrowed))
    treebanks = list(config["probe"]["tasks"])
    print("| setting | " + " | ".join(treebanks) + " | total |")
    print("|---" * (len(treebanks) + 2) + "|")
    for label, per in rows.items():
        cells = [f"{per.get(tb, 0) / 1e9:.1f}" for tb in treebanks]
        print(f"| {label} | " + " | ".join(cells) + f" | {sum(per.values()) / 1e9:.1f} GB |")
    print("\nThe sweep's runs that extract their training and selection splits themselves "
          "(each the split's words through the encoder once more, for one layer):")
    for label, (jobs, words) in extractions.items():
        print(f"- {label}: {jobs} probe_train jobs, {words / 1e6:.1f}M words")


if __name__ == "__main__":
    main()
