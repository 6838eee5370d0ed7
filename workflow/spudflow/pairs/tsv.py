"""Tab-separated data files with line numbers, so that bad input is reported as FILE:LINE."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.errors import InputError


def read_lines(path: str | Path) -> list[tuple[int, str]]:
    """(1-based line number, line without its line end) for every line of a UTF-8 file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "no such file")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(path, line, "invalid UTF-8") from None
    # split("\n") rather than splitlines(): sentences may hold U+2028 and the like.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [(number, line.removesuffix("\r")) for number, line in enumerate(lines, start=1)]


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
