"""Training shares: a seeded share of a treebank split's sentences that the pipeline's own models
(n-grams, controls) train on and that every items dataset built from the split leaves out, so that
no model scores a sentence it was trained on (docs/controls.md, "Training data overlap")."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from spudflow.core.option_types import SHARE, schema_type

# polars only where a frame is cut: the share's names are read by every Snakemake process that
# plans, which needs no polars.
if TYPE_CHECKING:
    import polars as pl

# argparse type of a --fraction option: a number strictly between 0 and 1, as the config's
# training_shares.*.share
share_fraction = schema_type(SHARE, "fraction")

# A split's two parts as the config and the result paths both spell them: NAME@train (its
# training share) and NAME@heldout (the rest, the sentences the items keep). Configs written
# before there was one spelling say NAME:PART; split_part still reads them.
PARTS = ("train", "heldout")
PART_SEPARATOR = "@"
OLD_PART_SEPARATOR = ":"


def part_name(name: str, part: str) -> str:
    """`NAME@PART`: a part of a split (`test@train`, `en_pud/test@train`)."""
    return f"{name}{PART_SEPARATOR}{part}"


def split_part(value: str) -> tuple[str, str | None]:
    """(NAME, PART) of `NAME@PART` or the old `NAME:PART`, whatever PART is (the caller checks
    it); (value, None) for a value with neither."""
    for separator in (PART_SEPARATOR, OLD_PART_SEPARATOR):
        name, found, part = value.rpartition(separator)
        if found:
            return name, part
    return value, None


def text_entry(treebanks: dict, entry: str) -> tuple[str, str | None]:
    """What a training-text entry names, and its name: `split` and NAME for a configured
    `treebank/split`, `share` and NAME for `treebank/split@train` (its training share), `file`
    and ENTRY for anything else (a text file)."""
    name, part = split_part(entry)
    if part != "train":
        name = entry
    treebank, _, split = name.partition("/")
    if split not in (treebanks.get(treebank) or {}).get("splits", {}):
        return "file", entry
    return ("split" if name == entry else "share"), name


def sentence_key(sent_id: str | None, sent_index: int) -> str:
    """What the share is drawn over: the sentence's `# sent_id`, else its position."""
    return sent_id if sent_id is not None else f"#{sent_index}"


def training_share_keys(keys: list[str], share: float, seed: int) -> set[str]:
    """The round(share x n) distinct keys ranked first by SHA-256 of (seed, key).

    The rank depends on the key alone, not on file order, so treebanks with the same sentence
    ids (PUD's parallel treebanks) put the same sentences, translations of each other, into
    every language's share."""
    if not 0 < share < 1:
        raise ValueError(f"a training share must be between 0 and 1, not {share}")
    distinct = sorted(set(keys),
                      key=lambda k: (hashlib.sha256(f"{seed}\t{k}".encode()).digest(), k))
    return set(distinct[:round(share * len(distinct))])


def sentences_in_share(sentences: pl.DataFrame, share: float, seed: int) -> pl.Series:
    """Boolean per row of an ingested sentences table: is the sentence in the training share?"""
    import polars as pl

    keys = [sentence_key(sent_id, index) for sent_id, index in
            sentences.select("sent_id", "sent_index").iter_rows()]
    chosen = training_share_keys(keys, share, seed)
    return pl.Series("in_share", [key in chosen for key in keys], dtype=pl.Boolean)


def training_share(tokens: pl.DataFrame, sentences: pl.DataFrame, share: float,
                   seed: int, rest: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The tokens and sentences of the share (rest=True: of the other sentences, what the items
    keep), with their sent_index and lines as ingested."""
    import polars as pl

    in_share = sentences_in_share(sentences, share, seed)
    kept = sentences.filter(~in_share if rest else in_share)
    return tokens.filter(pl.col("sent_index").is_in(kept.get_column("sent_index").implode())), kept
