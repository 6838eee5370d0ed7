# Controls: small BERT, GPT-2 and ELECTRA models trained from scratch on the treebanks' own text
# (docs/controls.md), each a save_pretrained directory the scoring stage loads: a `models:` entry
# uses it as `source: results/controls/NAME`.
# `spudflow train-control` options with the same name as the control's config keys.
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
    null: every configured split."""
    entries = config["controls"][wildcards.control]["text"]
    if entries is None:
        return [ingested(tb, split) for tb, split in treebank_splits()]
    return training_text_inputs(entries)


def control_train_args(wildcards, input):
    """`spudflow train-control` options from the control's config entry (docs/controls.md)."""
    spec = config["controls"][wildcards.control]
    args = ["--kind", spec["kind"]]
    for source in training_text_sources(input.text):
        args += ["--text", source]
    return quoted(args + cli_options(spec, CONTROL_OPTIONS))


rule train_control:
    input:
        text=control_text_inputs,
    output:
        directory("results/controls/{control}"),
    params:
        args=control_train_args,
        code=stage_code("controls"),
    log:
        "results/logs/train_control/{control}.log",
    benchmark:
        "results/benchmarks/train_control/{control}.tsv"
    # One thread: tiny matrices gain little from more, and two jobs then share 2 cores;
    # training runs on the CPU whatever the machine (no GPU slot).
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
        gpu=0,
    conda:
        "../envs/lm.yaml"
    shell:
        "spudflow train-control {params.args} --threads {threads} --out {output:q} 2> {log:q}"
