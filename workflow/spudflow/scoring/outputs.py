"""The two tables `spudflow score` writes (columns: core/artifacts.py; docs/scoring.md)."""

from __future__ import annotations

import pyarrow as pa

from spudflow.core.artifacts import ITEM_SCORES, TOKEN_SCORES

TOKEN_SCORES_FILE = "token_scores.parquet"
ITEM_SCORES_FILE = "item_scores.parquet"

# Defined in core/artifacts.py (docs/scoring.md renders them).
TOKEN_SCORES_SCHEMA = TOKEN_SCORES.schema()
ITEM_SCORES_SCHEMA = ITEM_SCORES.schema()


def table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema}, schema=schema)


def empty_columns(schema: pa.Schema) -> dict[str, list]:
    return {f.name: [] for f in schema}
