"""The interpreter `make` makes .venv from (Makefile, docs/running.md "Which Python"): the
distribution's /usr/bin/python3.11 where it can make a venv, else the first python3.11 on PATH;
PYTHON= chooses another. Read from `make -n` in a folder holding the Makefile and what its venv
target depends on, without a .venv: nothing is created. And the targets' commands keep compiled
bytecode whatever the environment says."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DISTRIBUTION_PYTHON = Path("/usr/bin/python3.11")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make_env(**extra: str) -> dict[str, str]:
    """This environment for a make of its own, not a sub-make of the `make test` that may run
    this (whose variables, PYTHON among them, its children inherit)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "PYTHON")}
    return {**env, **extra}


def venv_command(tmp_path: Path, *variables: str) -> str:
    """The command `make venv` would run there to create .venv (a make of its own)."""
    for name in ("Makefile", "pyproject.toml", "requirements.lock"):
        shutil.copy(REPO / name, tmp_path / name)
    done = subprocess.run(["make", "-n", "venv", *variables], cwd=tmp_path, capture_output=True,
                          text=True, check=True, env=make_env())
    (command,) = [line for line in done.stdout.splitlines() if " -m venv " in line]
    return command


def can_make_a_venv(python: Path) -> bool:
    return python.is_file() and subprocess.run(
        [str(python), "-c", "import ensurepip, venv"], capture_output=True).returncode == 0


def test_the_venv_is_made_from_the_distributions_python_where_it_can_make_one(tmp_path):
    command = venv_command(tmp_path)
    chosen = str(DISTRIBUTION_PYTHON) if can_make_a_venv(DISTRIBUTION_PYTHON) else "python3.11"
    assert f"|| {chosen} -m venv .venv ||" in command, command


def test_python_on_the_command_line_chooses_another(tmp_path):
    command = venv_command(tmp_path, "PYTHON=/opt/other/bin/python3.11")
    assert "|| /opt/other/bin/python3.11 -m venv .venv ||" in command, command


def test_the_make_targets_keep_compiled_bytecode(tmp_path):
    """A PYTHONDONTWRITEBYTECODE=1 in the environment does not reach the commands of `make`'s
    targets: each of a run's and the tests' processes would compile the package again."""
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    probe = "bytecode-probe: ; @python3 -c 'import sys; print(sys.dont_write_bytecode)'"
    done = subprocess.run(["make", "--eval", probe, "bytecode-probe"], cwd=tmp_path,
                          capture_output=True, text=True, check=True,
                          env=make_env(PYTHONDONTWRITEBYTECODE="1"))
    assert done.stdout.strip() == "False", done.stdout + done.stderr
