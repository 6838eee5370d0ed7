# Helpers shared by every rules file: config lookups, input functions, wildcard constraints.
import os
from pathlib import Path

SPUDFLOW_SOURCE = Path(workflow.basedir) / "workflow" / "spudflow"
# A stage's code: its modules and the data files it ships (pyproject's package-data).
STAGE_CODE_SUFFIXES = (".py", ".tsv", ".yaml", ".txt")


wildcard_constraints:
    treebank=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    split=r"[A-Za-z0-9_-]+",


def stage_code(*stages):
    """Source and data files of the stages a rule runs, plus the shared core and CLI.

    Listed as inputs so that a change to a stage's code reruns that stage's jobs and their
    dependents (Snakemake itself tracks only the shell text). Paths are relative to the working
    directory: Snakemake records each job's set of input paths, so absolute ones would rerun
    everything after the checkout moves."""
    files = [SPUDFLOW_SOURCE / "cli.py"]
    for stage in (*stages, "core"):
        files += sorted(
            f for f in (SPUDFLOW_SOURCE / stage).rglob("*") if f.suffix in STAGE_CODE_SUFFIXES
        )
    return [os.path.relpath(f) for f in files]


def treebank_splits():
    """(treebank, split) pairs of the config, in config order."""
    return [(tb, split) for tb, spec in config["treebanks"].items() for split in spec["splits"]]


def treebank_lang(treebank):
    return config["treebanks"][treebank]["lang"]


def is_url(location):
    return location.split(":", 1)[0] in ("http", "https", "ftp", "file")


def split_location(treebank, split):
    return config["treebanks"][treebank]["splits"][split]


def treebank_source(wildcards):
    """The local CoNLL-U file of a split: the configured path, or where its URL is downloaded."""
    location = split_location(wildcards.treebank, wildcards.split)
    if not is_url(location):
        return location
    suffix = ".conllu.gz" if location.endswith(".gz") else ".conllu"
    return f"resources/downloads/{wildcards.treebank}/{wildcards.split}{suffix}"


def ingested(treebank, split):
    return f"results/ingest/{treebank}/{split}/tokens.parquet"


def all_outputs():
    outputs = ["results/tables/treebank_stats.parquet"]
    outputs += [ingested(tb, split) for tb, split in treebank_splits()]
    return outputs
