"""Lines of UTF-8 text and TSV files, numbered, so that bad input is reported as FILE:LINE.

A line ends at "\n" (or "\r\n") only. str.splitlines() would also split at U+2028, U+2029, \x1c
and other Unicode separators, which a sentence may hold; it would cut such a sentence in two and
shift every later line number."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.regular_files import check_regular_file

# How a line of raw text is split into words: spaCy's blank tokenizer of the language, or at
# whitespace (text that is tokenised already, as Lau et al.'s n-gram code reads it).
WORD_SPLITS = ("spacy", "whitespace")


def read_lines(path: str | Path) -> list[tuple[int, str]]:
    """(1-based line number, line without its line end) for every line of a UTF-8 file; a
    leading byte-order mark is dropped."""
    path = Path(path)
    check_regular_file(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(path, line, f"invalid UTF-8 ({error.reason})") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [(number, line.removesuffix("\r")) for number, line in enumerate(lines, start=1)]


def nonblank_lines(path: str | Path) -> list[tuple[int, str]]:
    """read_lines() without the lines that hold only white space."""
    return [(number, line) for number, line in read_lines(path) if line.strip()]
