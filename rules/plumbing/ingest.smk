# Input functions and config lookups of the ingest stage's rules (rules/ingest.smk).
from spudflow.core.fetch_options import fetch_inputs, fetch_source, sha256_option
from spudflow.core.split_files import download_url, split_files


def fetch_url(wildcards):
    """What fetch_treebank downloads: the split's URL or its mirrored copy."""
    return fetch_source(config, download_url(config, wildcards.treebank, wildcards.download))


def fetch_checksum(wildcards):
    return sha256_option(config, download_url(config, wildcards.treebank, wildcards.download))


def fetch_input(wildcards):
    return fetch_inputs(config, download_url(config, wildcards.treebank, wildcards.download))


def treebank_source(wildcards):
    """The local CoNLL-U files of a split, in order: the configured paths, or where its URLs are
    downloaded (core/split_files.py)."""
    return split_files(config, wildcards.treebank, wildcards.split)


def training_share_args(wildcards):
    share = training_shares()[f"{wildcards.treebank}/{wildcards.split}"]
    rest = " --rest" if wildcards.part == "heldout" else ""
    return f"--fraction {share['share']} --seed {share['seed']}{rest}"


def ingest_outputs():
    """The ingested splits (their statistics table is an aggregate output)."""
    return [ingested(tb, split) for tb, split in treebank_splits()]
