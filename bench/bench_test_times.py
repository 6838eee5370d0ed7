"""What the tests cost in CPU seconds, which a busy machine does not inflate as it does wall time.

    python bench/bench_test_times.py [--top 30] [--tsv FILE] -- [PYTEST ARGS]
    python bench/bench_test_times.py -- -m "not slow"        # the inner loop's subset

Runs pytest in this process (one worker, in file order) with a plugin that takes, around each
test's setup, call and teardown, the CPU seconds of this process (every thread) and of the
children it has reaped (subprocesses such as `spudflow` or `snakemake` commands, R); a job that
runs in tests/preloaded_jobs.py's server is reaped by the server, so a run_workflow() test counts
only its own share (mostly slow tests, whose wall time the report also gives). Collection
(importing the test modules) is timed the same way.

Prints the collection's CPU seconds, the total, and the tests with the most CPU seconds (setup,
call and teardown together), with their wall seconds and whether they are marked slow. On a quiet
machine a serial run takes about its CPU seconds; `-n 2` about half of them when the work splits
evenly. The TSV (--tsv) has one row per test.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its reaped children."""
    own = os.times()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.user + own.system + children.ru_utime + children.ru_stime


class CpuTimer:
    """Per-test CPU and wall seconds (setup + call + teardown) and the collection's."""

    def __init__(self) -> None:
        self.tests: dict[str, list] = {}  # nodeid -> [cpu, wall, slow]
        self.collection = (0.0, 0.0)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self, session):
        cpu, wall = cpu_seconds(), time.perf_counter()
        yield
        self.collection = (cpu_seconds() - cpu, time.perf_counter() - wall)

    def _phase(self, item):
        cpu, wall = cpu_seconds(), time.perf_counter()
        yield
        entry = self.tests.setdefault(item.nodeid, [0.0, 0.0,
                                                    item.get_closest_marker("slow") is not None])
        entry[0] += cpu_seconds() - cpu
        entry[1] += time.perf_counter() - wall

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._phase(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._phase(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield from self._phase(item)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, _, pytest_args = (argv[:argv.index("--")], None, argv[argv.index("--") + 1:]) \
        if "--" in argv else (argv, None, [])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30, help="tests listed (default 30)")
    parser.add_argument("--tsv", type=Path, help="write every test's row here")
    args = parser.parse_args(ours)
    timer = CpuTimer()
    os.chdir(REPO)
    start_cpu, start_wall = cpu_seconds(), time.perf_counter()
    code = pytest.main(["-q", "-p", "no:cacheprovider", *pytest_args], plugins=[timer])
    total_cpu, total_wall = cpu_seconds() - start_cpu, time.perf_counter() - start_wall
    rows = sorted(timer.tests.items(), key=lambda kv: -kv[1][0])
    print(f"\ncollection: {timer.collection[0]:.1f} CPU s ({timer.collection[1]:.1f} s wall)")
    print(f"{len(rows)} tests: {sum(r[0] for _, r in rows):.1f} CPU s in tests; whole run "
          f"{total_cpu:.1f} CPU s, {total_wall:.1f} s wall")
    print("\n| CPU s | wall s | slow | test |\n|---:|---:|---|---|")
    for nodeid, (cpu, wall, slow) in rows[:args.top]:
        print(f"| {cpu:.1f} | {wall:.1f} | {'slow' if slow else ''} | {nodeid} |")
    if args.tsv:
        args.tsv.write_text("cpu_s\twall_s\tslow\ttest\n" + "".join(
            f"{cpu:.3f}\t{wall:.3f}\t{slow}\t{nodeid}\n" for nodeid, (cpu, wall, slow) in rows),
            encoding="utf-8")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
