"""The families of items datasets: each is one section of the config's `pairs:` (its name is the
family), whose builder fixes the sentences' language, except SPUD pairs, which have their
treebank's. The rules attach a dataset's family and language where the pairs stage makes its name
(rules/plumbing/pairs.smk), so a dataset's name never decides which tables it feeds; the
registry (core/outputs_registry.py) names the family that feeds each table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetFamily:
    name: str  # its section under `pairs:`
    language: str | None  # of every dataset of the family; None: its treebank's (SPUD)


DATASET_FAMILIES: dict[str, DatasetFamily] = {f.name: f for f in (
    DatasetFamily("spud", None),
    DatasetFamily("german_case", "de"),
    DatasetFamily("japanese_transitivity", "ja"),
    DatasetFamily("cola", "en"),
    DatasetFamily("blimp", "en"),
)}
