# What every stage's rules share: wildcard constraints, code versions, treebank and training-text
# lookups, config-to-option plumbing and the files of the registry's tables and figures
# (core/outputs_registry.py). Each stage's own input functions live in rules/plumbing/<stage>.smk,
# which rules/<stage>.smk includes. Config defaults are filled in from config/schema.yaml by the
# Snakefile's validate(), so the rules read config keys without defaults of their own. Every
# rule's `mem_mb` and `runtime` go through grows_with_attempt, so that a retried job (a SLURM
# job killed for memory or time) asks for more (docs/running.md, "Retries, requeue ...").
import shlex
from pathlib import Path

from spudflow.core.model_source import is_local_path
from spudflow.core.outputs_registry import rule_outputs
from spudflow.core.rules_support import (
    cli_options,
    code_version,
    grows_with_attempt,
    input_mb,
    memory_for_input,
)
from spudflow.core.training_share import split_part


wildcard_constraints:
    treebank=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    split=r"[A-Za-z0-9_-]+",
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    ngram=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    control=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    method=r"spud|posfree|pos",
    seed=r"[0-9]+",
    shard=r"[1-9][0-9]*",
    part=r"train|heldout",
    shards=r"[1-9][0-9]*",


def stage_code(stage):
    """A fingerprint of the stage's code, core's and the CLI's, for a rule's `params:`: a change
    to that code reruns the stage's jobs (Snakemake's params rerun trigger) and so their
    dependents. Taken from the workflow's own sources wherever it is deployed (SPUDFLOW_CODE,
    the Snakefile); computed once per Snakemake run (spudflow.core.rules_support)."""
    return code_version(SPUDFLOW_CODE, stage)


def quoted(args):
    return " ".join(shlex.quote(str(a)) for a in args)


def treebank_splits():
    """(treebank, split) pairs of the config, in config order."""
    return [(tb, split) for tb, spec in config["treebanks"].items() for split in spec["splits"]]


def treebank_lang(treebank):
    return config["treebanks"][treebank]["lang"]


def configured_split(name, key):
    """(treebank, split) of a `treebank/split` config value; a config error for another."""
    treebank, _, split = name.partition("/")
    if split not in config["treebanks"].get(treebank, {}).get("splits", {}):
        raise ValueError(f"config key {key}: {name!r} is not a configured treebank/split")
    return treebank, split


def ingested(treebank, split):
    return f"results/ingest/{treebank}/{split}/tokens.parquet"


def training_shares():
    """`treebank/split` -> {share, seed}: the sentences only the pipeline's own models train on
    (docs/controls.md, "Training data overlap")."""
    shares = config["training_shares"]
    for name in shares:
        configured_split(name, f"training_shares.{name}")
    return shares


def share_dir(treebank, split, part):
    """An ingested-format split of a training share (part `train`) or of the rest (`heldout`)."""
    return f"results/shares/{treebank}/{split}/{part}"


def training_share_dir(treebank, split):
    return share_dir(treebank, split, "train")


def training_text_inputs(entries):
    """Training text of a model the pipeline trains (n-gram, control): `treebank/split` entries
    are ingested splits, `treebank/split@train` their training shares, anything else is a text
    file."""
    inputs = []
    for entry in entries:
        name, part = split_part(entry)
        if part != "train":
            name = entry
        treebank, _, split = name.partition("/")
        if split not in config["treebanks"].get(treebank, {}).get("splits", {}):
            inputs.append(entry)
        elif name == entry:
            inputs.append(ingested(treebank, split))
        elif name in training_shares():
            inputs.append(f"{training_share_dir(treebank, split)}/tokens.parquet")
        else:
            raise ValueError(
                f"config: training text {entry!r} names a training share, but "
                f"training_shares has no entry {name!r}"
            )
    return inputs


def training_text_sources(paths):
    """The command-line sources of training_text_inputs(): a split's directory, or the file."""
    return [str(Path(p).parent) if Path(p).name == "tokens.parquet" else p for p in paths]


def sample_args(sample, seed_flag="--seed"):
    """`--sample N --seed S` from a `sample: {n, seed}` config entry; "" keeps everything."""
    if not sample or sample["n"] is None:
        return ""
    return f"--sample {sample['n']} {seed_flag} {sample['seed']}"


def model_path_inputs(source):
    """A model source's file or folder as a job input when it is a local path (made by a rule
    or present; core/model_source.is_local_path decides), none for a hub id or `pypi:` package."""
    return [str(Path(source).expanduser())] if is_local_path(source) else []


def registry_files(rule):
    """The files of every output the registry (core/outputs_registry.py) gives this rule, in
    its order: a table's NAME.{csv,parquet,md,tex} under results/tables, per-item data's
    NAME.{parquet,csv}, a figure's NAME.{svg,png} under results/figures. A table's CSV and a
    figure's SVG go into the report, with the entry's caption (report/) and category."""
    files = []
    for entry in rule_outputs(rule):
        if entry.output_type == "figure":
            stem = f"results/figures/{entry.name}"
            files += [report_entry(f"{stem}.svg", entry), f"{stem}.png"]
        elif entry.output_type == "data":
            files += [f"results/tables/{entry.name}.parquet", f"results/tables/{entry.name}.csv"]
        else:
            stem = f"results/tables/{entry.name}"
            files += [report_entry(f"{stem}.csv", entry)]
            files += [f"{stem}.parquet", f"{stem}.md", f"{stem}.tex"]
    if not files:
        raise ValueError(f"core/outputs_registry.py has no output of the rule {rule!r}")
    return files


def report_entry(path, entry):
    return report(path, caption=f"../report/{entry.caption}", category=entry.category)
