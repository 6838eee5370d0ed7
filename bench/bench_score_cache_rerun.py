"""What a rerun costs with the score cache: cold full scoring of the five-sentence scenario's items
(tests/cache_scenario.py: SPUD pairs of 16 EWT test sentences, scored by an n-gram model and a
tiny GPT-2) against the rerun after five sentences were edited.

    python bench/bench_score_cache_rerun.py [--workdir DIR] [--cores 2]

Runs the workflow through Snakemake twice in DIR (default: a temporary folder) and reports, per
scoring job, the wall and CPU seconds of its benchmark file and the cache counts of its log, for
the cold run and for the rerun. The rerun's Snakemake jobs (ingest, nonce, pairs, score, tables)
all run again, since their inputs changed; only the items' scoring is what the cache saves.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "workflow")]

from cache_scenario import DATASET, MODELS, cache_counts, edit_sentences, scenario_workflow  # noqa: E402
from workflow_helpers import run_workflow  # noqa: E402


def scoring_seconds(workdir: Path) -> dict[str, tuple[float, float]]:
    """model -> (wall s, CPU s) of its scoring job, from Snakemake's benchmark file."""
    seconds = {}
    for model in MODELS:
        path = workdir / "results" / "benchmarks" / "score" / DATASET / f"{model}.tsv"
        with path.open() as handle:
            row = next(csv.DictReader(handle, delimiter="\t"))
        seconds[model] = (float(row["s"]), float(row["cpu_time"]))
    return seconds


# "block 1/3 ppl: 4 items, 52 tokens in 0.0 s (464.1 items/s, ...)": the time spent scoring,
# model loaded (items / items per second: the seconds are printed to 0.1 s only).
SCORED = re.compile(r"block \d+/\d+ \S+: (\d+) items, \d+ tokens in [0-9.]+ s "
                    r"\(([0-9.]+) items/s")


def scoring_loop_seconds(workdir: Path, model: str) -> float:
    log = workdir / "results" / "logs" / "score" / DATASET / f"{model}.log"
    return sum(int(n) / float(rate) for n, rate in SCORED.findall(log.read_text())
               if float(rate) > 0)


def report(label: str, workdir: Path, wall: float) -> None:
    print(f"{label}: workflow {wall:.1f} s")
    counts = cache_counts(workdir)
    for model, (job_wall, cpu) in scoring_seconds(workdir).items():
        hits, computed = counts[model]
        print(f"  score {DATASET} {model}: job {job_wall:.1f} s wall, {cpu:.1f} s CPU, of "
              f"which scoring {scoring_loop_seconds(workdir, model):.3f} s; "
              f"cache: {hits} hits, {computed} computed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    root = args.workdir or Path(tempfile.mkdtemp(prefix="cache-bench-"))
    workdir = scenario_workflow(root / "run")
    started = time.perf_counter()
    run_workflow(workdir, cores=args.cores)
    report("cold run", workdir, time.perf_counter() - started)
    edited = edit_sentences(workdir)
    started = time.perf_counter()
    run_workflow(workdir, cores=args.cores)
    report(f"rerun after editing {len(edited)} sentences ({', '.join(edited)})", workdir,
           time.perf_counter() - started)


if __name__ == "__main__":
    main()
