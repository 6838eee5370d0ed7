"""`spudflow` with the faults a cluster deals a job, for tests/test_slurm.py (and the local kill
of tests/test_incremental_series.py).

The SLURM tests put a `spudflow` first on the jobs' PATH (install()) that runs this file: the real
command line interface, after arming the faults of the JSON file named by SPUDFLOW_TEST_FAULTS
that match the job's arguments. Each fault only moves the moment something happens to the job; what
happens is the cluster's doing (SLURM's memory limit, `scontrol requeue`, `scancel --signal=KILL`):

- `ballast_mb`: the job needs more memory than its rule asks for on a first attempt; it holds that
  much (its whole resident size) while it runs, on every attempt, as a job whose real need was
  underestimated does. Where its job's memory (SLURM_MEM_PER_NODE) is less, it holds it until
  SLURM kills it rather than race the once-a-second memory sampler with a short run.
- `pause_before_block`: scoring stops before that block (its earlier blocks are written) and
  waits, once, to be requeued; `ready` gets its job id.
- `pause_mid_write`: the Nth score cache segment the job writes stops half written on disk and
  the job waits, once, to be killed; `ready` gets its job id.
- `pause_at_start`: the job waits, once, to be killed before the command starts (its outputs not
  yet written, Snakemake's record of them incomplete); `ready` gets its job id (empty off SLURM).
- `barrier`: the job waits until `count` jobs have reached the folder, so that they score (and
  write the cache) at the same time.

A fault matches when its `command` is the subcommand and each of its `arguments` is one of the
job's arguments. "Once" faults fire while their `ready` file does not exist yet.

No wait has a time limit: a job waits for what the test or the cluster does, or until the test
process is gone. install() opens the lifeline, a named pipe beside the faults file, for writing
and keeps it open for as long as the test process lives; a waiting job watches its read end,
which reads end-of-file once the test has ended, so no job outlives a killed test by waiting.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

FAULTS_VARIABLE = "SPUDFLOW_TEST_FAULTS"
# How often a job at a barrier looks at the folder again.
BARRIER_POLL_S = 0.2
# The write ends of the lifelines this (test) process holds open until it ends.
_LIFELINES: list[int] = []


def install(bin_dir: Path, faults: list[dict], faults_file: Path) -> dict[str, str]:
    """Write the `spudflow` of this interpreter that applies `faults` into bin_dir; returns the
    environment variables the jobs need (bin_dir goes first on their PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    faults_file.write_text(json.dumps(faults), encoding="utf-8")
    os.mkfifo(lifeline(faults_file))
    _LIFELINES.append(os.open(lifeline(faults_file), os.O_RDWR))  # no reader needed to open
    wrapper = bin_dir / "spudflow"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "$@"\n',
                       encoding="utf-8")
    wrapper.chmod(0o755)
    return {FAULTS_VARIABLE: str(faults_file)}


def lifeline(faults_file: Path) -> Path:
    return faults_file.with_suffix(".lifeline")


def open_lifeline() -> int:
    """The read end of this job's test's lifeline (opened while the test holds its write end:
    the job opens it before saying that it waits)."""
    return os.open(lifeline(Path(os.environ[FAULTS_VARIABLE])), os.O_RDONLY | os.O_NONBLOCK)


def test_gone(line: int, wait_s: float | None) -> bool:
    """Whether the test has ended (its lifeline reads end-of-file), waiting up to wait_s for it
    (None: for ever)."""
    readable, _, _ = select.select([line], [], [], wait_s)
    return bool(readable) and os.read(line, 1) == b""


def matching(faults: list[dict], argv: list[str]) -> list[dict]:
    return [f for f in faults
            if argv[:1] == [f["command"]] and all(a in argv for a in f.get("arguments", ()))]


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def wait_to_be_stopped(ready: str) -> None:
    """Say which job this is (whole: the test polls the file), then wait for the cluster to
    end it."""
    line = open_lifeline()
    Path(f"{ready}.tmp").write_text(os.environ.get("SLURM_JOB_ID", ""), encoding="utf-8")
    os.replace(f"{ready}.tmp", ready)
    while not test_gone(line, None):
        pass
    raise SystemExit(f"{ready}: the test ended without stopping this job")


def job_memory_mib() -> int:
    """The memory this SLURM job may use (its step's variable, else the controller's record)."""
    if "SLURM_MEM_PER_NODE" in os.environ:
        return int(os.environ["SLURM_MEM_PER_NODE"])
    record = subprocess.run(["scontrol", "show", "job", os.environ["SLURM_JOB_ID"]],
                            capture_output=True, text=True, check=True).stdout
    (memory,) = re.findall(r"MinMemoryNode=(\d+)M", record)
    return int(memory)


def hold_ballast(total_mb: float) -> bytes:
    """`total_mb` resident; where the job may hold less, wait for SLURM to kill it."""
    line = open_lifeline()
    # Asked before the ballast is held: finding it may start `scontrol`, and a process started
    # from this one shares its pages until it execs, which SLURM's memory sampler counts twice.
    allowed_mb = job_memory_mib()
    ballast = b"\1" * int(max(total_mb - resident_mb(), 0) * 1e6)  # written, so resident
    if total_mb > allowed_mb * 2**20 / 1e6:
        while not test_gone(line, None):
            pass
        raise SystemExit(f"the test ended before SLURM killed this job ({allowed_mb} MiB "
                         f"allowed, {total_mb} MB held)")
    return ballast


def pause_before_block(block: int, ready: str) -> None:
    from spudflow.scoring import run

    score_block = run.score_block
    calls = []

    def paused(job, items, label):
        calls.append(label)
        if len(calls) == block:
            wait_to_be_stopped(ready)
        return score_block(job, items, label)

    run.score_block = paused


def pause_mid_write(write: int, ready: str) -> None:
    from spudflow.scoring import cache_files

    write_table = cache_files._write_table
    calls = []

    def half_written(table, path):
        calls.append(path)
        write_table(table, path)
        if len(calls) == write:
            with open(path, "r+b") as handle:
                handle.truncate(path.stat().st_size // 2)
            wait_to_be_stopped(ready)

    cache_files._write_table = half_written


def barrier(folder: str, count: int) -> None:
    arrived = Path(folder)
    arrived.mkdir(parents=True, exist_ok=True)
    (arrived / str(os.getpid())).touch()
    line = open_lifeline()
    while len(list(arrived.iterdir())) < count:
        if test_gone(line, BARRIER_POLL_S):
            raise SystemExit(f"{folder}: the test ended with fewer than {count} jobs here")


def main() -> int:
    from spudflow.cli import main as spudflow_main

    argv = sys.argv[1:]
    faults = json.loads(Path(os.environ[FAULTS_VARIABLE]).read_text(encoding="utf-8"))
    kept = []
    for fault in matching(faults, argv):
        if "ballast_mb" in fault:
            kept.append(hold_ballast(fault["ballast_mb"]))
        if "barrier" in fault:
            barrier(fault["barrier"], fault["count"])
        if "ready" not in fault or Path(fault["ready"]).exists():  # none, or fired already
            continue
        if fault.get("pause_at_start"):
            wait_to_be_stopped(fault["ready"])
        if "pause_before_block" in fault:
            pause_before_block(fault["pause_before_block"], fault["ready"])
        if "pause_mid_write" in fault:
            pause_mid_write(fault["pause_mid_write"], fault["ready"])
    return spudflow_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
