"""Code, comments and docs say the behaviour they stand for, never a number in our issue tracker
("issue 20", "see #15"): a newcomer without the tracker cannot follow such a reference, and it
goes stale when the tracker moves."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("workflow", "rules", "tests", "bench", "docs", "report", "config", "envs", "profiles",
           ".ci", "Snakefile", "Makefile", "README.md", "pyproject.toml")
SUFFIXES = {".py", ".smk", ".md", ".rst", ".yaml", ".yml", ".toml", ".sh", ".txt", ""}
# Fixtures (sentences and corpora, not our words), and this file, which quotes what it retires.
SKIPPED = ("tests/data/", "tests/test_tracker_references.py")
TRACKER_REFERENCE = re.compile(r"(?i)\bissues?\s*#?\s*\d+|\b(?:see|PR)\s+#\d+\b|\(#\d+\)")


def _files(root: Path):
    for top in SCANNED:
        base = root / top
        paths = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        for path in paths:
            rel = path.relative_to(root).as_posix()
            if (path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts
                    and not rel.startswith(SKIPPED)):
                yield rel, path


def tracker_references(root: Path) -> list[str]:
    """FILE:LINE: text of every line that cites a tracker number."""
    found = []
    for rel, path in _files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if TRACKER_REFERENCE.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_line_cites_a_tracker_number():
    assert tracker_references(ROOT) == [], "say the behaviour, not the issue's number"


def test_the_pattern_catches_the_old_references_and_leaves_the_rest(tmp_path):
    old = ['"""The score cache\'s key (issue 20): every thing that can change a token\'s',
           "# Items (results/items/{dataset}.parquet, issue 4): columns every dataset has.",
           "    the language table says how many (issue 22, item 4).\"\"\"",
           "Issue 22, item 7: `aggregate.japanese_agreement_modes` narrows the agreement",
           "a fix for a torn segment (see #15)"]
    kept = ["    # 3 issues remain with this treebank's tokenisation",
            "colour = '#1f77b4'", "body { color: #222; }",
            "print(f'{n:#x}')"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("\n".join(old + kept) + "\n", encoding="utf-8")
    assert tracker_references(tmp_path) == [f"docs/page.md:{n}: {line.strip()}"
                                            for n, line in enumerate(old, 1)]
