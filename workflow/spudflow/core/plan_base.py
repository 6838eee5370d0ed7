"""What every stage's rules plan with: the config, the code fingerprint, treebank and training-text
lookups, config-to-option helpers and the files of the registry's outputs.

A rules file reads its stage's plan object (spudflow.<stage>.plan), which the Snakefile builds
once from the validated config; the functions here that need no config are imported by name.
Config defaults are the schema's (filled in by the Snakefile's fill_schema_defaults()): nothing
here writes one of its own."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.model_source import is_local_path
from spudflow.core.outputs_registry import rule_outputs
from spudflow.core.rules_support import code_version
from spudflow.core.shell_args import quoted, sample_args  # noqa: F401 - the plans' import
from spudflow.core.training_share import text_entry


def has_name(named, name):
    """Whether a job's input or wildcards have an entry of this name (`in` on Snakemake's
    Namedlist tests its values, not its names)."""
    return name in named.keys()  # noqa: SIM118


def ingested(treebank, split):
    return f"results/ingest/{treebank}/{split}/tokens.parquet"


def share_dir(treebank, split, part):
    """An ingested-format split of a training share (part `train`) or of the rest (`heldout`)."""
    return f"results/shares/{treebank}/{split}/{part}"


def training_share_dir(treebank, split):
    return share_dir(treebank, split, "train")


def training_text_sources(paths):
    """The command-line sources of training_text_inputs(): a split's directory, or the file."""
    return [str(Path(p).parent) if Path(p).name == "tokens.parquet" else p for p in paths]


def model_path_inputs(source):
    """A model source's file or folder as a job input when it is a local path (made by a rule
    or present; core/model_source.is_local_path decides), none for a hub id or `pypi:` package."""
    return [str(Path(source).expanduser())] if is_local_path(source) else []


def registry_files(rule):
    """The files of every output the registry (core/outputs_registry.py) gives this rule, in
    its order, named: a table's NAME.{csv,parquet,md,tex} under results/tables, per-item data's
    NAME.{parquet,csv} (or its entry's formats), a figure's NAME.{svg,png} under
    results/figures. The first output's files are named by their suffix (`output.parquet`,
    `output.png`: what a rule takes its command's stem or directory from), the others'
    NAME_SUFFIX. A table's CSV and a figure's SVG go into the report, with the entry's caption
    and category; a table with its caption in the registry also has NAME.caption.rst, its
    report caption, written with it."""
    files = {}
    for number, entry in enumerate(rule_outputs(rule)):
        prefix = "" if number == 0 else f"{entry.name}_"
        if entry.output_type == "figure":
            stem = f"results/figures/{entry.name}"
            named = {"svg": report_entry(f"{stem}.svg", entry), "png": f"{stem}.png"}
        elif entry.output_type == "data":
            stem = f"results/tables/{entry.name}"
            named = {suffix: f"{stem}.{suffix}" for suffix in entry.formats}
        else:
            stem = f"results/tables/{entry.name}"
            named = {"csv": report_entry(f"{stem}.csv", entry)}
            named |= {suffix: f"{stem}.{suffix}" for suffix in ("parquet", "md", "tex")}
            if entry.caption:
                named["caption"] = entry.report_caption
        files |= {prefix + suffix: path for suffix, path in named.items()}
    if not files:
        raise ValueError(f"core/outputs_registry.py has no output of the rule {rule!r}")
    return files


def report_entry(path, entry):
    from snakemake.io import report  # only a Snakefile plans: the commands never need it

    return report(path, caption=f"../{entry.report_caption}", category=entry.category)


class PlanBase:
    """The validated config and the workflow's code directory (for stage_code)."""

    def __init__(self, config: dict, code_dir: Path):
        self.config = config
        self.code_dir = code_dir

    def stage_code(self, stage):
        """A fingerprint of the stage's code, core's and the CLI's, for a rule's `params:`: a change
        to that code reruns the stage's jobs (Snakemake's params rerun trigger) and so their
        dependents. Taken from the workflow's own sources wherever it is deployed (SPUDFLOW_CODE,
        the Snakefile); computed once per Snakemake run (spudflow.core.rules_support)."""
        return code_version(self.code_dir, stage)

    def treebank_splits(self):
        """(treebank, split) pairs of the config, in config order."""
        return [
            (tb, split) for tb, spec in self.config["treebanks"].items() for split in spec["splits"]
        ]

    def treebank_lang(self, treebank):
        return self.config["treebanks"][treebank]["lang"]

    def configured_split(self, name, key):
        """(treebank, split) of a `treebank/split` config value; a config error for another."""
        treebank, _, split = name.partition("/")
        if split not in self.config["treebanks"].get(treebank, {}).get("splits", {}):
            raise ValueError(f"config key {key}: {name!r} is not a configured treebank/split")
        return treebank, split

    def training_shares(self):
        """`treebank/split` -> {share, seed}: the sentences only the pipeline's own models train on
        (docs/controls.md, "Training data overlap")."""
        shares = self.config["training_shares"]
        for name in shares:
            self.configured_split(name, f"training_shares.{name}")
        return shares

    def training_text_inputs(self, entries):
        """Training text of a model the pipeline trains (n-gram, control): `treebank/split` entries
        are ingested splits, `treebank/split@train` their training shares, anything else is a text
        file."""
        inputs = []
        for entry in entries:
            named, name = text_entry(self.config["treebanks"], entry)
            if named == "file":
                inputs.append(entry)
            elif named == "split":
                inputs.append(ingested(*name.split("/", 1)))
            elif name in self.training_shares():
                inputs.append(f"{training_share_dir(*name.split('/', 1))}/tokens.parquet")
            else:
                raise ValueError(
                    f"config: training text {entry!r} names a training share, but "
                    f"training_shares has no entry {name!r}"
                )
        return inputs
