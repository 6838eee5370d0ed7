"""What the scoring and aggregate stages plan from the items stage: the items datasets the config
enables, their families and languages, and the config sections they are built from."""

from __future__ import annotations

from spudflow.core import nonce_plan
from spudflow.core.dataset_families import DATASET_FAMILIES, items_dataset_names
from spudflow.core.pairs_files import blimp_paradigm_files
from spudflow.core.plan_base import PlanBase


def items_file(dataset):
    return f"results/items/{dataset}.parquet"


class ItemsQueries(PlanBase):
    def pairs_section(self, name):
        """The config of one dataset family under `pairs:` ({} when the config leaves it out: not
        built)."""
        return self.config["pairs"].get(name, {})  # a family's section has no schema default

    def pairs_enabled(self, name):
        section = self.pairs_section(name)
        return bool(section) and section["enabled"]  # `enabled` defaults in the schema

    def spud_items_splits(self):
        """SPUD items dataset name -> (treebank, split) of the scored splits, as the nonce plan has
        them (spudflow.core.nonce_plan)."""
        return nonce_plan.spud_items_splits(self.config)

    def spud_items_versions(self):
        """(method, seed) of the nonce versions a SPUD items dataset holds beside each original
        sentence (spudflow.core.nonce_plan)."""
        return nonce_plan.spud_items_versions(self.config)

    def items_dataset_families(self):
        """Name -> family (its `pairs:` section, core/dataset_families.py) of every items dataset
        the config enables (results/items/{name}.parquet), in config order: SPUD items only of the
        splits that are scored. The family is set here, where the name is made: no rule reads a
        family off a name."""
        scored = self.spud_items_splits()
        return {
            name: family
            for name, family in items_dataset_names(self.config).items()
            if family != "spud" or name in scored
        }

    def items_datasets(self, family=None):
        """Names of the items datasets the config enables (of one family, or all), in config
        order."""
        return [d for d, f in self.items_dataset_families().items() if family in (None, f)]

    def table_datasets(self, feed):
        """Names of the items datasets whose items feed the tables of one family
        (core/outputs_registry.py `feed`): its own and those of the families that feed its
        tables (an acceptability set built from BLiMP feeds CoLA's), in config order."""
        return [d for d, f in self.items_dataset_families().items()
                if DATASET_FAMILIES[f].tables == feed]

    def items_dataset_language(self, dataset):
        """The language of an items dataset's sentences: its family's, or its treebank's (SPUD);
        None for an items file the items stage does not make (a user's own, whose items carry their
        language: the score command's --languages filters them item by item)."""
        families = self.items_dataset_families()
        if dataset not in families:
            return None
        language = DATASET_FAMILIES[families[dataset]].language
        return language or self.treebank_lang(self.spud_items_splits()[dataset][0])

    def blimp_files(self):
        """The paradigm files of pairs.blimp.paths (blimp_paradigm_files); none while BLiMP is
        not built."""
        if not self.pairs_enabled("blimp"):
            return []
        return blimp_paradigm_files(self.pairs_section("blimp"))
