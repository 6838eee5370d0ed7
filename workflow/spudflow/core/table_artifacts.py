"""The result tables (results/tables/NAME.parquet, and their CSV / Markdown / LaTeX copies) that
the aggregate, ingest and nonce stages write and the figure commands read: columns, types and
nullability, defined once (the stage artifacts are in core/artifacts.py). `write_table` checks a
table against its definition before writing; the docs' table schemas are rendered from these
(docs/aggregate.md, docs/nonce.md)."""

from __future__ import annotations

from spudflow.core.artifacts import (
    F64,
    I32,
    I64,
    NONCE_REASONS,
    NONCE_STATS,
    STAGE_ARTIFACTS,
    STR,
    TREEBANK_STATS,
    col,
)
from spudflow.core.contract import Artifact, Column

TABLE_LABELS = (
    col("treebank", STR, "the treebank's name in the config"),
    col("split", STR, "the split's name in the config"),
    col("language", STR, "the treebank's language code"),
    col("method", STR, "nonce method (`spud`, `pos`)"),
    col("seed", I32, "nonce seed"),
)


def table(name: str, producer: str, doc: str, columns: tuple[Column, ...], **options) -> Artifact:
    return Artifact(name, producer, columns=columns, open=options.pop("open", False),
                    doc=f"`results/tables/{name}.*`: {doc}", **options)


# --- nonce and treebank tables ----------------------------------------------------------------
NONCE_REPLACEMENT_RATIO = table("nonce_replacement_ratio", "table-nonce-ratio", (
    "one row per treebank, split, method and seed (paper Table 7 layout); after `targeted`, "
    "one float64 column per replaced UPOS present (`ADJ`, `ADV`, `NOUN`, `PROPN`, `VERB`): the "
    "share of the words of that UPOS replaced."), columns=(
    *TABLE_LABELS,
    col("words", I64, "words (kind `word`)"),
    col("targeted", I64, "words of a replaced UPOS"),
    col("replaced", I64, "words replaced"),
    col("total", F64, "replaced / all words, function words included"),
    *[col(f"unreplaced_{reason}", I64, f"targeted words kept: {reason}")
      for reason in NONCE_REASONS],
    col("adjusted", I64, "words whose form a language rule changed (a → an, le → l')"),
), open=True, keep_order=True)

NONCE_TYPE_TOKEN_RATIO = table("nonce_type_token_ratio", "table-nonce-ttr", (
    "type-token ratio of word forms in the original and the nonce treebank (paper Table 8 "
    "layout)."), columns=(
    *TABLE_LABELS,
    col("words", I64, "words (kind `word`)"),
    col("types_orig", I64, "distinct word forms (case-sensitive) before"),
    col("types_nonce", I64, "distinct word forms (case-sensitive) after"),
    col("ttr_orig", F64, "types_orig / words"),
    col("ttr_nonce", F64, "types_nonce / words"),
))

# --- aggregate tables -------------------------------------------------------------------------
# (generated below)

AGGREGATE_TABLES = ()

# Tables that stack a stage artifact unchanged keep its definition.
TABLES: dict[str, Artifact] = {
    "treebank_stats": TREEBANK_STATS,
    "nonce_replacements": NONCE_STATS,
    **{a.name: a for a in (NONCE_REPLACEMENT_RATIO, NONCE_TYPE_TOKEN_RATIO, *AGGREGATE_TABLES)},
}
TABLE_ARTIFACTS = (NONCE_REPLACEMENT_RATIO, NONCE_TYPE_TOKEN_RATIO, *AGGREGATE_TABLES)
ALL_ARTIFACTS = STAGE_ARTIFACTS + TABLE_ARTIFACTS
