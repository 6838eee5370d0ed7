"""Tab-separated data files with line numbers, so that bad input is reported as FILE:LINE (the
lines are read by core/text_lines.py)."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.text_lines import read_lines


def data_lines(path: str | Path) -> list[tuple[int, str]]:
    """Lines that carry data: blank lines and `#` comment lines are skipped."""
    return [(n, line) for n, line in read_lines(path)
            if line.strip() and not line.startswith("#")]


def read_tsv(path: str | Path, required: tuple[str, ...], optional: tuple[str, ...] = ()
             ) -> list[tuple[int, dict[str, str]]]:
    """Rows of a TSV file whose first data line is a header naming every column.

    The header must hold all `required` columns and may hold `optional` ones, in any order.
    Every row must have as many fields as the header.
    """
    lines = data_lines(path)
    if not lines:
        raise InputError(path, 1, "empty file: expected a header line")
    header_line, header = lines[0]
    names = header.split("\t")
    missing = [c for c in required if c not in names]
    unknown = [c for c in names if c not in required + optional]
    if missing or unknown or len(set(names)) != len(names):
        what = []
        if missing:
            what.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            what.append(f"unknown column(s) {', '.join(unknown)}")
        if len(set(names)) != len(names):
            what.append("repeated column names")
        raise InputError(path, header_line, "bad header: " + "; ".join(what))
    rows = []
    for number, line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != len(names):
            raise InputError(path, number, f"expected {len(names)} tab-separated columns, "
                             f"found {len(fields)}")
        rows.append((number, dict(zip(names, fields, strict=True))))
    return rows
