"""What format of file an existing output path holds, for the messages of core/atomic.py (and
its check that a Parquet file is replaced only by one of the same artifact).

A Parquet file is known by the artifact its schema metadata names (core/contract.py); other
files by their content: CoNLL-U text, other text, an SVG or HTML page, PNG, gzip, safetensors.
"""

from __future__ import annotations

import re
from pathlib import Path

# Enough of a file to tell its format.
HEAD_BYTES = 1 << 16
PARQUET_MAGIC = b"PAR1"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
GZIP_MAGIC = b"\x1f\x8b"
# The metadata key of spudflow's safetensors files (probe features).
SAFETENSORS_KEY = "spudflow"
EMPTY, CONLLU, TEXT = "empty", "CoNLL-U text", "text"
# One CoNLL-U line: a comment, a blank line ending a sentence, or ten tab-separated fields.
CONLLU_LINE = re.compile(r"^(#.*|\s*|([^\t]*\t){9}[^\t]*)$")


def _parquet_format(path: Path) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spudflow.core.contract import ARTIFACT_KEY

    try:
        metadata = pq.read_schema(path).metadata or {}
    except (pa.ArrowException, OSError):
        return "an unreadable Parquet file"
    name = metadata.get(ARTIFACT_KEY)
    return parquet_of(name.decode()) if name else "a Parquet file of no spudflow artifact"


def parquet_of(artifact_name: str) -> str:
    """What `file_format` says of a Parquet file of ARTIFACT_NAME (core/contract.py)."""
    return f"a Parquet file of {artifact_name}"


def _text_format(head: bytes) -> str:
    text = head.decode("utf-8", errors="ignore" if len(head) == HEAD_BYTES else "strict")
    text = text.removeprefix("\ufeff")
    start = text.lstrip().lower()
    if start.startswith("<?xml") and "<svg" in start or start.startswith("<svg"):
        return "an SVG image"
    if start.startswith(("<!doctype html", "<html")):
        return "an HTML page"
    lines = text.splitlines()
    if len(head) == HEAD_BYTES:
        lines = lines[:-1]  # the last line may be cut
    if lines and all(CONLLU_LINE.match(line) for line in lines) and \
            any(line.count("\t") == 9 for line in lines):
        return CONLLU
    return TEXT


def file_format(path: Path) -> str:
    """A short description of what the regular file PATH holds, equal for two files of one format
    (two Parquet files of one artifact, two CoNLL-U files, two PNG images)."""
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    if not head:
        return EMPTY
    if head.startswith(PARQUET_MAGIC):
        return _parquet_format(path)
    if head.startswith(PNG_MAGIC):
        return "a PNG image"
    if head.startswith(GZIP_MAGIC):
        return "gzip data"
    if len(head) > 8 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < 1 << 30:
        return "a safetensors file"
    if b"\0" in head:
        return "binary data"
    try:
        return _text_format(head)
    except UnicodeDecodeError:
        return "binary data"


def self_marked(path: Path) -> str | None:
    """The format of PATH when it carries its own mark of what wrote it (a Parquet file, its
    artifact; a safetensors file, its metadata), else None (core/written_files.py marks it)."""
    with path.open("rb") as handle:
        head = handle.read(16)
    if head.startswith(PARQUET_MAGIC):
        return file_format(path)
    if len(head) > 8 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < 1 << 30:
        return _safetensors_format(path)
    return None


def _safetensors_format(path: Path) -> str:
    import json

    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        try:
            header = json.loads(handle.read(size))
        except ValueError:
            return "an unreadable safetensors file"
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    ours = isinstance(metadata, dict) and SAFETENSORS_KEY in metadata
    return "a safetensors file of spudflow's" if ours else "a safetensors file of no spudflow " \
        "artifact"
