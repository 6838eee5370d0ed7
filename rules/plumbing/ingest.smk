# Input functions and config lookups of the ingest stage's rules (rules/ingest.smk).
from spudflow.core.split_files import download_url, split_files


def treebank_source(wildcards):
    """The local CoNLL-U files of a split, in order: the configured paths, or where its URLs are
    downloaded (core/split_files.py)."""
    return split_files(config, wildcards.treebank, wildcards.split)


def fetch_url(wildcards):
    return download_url(config, wildcards.treebank, wildcards.download)


def training_share_args(wildcards):
    share = training_shares()[f"{wildcards.treebank}/{wildcards.split}"]
    rest = " --rest" if wildcards.part == "heldout" else ""
    return f"--share {share['share']} --seed {share['seed']}{rest}"


def ingest_outputs():
    """The ingested splits (their statistics table is an aggregate output)."""
    return [ingested(tb, split) for tb, split in treebank_splits()]
