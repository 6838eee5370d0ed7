"""Plumbing of the Snakemake rules (rules/*.smk) that needs no Snakemake, so it is unit-tested.

- cli_options: config entries -> `--option value` arguments, one generic way for every stage.
- code_version: a fingerprint of a stage's code that a rule lists under `params:`, so that a code
  change reruns the stage's jobs through Snakemake's params rerun trigger. Listing every source
  file as an input did the same, at the cost of the scheduler checking each file of each job.
- memory_mb: the one memory model of every rule's `mem_mb` (what the job holds, with headroom).
- memory_for_input: the `mem_mb` of a job whose peak RSS grows with the split it holds.
- grows_with_attempt: what every rule's `mem_mb` and `runtime` go through, so that a job killed
  for memory or time (SLURM's limits) comes back asking for more (docs/running.md, "Retries");
  attempt_scaled: a rule's `resources:` through it.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path

# A stage's code: its modules and the data files it ships (pyproject's package-data).
CODE_SUFFIXES = (".py", ".tsv", ".yaml", ".txt")


def cli_options(spec: Mapping, keys: Iterable[str]) -> list[str]:
    """`--key value` for each of `keys` (in that order) whose value in `spec` is set.

    Underscores become dashes; a missing or None value gives nothing (the command's own
    default), True a bare `--key`, False nothing, a list its items joined by commas."""
    args: list[str] = []
    for key in keys:
        value = spec.get(key)
        if value is None or value is False:
            continue
        option = f"--{key.replace('_', '-')}"
        if value is True:
            args.append(option)
        elif isinstance(value, (list, tuple)):
            args += [option, ",".join(str(v) for v in value)]
        else:
            args += [option, str(value)]
    return args


def code_files(package: Path, stage: str) -> list[Path]:
    """The CLI module, then the code and data files of `stage` and of core, sorted."""
    files = [package / "cli.py"]
    for name in (stage, "core"):
        files += sorted(f for f in (package / name).rglob("*")
                        if f.is_file() and f.suffix in CODE_SUFFIXES)
    return files


@cache
def code_version(package: Path, stage: str) -> str:
    """SHA-256 of the relative paths and bytes of code_files(): moving the checkout changes
    nothing, editing, adding or removing a code file of the stage or core changes it. Cached:
    computed once per stage and Snakemake run."""
    digest = hashlib.sha256()
    for path in code_files(package, stage):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def input_mb(paths: Iterable[str | Path]) -> float:
    """Megabytes of `paths` as a job reads them: a gzip file by its uncompressed size (the
    trailer's ISIZE, never less than the file); a path not there yet counts 0 (Snakemake
    evaluates a job's resources again once its inputs exist, before it runs the job)."""
    total = 0
    for path in map(Path, paths):
        if not path.is_file():
            continue
        size = path.stat().st_size
        if path.suffix == ".gz" and size >= 18:  # header (10) + trailer (8)
            with path.open("rb") as f:
                f.seek(-4, 2)
                size = max(size, int.from_bytes(f.read(4), "little"))
        total += size
    return total / 1e6


# A job's memory: the interpreter and its libraries, plus what the job holds (measured peaks with
# about a quarter of headroom, docs/running.md, "What a full run costs"), never under a floor.
BASE_MB = 1000
HEADROOM = 1.25


def memory_mb(held_mb: float, floor_mb: int, base_mb: float = BASE_MB,
              headroom: float = HEADROOM) -> int:
    """`mem_mb` of a job holding `held_mb`: `base_mb` + `headroom` x `held_mb`, rounded up, at
    least `floor_mb` (headroom 1 where a rate already has it)."""
    return max(floor_mb, math.ceil(base_mb + headroom * held_mb))


def memory_for_input(floor_mb: int, base_mb: int, mb_per_input_mb: float,
                     *names: str) -> Callable:
    """A rule's `mem_mb`: `base_mb` plus `mb_per_input_mb` per megabyte of its inputs `names`
    (all of them when none is named), at least `floor_mb`. For the jobs that hold one split in
    memory; the rates are measured by bench/bench_scale.py (docs/running.md, "What a full run
    costs") with about a quarter of headroom."""

    def mem_mb(wildcards, input) -> int:
        paths = []
        for name in names or (None,):
            files = input if name is None else getattr(input, name)
            paths += [files] if isinstance(files, (str, Path)) else list(files)
        return memory_mb(mb_per_input_mb * input_mb(paths), floor_mb, base_mb, headroom=1)

    return mem_mb


# Each attempt of a job asks for this much more memory and time than the one before (x1, x1.5,
# x2.25 with the SLURM profile's `retries: 2`): the rates behind a rule's numbers were measured
# on one machine, and a job SLURM killed for going over them is usually not far over.
ATTEMPT_GROWTH = 1.5
AUX_ARGUMENTS = ("input", "threads")


def grows_with_attempt(value: float | Callable) -> Callable:
    """A rule's `mem_mb` or `runtime`: `value` (a number, or a resource function of the
    wildcards and, when it names them, `input` and `threads`) times ATTEMPT_GROWTH to the power
    of Snakemake's `attempt` - 1, rounded up: attempt 1 asks for `value` itself. Whatever is no
    number yet (Snakemake's placeholder while an input is missing) passes unchanged."""
    wanted = set(inspect.signature(value).parameters) if callable(value) else set()

    def resource(wildcards, input, threads, attempt):
        base = value
        if callable(value):
            aux = {"input": input, "threads": threads}
            base = value(wildcards, **{name: aux[name] for name in AUX_ARGUMENTS
                                       if name in wanted})
        if isinstance(base, bool) or not isinstance(base, (int, float)):
            return base
        return math.ceil(base * ATTEMPT_GROWTH ** (attempt - 1))

    resource.grows_with_attempt = True  # tests/test_job_memory.py finds it on every rule
    return resource


def attempt_scaled(**resources: float | Callable) -> dict[str, Callable]:
    """A rule's `resources: **attempt_scaled(mem_mb=..., runtime=...)`: each through
    grows_with_attempt (a resource that does not grow, like `gpu`, is given beside it)."""
    return {name: grows_with_attempt(value) for name, value in resources.items()}
