"""Shared fixtures: paths to the repository, the vendored data and the optional ../shared data."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from leftover_processes import SESSION_VARIABLE, end_all, mark_session

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
_CHECKOUT_BEFORE = pytest.StashKey[dict]()
_SESSION_TOKEN = pytest.StashKey[str]()
_WORKER_LEFTOVERS = pytest.StashKey[list]()
_LEFTOVERS = "leftover_processes"
VENDORED_UD = REPO / "resources" / "ud"


def pytest_configure(config):
    """Workflow tests run `spudflow` from Snakemake's shell: find it beside this interpreter, so
    that `.venv/bin/python -m pytest` works without an activated venv.

    The suite runs test processes and their jobs side by side on few cores: torch's OpenMP
    threads sleep while they wait (OMP_WAIT_POLICY=PASSIVE) instead of spinning on the cores the
    others need (spinning took a third of the scoring tests' CPU time on two cores). Set before
    torch loads, here and in what the tests start; a caller's own setting is kept. It changes
    how threads wait, not what they compute."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


# What a run of the workflow in the checkout leaves there. Tests work in copies and tmp dirs:
# they must pass beside a finished run and leave it as it was (see checkout_state below).
CHECKOUT_STATE = ("results", ".snakemake", "resources/downloads")


def checkout_state(checkout: Path = REPO) -> dict[str, tuple[int, int]]:
    """Every file and folder under CHECKOUT_STATE: relative path -> (size, mtime in ns)."""
    state = {}
    for name in CHECKOUT_STATE:
        root = checkout / name
        for path in [root, *root.rglob("*")] if root.exists() else []:
            info = path.lstat()
            state[str(path.relative_to(checkout))] = (info.st_size, info.st_mtime_ns)
    return state


def _runs_tests(config) -> bool:
    """Whether this process runs tests: not pytest-xdist's controller, whose workers do."""
    return not config.pluginmanager.has_plugin("dsession")


def pytest_sessionstart(session):
    session.config.stash[_CHECKOUT_BEFORE] = checkout_state()
    if _runs_tests(session.config):
        session.config.stash[_SESSION_TOKEN] = mark_session()


def _fail_session(session, message: str) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(message, red=True, bold=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller: keep what a finished worker found left running."""
    message = getattr(node, "workeroutput", {}).get(_LEFTOVERS)
    if message:
        node.config.stash.setdefault(_WORKER_LEFTOVERS, []).append(
            f"[{node.gateway.id}] {message}")


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down
def pytest_sessionfinish(session, exitstatus):
    """Fail the run when a process a test started is still alive (each test process, xdist
    workers too, checks its own, and kills them), or when a test wrote into the checkout's
    results/, .snakemake/ or downloads (only the main process checks: with pytest-xdist the
    workers share its checkout)."""
    config = session.config
    if "preloaded_jobs" in sys.modules:  # its per-process server, else stopped at exit
        sys.modules["preloaded_jobs"].stop_client_dir()
    token = config.stash.get(_SESSION_TOKEN, None)
    left = end_all(SESSION_VARIABLE, token) if token is not None else {}
    if left:
        message = (f"tests left {len(left)} processes running (killed now): "
                   + "; ".join(f"{pid}: {cmd}" for pid, cmd in sorted(left.items())))
        if hasattr(config, "workerinput"):  # the worker's own exit status is not the run's
            config.workeroutput[_LEFTOVERS] = message
        _fail_session(session, message)
    for message in config.stash.get(_WORKER_LEFTOVERS, []):
        _fail_session(session, message)
    if hasattr(config, "workerinput"):
        return
    before = session.config.stash.get(_CHECKOUT_BEFORE, None)
    if before is None:
        return
    after = checkout_state()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if changed:
        _fail_session(session, f"tests changed the checkout's own run state ({len(changed)} "
                      "paths), e.g. " + ", ".join(changed[:5]))


# The files that take tens of seconds on two cores (a SLURM cluster, whole workflow runs, a
# rehearsal, R), longest first, but for the second: pytest-xdist hands the first two files to
# the two workers at once, and the second builds a run of its own (the every-table config)
# while the SLURM test builds the tiny run that the next files reuse, instead of waiting for
# that build behind its lock. By the time a worker is free for them, the run is there to clone.
LONGEST_FILES = ("test_slurm.py", "test_every_table.py", "test_incremental_series.py",
                 "test_incremental.py", "test_rerun_triggers.py", "test_rehearse.py",
                 "test_scoring_cache.py", "test_glmnet.py", "test_module.py", "test_workflow.py",
                 "test_scoring_smollm2.py", "test_japanese_design.py", "test_cli_imports.py",
                 "test_score_cache_rerun.py")


def pytest_collection_modifyitems(config, items):
    """LONGEST_FILES first, then the other files with a slow test, then the rest (`make test`
    hands out whole files in collection order, --dist loadfile --no-loadscope-reorder): a long
    file that starts last ends the suite alone. Without ../shared, its tests are skipped with
    the reason."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: (item.path not in slow_files,
                                 rank.get(item.path.name, len(rank))))  # stable otherwise
    if SHARED_DATA.is_dir():
        return
    skip = pytest.mark.skip(reason=f"needs {SHARED_DATA} (the shared corpora beside the repo)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


# The cyclic collector's young generation collected after 100,000 allocations instead of 700,
# and full collections rarer: planning a workflow allocates millions of short-lived objects, and
# the default thresholds spent 15 % of the rerun-trigger tests' CPU (about 80 plans) collecting.
# Only the test processes': their jobs and Snakemakes keep Python's defaults.
GC_THRESHOLDS = (100_000, 50, 100)


@pytest.fixture(scope="module", autouse=True)
def _long_lived_objects_left_out_of_collections():
    """What the test process holds when a test file starts (the imported torch, transformers
    and Snakemake: about half a million objects) is moved out of the cyclic garbage collector's
    reach, once per file after a collection. Otherwise each full collection walks all of it,
    about a second each time, and planning a workflow triggers several. What is frozen is
    still freed when nothing refers to it; only a cycle among frozen objects stays in memory."""
    gc.set_threshold(*GC_THRESHOLDS)
    gc.collect()
    gc.freeze()
    yield


@pytest.fixture
def run_cli(capsys):
    """Run `spudflow ARGS…` in-process; returns (exit code, stdout, stderr)."""
    from spudflow.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def default_plan(tmp_path_factory):
    """The whole DAG of the default config (plan(forceall=True)), planned once per test process
    in a copy of the workflow: the checkout's own results/ and .snakemake/ are never read."""
    from workflow_helpers import copy_checkout, plan

    return plan(copy_checkout(tmp_path_factory.mktemp("default") / "workflow"), forceall=True)


@pytest.fixture(scope="session")
def gguf_weights_cache(tmp_path_factory) -> Path:
    """A score cache folder of the session's (never the checkout's): the tests that load a GGUF
    through it dequantize it once and read the kept weights after (scoring/gguf_cache.py)."""
    return tmp_path_factory.mktemp("gguf-weights-cache")


@pytest.fixture(scope="session")
def r_glmnet():
    """R with its glmnet package loaded, for the tests that compare with it
    (tests/r_session.py: one R per test process, started when a test first needs it: starting
    R at collection cost each worker seconds, also those that run no such test); the test is
    skipped where R or glmnet is missing. R runs with LC_ALL=C.UTF-8: the Japanese design's
    files are UTF-8."""
    from r_session import RSession, RUnavailable

    try:
        session = RSession(("glmnet",), env={"LC_ALL": "C.UTF-8"})
    except RUnavailable as missing:
        pytest.skip(f"{missing} (Debian: r-base-core r-cran-glmnet)")
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="session")
def r_proc():
    """Skips a test that compares with R's pROC where Rscript or the pROC package is missing
    (checked when a test first needs it, as r_glmnet)."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript is not installed (Debian: r-base-core)")
    check = subprocess.run(["Rscript", "-e", "library(pROC)"], capture_output=True)
    if check.returncode != 0:
        pytest.skip("R's pROC package is absent (r-cran-proc)")


@pytest.fixture(scope="module")
def preloaded_test_jobs():
    """The client folder of this test process's preloaded server (tests/preloaded_jobs.py,
    the one its workflow runs use) for `spudflow` jobs a test starts itself with TEST_JOB's
    environment; None when SPUDFLOW_PRELOADED_JOBS=off. Jobs that run side by side start
    without seconds of imports each, each still a process of its own."""
    from preloaded_jobs import client_dir

    return client_dir()
