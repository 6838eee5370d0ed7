"""The ingested treebank format: DIR/tokens.parquet and DIR/sentences.parquet.

Every stage that reads or writes treebanks goes through this module, so the columns are defined
once (see docs/artifacts.md). Field strings are stored exactly as written in the CoNLL-U file
(`_` included), which makes CoNLL-U -> Parquet -> CoNLL-U byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from spudflow.core.atomic import atomic_outputs
from spudflow.core.input_files import read_parquet_checked, require_directory

TOKENS_FILE = "tokens.parquet"
SENTENCES_FILE = "sentences.parquet"

# The ten CoNLL-U fields, as (column name, stored as string).
CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")

TOKEN_SCHEMA = pa.schema([
    ("sent_index", pa.int32()),      # 0-based position of the sentence in the file
    ("sent_id", pa.string()),        # from `# sent_id = …`, null when the sentence has none
    ("token_index", pa.int32()),     # 0-based position of the line within its sentence
    ("line", pa.int32()),            # 1-based line number in the source file
    ("kind", pa.string()),           # "word", "mwt" (range such as 3-4) or "empty" (such as 8.1)
    ("id", pa.string()),             # the ID field as written
    ("word_index", pa.int32()),      # word: its ID; mwt: first ID of the range; empty: integer part
    ("mwt_end", pa.int32()),         # mwt: last ID of the range; otherwise null
    ("empty_minor", pa.int32()),     # empty: the part after the dot; otherwise null
    ("form", pa.string()),
    ("lemma", pa.string()),
    ("upos", pa.string()),
    ("xpos", pa.string()),
    ("feats", pa.string()),
    ("head", pa.int32()),            # null where the field is `_` (mwt and empty rows)
    ("deprel", pa.string()),
    ("deps", pa.string()),
    ("misc", pa.string()),
])

SENTENCE_SCHEMA = pa.schema([
    ("sent_index", pa.int32()),
    ("sent_id", pa.string()),
    ("text", pa.string()),               # from `# text = …`, null when absent
    ("comments", pa.list_(pa.string())),  # every comment line, in order, as written
    ("newdoc", pa.string()),             # `# newdoc [id = X]`: X, "" without id, null when absent
    ("newpar", pa.string()),             # likewise for `# newpar`
    ("line", pa.int32()),                # 1-based line number of the sentence's first line
    ("n_words", pa.int32()),
    ("n_tokens", pa.int32()),            # surface tokens: words outside MWTs plus MWT ranges
])


def _cast(df: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """Required columns in schema order, then any extra columns a stage added (in their order)."""
    table = df.to_arrow()
    names = [f.name for f in schema]
    missing = [n for n in names if n not in table.column_names]
    if missing:
        raise ValueError(f"treebank table lacks columns {missing}")
    extra = [n for n in table.column_names if n not in names]
    columns = [table.column(n).cast(schema.field(n).type) for n in names]
    columns += [table.column(n) for n in extra]
    fields = list(schema) + [table.schema.field(n) for n in extra]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def write_parquet(table: pa.Table | pl.DataFrame, path: str | Path) -> None:
    """Deterministic Parquet: fixed compression, no timestamps, so same data gives same bytes."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    pq.write_table(table, str(path), compression="zstd", write_statistics=True)


def write_treebank(directory: str | Path, tokens: pl.DataFrame, sentences: pl.DataFrame) -> None:
    """Write both tables into DIRECTORY, both or neither. Columns beyond the schema (such as the
    nonce stage's `orig_form`) are kept after the documented ones."""
    directory = Path(directory)
    token_table = _cast(tokens, TOKEN_SCHEMA)
    sentence_table = _cast(sentences, SENTENCE_SCHEMA)
    with atomic_outputs() as out:
        write_parquet(token_table, out.path(directory / TOKENS_FILE))
        write_parquet(sentence_table, out.path(directory / SENTENCES_FILE))


def read_treebank(directory: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both tables of an ingested (or nonce) treebank; a missing directory or file, or a table
    lacking a documented column, is bad input."""
    directory = require_directory(directory, "an ingested treebank")
    return (read_parquet_checked(directory / TOKENS_FILE, "an ingested treebank's token table",
                                 TOKEN_SCHEMA.names),
            read_parquet_checked(directory / SENTENCES_FILE,
                                 "an ingested treebank's sentence table", SENTENCE_SCHEMA.names))


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
