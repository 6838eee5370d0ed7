"""Input functions and config lookups of the ingest stage's rules (rules/ingest.smk)."""

from __future__ import annotations

from spudflow.core.fetch_options import fetch_inputs, fetch_source, sha256_option
from spudflow.core.plan import Plan
from spudflow.core.plan_base import ingested
from spudflow.core.rules_support import memory_for_input
from spudflow.core.split_files import download_url, split_files

# An ingest job's mem_mb: peak RSS grows with the split's CoNLL-U (bench/bench_scale.py: 2.0 GB
# at 218 MB).
INGEST_MEMORY = memory_for_input(2000, 500, 10, "conllu")

class IngestPlan(Plan):
    def fetch_url(self, wildcards):
        """What fetch_treebank downloads: the split's URL or its mirrored copy."""
        return fetch_source(
            self.config, download_url(self.config, wildcards.treebank, wildcards.download)
        )

    def fetch_checksum(self, wildcards):
        return sha256_option(
            self.config, download_url(self.config, wildcards.treebank, wildcards.download)
        )

    def fetch_input(self, wildcards):
        return fetch_inputs(
            self.config, download_url(self.config, wildcards.treebank, wildcards.download)
        )

    def treebank_source(self, wildcards):
        """The local CoNLL-U files of a split, in order: the configured paths, or where its URLs are
        downloaded (core/split_files.py)."""
        return split_files(self.config, wildcards.treebank, wildcards.split)

    def training_share_args(self, wildcards):
        share = self.training_shares()[f"{wildcards.treebank}/{wildcards.split}"]
        rest = " --rest" if wildcards.part == "heldout" else ""
        return f"--fraction {share['share']} --seed {share['seed']}{rest}"

    def ingest_outputs(self):
        """The ingested splits (their statistics table is an aggregate output)."""
        return [ingested(tb, split) for tb, split in self.treebank_splits()]
