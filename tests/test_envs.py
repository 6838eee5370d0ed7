"""Per-rule conda environments, checked statically (conda cannot run on these machines).

Every rule that runs something names an existing env file; each env file parses, pins every
dependency to one version, and lists every third-party package imported by the code its rules
run: the CLI, the stage that registers the rule's `spudflow` subcommand, and the spudflow modules
they import (core), followed transitively. Stages added later are checked the same way without
changes here. Imports are a lower bound: packages used only through another (pandas' tabulate
and jinja2 for tables) are the env author's to list.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import yaml
from workflow_helpers import (
    REPO,
    RuleInfo,
    copy_workflow,
    shell_subcommand,
    stage_of_subcommand,
    workflow_rules,
)

PACKAGE = REPO / "workflow" / "spudflow"
# conda-forge names of packages whose PyPI name differs.
CONDA_TO_PYPI = {"matplotlib-base": "matplotlib", "pytorch": "torch"}
VERSION = r"[0-9][0-9A-Za-z.+!_-]*"
CONDA_PIN = re.compile(
    rf"^(?:[\w.-]+::)?(?P<name>[A-Za-z0-9][\w.-]*)\s*==?\s*(?P<version>{VERSION})$"
)
PIP_PIN = re.compile(rf"^(?P<name>[A-Za-z0-9][\w.-]*)(?:\[[\w,.-]+\])?==(?P<version>{VERSION})$")
# No pip options: the spudflow package itself is installed by envs/<env>.post-deploy.sh.
PIP_OPTIONS = re.compile(r"^$")


def normalize(name: str) -> str:
    """PEP 503 name, with conda-forge's differing names mapped to PyPI's."""
    name = re.sub(r"[-_.]+", "-", name).lower()
    return CONDA_TO_PYPI.get(name, name)


@cache
def rules() -> list[RuleInfo]:
    """The rules, parsed in a temporary copy; env paths point back into the repository."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_workflow(Path(tmp).resolve() / "workflow")
        return [
            replace(rule, conda_env=REPO / rule.conda_env.relative_to(copy))
            if rule.conda_env and rule.conda_env.is_relative_to(copy) else rule
            for rule in workflow_rules(copy)
        ]


def executing_rules():
    return [rule for rule in rules() if rule.runs_something]


def env_files():
    return sorted((REPO / "envs").glob("*.y*ml"))


def parse_env(path: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(conda pins, pip pins, problems) of an env file; pins map normalized name -> version."""
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    problems, conda, pip = [], {}, {}
    if not isinstance(env, dict) or not isinstance(env.get("dependencies"), list):
        return conda, pip, [f"{path.name}: no `dependencies` list"]
    if "conda-forge" not in (env.get("channels") or []):
        problems.append(f"{path.name}: conda-forge is not a channel")
    for entry in env["dependencies"]:
        if isinstance(entry, dict) and set(entry) == {"pip"}:
            for line in entry["pip"]:
                line = str(line).strip()
                if PIP_OPTIONS.match(line):
                    continue
                match = PIP_PIN.match(line)
                if match:
                    pip[normalize(match["name"])] = match["version"]
                else:
                    problems.append(f"{path.name}: pip entry {line!r} is not `name==version`")
            if "pip" not in conda:
                problems.append(f"{path.name}: a pip section needs `pip=<version>` before it")
        elif isinstance(entry, str) and (match := CONDA_PIN.match(entry.strip())):
            conda[normalize(match["name"])] = match["version"]
        else:
            problems.append(f"{path.name}: {entry!r} is not pinned as `name=version`")
    return conda, pip, problems


def module_file(module: str) -> Path | None:
    """The source file of a `spudflow...` module name, if there is one."""
    path = PACKAGE.parent.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def import_nodes(tree: ast.AST, at_import_time: bool):
    """Import statements of a module: all, or only those run when it is imported (not those
    inside function bodies)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        for child in ast.iter_child_nodes(node):
            if not (at_import_time
                    and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)):
                stack.append(child)


@cache  # the package's files do not change while the tests run; every rule's check reads them
def imported_names(path: Path, at_import_time: bool = False) -> tuple[str, ...]:
    """Absolute module names a file imports (handlers import lazily, inside functions)."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in import_nodes(tree, at_import_time):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}".rstrip(".")
            names.append(base)
            # `from spudflow.core import treebank` imports a submodule
            names += [f"{base}.{alias.name}" for alias in node.names]
    return tuple(names)


def spudflow_closure(start: list[Path], at_import_time: bool) -> set[Path]:
    """`start` and the spudflow modules they import, transitively, with packages' __init__."""
    todo, seen = list(start), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        parts = path.relative_to(PACKAGE.parent).parts
        for depth in range(1, len(parts)):
            init = PACKAGE.parent.joinpath(*parts[:depth], "__init__.py")
            if init.is_file():
                todo.append(init)
        for name in imported_names(path, at_import_time):
            if name.split(".")[0] == "spudflow" and (found := module_file(name)):
                todo.append(found)
    return seen


