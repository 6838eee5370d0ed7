"""The families of items datasets: each is one section of the config's `pairs:` (its name is the
family), whose builder fixes the sentences' language, except SPUD pairs, which have their
treebank's. The rules attach a dataset's family and language where the pairs stage makes its name
(spudflow/pairs/plan.py), so a dataset's name never decides which tables it feeds; the
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

JAPANESE_VARIANTS = ("base", "rare", "longer", "relative")


def _enabled(config: dict, family: str) -> bool:
    return bool((config.get("pairs") or {}).get(family, {}).get("enabled"))


def spud_dataset_list(config: dict) -> list[tuple[str, str, str]]:
    """(spud_{treebank}_{split}, treebank, split) of every split of pairs.spud.treebanks (all
    treebanks when null), scored or not, in config order; none without a `nonce:` section (no
    nonce versions to pair). A treebank that is not configured has no splits here (the config
    check names it, and two splits that give one name)."""
    if not _enabled(config, "spud") or "nonce" not in config:
        return []
    chosen = config["pairs"]["spud"].get("treebanks") or list(config["treebanks"])
    return [(f"spud_{tb}_{split}", tb, split) for tb, spec in config["treebanks"].items()
            if tb in chosen for split in spec["splits"]]


def spud_dataset_splits(config: dict) -> dict[str, tuple[str, str]]:
    """spud_dataset_list() as name -> (treebank, split)."""
    return {name: (tb, split) for name, tb, split in spud_dataset_list(config)}


def items_dataset_names(config: dict) -> dict[str, str]:
    """Name -> family of every items dataset the config's `pairs:` sections can make, SPUD
    splits that are not scored included, in config order."""
    names = dict.fromkeys(spud_dataset_splits(config), "spud")
    if _enabled(config, "german_case"):
        names["german_case"] = "german_case"
    if _enabled(config, "japanese_transitivity"):
        chosen = config["pairs"]["japanese_transitivity"].get("datasets") or []
        names.update({f"japanese_transitivity_{v}": "japanese_transitivity"
                      for v in JAPANESE_VARIANTS if v in chosen})
    for family in ("cola", "blimp"):
        if _enabled(config, family):
            names[family] = family
    return names
