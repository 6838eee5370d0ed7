"""The kinds of items datasets: each is one section of the config's `pairs:` (its name is the
kind), whose builder fixes the sentences' language, except SPUD pairs, which have their
treebank's. The rules attach a dataset's kind and language where the pairs stage makes its name
(rules/plumbing/pairs.smk), so a dataset's name never decides which tables it feeds; the
registry (core/outputs_registry.py) names the kind that feeds each table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetKind:
    name: str  # its section under `pairs:`
    language: str | None  # of every dataset of the kind; None: its treebank's (SPUD)


DATASET_KINDS: dict[str, DatasetKind] = {k.name: k for k in (
    DatasetKind("spud", None),
    DatasetKind("german_case", "de"),
    DatasetKind("japanese_transitivity", "ja"),
    DatasetKind("cola", "en"),
    DatasetKind("blimp", "en"),
)}
