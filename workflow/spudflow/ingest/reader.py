"""Read and validate CoNLL-U into the columns of core.treebank.

The fields are split by hand rather than with `conllu.parse` because the round trip must be
byte-identical (every field kept as written) and every error must name its line; `conllu`'s parsed
tokens normalise fields and lose line numbers.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from spudflow.core.errors import InputError

WORD_ID = re.compile(r"[1-9][0-9]*")
MWT_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")
HEAD = re.compile(r"0|[1-9][0-9]*")
N_FIELDS = 10


@dataclass
class Sentence:
    line: int
    comments: list[str] = field(default_factory=list)
    rows: list[tuple[int, list[str]]] = field(default_factory=list)  # (line, fields)


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) pairs; normalises CRLF and a leading BOM, rejects bad UTF-8 and gzip."""
    opener = gzip.open if path.suffix == ".gz" else open
    number = 0
    try:
        with opener(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise InputError(path, number, f"invalid UTF-8 ({error.reason} at byte "
                                     f"{error.start})") from None
                yield number, text.rstrip("\n").removesuffix("\r")
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise InputError(path, number + 1, f"truncated or corrupt gzip file ({error})") from None
    if number == 0:
        raise InputError(path, 1, "empty file")


def split_sentences(path: Path) -> Iterator[Sentence]:
    sentence: Sentence | None = None
    for number, text in read_lines(path):
        if text == "":
            if sentence is None:
                raise InputError(path, number, "blank line outside a sentence")
            if not sentence.rows:
                raise InputError(path, number, "sentence has comments but no token lines")
            yield sentence
            sentence = None
            continue
        if sentence is None:
            sentence = Sentence(line=number)
        if text.startswith("#"):
            if sentence.rows:
                raise InputError(path, number, "comment line after the token lines of a sentence")
            sentence.comments.append(text)
        else:
            fields = text.split("\t")
            if len(fields) != N_FIELDS:
                raise InputError(path, number, f"expected {N_FIELDS} tab-separated columns, "
                                 f"found {len(fields)}")
            sentence.rows.append((number, fields))
    if sentence is not None:  # a missing blank line after the last sentence is accepted
        if not sentence.rows:
            raise InputError(path, sentence.line, "sentence has comments but no token lines")
        yield sentence