def code_of_stage(stage: str) -> dict[Path, bool]:
    """The spudflow modules a command of `stage` runs -> whether only their import-time code
    runs. The handler may run any module of the stage and what it imports; building the CLI
    parser imports every stage's cli module (spudflow.cli.STAGES), running their top level."""
    from spudflow.cli import STAGES

    others = [PACKAGE / other / "cli.py" for other in STAGES if other != stage]
    code = dict.fromkeys(spudflow_closure(others, at_import_time=True), True)
    # plan.py is the stage's planning: Snakemake runs it, in its own environment, never a job
    handler = [PACKAGE / "cli.py",
               *sorted(p for p in (PACKAGE / stage).rglob("*.py") if p.name != "plan.py")]
    code.update(dict.fromkeys(spudflow_closure(handler, at_import_time=False), False))
    return code


def third_party_imports(code: dict[Path, bool]) -> dict[str, str]:
    """Top-level names of imports outside the standard library and spudflow -> a file using it."""
    found = {}
    for path, at_import_time in sorted(code.items()):
        for name in imported_names(path, at_import_time):
            top = name.split(".")[0]
            if top and top not in sys.stdlib_module_names and top not in ("spudflow", "__future__"):
                found.setdefault(top, str(path.relative_to(REPO)))
    return found


@pytest.mark.slow
def test_every_executing_rule_names_an_existing_env_file():
    missing = [
        f"{rule.name}: conda: {rule.conda_spec!r}"
        for rule in executing_rules()
        if rule.conda_env is None or not rule.conda_env.is_file()
        or rule.conda_env.parent != REPO / "envs"
    ]
    assert executing_rules()
    assert not missing, "rules without an env file in envs/:\n" + "\n".join(missing)


@pytest.mark.parametrize("path", env_files(), ids=lambda p: p.name)
def test_env_file_parses_and_pins_every_dependency(path):
    conda, _, problems = parse_env(path)
    assert not problems, "\n".join(problems)
    assert "python" in conda, f"{path.name}: python is not pinned"


def test_every_env_file_is_used():
    used = {rule.conda_env for rule in executing_rules()}
    assert set(env_files()) <= used, f"unused env files: {sorted(set(env_files()) - used)}"


@pytest.mark.slow
def test_each_rule_env_lists_the_packages_its_code_imports():
    stages = stage_of_subcommand()
    distributions = importlib.metadata.packages_distributions()
    problems = []
    for rule in executing_rules():
        command = shell_subcommand(rule.shell)
        if command not in stages:
            problems.append(f"{rule.name}: shell runs no `spudflow` subcommand ({command!r})")
            continue
        conda, pip, _ = parse_env(rule.conda_env)
        listed = set(conda) | set(pip)
        for module, used_in in sorted(third_party_imports(code_of_stage(stages[command])).items()):
            packages = {normalize(d) for d in distributions.get(module, [])}
            if not packages:
                problems.append(f"{used_in} imports {module!r}, which no installed package has")
            elif not packages & listed:
                problems.append(
                    f"{rule.name} ({rule.conda_env.name}): {used_in} imports {module!r}; "
                    f"the env lists none of {sorted(packages)}"
                )
    assert not problems, "\n".join(problems)


def locked_versions() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("==", 1)
            pins[normalize(name.strip())] = version.split(";")[0].strip()
    return pins


@pytest.mark.parametrize("path", env_files(), ids=lambda p: p.name)
def test_env_pins_are_the_tested_versions(path):
    """A package in both an env and requirements.lock (what the tests ran) has one version."""
    conda, pip, _ = parse_env(path)
    locked = locked_versions()
    differ = [
        f"{name}: env {version}, requirements.lock {locked[name]}"
        for name, version in sorted({**conda, **pip}.items())
        if name in locked and version != locked[name]
    ]
    assert not differ, f"{path.name} pins versions the tests did not run:\n" + "\n".join(differ)


@pytest.mark.parametrize("env", env_files(), ids=lambda p: p.name)
def test_env_installs_the_package_after_deployment(env, tmp_path):
    """Snakemake runs envs/NAME.post-deploy.sh in a new env; it must install spudflow from what
    the Snakefile exports as SPUDFLOW_REPO (a relative pip path would resolve inside
    .snakemake/conda/): the workflow's directory (editable), or a module's release URL."""
    import os
    import subprocess

    script = env.with_name(env.name.rsplit(".", 1)[0] + ".post-deploy.sh")
    assert script.is_file(), f"{script.name} is missing"
    # a `python` that records its arguments stands in for the env's
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "python"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "calls"}\n', encoding="utf-8")
    fake.chmod(0o755)
    url = "git+https://github.com/OWNER/spudflow@v1"
    for repo in (str(REPO), url):
        env_vars = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
                    "SPUDFLOW_REPO": repo}
        subprocess.run(["bash", str(script)], env=env_vars, cwd=tmp_path, check=True)
    assert (tmp_path / "calls").read_text(encoding="utf-8").splitlines() == [
        f"-m pip install --no-deps --no-build-isolation --editable {REPO}",
        f"-m pip install --no-deps {url}",
    ]
