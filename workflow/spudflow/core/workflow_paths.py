"""Which paths belong to the workflow and which to the run, so spudflow also runs as a Snakemake
module from a researcher's own directory (docs/running.md, "Use spudflow in your own workflow").

- A config value `workflow:REL` names a file shipped with spudflow (the vendored treebanks,
  templates, lexicons, BLiMP subset): REL is relative to the workflow's own directory, wherever it
  is deployed. Any other relative path (results/, downloads, the score cache, the user's data) is
  relative to the working directory. The rule is explicit, not a guess from which file exists: a
  results/ path must never silently pick up another checkout's results.
- The code fingerprint of the rules' `code` param is taken from the workflow's own sources
  (WORKFLOW/workflow/spudflow, which its conda envs install), never from the working directory;
  a remote module has no local sources, so from the installed package the rules run (code_dir).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path, PurePosixPath

WORKFLOW_PREFIX = "workflow:"


def package_dir() -> Path:
    """The directory of the `spudflow` package that is imported (and that the rules run)."""
    return Path(str(files("spudflow")))


def code_dir(workflow_dir: Path | None) -> Path:
    """The `spudflow` sources of a local workflow directory, or the installed package's for a
    remote workflow (None) or a workflow without them."""
    sources = Path(workflow_dir) / "workflow" / "spudflow" if workflow_dir is not None else None
    return sources if sources is not None and sources.is_dir() else package_dir()


def workflow_relative(value: str, key: str) -> str:
    """REL of a `workflow:REL` config value; a config error for an absolute REL or one that
    leaves the workflow's directory."""
    rel = value.removeprefix(WORKFLOW_PREFIX)
    parts = PurePosixPath(rel).parts
    if not rel or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise ValueError(
            f"config key {key}: {value!r} must name a file inside the workflow "
            f"({WORKFLOW_PREFIX}RELATIVE/PATH, without ..)"
        )
    return rel


def local_workflow_file(workflow_dir: Path, workdir: Path) -> Callable[[str], str]:
    """REL -> the path the rules use for a file of a workflow on this machine: REL itself when
    the run's working directory is the workflow's (a run in the repository: paths, and so job
    inputs, as they were), its absolute path otherwise."""
    same = Path(workflow_dir).resolve() == Path(workdir).resolve()
    return lambda rel: rel if same else os.path.join(Path(workflow_dir).resolve(), rel)


def remote_workflow_file(basedir, sourcecache) -> Callable[[str], str]:
    """REL -> a local copy of a file of a remote workflow (a module from github(...)), through
    Snakemake's source cache: `basedir` is the workflow's SourceFile directory. Files only: a
    folder (such as the BLiMP directory) needs a local copy of the workflow."""
    return lambda rel: str(sourcecache.get_path(basedir.join(rel)))


def resolve_workflow_paths(config, locate: Callable[[str], str], key: str = "") -> object:
    """`config` with every `workflow:REL` string replaced by locate(REL), in place for dicts and
    lists (and returned). `key` names where in the config a value sits, for errors."""
    if isinstance(config, dict):
        for name, value in config.items():
            config[name] = resolve_workflow_paths(value, locate, f"{key}.{name}" if key else name)
    elif isinstance(config, list):
        for i, value in enumerate(config):
            config[i] = resolve_workflow_paths(value, locate, f"{key}[{i}]")
    elif isinstance(config, str) and config.startswith(WORKFLOW_PREFIX):
        return locate(workflow_relative(config, key or "(top level)"))
    return config
