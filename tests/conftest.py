"""Shared fixtures: paths to the repository, the vendored data and the optional ../shared data."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
VENDORED_UD = REPO / "resources" / "ud"


def pytest_configure(config):
    """Workflow tests run `spudflow` from Snakemake's shell: find it beside this interpreter, so
    that `.venv/bin/python -m pytest` works without an activated venv."""
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def pytest_collection_modifyitems(config, items):
    if SHARED_DATA.is_dir():
        return
    skip = pytest.mark.skip(reason=f"needs {SHARED_DATA} (the shared corpora beside the repo)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def run_cli(capsys):
    """Run `spudflow ARGS…` in-process; returns (exit code, stdout, stderr)."""
    from spudflow.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
