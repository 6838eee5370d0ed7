"""The four paper presets rehearsed small (`spudflow rehearse PRESET --size small`), each in a
fresh temporary folder: wall time, peak RSS of the whole rehearsal (children included), jobs
run, tables written, and that a second rehearsal has nothing to do. Minutes per preset on 2
cores; not part of `make test`.

    python bench/bench_rehearse.py [PRESET ...] [--cores N] [--keep DIR]
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

REPO = Path(__file__).resolve().parents[1]
PRESETS = ("cola", "german_case", "japanese_transitivity", "spud")


def rehearse(preset: str, workdir: Path, cores: int) -> tuple[int, float, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "spudflow", "rehearse", str(REPO / "config/papers" /
                                                           f"{preset}.yaml"),
         "--workdir", str(workdir), "--size", "small", "--cores", str(cores)],
        env=env, capture_output=True, text=True)
    return run.returncode, time.perf_counter() - started, run.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", default=list(PRESETS))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="rehearse in DIR/PRESET and keep it")
    args = parser.parse_args()
    failed = 0
    print("| preset | exit | wall s | peak RSS MB | jobs | tables | second run |")
    print("|---|---|---|---|---|---|---|")
    for preset in args.presets:
        root = args.keep or Path(tempfile.mkdtemp(prefix="spudflow-rehearse-"))
        workdir = root / preset
        code, wall, log = rehearse(preset, workdir, args.cores)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        jobs = log.count("Finished jobid")
        tables = len(list((workdir / "results" / "tables").glob("*.parquet")))
        again, _, second = rehearse(preset, workdir, args.cores) if code == 0 else (1, 0, "")
        idle = "nothing to be done" if again == 0 and "Nothing to be done" in second else "RERAN"
        failed += code != 0 or idle != "nothing to be done"
        print(f"| {preset} | {code} | {wall:.0f} | {peak:.0f} | {jobs} | {tables} | {idle} |",
              flush=True)
        if code:
            print(log[-2000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
