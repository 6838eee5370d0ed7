"""Input functions and config lookups of the items stage's rules (rules/items.smk)."""

from __future__ import annotations

import importlib
import shlex
from pathlib import Path

from spudflow.core.dataset_families import BUILT_FAMILIES, JAPANESE_VARIANTS
from spudflow.core.fetch_options import fetch_inputs, fetch_source, sha256_option
from spudflow.core.pairs_files import URL_KEYS, family_downloads
from spudflow.core.plan import Plan
from spudflow.core.plan_base import ingested, quoted, sample_args
from spudflow.core.plan_nonce import nonce_tokens
from spudflow.core.rules_support import cli_options, memory_for_input

# The families with files that may be given by URL: fetch_pairs_file's `family` wildcard.
PAIRS_URL_FAMILIES = "|".join(URL_KEYS)
JAPANESE_COUNTED_LEXICON = "results/lexicons/japanese_verb_pairs.tsv"


def spud_nonce_options(wildcards, input):
    """`--nonce DIR` options for the nonce versions' tokens.parquet files."""
    return " ".join(f"--nonce {shlex.quote(str(Path(f).parent))}" for f in input.nonce)


# A SPUD items job's mem_mb: peak RSS grows with the split and its nonce versions
# (bench/bench_scale.py: 5.4 GB at 94 MB of tokens.parquet).
SPUD_ITEMS_MEMORY = memory_for_input(2000, 500, 70)


def builder(family: str):
    """The builder module of a family with a generated rule (core/dataset_families.py)."""
    return importlib.import_module(f"spudflow.items.{BUILT_FAMILIES[family].builder}")


class ItemsPlan(Plan):
    def builder_inputs(self, family):
        """The input function of a family's generated rule: its builder's named inputs."""
        return lambda wildcards: builder(family).inputs(self.pairs_section(family))

    def builder_params(self, family):
        """The params of a family's generated rule: its subcommand of `spudflow items` and its
        arguments before `--out` (a function of the wildcards only, so that a change of them
        reruns the job). The subcommand is a param, not part of the shell string, because the
        shell string is formatted when the job runs, after the rules' loop has moved on."""
        return {"command": BUILT_FAMILIES[family].command,
                "arguments": lambda wildcards: " ".join(
                    builder(family).arguments(self.pairs_section(family)))}

    def pairs_download_url(self, wildcards):
        """The configured URL of a fetch_pairs_file download (core/pairs_files.py)."""
        return family_downloads(self.config, wildcards.family)[wildcards.name].url

    def pairs_file_url(self, wildcards):
        """What fetch_pairs_file downloads: the URL or its mirrored copy (config fetch.mirror)."""
        return fetch_source(self.config, self.pairs_download_url(wildcards))

    def pairs_file_checksum(self, wildcards):
        return sha256_option(self.config, self.pairs_download_url(wildcards))

    def pairs_file_input(self, wildcards):
        return fetch_inputs(self.config, self.pairs_download_url(wildcards))

    def japanese_variants(self):
        if not self.pairs_enabled("japanese_transitivity"):
            return []
        chosen = self.pairs_section("japanese_transitivity")["datasets"]
        return [v for v in JAPANESE_VARIANTS if v in chosen]

    def japanese_ranking_args(self, wildcards):
        """How the Japanese items rank verb pairs (`--rank-by`, `--min-count`)."""
        section = self.pairs_section("japanese_transitivity")
        return quoted(cli_options(section, ("rank_by", "min_count")))

    def japanese_sample_args(self, wildcards):
        """The sample of one Japanese variant's items (pairs.japanese_transitivity.sample)."""
        return sample_args(self.pairs_section("japanese_transitivity")["sample"][wildcards.variant])

    def japanese_lexicon(self):
        """The verb pair lexicon the Japanese items rank by: counted in the configured corpus
        (pairs.japanese_transitivity.corpus, rule japanese_verb_counts), or the lexicon file itself,
        whose counts are those its header names."""
        section = self.pairs_section("japanese_transitivity")
        return JAPANESE_COUNTED_LEXICON if section["corpus"] else section["lexicon"]

    def spud_items_input(self, wildcards):
        datasets = self.spud_items_splits()
        if wildcards.dataset not in datasets:
            raise ValueError(
                f"{wildcards.dataset} is not a SPUD items dataset of the config "
                f"(known: {', '.join(datasets) or 'none'})"
            )
        treebank, split = datasets[wildcards.dataset]
        return {
            "orig": ingested(treebank, split),
            "nonce": nonce_tokens(treebank, split, self.spud_items_versions()),
        }

    def spud_leave_out_args(self, wildcards):
        """`--leave-out-share`: the split's training share (config training_shares) is not
        scored."""
        treebank, split = self.spud_items_splits()[wildcards.dataset]
        share = self.training_shares().get(f"{treebank}/{split}")
        if not share:
            return ""
        return f"--leave-out-share {share['share']} --share-seed {share['seed']}"
