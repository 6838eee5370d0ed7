"""Plumbing of the Snakemake rules (rules/*.smk) that needs no Snakemake, so it is unit-tested.

- cli_options: config entries -> `--option value` arguments, one generic way for every stage.
- code_version: a fingerprint of a stage's code that a rule lists under `params:`, so that a code
  change reruns the stage's jobs through Snakemake's params rerun trigger. Listing every source
  file as an input did the same, at the cost of the scheduler checking each file of each job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
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
