"""Input functions and config lookups of the controls stage's rules (rules/controls.smk)."""

from __future__ import annotations

from spudflow.core.plan import Plan
from spudflow.core.plan_base import ingested, quoted, training_text_sources
from spudflow.core.rules_support import cli_options

# `spudflow control-train` options with the same name as the control's config keys.
CONTROL_OPTIONS = (
    "seed",
    "vocab_size",
    "layers",
    "hidden",
    "heads",
    "max_length",
    "epochs",
    "batch_size",
    "learning_rate",
    "max_sentences",
)


def control_text_args(wildcards, input):
    """`--text SOURCE` of each training text (the job's input), shell-quoted."""
    return quoted(
        [arg for source in training_text_sources(input.text) for arg in ("--text", source)]
    )


class ControlsPlan(Plan):
    def control_outputs(self):
        return [f"results/controls/{name}" for name in self.config["controls"]]

    def control_text_inputs(self, wildcards):
        """Training text: `treebank/split` entries are ingested splits, anything else a text file;
        null: every configured split, sorted (the config's key order is not a setting)."""
        entries = self.config["controls"][wildcards.control]["text"]
        if entries is None:
            return [ingested(tb, split) for tb, split in sorted(self.treebank_splits())]
        return self.training_text_inputs(entries)

    def control_train_args(self, wildcards):
        """`spudflow control-train` settings from the control's config entry (docs/controls.md): a
        function of the wildcards only, so that a changed setting reruns the job (Snakemake
        compares such params with the last run's; one of `input` it does not)."""
        spec = self.config["controls"][wildcards.control]
        return quoted(["--kind", spec["kind"], *cli_options(spec, CONTROL_OPTIONS)])
