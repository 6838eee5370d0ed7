# Input functions and config lookups of the controls stage's rules (rules/controls.smk).
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


def control_outputs():
    return [f"results/controls/{name}" for name in config["controls"]]


def control_text_inputs(wildcards):
    """Training text: `treebank/split` entries are ingested splits, anything else a text file;
    null: every configured split, sorted (the config's key order is not a setting)."""
    entries = config["controls"][wildcards.control]["text"]
    if entries is None:
        return [ingested(tb, split) for tb, split in sorted(treebank_splits())]
    return training_text_inputs(entries)


def control_train_args(wildcards):
    """`spudflow train-control` settings from the control's config entry (docs/controls.md): a
    function of the wildcards only, so that a changed setting reruns the job (Snakemake
    compares such params with the last run's; one of `input` it does not)."""
    spec = config["controls"][wildcards.control]
    return quoted(["--kind", spec["kind"], *cli_options(spec, CONTROL_OPTIONS)])


def control_text_args(wildcards, input):
    """`--text SOURCE` of each training text (the job's input), shell-quoted."""
    return quoted(
        [arg for source in training_text_sources(input.text) for arg in ("--text", source)]
    )
