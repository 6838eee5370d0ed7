"""docs/glossary.md: each retired synonym stays retired. Every entry greps the checkout's own
code, rules, docs, captions and config (source files, never results/) for a precise pattern of
the synonym; words with other, legitimate meanings get a pattern narrow enough to leave those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("workflow", "rules", "Snakefile", "docs", "report", "config")
SUFFIXES = {".py", ".smk", ".md", ".rst", ".yaml", ".yml", ".json", ".tsv", ""}

# The probe stage is being renamed on its own branch (baseline, eval_set): drop these after the
# merge. rules/common.smk holds the probe wildcards' constraints (`variant=`, `probe_set=`).

GLOSSARY = "docs/glossary.md"  # it names the retired synonyms
AGGREGATE = ("workflow/spudflow/aggregate/", "workflow/spudflow/core/table_artifacts.py",
             "report/", "docs/aggregate.md")

# (synonym, pattern, where: path prefixes, None for everywhere scanned, skipped prefixes)
RETIRED = [
    ("scorer for a scoring function", r"(?i)scorer", AGGREGATE, ()),
    ("variant for a probe baseline",
     r"(?i)variants?\W[^\n]{0,40}\b(?:M0|MRC)\b|\b(?:M0|MRC)\b[^\n]{0,40}\bvariants?\b", None, ()),
    ("variant in the probe stage", r"\bvariants?\b",
     ("rules/probe.smk", "rules/plumbing/probe.smk", "workflow/spudflow/probe/", "docs/probe.md"),
     ()),
    ("none for the lm baseline",
     r"`none` \(the (?:LM|model)|NO_BASELINE|baseline[^\n]{0,30}[\"`]none[\"`]"
     r"|[\"`]none[\"`][^\n]{0,30}\bM0\b", None, ()),
    ("null for the lm baseline", r"(?i)null \(the (?:LM|model)|baseline[^\n]{0,40}\bor \"\"",
     None, ()),
    ("probe_set for the eval set", r"\bprobe_sets?\b", None, ()),
    ("eval for the eval set column", r"col\(\"eval\"|alias\(\"eval\"\)|\| eval \|", None, ()),
    # The human-evaluation sheets and their answer key keep `original` (glossary: kept on purpose).
    ("original for orig", r"(?<!col\()[\"`]original[\"`]|:original\b", None,
     ("workflow/spudflow/nonce/human_eval/", "workflow/spudflow/core/schemas.snapshot.json")),
    ("a figure's other names",
     r"german[_-]roc|figure[_-]german[_-](?:order|templates)\b|\bgerman_(?:order|templates)\b"
     r"|figure[_-]spud[_-]ratios", None, ()),
]


def _files(root: Path):
    for top in SCANNED:
        base = root / top
        paths = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        for path in paths:
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                yield path.relative_to(root).as_posix(), path


def hits(root: Path, pattern: str, where, skipped) -> list[str]:
    """FILE:LINE: text of every match outside the skipped prefixes."""
    regex = re.compile(pattern)
    found = []
    for rel, path in _files(root):
        if rel == GLOSSARY or rel.startswith(tuple(skipped)):
            continue
        if where is not None and not rel.startswith(tuple(where)):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                 .splitlines(), 1):
            if regex.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


@pytest.mark.parametrize(("synonym", "pattern", "where", "skipped"), RETIRED,
                         ids=[r[0] for r in RETIRED])
def test_retired_synonym_is_gone(synonym, pattern, where, skipped):
    assert hits(ROOT, pattern, where, skipped) == [], f"{synonym}: see docs/glossary.md"


@pytest.mark.parametrize("synonym", ["scorer", "baseline", "probe_set", "orig", "figure"])
def test_patterns_catch_the_old_spellings(tmp_path, synonym):
    """Each pattern finds the spelling it retires (the lines of the code before the renames)."""
    old = {
        "scorer": ("workflow/spudflow/aggregate/blimp.py", 'SCORER = ["dataset", "model"]'),
        "baseline": ("workflow/spudflow/core/table_artifacts.py",
                     'col("baseline", STR, "`none` (the LM), `M0`, `MR` or `MRC`"),'),
        "probe_set": ("rules/aggregate.smk", "        probe_set=PROBE_SETS,"),
        "orig": ("workflow/spudflow/core/artifacts.py", 'SPUD_ORIGINAL = "original"'),
        "figure": ("rules/aggregate.smk", "use rule figure_probe_layers as figure_german_roc"),
    }[synonym]
    path = tmp_path / old[0]
    path.parent.mkdir(parents=True)
    path.write_text(old[1] + "\n", encoding="utf-8")
    catching = [r for r in RETIRED if hits(tmp_path, *r[1:])]
    assert len(catching) == 1
    assert hits(tmp_path, *catching[0][1:]) == [f"{old[0]}:1: {old[1].strip()}"]


def test_glossary_is_linked_from_the_readme():
    assert "docs/glossary.md" in (ROOT / "README.md").read_text(encoding="utf-8")
