"""An acceptability set from BLiMP's sentences, for the CoLA analysis (aggregate/cola.py) where
CoLA itself is not at hand (it is not vendored; BLiMP is, CC BY 4.0).

Each sentence of a BLiMP pair becomes a labelled sentence: the good one acceptable (1), the bad
one not (0). The items are CoLA's (items.cola), so the CoLA tables read them unchanged: `split` is
`blimp` (or the pair's field or phenomenon, `--split-by`), `source` the paradigm (UID, so
cola_sources gives the MCC per paradigm), `line` the pair's line in its paradigm file,
`original_mark` null, `phenomenon_set` false. The sentences of one pair share its group
(`{dataset}:{UID}:{pairID}`), so `--sample N` draws N pairs exactly as `items blimp` does: with
the same files, N and seed both datasets hold the same sentences (and the score cache, keyed by
text, scores them once).

An acceptability set holds each sentence once, with one label. A sentence that several pairs
contain (full BLiMP repeats some) is kept at its first occurrence in canonical order (files, then
lines, good before bad) and its later ones are left out; a sentence that is good in one pair and
bad in another has no label an acceptability set can claim, so every occurrence of it is left
out. Both are counted in the log, with an example, never dropped silently.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import ITEMS_COLA
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.pairs_files import blimp_paradigm_files
from spudflow.core.shell_args import quoted, sample_args
from spudflow.items.blimp import sampled_pairs
from spudflow.items.table import ItemsBuilder

log = get_logger(__name__)

VERSIONS = (("good", 1), ("bad", 0))
# --split-by: the CoLA split of every sentence (one split, as a CoLA dev set), or the pair's
# BLiMP field or phenomenon (each cross-validated on its own by the CoLA tables).
SPLITS = {"none": None, "field": "field", "linguistics_term": "linguistics_term"}
ONE_SPLIT = "blimp"


def labelled_sentences(records: list[dict]) -> tuple[list[tuple[dict, str, int]], dict]:
    """(record, version, label) of every sentence kept, in canonical order, and the counts of
    those left out: `repeated` (a later occurrence, same label) and `conflicting` (occurrences of
    sentences labelled both ways), with an example of each."""
    labels: dict[str, set[int]] = {}
    for record in records:
        for version, label in VERSIONS:
            labels.setdefault(record[f"sentence_{version}"], set()).add(label)
    kept, seen = [], set()
    left_out: Counter = Counter()
    examples: dict[str, str] = {}
    for record in records:
        for version, label in VERSIONS:
            sentence = record[f"sentence_{version}"]
            reason = ("conflicting" if len(labels[sentence]) > 1
                      else "repeated" if sentence in seen else None)
            seen.add(sentence)
            if reason:
                left_out[reason] += 1
                examples.setdefault(reason, f"{record['UID']}:{record['pairID']} {version}: "
                                    f"{sentence!r}")
                continue
            kept.append((record, version, label))
    return kept, {"counts": left_out, "examples": examples}


def build_blimp_acceptability_items(paths: list[str | Path], dataset: str = "blimp_acceptability",
                                    sample: int | None = None, seed: int = 0,
                                    split_by: str = "none") -> pa.Table:
    """CoLA items of the sentences of every pair (or of a seeded sample of `sample` pairs)."""
    records = sampled_pairs(paths, sample, seed)
    kept, left_out = labelled_sentences(records)
    log.info("%d sentences of %d pairs", 2 * len(records), len(records))
    for reason, what in (("repeated", "repeated sentences left out (a later occurrence of a "
                          "sentence kept at its first)"),
                         ("conflicting", "occurrences left out of sentences labelled both good "
                          "and bad")):
        if left_out["counts"][reason]:
            log.warning("%d %s; e.g. %s", left_out["counts"][reason], what,
                        left_out["examples"][reason])
    if not kept:
        raise InputError(paths[0], None, "no sentence with one label is left")
    column = SPLITS[split_by]
    builder = ItemsBuilder(dataset, "en", ITEMS_COLA)
    for record, version, label in kept:
        group = f"{dataset}:{record['UID']}:{record['pairID']}"
        builder.add(f"{group}:{version}", group, record[f"sentence_{version}"], label,
                    split=record[column] if column else ONE_SPLIT, source=record["UID"],
                    phenomenon_set=False, original_mark=None, line=record["line"])
    log.info("%d items", len(kept))
    return builder.table()


# Its rule and command, generated from its registry entry (core/dataset_families.py).
HELP = "BLiMP's sentences as an acceptability set, for the CoLA tables"
DESCRIPTION = ("Each sentence of a BLiMP pair is one CoLA item: the good one acceptable (1), the "
               "bad one not (0); source is the paradigm. --sample draws pairs as `items blimp` "
               "does. A sentence repeated over pairs is kept once; one labelled both ways is left "
               "out; both are counted in the log.")
CONFIG = {
    "paths": {"description": "BLiMP paradigm .jsonl files or directories of them", "type": "array",
              "minItems": 1, "items": {"type": "string"}},
    "split_by": {"description": "the CoLA split of each sentence: none (one split, `blimp`), or "
                 "the pair's BLiMP field or linguistics_term", "enum": list(SPLITS),
                 "default": "none"},
}


def add_arguments(parser) -> None:
    parser.add_argument("paths", type=Path, nargs="+",
                        help="paradigm .jsonl files or directories")
    parser.add_argument("--split-by", choices=list(SPLITS), default="none",
                        help="the CoLA split: none (one split, `blimp`, the default), field or "
                        "linguistics_term (the pair's)")


def build(*, paths: list[Path], dataset: str, sample: int | None, seed: int,
          split_by: str) -> pa.Table:
    return build_blimp_acceptability_items(paths, dataset, sample, seed, split_by)


def inputs(section: dict) -> dict:
    return {"jsonl": blimp_paradigm_files(section)}


def arguments(section: dict) -> list[str]:
    return [quoted(blimp_paradigm_files(section)), sample_args(section["sample"]),
            f"--split-by {section['split_by']}"]
