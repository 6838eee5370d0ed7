"""Syntactic words of an ingested treebank, per sentence, as the probe sees them.

Multiword-token ranges and empty nodes are left out: one row per CoNLL-U word line, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from spudflow.core.artifacts import TREEBANK_TOKENS
from spudflow.core.contract import read_artifact
from spudflow.core.errors import InputError
from spudflow.core.sampling import sample_indices
from spudflow.core.treebank import TOKENS_FILE


@dataclass
class SentenceWords:
    """The words of every sentence of a split, in sentence order."""

    sent_index: np.ndarray        # (S,) int64
    forms: list[list[str]]
    heads: list[np.ndarray] | None     # per sentence: 1-based head ids (0 = root)
    deprels: list[list[str]] | None
    upos: list[list[str]]
    lines: list[int]              # first word line of each sentence, for messages

    def __len__(self) -> int:
        return len(self.forms)

    def subset(self, picks) -> SentenceWords:
        """The sentences at positions `picks`, in that order."""
        return SentenceWords(
            self.sent_index[picks], [self.forms[i] for i in picks],
            None if self.heads is None else [self.heads[i] for i in picks],
            None if self.deprels is None else [self.deprels[i] for i in picks],
            [self.upos[i] for i in picks], [self.lines[i] for i in picks])

    def sample(self, n: int, seed: int) -> SentenceWords:
        """A seeded sample of n sentences, in treebank order. Drawn from the sentence count and
        seed only, so the original and nonce versions of a split (same sentences) get the same
        sample."""
        if n >= len(self):
            return self
        return self.subset(sample_indices(len(self), n, seed))


def read_words(directory: str | Path, need_trees: bool) -> SentenceWords:
    """Words of DIR/tokens.parquet; need_trees=True requires HEAD and DEPREL on every word."""
    path = Path(directory) / TOKENS_FILE
    words = (read_artifact(path, TREEBANK_TOKENS, ["sent_index", "token_index", "line",
                                                   "token_type", "form", "upos", "head", "deprel"])
             .filter(pl.col("token_type") == "word").sort(["sent_index", "token_index"]))
    if need_trees:
        bad = words.filter(pl.col("head").is_null() | pl.col("deprel").is_in(["_", ""])
                           | pl.col("deprel").is_null())
        if bad.height:
            raise InputError(path, bad.get_column("line")[0],
                             "word without HEAD/DEPREL: the probe needs annotated trees")
    grouped = words.group_by("sent_index", maintain_order=True).agg(
        "form", "upos", "head", "deprel", pl.col("line").first())
    return SentenceWords(
        sent_index=grouped.get_column("sent_index").to_numpy().astype(np.int64),
        forms=grouped.get_column("form").to_list(),
        heads=([np.asarray(h, dtype=np.int64) for h in grouped.get_column("head").to_list()]
               if need_trees else None),
        deprels=grouped.get_column("deprel").to_list() if need_trees else None,
        upos=grouped.get_column("upos").to_list(),
        lines=grouped.get_column("line").to_list(),
    )


def sentence_text(forms: list[str], leading_space: bool = False
                  ) -> tuple[str, list[int], list[int]]:
    """The words joined by single spaces (the model input), with each word's character span.
    Spaces rather than the treebank's SpaceAfter: nonce words change the forms, and a fixed
    rule keeps the original and nonce inputs comparable. `leading_space`: one space before the
    first word too (what a byte-level BPE tokenizer needs to mark it as a word start)."""
    starts, ends, position = [], [], int(leading_space)
    for form in forms:
        starts.append(position)
        ends.append(position + len(form))
        position += len(form) + 1
    return " " * leading_space + " ".join(forms), starts, ends
