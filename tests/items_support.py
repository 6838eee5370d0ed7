"""Helpers shared by the tests of the items stage (tests/test_items_*.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[1]
# The shared corpora beside the repository (../shared/data); SPUDFLOW_SHARED_DATA points elsewhere.
SHARED_DATA = Path(os.environ.get("SPUDFLOW_SHARED_DATA", REPO.parent / "shared" / "data"))

needs_shared = pytest.mark.skipif(not SHARED_DATA.is_dir(),
                                  reason=f"needs {SHARED_DATA} (the shared corpora)")


def run_cli(capsys, *args) -> tuple[int, str]:
    """Run `spudflow ARGS…` in-process; returns (exit code, stderr)."""
    from spudflow.cli import main

    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def assert_bad_input(capsys, out: Path, args: list, where: str, words: str) -> None:
    """The command exits 2 with one `WHERE: … WORDS …` line on stderr and writes nothing."""
    code, err = run_cli(capsys, *args, "--out", out)
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{where}: "), lines[0]
    assert words in lines[0], lines[0]
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.*")), "temporary file left behind"


def read_items(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()
