"""Run the workflow on a temporary copy of the repository, and read what Snakemake plans.

Shared by the workflow-level tests (incremental rebuilds, SLURM, conda envs). A copy holds the
workflow files, the vendored resources (linked, read-only) and the tiny treebanks of
tests/data/workflow; its config/config.yaml is the default config with the top-level sections of
tests/data/workflow/config.yaml put in their place, so a stage whose default section is too big
for tests adds a tiny replacement there.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import copy
import functools
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from snakemake_memos import memoize_workflow_reading

from spudflow.core.config import YAML_LOADER

REPO = Path(__file__).resolve().parents[1]
TINY_DATA = REPO / "tests" / "data" / "workflow"
# What a checkout needs to run the workflow (the rest is docs, tests and build files).
WORKFLOW_FILES = ("Snakefile", "rules", "config", "envs", "profiles", "workflow", "report")

# libyaml's dumper where PyYAML has it, as the package's loader (a tenth of the pure-Python
# ones' time; the tests read and write configs hundreds of times).
YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# A planned job: its rule and its wildcards as sorted (name, value) pairs.
Job = tuple[str, tuple[tuple[str, str], ...]]


def job(rule: str, **wildcards: str) -> Job:
    """The Job for `rule` with these wildcards, as planned_jobs() reports it."""
    return rule, tuple(sorted(wildcards.items()))


def copy_checkout(dest: Path, config: dict | None = None, user_files: Iterable[str] = ()) -> Path:
    """A copy of the workflow at `dest` on the default config, or on `config`, which replaces
    config/config.yaml whole (what `--configfile` does); returns `dest`. Tests plan and run in
    such copies, never in the checkout, whose results/ and .snakemake/ may hold a real run.

    `user_files` (relative paths) are created empty: corpora the user provides before a run."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=ignore)
        else:
            shutil.copy2(source, dest / name)
    # Vendored data is only read: link it instead of copying. Downloads stay inside the copy.
    (dest / "resources").mkdir(exist_ok=True)
    for entry in sorted((REPO / "resources").iterdir()):
        if entry.name != "downloads":
            (dest / "resources" / entry.name).symlink_to(entry)
    for relative in user_files:
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        (dest / relative).write_text("", encoding="utf-8")
    if config is not None:
        write_yaml(dest / "config" / "config.yaml", config)
    return dest


def read_yaml(path: Path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)


def write_yaml(path: Path, data, sort_keys: bool = True) -> None:
    path.write_text(yaml.dump(data, Dumper=YAML_DUMPER, sort_keys=sort_keys), encoding="utf-8")


@functools.cache
def _default_config() -> dict:
    return read_yaml(REPO / "config" / "config.yaml")


def default_config() -> dict:
    """The checkout's config/config.yaml, parsed (a fresh dict each call)."""
    return copy.deepcopy(_default_config())


