"""The suite's own scheduling hint (conftest.LONGEST_FILES) names files that exist: a renamed
file would otherwise lose its early start without a word."""

from __future__ import annotations

from pathlib import Path

from conftest import LONGEST_FILES


def test_the_longest_files_handed_out_first_exist():
    tests = Path(__file__).parent
    assert [name for name in LONGEST_FILES if not (tests / name).is_file()] == []
    assert len(set(LONGEST_FILES)) == len(LONGEST_FILES)
