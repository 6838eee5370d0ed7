"""Annotation sheets: one CSV (to fill in) and one printable HTML page per annotator, and the
reader of filled CSV sheets. The sheet shows no sent_id and no method: only the answer key
(kit.answer_key) says which nonce sentence is which."""

from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.regular_files import check_regular_file
from spudflow.nonce.human_eval import CLOSER, GRAMMATICAL

ANSWERS = {"original_grammatical": GRAMMATICAL, "a_grammatical": GRAMMATICAL,
           "b_grammatical": GRAMMATICAL, "closer": CLOSER}
SHEET_COLUMNS = ("annotator", "item", "original", "sentence_a", "sentence_b", *ANSWERS)

INSTRUCTIONS = (
    "Each item shows a sentence from a treebank (the original) and two versions of it, A and B, "
    "in which words were replaced. For each of the three sentences, say whether it is "
    "grammatical (yes, no, or unsure), regardless of whether it makes sense. Then say which of "
    "A and B is syntactically closer to the original (A, B, equal, or unsure).")


def sheet_rows(key: pl.DataFrame, annotator: str) -> list[dict[str, str]]:
    """The annotator's sheet rows, answers empty, in item order."""
    rows = []
    for record in key.filter(pl.col("annotator") == annotator).sort("item").iter_rows(named=True):
        rows.append({"annotator": annotator, "item": str(record["item"]),
                     "original": record["original"],
                     "sentence_a": record[record["sentence_a"]],
                     "sentence_b": record[record["sentence_b"]],
                     **dict.fromkeys(ANSWERS, "")})
    return rows


def sheet_csv(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SHEET_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _choices(values: tuple[str, ...]) -> str:
    return " ".join(f'<span class="box">&#9744;</span>&nbsp;{v}' for v in values)


def sheet_html(rows: list[dict[str, str]], annotator: str, title: str) -> str:
    """A printable page: the instructions, then per item the three sentences with boxes."""
    e = html.escape
    items = []
    for row in rows:
        items.append(
            f'<section class="item"><h2>Item {e(row["item"])}</h2><table>'
            f'<tr><th>Original</th><td>{e(row["original"])}</td>'
            f"<td>grammatical? {_choices(GRAMMATICAL)}</td></tr>"
            f'<tr><th>A</th><td>{e(row["sentence_a"])}</td>'
            f"<td>grammatical? {_choices(GRAMMATICAL)}</td></tr>"
            f'<tr><th>B</th><td>{e(row["sentence_b"])}</td>'
            f"<td>grammatical? {_choices(GRAMMATICAL)}</td></tr>"
            f'<tr><th></th><td colspan="2">Syntactically closer to the original: '
            f"{_choices(CLOSER)}</td></tr></table></section>")
    body = "\n".join(items)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{e(title)} ({e(annotator)})</title><style>"
        "body{font-family:serif;max-width:52em;margin:2em auto}"
        "table{width:100%;border-collapse:collapse}th{width:5em;text-align:left}"
        "td,th{padding:.3em;vertical-align:top;border-bottom:1px solid #ccc}"
        ".box{font-size:1.2em}.item{break-inside:avoid;page-break-inside:avoid}"
        "</style></head>\n<body>\n"
        f"<h1>{e(title)}</h1><p>Annotator: <b>{e(annotator)}</b>. {len(rows)} items.</p>"
        f"<p>{e(INSTRUCTIONS)} Write the answers into the CSV sheet of the same name (columns "
        f"{', '.join(ANSWERS)}).</p>\n{body}\n</body></html>\n")


def changed_items(sheet: Path, rows: list[dict[str, str]]) -> list[int] | None:
    """The item numbers of the kept sheet SHEET whose sentences (original, A, B) differ from the
    new sheet's ROWS: the items `human-eval tables` will count as stale. None when SHEET cannot
    be read as a sheet (being filled in, another file): export never fails on it."""
    try:
        with sheet.open(encoding="utf-8-sig", newline="") as handle:
            kept = {row["item"].strip(): row for row in csv.DictReader(handle)}
        now = {row["item"]: row for row in rows}
        return sorted(int(item) for item, row in now.items() if item in kept and any(
            kept[item][column] != row[column]
            for column in ("original", "sentence_a", "sentence_b")))
    except (OSError, UnicodeDecodeError, csv.Error, KeyError, AttributeError, ValueError):
        return None


@dataclass(frozen=True)
class FilledRow:
    line: int
    fields: dict[str, str]


def read_sheet(path: Path) -> list[FilledRow]:
    """The rows of a filled CSV sheet with their line numbers; header and answers checked."""
    check_regular_file(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 CSV sheet") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(path, 1, "empty file: expected a human-eval sheet") from None
    except csv.Error as error:
        raise InputError(path, 1, f"not a CSV sheet ({error})") from None
    if tuple(h.strip() for h in header) != SHEET_COLUMNS:
        raise InputError(path, 1, f"header is not {','.join(SHEET_COLUMNS)}")
    rows = []
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise InputError(path, reader.line_num, f"bad CSV ({error})") from None
        if not any(f.strip() for f in fields):
            continue  # blank line
        if len(fields) != len(SHEET_COLUMNS):
            raise InputError(path, reader.line_num, f"{len(fields)} fields, expected "
                             f"{len(SHEET_COLUMNS)}")
        row = dict(zip(SHEET_COLUMNS, fields, strict=True))
        for column, allowed in ANSWERS.items():
            value = _answer(row[column], allowed)
            if value is None:
                shown = repr(row[column]) if row[column].strip() else "empty"
                raise InputError(path, reader.line_num, f"{column} is {shown}; expected "
                                 f"{', '.join(allowed)}")
            row[column] = value
        rows.append(FilledRow(reader.line_num, row))
    if not rows:
        raise InputError(path, reader.line_num, "no items in the sheet")
    return rows


def _answer(value: str, allowed: tuple[str, ...]) -> str | None:
    """The allowed answer VALUE spells (case and surrounding space ignored), else None."""
    for option in allowed:
        if value.strip().lower() == option.lower():
            return option
    return None
