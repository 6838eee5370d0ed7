"""The registry of items datasets: one entry per family, everything else follows from it.

A family is one section of the config's `pairs:` (its name). Its entry gives the language of its
sentences (None: its treebank's, SPUD), the artifact of its items (core/artifacts.py), the config
keys that name its source files, and its docs row. A family with a `builder` (a module of
spudflow/items/) makes one dataset of its own name, and from the entry come its rule
`items_NAME` (rules/items.smk), its command `spudflow items NAME-WITH-DASHES` (items/cli.py), its
config section in config/schema.yaml and its row in docs/items.md (both rendered by
`python -m spudflow.items.registry [--check] config/schema.yaml docs/items.md`). SPUD and the
Japanese variants, whose datasets are several per family, keep hand-written rules.

The rules attach a dataset's family and language where the items stage makes its name
(core/plan_items.py), so a dataset's name never decides which tables it feeds; the tables'
registry (core/outputs_registry.py) names the family that feeds each table."""

from __future__ import annotations

from dataclasses import dataclass

from spudflow.core.artifacts import (
    ITEMS_BLIMP,
    ITEMS_COLA,
    ITEMS_GERMAN_CASE,
    ITEMS_JAPANESE,
    ITEMS_SPUD,
)
from spudflow.core.contract import Artifact


@dataclass(frozen=True)
class DatasetFamily:
    name: str  # its section under `pairs:`
    language: str | None  # of every dataset of the family; None: its treebank's (SPUD)
    artifact: Artifact  # the definition its items are written and read by
    files: tuple[str, ...] = ()  # keys of its section naming source files (paths or URLs)
    builder: str | None = None  # spudflow.items.BUILDER: a generated rule and command
    datasets: str = ""  # the names of its datasets, as docs/items.md writes them
    summary: str = ""  # its docs row: what the default run builds
    mem_mb: int = 2000  # its generated rule's memory and runtime (minutes)
    runtime: int = 10
    # the family whose tables its items feed (core/outputs_registry.py `feed`), when not its own:
    # an acceptability set built from BLiMP's sentences feeds the CoLA tables
    feeds: str | None = None
    # what its items are, said beside the tables of the family it feeds (the front page)
    described: str = ""

    @property
    def tables(self) -> str:
        """The family whose tables its items feed."""
        return self.feeds or self.name

    @property
    def command(self) -> str:
        """Its subcommand of `spudflow items`."""
        return self.name.replace("_", "-")


FAMILIES: tuple[DatasetFamily, ...] = (
    DatasetFamily("spud", None, ITEMS_SPUD, datasets="spud_{treebank}_{split}",
                  summary="one original + 4 nonce versions per sentence (when `nonce:` is "
                  "configured)"),
    DatasetFamily("german_case", "de", ITEMS_GERMAN_CASE, ("templates", "sentences"),
                  builder="german_case_command", summary="7,200 (50 templates x 144)"),
    DatasetFamily("japanese_transitivity", "ja", ITEMS_JAPANESE, ("lexicon", "corpus"),
                  datasets="japanese_transitivity_{base,rare,longer,relative}",
                  summary="400, 400, 400 and 2,352 (samples of 200 pairs)"),
    DatasetFamily("cola", "en", ITEMS_COLA, ("files", "phenomena"), builder="cola",
                  summary="not built (the files are not vendored)"),
    DatasetFamily("blimp", "en", ITEMS_BLIMP, ("paths",), builder="blimp",
                  summary="13,400 (the vendored 67 x 100 pairs)", mem_mb=4000, runtime=20),
    DatasetFamily("blimp_acceptability", "en", ITEMS_COLA, ("paths",),
                  builder="blimp_acceptability", feeds="cola",
                  described="an acceptability set built from BLiMP's sentences (each sentence "
                  "of a minimal pair labelled: the good one acceptable, the bad one not; its "
                  "paradigm the source), not CoLA itself, which is not vendored",
                  summary="670, the sentences of BLiMP's sample of 335 pairs, for the CoLA tables",
                  mem_mb=4000, runtime=20),
)
DATASET_FAMILIES: dict[str, DatasetFamily] = {f.name: f for f in FAMILIES}
# The families whose one dataset is built by a generated rule and command.
BUILT_FAMILIES: dict[str, DatasetFamily] = {f.name: f for f in FAMILIES if f.builder}
# The artifact of each family's items by its name (`items.FAMILY`).
ITEMS_ARTIFACTS: dict[str, Artifact] = {f.artifact.name: f.artifact for f in FAMILIES}

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


def family_dataset_names(config: dict, family: DatasetFamily) -> list[str]:
    """The datasets an enabled family makes: its own name, or (SPUD, Japanese) several."""
    if family.name == "spud":
        return list(spud_dataset_splits(config))
    if not _enabled(config, family.name):
        return []
    if family.name == "japanese_transitivity":
        chosen = config["pairs"]["japanese_transitivity"].get("datasets") or []
        return [f"japanese_transitivity_{v}" for v in JAPANESE_VARIANTS if v in chosen]
    return [family.name]


def items_dataset_names(config: dict) -> dict[str, str]:
    """Name -> family of every items dataset the config's `pairs:` sections can make, SPUD
    splits that are not scored included, in registry order (SPUD in config order)."""
    return {name: family.name for family in FAMILIES
            for name in family_dataset_names(config, family)}