@functools.cache
def _tiny_encoder() -> Path:
    # Built once per test process; copy_workflow copies it (its bytes are seeded, so the same).
    from probe_support import save_tiny_encoder

    root = Path(tempfile.mkdtemp(prefix="spudflow-tiny-encoder-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return save_tiny_encoder(root / "tiny_bert")


def copy_workflow(dest: Path, overlay: str | None = None) -> Path:
    """A runnable copy of the workflow at `dest`, on the tiny config; returns `dest`.

    `overlay` names a further config in tests/data/workflow (such as "every_table.yaml") whose
    top-level sections replace the tiny config's."""
    copy_checkout(dest)
    tiny = dest / "resources" / "tiny"
    tiny.mkdir()
    for treebank in sorted(TINY_DATA.glob("*.conllu")):
        shutil.copy2(treebank, tiny / treebank.name)
    shutil.copytree(TINY_DATA / "cola", tiny / "cola")
    shutil.copytree(TINY_DATA / "human_eval", tiny / "human_eval")
    # The probe section's encoder: a tiny random BERT built here (no download).
    shutil.copytree(_tiny_encoder(), tiny / "tiny_bert")
    overrides = read_yaml(TINY_DATA / "config.yaml")
    if overlay:
        overrides.update(read_yaml(TINY_DATA / overlay))

    def tiny(config: dict) -> None:
        config.update(overrides)
        if "aggregate" not in overrides:
            config["aggregate"]["uncertainty"]["resamples"] = TINY_RESAMPLES
    update_config(dest, tiny)
    return dest


# The tests run the tiny workflow a few dozen times: its intervals are drawn from 1,000
# resamples instead of the default 10,000 (a third of its table jobs' time), computed the same
# way (the interval tests compute theirs with the run's own settings).
TINY_RESAMPLES = 1000


def clone_run(source: Path, dest: Path) -> Path:
    """A copy of a workflow copy that has run: results and .snakemake metadata, mtimes kept,
    links as links (`cp -a`: a run's thousand files copy in a third of shutil.copytree's time)."""
    if dest.exists():
        raise FileExistsError(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(source), str(dest)], check=True)
    return dest


# Where finished tiny runs are kept, keyed by everything that made them (_run_key), so that test
# files and test processes (pytest-xdist workers, later `make test`s) share one build of each:
# a folder outside the checkout; SPUDFLOW_TEST_RUN_CACHE=DIR puts it elsewhere, `off` builds every
# run afresh in its test.
RUN_CACHE = os.environ.get("SPUDFLOW_TEST_RUN_CACHE") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spudflow" / "test-runs")
# Finished runs of one name (tiny, every_table) kept for other checkouts and commits.
KEPT_PER_NAME = 4


def _run_key(label: str, helpers: Iterable[Path] = ()) -> str:
    """Everything a finished run depends on: its label, the workflow files and the package, the
    tiny data and the helpers that build the copy (with `helpers`, the test's own builders), the
    linked resources (content by size and mtime, as Snakemake sees them), Python and every
    installed distribution's version."""
    import hashlib
    import importlib.metadata

    digest = hashlib.sha256(f"{label}\n{sys.version}\n{REPO}\n".encode())
    trees = [REPO / name for name in WORKFLOW_FILES] + [TINY_DATA]
    trees += [Path(__file__), REPO / "tests" / "probe_support.py",
              REPO / "tests" / "preloaded_jobs.py", *helpers]
    for tree in trees:
        for path in sorted([tree, *tree.rglob("*")] if tree.is_dir() else [tree]):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(f"{path.relative_to(REPO)}\n".encode())
                digest.update(path.read_bytes())
    for path in sorted((REPO / "resources").rglob("*")):
        if "downloads" not in path.relative_to(REPO / "resources").parts and path.is_file():
            info = path.stat()
            digest.update(f"{path.relative_to(REPO)} {info.st_size} {info.st_mtime_ns}\n".encode())
    versions = sorted(f"{d.metadata['Name']}=={d.version}"
                      for d in importlib.metadata.distributions())
    digest.update("\n".join(versions).encode())
    return digest.hexdigest()[:20]


def finished_tiny_run(dest: Path, overlay: str | None = None) -> Path:
    """copy_workflow(dest, overlay) after a full run_workflow(); returns `dest` (finished_run)."""
    name = (overlay or "tiny").removesuffix(".yaml")
    return finished_run(dest, name, lambda copy: copy_workflow(copy, overlay))


def one_word_edited(tiny_en: str) -> str:
    """tiny_en's text with one word of its first sentence edited, as a researcher edits a word:
    `peaceful` -> `quiet` in its FORM, LEMMA and `# text` (the sentence keeps its length)."""
    assert tiny_en.count("peaceful") == 3  # the # text line, FORM and LEMMA
    return tiny_en.replace("peaceful", "quiet")


def edit_one_word(workdir: Path) -> None:
    """one_word_edited() in the copy's tiny_en."""
    path = workdir / "resources" / "tiny" / "tiny_en.conllu"
    path.write_text(one_word_edited(path.read_text(encoding="utf-8")), encoding="utf-8")


def finished_edited_run(dest: Path) -> Path:
    """The finished tiny run, then edit_one_word() and the workflow run again: an incremental
    run, built once as finished_run's are (the incremental series starts from it, and the human
    evaluation kit counts its stale items)."""

    def edited(copy: Path) -> Path:
        edit_one_word(finished_tiny_run(copy))
        return copy

    return finished_run(dest, "tiny_edited", edited)


def finished_run(dest: Path, name: str, build: Callable[[Path], Path],
                 helpers: Iterable[Path] = ()) -> Path:
    """`build(dest)` (a workflow copy) after a full run_workflow(); returns `dest`.

    The run is built once into RUN_CACHE under `name` and its _run_key (`helpers`: the files
    that define `build` beyond this module), then cloned (results and .snakemake metadata,
    mtimes kept; a moved copy is no change to Snakemake). A file lock makes the test processes
    that need the same run wait for one build. A cached run that Snakemake would not leave as it
    is (something the key missed) is built again. With RUN_CACHE `off` every call runs the
    workflow."""
    from filelock import FileLock

    if RUN_CACHE == "off":
        run_workflow(build(dest))
        return dest
    root = Path(RUN_CACHE)
    root.mkdir(parents=True, exist_ok=True)
    cached = root / f"{name}-{_run_key(name, helpers)}"
    with FileLock(f"{cached}.lock"):
        if cached.is_dir():
            clone_run(cached / "workflow", dest)
            if not planned_jobs(dest):
                os.utime(cached)  # most recently used, for _drop_old_runs
                _drop_old_runs(root, name)
                return dest
            shutil.rmtree(dest)
            shutil.rmtree(cached)
        staging = Path(tempfile.mkdtemp(prefix=f".build-{name}-", dir=root))
        try:
            run_workflow(build(staging / "workflow"))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        staging.rename(cached)  # published whole or not at all
        clone_run(cached / "workflow", dest)
    _drop_old_runs(root, name)
    return dest


def _drop_old_runs(root: Path, name: str) -> None:
    """Keep the KEPT_PER_NAME most recently used runs of `name` (other commits and checkouts
    have their own keys); a run is only dropped under its lock, never while being cloned."""
    from filelock import FileLock, Timeout

    runs = sorted((p for p in root.glob(f"{name}-*") if p.is_dir()),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    for old in runs[KEPT_PER_NAME:]:
        try:
            with FileLock(f"{old}.lock", timeout=0):
                shutil.rmtree(old, ignore_errors=True)
        except Timeout:
            continue


def in_copy(workdir: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """`python ARGS` in the copy `workdir`, importing its spudflow (not the checkout's); the
    jobs of a workflow it runs start preloaded, with the copy's package
    (tests/preloaded_jobs.py)."""
    from preloaded_jobs import client_dir

    env = {**os.environ, "PYTHONPATH": str(workdir / "workflow")}
    found = client_dir()
    if found is not None:
        env["PATH"] = f"{found}{os.pathsep}{env['PATH']}"
    return subprocess.run([sys.executable, *args], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def update_config(workdir: Path, change: Callable[[dict], object]) -> None:
    """Apply `change` (a function that edits the config dict in place) to the copy's config."""
    path = workdir / "config" / "config.yaml"
    config = read_yaml(path)
    change(config)
    write_yaml(path, config, sort_keys=False)


def edit_file(path: Path, text: str = "\n# edited by a test\n") -> None:
    """Append `text` to a file (a content change, so its mtime moves too)."""
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


@dataclass(frozen=True)
class Plan:
    """The jobs Snakemake plans: their input files, their output files (path, is a directory),
    the planned jobs each one needs, their shell command (None without one), their evaluated
    params and resources."""

    jobs: frozenset[Job]
    inputs: dict[Job, frozenset[str]]
    outputs: dict[Job, frozenset[tuple[str, bool]]]
    dependencies: dict[Job, frozenset[Job]]
    shell: dict[Job, str | None]
    params: dict[Job, dict[str, object]]
    resources: dict[Job, dict[str, object]]

    def downstream(self, roots: Iterable[Job]) -> set[Job]:
        """`roots` and every planned job that needs one of them, directly or not."""
        found = set(roots)
        changed = True
        while changed:
            changed = False
            for planned, needs in self.dependencies.items():
                if planned not in found and needs & found:
                    found.add(planned)
                    changed = True
        return found


def _job_key(snakemake_job) -> Job:
    return job(snakemake_job.rule.name, **dict(snakemake_job.wildcards_dict))


def plan(workdir: Path, *, forceall: bool = False, targets: Iterable[str] = (),
         attempt: int = 1) -> Plan:
    """Dry-run the workflow at `workdir` through the Snakemake API and return its plan.

    forceall=True plans every job (the whole DAG), otherwise only the jobs that need to run;
    `attempt`: the resources as Snakemake evaluates them for that attempt of each job (retries)."""
    memoize_workflow_reading()
    from snakemake.api import SnakemakeApi
    from snakemake.io import is_flagged
    from snakemake.settings.types import (
        DAGSettings,
        ExecutionSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            snakefile=workdir / "Snakefile",
            workdir=workdir,
        )
        dag_api = workflow_api.dag(DAGSettings(forceall=forceall, targets=frozenset(targets)))
        dag_api.execute_workflow(executor="dryrun",
                                 execution_settings=ExecutionSettings(attempt=attempt))
        dag = workflow_api._workflow.dag
        planned = list(dag.needrun_jobs(exclude_finished=False))
        keys = {_job_key(j) for j in planned}
        return Plan(
            jobs=frozenset(keys),
            inputs={_job_key(j): frozenset(map(str, j.input)) for j in planned},
            outputs={_job_key(j): frozenset((str(f), is_flagged(f, "directory"))
                                            for f in j.output) for j in planned},
            dependencies={
                _job_key(j): frozenset(_job_key(d) for d in dag.dependencies[j]) & keys
                for j in planned
            },
            shell={_job_key(j): j.shellcmd for j in planned},
            params={_job_key(j): dict(j.params.items()) for j in planned},
            resources={_job_key(j): dict(j.resources.items()) for j in planned},
        )


def planned_jobs(workdir: Path, **kwargs) -> set[Job]:
    """The set of (rule, wildcards) Snakemake would run now at `workdir`."""
    return set(plan(workdir, **kwargs).jobs)


def run_workflow(workdir: Path, cores: int = 2, targets: Iterable[str] = (),
                 preloaded: bool = True, forceall: bool = False,
                 forcerun: Iterable[str] = ()) -> None:
    """Run the workflow at `workdir` locally through the Snakemake API (raises on failure).

    With `targets`, only the jobs those files need (default: rule all). Every job gets one thread
    (`--max-threads 1`): the rules ask for 2-4, which on 2 cores would run the tiny jobs one at a
    time although each keeps one core busy; the rules' own threads are checked by plan().
    `preloaded`: the jobs' `spudflow` starts with the heavy libraries imported
    (tests/preloaded_jobs.py); False runs each job as a fresh process. `forceall`: every job
    runs again (`--forceall`: Snakemake removes each job's outputs first); `forcerun`: the jobs
    of these rules run again (`--forcerun`), with everything downstream.

    Snakemake's greedy scheduler picks the jobs to start (`--scheduler greedy`): the default ILP
    scheduler, which `make run` and the tests that run the main job's command use, solves a
    linear program with the CBC binary at each round (half a CPU second of a tiny run). Either
    keeps to the same resources; only the order of independent jobs differs, never a result."""
    memoize_workflow_reading()
    from snakemake.api import SnakemakeApi
    from snakemake.scheduling.greedy import SchedulerSettings as GreedySettings
    from snakemake.settings.types import (
        DAGSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
        SchedulingSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api, _jobs_path(preloaded):
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=cores, max_threads=1),
            snakefile=workdir / "Snakefile",
            workdir=workdir,
        )
        dag_api = workflow_api.dag(DAGSettings(targets=frozenset(targets), forceall=forceall,
                                               forcerun=frozenset(forcerun)))
        greedy = GreedySettings()
        dag_api.execute_workflow(executor="local",
                                 scheduling_settings=SchedulingSettings(scheduler="greedy"),
                                 scheduler_settings=greedy, greedy_scheduler_settings=greedy)


@contextlib.contextmanager
def _jobs_path(preloaded: bool) -> Iterator[None]:
    """PATH with the preloaded `spudflow` first while a run lasts (when `preloaded`)."""
    from preloaded_jobs import client_dir

    found = client_dir() if preloaded else None
    if found is None:
        yield
        return
    before = os.environ["PATH"]
    os.environ["PATH"] = f"{found}{os.pathsep}{before}"
    try:
        yield
    finally:
        os.environ["PATH"] = before


def planning_error(workdir: Path) -> str:
    """The message that stops planning the workflow at `workdir` (fails if it plans)."""
    try:
        plan(workdir)
    except Exception as stopped:  # noqa: BLE001 - any error that stops Snakemake is the answer
        return str(stopped)
    raise AssertionError(f"the workflow at {workdir} planned without an error")


def lint_findings(workdir: Path) -> bool:
    """`snakemake --lint` in-process: True when Snakemake printed a lint."""
    memoize_workflow_reading()
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            snakefile=workdir / "Snakefile",
            workdir=workdir,
        )
        return workflow_api.lint()


def snakemake_cli(*args, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """`snakemake ARGS` as a user types it, in `cwd` (a tmp dir, never the checkout). Most tests
    use plan()/run_workflow() in-process; this keeps the command-line path honest. (The jobs
    find `spudflow` on the PATH that tests/conftest.py extends, as in-process runs do.)"""
    return subprocess.run([sys.executable, "-m", "snakemake", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def stage_of_subcommand() -> dict[str, str]:
    """`spudflow` subcommand -> the stage package that registers it (spudflow.cli.STAGES)."""
    from spudflow.cli import STAGES

    stages = {}
    for stage in STAGES:
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"spudflow.{stage}.cli").register(subparsers)
        stages.update(dict.fromkeys(subparsers.choices, stage))
    return stages


def shell_subcommand(shell: str | None) -> str | None:
    """The `spudflow` subcommand a rule's shell text runs (None for rules without one)."""
    match = re.search(r"(?:^|[\s;&|(])spudflow\s+([A-Za-z][\w-]*)", shell or "")
    return match.group(1) if match else None


def rule_shell(rule) -> str | None:
    """A rule's shell text with its `{params.command}` filled in: rules made by `use rule ...
    with:` share one shell text and name their `spudflow` subcommand in that param."""
    shell = rule.shellcmd
    command = dict(rule.params.items()).get("command") if shell else None
    return shell.replace("{params.command}", command) if isinstance(command, str) else shell


@dataclass(frozen=True)
class RuleInfo:
    """What the static checks need of one rule."""

    name: str
    runs_something: bool  # False for target-only rules such as `all`
    shell: str | None
    conda_env: Path | None  # resolved like Snakemake does: relative to the rule's file
    conda_spec: object  # the `conda:` directive as written
    # resource name -> its function as the rule gave it (Snakemake's unit wrappers removed), or
    # its value when it is no function
    resources: dict[str, object]
    wildcards: frozenset[str]  # of its outputs
    logs: tuple[str, ...]  # its log paths as written, wildcards unfilled
    benchmark: str | None


def workflow_rules(workdir: Path) -> list[RuleInfo]:
    """Every rule of the workflow at `workdir`, parsed (not run) through the Snakemake API."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, Quietness, ResourceSettings

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            snakefile=workdir / "Snakefile",
            workdir=workdir,
        )
        rules = []
        for rule in workflow_api._workflow.rules:
            spec = rule.conda_env
            env = None
            if isinstance(spec, str) and spec.endswith((".yaml", ".yml")):
                env = (Path(rule.snakefile).parent / spec).resolve()
            resources = {
                name: (inspect.unwrap(resource._evaluator) if resource.is_evaluable()
                       else resource.value)
                for name, resource in rule.resources.items()
            }
            rules.append(RuleInfo(rule.name, not rule.norun, rule_shell(rule), env, spec,
                                  resources, frozenset(rule.wildcard_names),
                                  tuple(map(str, rule.log)),
                                  None if rule.benchmark is None else str(rule.benchmark)))
        return rules
