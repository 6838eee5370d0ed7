"""Speed of `spudflow nonce` on EWT train (~205,000 words), on one core, lexicon included.

    python bench/bench_nonce.py [--conllu PATH] [--repeats 3] [--method spud]

Ingests the treebank once into a temporary folder (not timed), then runs the whole command
(`spudflow nonce`: start-up, reading, lexicon, index, replacement, writing Parquet and CoNLL-U)
in a fresh process pinned to one CPU with POLARS_MAX_THREADS=1, and reports wall and CPU
seconds per run. Target: under 10 s. Needs ../shared/data (the EWT train split).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the repository (or beside a parent folder, for worktrees).
EWT_TRAIN = next((p / "shared" / "data" / "ud" / "UD_English-EWT" / "en_ewt-ud-train.conllu.gz"
                  for p in REPO.parents if (p / "shared" / "data").is_dir()), Path("missing"))


def _one_core() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _spudflow(*args: str) -> tuple[float, float]:
    """Run `spudflow ARGS` on one core; (wall seconds, CPU seconds of the child)."""
    env = {**os.environ, "POLARS_MAX_THREADS": "1", "PYTHONPATH": str(REPO / "workflow")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "spudflow", *args], check=True, env=env,
                   preexec_fn=_one_core, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conllu", type=Path, default=EWT_TRAIN)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--method", default="spud", choices=("spud", "pos"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.conllu.is_file():
        sys.exit(f"{args.conllu}: not found (the benchmark needs ../shared/data)")
    with tempfile.TemporaryDirectory() as tmp:
        ingested = Path(tmp) / "ingest"
        _spudflow("ingest", str(args.conllu), "--out", str(ingested))
        import polars as pl

        words = pl.read_parquet(ingested / "tokens.parquet").filter(
            pl.col("token_type") == "word").height
        runs = []
        for repeat in range(args.repeats):
            out = Path(tmp) / f"nonce{repeat}"
            runs.append(_spudflow("nonce", str(ingested), "--lang", args.lang, "--seed", "1",
                                  "--method", args.method, "--out", str(out),
                                  "--conllu", str(out / "nonce.conllu")))
    walls, cpus = zip(*runs, strict=True)
    print(f"{args.conllu.name}: {words} words, method {args.method}, {args.repeats} runs on one "
          f"core")
    print(f"wall s: median {statistics.median(walls):.2f}, best {min(walls):.2f}")
    print(f"CPU s:  median {statistics.median(cpus):.2f}, best {min(cpus):.2f}")
    print(f"target < 10 s: {'met' if statistics.median(walls) < 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
