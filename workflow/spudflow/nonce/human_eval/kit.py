"""Export: a seeded sample of triplets (original, SPUD, posfree) of one treebank split, and per
annotator the items in a seeded order with the two nonce sentences in a seeded order (A/B)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import polars as pl

from spudflow.core.artifacts import NONCE_STATS
from spudflow.core.contract import read_artifact
from spudflow.core.errors import InputError
from spudflow.core.sampling import sample_indices
from spudflow.core.treebank import read_nonce_treebank, read_original_treebank
from spudflow.nonce.human_eval import COMPARED

ANNOTATOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")  # also a file name


def check_annotators(annotators: list[str]) -> list[str]:
    for name in annotators:
        if not ANNOTATOR.match(name):
            raise InputError("--annotators", None, f"{name!r}: letters, digits, _ and - only")
    if len(set(annotators)) != len(annotators):
        raise InputError("--annotators", None, "an annotator is named twice")
    return annotators


def _sentences(directory: Path, nonce: bool = False) -> pl.DataFrame:
    _, sentences = (read_nonce_treebank if nonce else read_original_treebank)(directory)
    return sentences.sort("sent_index")


def _nonce_labels(directory: Path, method: str) -> dict[str, str]:
    """treebank, split and language of a nonce directory made with METHOD (its statistics)."""
    stats = read_artifact(directory / "replacement_stats.parquet", NONCE_STATS)
    if stats.height == 0 or stats["method"].unique().to_list() != [method]:
        raise InputError(directory / "replacement_stats.parquet", None,
                         f"not a nonce treebank of method {method!r} "
                         f"(methods: {', '.join(map(str, stats['method'].unique().sort()))})")
    return stats.select("treebank", "split", "language").row(0, named=True)


def load_triplets(orig: Path, nonce: dict[str, Path]) -> tuple[pl.DataFrame, dict[str, str]]:
    """One row per sentence: sent_index, sent_id, original, spud, posfree, short; and the
    labels (treebank, split, language). The nonce treebanks must be versions of ORIG."""
    original = _sentences(orig)
    frame = original.select("sent_index", "sent_id", original=pl.col("text"))
    labels: dict[str, str] | None = None
    for method in COMPARED:
        directory = nonce[method]
        sentences = _sentences(directory, nonce=True)
        same = (sentences.height == original.height and sentences["sent_id"].equals(
            original["sent_id"]) and sentences["orig_text"].equals(original["text"]))
        if not same:
            raise InputError(directory / "sentences.parquet", None,
                             f"not a nonce version of {orig} (its sentences differ)")
        frame = frame.with_columns(sentences["text"].alias(method))
        if method == "spud":
            frame = frame.with_columns(sentences["short"])
        method_labels = _nonce_labels(directory, method)
        if labels is not None and method_labels != labels:
            raise InputError(directory / "replacement_stats.parquet", None,
                             f"labels {method_labels} differ from the other nonce version's "
                             f"{labels}")
        labels = method_labels
    return frame, labels


def sample_triplets(triplets: pl.DataFrame, n: int, seed: int, source: Path) -> pl.DataFrame:
    """A seeded uniform sample of n triplets among the sentences of 4 words or more (the paper's
    sentence length floor), in treebank order."""
    eligible = triplets.filter(~pl.col("short"))
    if n > eligible.height:
        raise InputError(source, None, f"{n} triplets asked for, but the split has only "
                         f"{eligible.height} sentences of 4 words or more")
    sample = eligible[sample_indices(eligible.height, n, seed).tolist()]
    for column in ("original", *COMPARED):
        missing = sample.filter(pl.col(column).is_null())
        if missing.height:
            raise InputError(source, None, f"sentence {missing['sent_id'][0]!r} has no "
                             f"{column} text")
    return sample


def answer_key(sample: pl.DataFrame, annotators: list[str], seed: int,
               labels: dict[str, str]) -> pl.DataFrame:
    """Per annotator and item (the row of the annotator's sheet): the sentence and which method
    is sentence A and which is B. Each annotator's order and A/B draws come from
    random.Random(f"{seed}\\x1f{annotator}") (string seeds are hashed with SHA-512: the same
    stream on every platform)."""
    rows = []
    records = sample.to_dicts()
    for annotator in annotators:
        rng = random.Random(f"{seed}\x1f{annotator}")
        order = rng.sample(range(len(records)), len(records))
        for item, position in enumerate(order, 1):
            record = records[position]
            first, second = COMPARED if rng.random() < 0.5 else COMPARED[::-1]
            rows.append({**labels, "seed": seed, "annotator": annotator, "item": item,
                         "sent_index": record["sent_index"], "sent_id": record["sent_id"],
                         "original": record["original"], "spud": record["spud"],
                         "posfree": record["posfree"], "sentence_a": first,
                         "sentence_b": second})
    return pl.DataFrame(rows, schema_overrides={"sent_id": pl.String})
