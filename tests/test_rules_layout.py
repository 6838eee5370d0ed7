"""One stage, one place, in the rules too: rules/ holds rules, and what they plan with is Python.

A rules file defines no function (no .smk calls what another .smk defines: nothing works by
include order) and reads only its own stage's plan object, <stage>_plan, which the Snakefile
builds (spudflow/<stage>/plan.py). A stage's plan imports only core and its own stage; the
shared plan (spudflow/core/plan*.py) only core. No rule takes an input or output by position.
A rule holds only what is its own (what every rule has is spudflow.core.rule_defaults'): a median
of 15 lines, none over 30."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from conftest import REPO

RULES = REPO / "rules"
PACKAGE = REPO / "workflow" / "spudflow"
STAGES = ("ingest", "nonce", "items", "controls", "scoring", "probe", "aggregate")
IMPORT = re.compile(r"^\s*(?:from|import)\s+(spudflow(?:\.\w+)*)", re.M)
DEFINED = re.compile(r"^\s*def \w+\(", re.M)
PLAN_OBJECT = re.compile(r"\b(\w+)_plan\.")
BY_INDEX = re.compile(r"\b(?:input|output)\[\d+\]")
RULE_START = re.compile(r"^([ ]*)(?:rule\b|use rule\b)[^:]*:", re.M)


def imported_packages(path: Path) -> set[str]:
    """The spudflow subpackages (core, probe, ...) a file imports from."""
    return {name.split(".")[1] for name in IMPORT.findall(path.read_text(encoding="utf-8"))}


def rules_files() -> list[Path]:
    return [REPO / "Snakefile", *sorted(RULES.rglob("*.smk"))]


def test_no_rules_file_defines_a_function():
    assert [p.name for p in rules_files() if DEFINED.search(p.read_text("utf-8"))] == []


def test_a_stages_rules_read_only_their_own_plan():
    for stage in STAGES:
        text = (RULES / f"{stage}.smk").read_text(encoding="utf-8")
        assert set(PLAN_OBJECT.findall(text)) <= {stage}, stage
        assert imported_packages(RULES / f"{stage}.smk") <= {"core", stage}, stage


def test_a_stages_plan_imports_only_core_and_its_stage():
    for stage in STAGES:
        assert imported_packages(PACKAGE / stage / "plan.py") <= {"core", stage}, stage
    for path in sorted((PACKAGE / "core").glob("plan*.py")):
        assert imported_packages(path) <= {"core"}, path.name


def test_no_rule_takes_a_file_by_position():
    assert [p.name for p in rules_files() if BY_INDEX.search(p.read_text("utf-8"))] == []


def rule_lengths(text: str) -> list[int]:
    """The length of each rule (`rule NAME:`, `rule:` or `use rule ... with:`): its line to the
    last line indented under it."""
    lines = text.split("\n")
    lengths = []
    for match in RULE_START.finditer(text):
        start = text.count("\n", 0, match.start())
        end = start
        for number in range(start + 1, len(lines)):
            line = lines[number]
            if line.strip() and len(line) - len(line.lstrip()) <= len(match.group(1)):
                break
            if line.strip():
                end = number
        lengths.append(end - start + 1)
    return lengths


def test_rules_are_short():
    lengths = [n for path in rules_files() for n in rule_lengths(path.read_text("utf-8"))]
    assert len(lengths) >= 30
    assert statistics.median(lengths) <= 15 and max(lengths) <= 30, sorted(lengths)


def test_the_checks_catch_the_old_layout(tmp_path):
    """rules/common.smk defined ingested() that every stage's rules called; the aggregate rules
    read the probe's functions; eight rules took a registry file as output[1]."""
    old = tmp_path / "common.smk"
    old.write_text("from spudflow.probe.model_shape import model_shape\n"
                   "def ingested(treebank, split):\n", encoding="utf-8")
    assert imported_packages(old) == {"probe"}
    assert DEFINED.search(old.read_text("utf-8"))
    assert set(PLAN_OBJECT.findall("        metrics=probe_plan.probe_metrics_files(),")) == {
        "probe"}
    assert BY_INDEX.search("        stem=subpath(output[1], strip_suffix=\".parquet\"),")

    # a rule of old: log, benchmark, conda, threads, resources and params.code in every rule
    old_rule = "rule x:\n" + "".join(f"    {k}:\n        v,\n" for k in (
        "input", "output", "log", "benchmark", "conda", "resources", "params", "shell")) + \
        "\n\nrule y:\n    input:\n        a,\n"
    assert rule_lengths(old_rule) == [17, 3]
