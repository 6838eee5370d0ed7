"""The ingested treebank format: DIR/tokens.parquet and DIR/sentences.parquet.

Every stage that reads or writes treebanks goes through this module, so the columns are defined
once (core/artifacts.py; docs/ingest.md renders them). Field strings are stored exactly as
written in the CoNLL-U file (`_` included), which makes CoNLL-U -> Parquet -> CoNLL-U
byte-identical.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa

from spudflow.core.artifacts import (
    NONCE_SENTENCE_COLUMNS,
    NONCE_TOKEN_COLUMNS,
    TREEBANK_SENTENCES,
    TREEBANK_TOKENS,
)
from spudflow.core.atomic import AtomicOutputs, atomic_outputs
from spudflow.core.contract import conform, read_artifact, write_parquet
from spudflow.core.errors import InputError
from spudflow.core.input_files import parquet_schema, require_directory

TOKENS_FILE = "tokens.parquet"
SENTENCES_FILE = "sentences.parquet"

# The ten CoNLL-U fields, in file order.
CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")

# The column definitions live in core/artifacts.py (TREEBANK_TOKENS, TREEBANK_SENTENCES).
TOKEN_SCHEMA = TREEBANK_TOKENS.schema()
SENTENCE_SCHEMA = TREEBANK_SENTENCES.schema()


# Parquet metadata key of a nonce treebank's two files: JSON of what made it (method, seed, ...),
# so that a nonce treebank is known as one even where its columns are gone or its path lies.
NONCE_MARKER_KEY = b"spudflow.nonce"


def _marked(table: pa.Table, marker: dict | None) -> pa.Table:
    if marker is None:
        return table
    metadata = {**(table.schema.metadata or {}),
                NONCE_MARKER_KEY: json.dumps(marker, sort_keys=True).encode()}
    return table.replace_schema_metadata(metadata)


def write_treebank(directory: str | Path, tokens: pl.DataFrame, sentences: pl.DataFrame,
                   nonce: dict | None = None, outputs: AtomicOutputs | None = None) -> None:
    """Write both tables into DIRECTORY, both or neither. Columns beyond the schema (such as the
    nonce stage's `orig_form`) are kept after the documented ones. NONCE: the nonce stage's
    marker (its method, seed, ...), kept in both files' metadata. OUTPUTS: the caller's atomic
    outputs, which rename both into place with its other files (default: their own)."""
    directory = Path(directory)
    token_table = _marked(conform(tokens, TREEBANK_TOKENS), nonce)
    sentence_table = _marked(conform(sentences, TREEBANK_SENTENCES), nonce)
    with contextlib.nullcontext(outputs) if outputs is not None else atomic_outputs() as out:
        write_parquet(token_table, out.path(directory / TOKENS_FILE))
        write_parquet(sentence_table, out.path(directory / SENTENCES_FILE))


def read_treebank(directory: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both tables of an ingested (or nonce) treebank directory, checked against their
    definitions and against each other; a missing directory or file is bad input."""
    directory = require_directory(directory, "an ingested or nonce treebank")
    tokens = read_artifact(directory / TOKENS_FILE, TREEBANK_TOKENS)
    sentences = read_artifact(directory / SENTENCES_FILE, TREEBANK_SENTENCES)
    _check_one_treebank(directory, tokens, sentences)
    return tokens, sentences


def _check_one_treebank(directory: Path, tokens: pl.DataFrame, sentences: pl.DataFrame) -> None:
    """The two tables of one treebank: every sentence has its sent_id and its n_words words in
    tokens.parquet, and every token a sentence. Tables of two treebanks side by side (a file
    copied from elsewhere) would otherwise export sentences without tokens."""
    words = tokens.group_by("sent_index").agg(
        (pl.col("token_type") == "word").sum().alias("token_words"),
        pl.col("sent_id").first().alias("token_sent_id"))
    joined = sentences.select("sent_index", "sent_id", "n_words").join(
        words, on="sent_index", how="full", coalesce=True)
    wrong = joined.filter(~pl.col("n_words").eq_missing(pl.col("token_words"))
                          | ~pl.col("sent_id").eq_missing(pl.col("token_sent_id")))
    if not wrong.height:
        return
    row = wrong.sort("sent_index").row(0, named=True)  # the join's row order is not fixed
    if row["n_words"] is None:
        found = f"sentence {row['sent_index']} has tokens but no row in {SENTENCES_FILE}"
    elif row["token_words"] is None:
        found = f"sentence {row['sent_index']} has no tokens in {TOKENS_FILE}"
    else:
        found = (f"sentence {row['sent_index']} is {row['sent_id']!r} with {row['n_words']} "
                 f"words in {SENTENCES_FILE}, {row['token_sent_id']!r} with "
                 f"{row['token_words']} in {TOKENS_FILE}")
    raise InputError(directory, None, f"{TOKENS_FILE} and {SENTENCES_FILE} are not of one "
                     f"treebank: {found}")


def nonce_marker(directory: str | Path) -> dict | None:
    """The nonce stage's marker of the treebank in DIRECTORY (None for an original treebank)."""
    path = Path(directory) / TOKENS_FILE
    metadata = parquet_schema(path, "ingested treebank file").metadata or {}
    value = metadata.get(NONCE_MARKER_KEY)
    if value is None:
        return None
    try:
        marker = json.loads(value)
    except ValueError:
        marker = None
    if not isinstance(marker, dict):
        raise InputError(path, None, f"unreadable {NONCE_MARKER_KEY.decode()} metadata")
    return marker


def refuse_nonce_treebank(directory: str | Path, tokens: pl.DataFrame, what: str = "") -> None:
    """Bad input where the treebank in DIRECTORY (its tokens read) is a nonce treebank: by its
    marker or, for one written before the marker, by the nonce stage's columns."""
    directory = Path(directory)
    marker = nonce_marker(directory)
    found = [c for c in NONCE_TOKEN_COLUMNS if c in tokens.columns]
    if marker is None and not found:
        return
    made = (f"made by spudflow nonce, method {marker.get('method')!r} seed {marker.get('seed')!r}"
            if marker is not None else f"column(s) {', '.join(found)}")
    raise InputError(directory / TOKENS_FILE, None, f"a nonce treebank ({made}), not an "
                     f"original one{'; ' + what if what else ''}")


def read_original_treebank(directory: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """As read_treebank, for an original (ingested) treebank: a nonce treebank, which has the
    nonce stage's marker or columns, is bad input where the original is read."""
    directory = Path(directory)
    tokens, sentences = read_treebank(directory)
    refuse_nonce_treebank(directory, tokens)
    return tokens, sentences


def read_nonce_treebank(directory: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """As read_treebank, for a nonce treebank: the nonce stage's columns (the artifacts' declared
    extras, type-checked on read) must be there."""
    directory = Path(directory)
    tokens, sentences = read_treebank(directory)
    for frame, name, wanted in ((tokens, TOKENS_FILE, NONCE_TOKEN_COLUMNS),
                                (sentences, SENTENCES_FILE, NONCE_SENTENCE_COLUMNS)):
        missing = [c for c in wanted if c not in frame.columns]
        if missing:
            raise InputError(directory / name, None,
                             f"no column(s) {', '.join(missing)}: not a nonce treebank")
    return tokens, sentences


def _field(value: object) -> str:
    return "_" if value is None else str(value)


def conllu_lines(tokens: pl.DataFrame, sentences: pl.DataFrame) -> Iterator[str]:
    """CoNLL-U text, one sentence (comments, token lines, blank line) at a time."""
    tokens = tokens.sort(["sent_index", "token_index"])
    columns = [tokens.get_column(c).to_list() for c in CONLLU_FIELDS]
    rows = list(zip(*columns, strict=True))
    starts = tokens.get_column("sent_index").to_list()
    position = 0
    for sent_index, comments in zip(
        sentences.get_column("sent_index").to_list(),
        sentences.get_column("comments").to_list(),
        strict=True,
    ):
        out = list(comments or [])
        while position < len(rows) and starts[position] == sent_index:
            out.append("\t".join(_field(v) for v in rows[position]))
            position += 1
        yield "\n".join(out) + "\n\n"


def write_conllu(path: str | Path, tokens: pl.DataFrame, sentences: pl.DataFrame) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for chunk in conllu_lines(tokens, sentences):
            handle.write(chunk)
