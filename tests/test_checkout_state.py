"""Tests never plan, run or read in the checkout: its results/ and .snakemake/ may hold
a finished `make run`. CI runs the suite beside a decoy of one (.ci/decoy_run.py) and
tests/conftest.py fails the run if a test changes it; these are the cheap checks of both."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import REPO, checkout_state

# A Snakemake run or plan aimed at the checkout itself, as the tests once wrote them.
IN_CHECKOUT = re.compile(r"plan\(REPO\b|planned_jobs\(REPO\b|run_workflow\(REPO\b|cwd=REPO\b"
                         r"|workdir=REPO\b|\"--directory\",\s*str\(REPO\)")


def test_no_test_plans_or_runs_in_the_checkout():
    found = [f"{path.name}:{n}: {line.strip()}"
             for path in sorted((REPO / "tests").glob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if IN_CHECKOUT.search(line) and path.name != "test_checkout_state.py"]
    assert found == []


def test_checkout_state_sees_a_changed_or_new_file(tmp_path):
    (tmp_path / "results" / "items").mkdir(parents=True)
    stale = tmp_path / "results" / "items" / "blimp.parquet"
    stale.write_bytes(b"stale")
    before = checkout_state(tmp_path)
    assert checkout_state(tmp_path) == before
    stale.write_bytes(b"rewritten")
    assert checkout_state(tmp_path) != before
    before = checkout_state(tmp_path)
    (tmp_path / ".snakemake").mkdir()
    assert ".snakemake" in checkout_state(tmp_path).keys() - before.keys()


def test_decoy_run_leaves_a_checkout_with_results_alone(tmp_path):
    """.ci/decoy_run.py never overwrites a real run: with results/ present it stops at once."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    (checkout / "results").mkdir()
    script = (REPO / ".ci" / "decoy_run.py").read_text(encoding="utf-8")
    (checkout / ".ci" / "decoy_run.py").write_text(script, encoding="utf-8")
    result = subprocess.run([sys.executable, str(checkout / ".ci" / "decoy_run.py")],
                            capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 1 and "left as it is" in result.stderr
    assert [p.name for p in (checkout / "results").iterdir()] == []
