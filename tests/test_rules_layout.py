"""One stage, one place, in the rules too: rules/common.smk (what every stage shares) imports only
spudflow.core; a stage's plumbing (rules/plumbing/<stage>.smk) imports only core and its own
stage's code; and the nonce plumbing plans nothing from the pairs' or the probes' plumbing: which
nonce versions a run makes is core's nonce plan (spudflow.core.nonce_plan), read by all three."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

RULES = REPO / "rules"
IMPORT = re.compile(r"^\s*(?:from|import)\s+(spudflow(?:\.\w+)*)", re.M)
DEFINED = re.compile(r"^def (\w+)\(", re.M)
CALLED = re.compile(r"\b(\w+)\(")


def imported_packages(path: Path) -> set[str]:
    """The spudflow subpackages (core, probe, ...) a rules file imports from."""
    return {name.split(".")[1] for name in IMPORT.findall(path.read_text(encoding="utf-8"))}


def test_common_rules_import_only_core():
    assert imported_packages(RULES / "common.smk") <= {"core"}


def test_a_stages_plumbing_imports_only_core_and_its_stage():
    for path in sorted((RULES / "plumbing").glob("*.smk")):
        assert imported_packages(path) <= {"core", path.stem}, path.name


def _plumbing(stage: str) -> str:
    return (RULES / "plumbing" / f"{stage}.smk").read_text(encoding="utf-8")


def test_the_nonce_plumbing_calls_no_planning_function_of_the_pairs_or_the_probe():
    others = set(DEFINED.findall(_plumbing("pairs"))) | set(DEFINED.findall(_plumbing("probe")))
    assert set(CALLED.findall(_plumbing("nonce"))) & others == set()


def test_the_checks_catch_the_old_layout(tmp_path):
    """common.smk imported the probe's model_shape; the nonce plumbing called pairs' and
    probe's spud_items_splits and probe_nonce_splits."""
    old = tmp_path / "common.smk"
    old.write_text("from spudflow.core.model_source import is_local_path\n"
                   "from spudflow.probe.model_shape import model_shape\n", encoding="utf-8")
    assert imported_packages(old) == {"core", "probe"}
    nonce = "    for treebank, split in spud_items_splits().values():\n"
    assert "spud_items_splits" in set(CALLED.findall(nonce))
