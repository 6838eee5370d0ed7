"""The two tables `spudflow score` writes (docs/scoring.md describes every column)."""

from __future__ import annotations

import pyarrow as pa

TOKEN_SCORES_FILE = "token_scores.parquet"
ITEM_SCORES_FILE = "item_scores.parquet"

TOKEN_SCORES_SCHEMA = pa.schema([
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("method", pa.string()),
    ("token_index", pa.int32()),    # 0-based among the sentence's tokens (special tokens excluded)
    ("token", pa.string()),         # as the tokenizer writes it (`Ġthe`, `##ing`, `▁the`), or word
    ("char_start", pa.int32()),     # the tokenizer's character offsets into the sentence
    ("char_end", pa.int32()),
    ("word_index", pa.int32()),     # 0-based index into the item's words, null for none
    ("logprob", pa.float64()),      # natural log
])

ITEM_SCORES_SCHEMA = pa.schema([
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("method", pa.string()),
    ("region", pa.string()),        # null: the whole sentence; else the named region's tokens
    ("logprob_sum", pa.float64()),
    ("n_tokens", pa.int32()),
    ("n_words", pa.int32()),
    ("ppl", pa.float64()),
    ("mean_logprob", pa.float64()),
    ("slor", pa.float64()),
    ("word_lp_min1", pa.float64()),
    ("normlp", pa.float64()),
    ("skipped", pa.string()),       # null when scored; `too_long` / `no_tokens` when left out
])


def table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema}, schema=schema)


def empty_columns(schema: pa.Schema) -> dict[str, list]:
    return {f.name: [] for f in schema}
