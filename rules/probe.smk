# DepProbe: word features from frozen encoder layers (the only step that runs the LM), then one
# probe per task (treebank) x model variant x layers x seed, tested on the task's original test
# split (or share) and its nonce versions (docs/probe.md). Features: one file per (model, variant,
# treebank, split, eval set) under results/probe/features/, variant = lm (the model itself) or a
# baseline (M0, MR, MRC), split a split name or a share SPLIT@train / SPLIT@heldout;
# runs: results/probe/runs/{treebank}/{model}/{variant}/dist{D}_label{L}/seed{S}/ (D, L a layer
# or `auto`, the layer sweep's choice in results/probe/layers/{treebank}/{model}.parquet).
# Nothing without an enabled `probe:` section.


include: "plumbing/probe.smk"


# A task naming an unknown treebank/split/share, or training and testing on the same sentences,
# stops planning (spudflow.core.probe_tasks).
probe_tasks()


rule probe_features:
    input:
        unpack(probe_feature_inputs),
        model=probe_model_inputs,
    output:
        "results/probe/features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.safetensors",
    log:
        "results/logs/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.log",
    benchmark:
        "results/benchmarks/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.tsv"
    wildcard_constraints:
        probe_model=probe_models_pattern(sharded=False),
        split=PROBE_SPLIT_DIR,
    conda:
        "../envs/lm.yaml"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=60,
        gpu=1,
    params:
        treebank=lambda wc, input: Path(input.tokens).parent,
        source=lambda wc: probe_model_config(wc.probe_model)["source"],
        shard="",
        args=probe_feature_args,
        code=stage_code("probe"),
    shell:
        "spudflow probe features {params.treebank:q} --model {params.source:q}"
        " {params.shard} {params.args} --threads {threads} --out {output:q} 2> {log:q}"


use rule probe_features as probe_features_shard with:
    output:
        temp(
            "results/probe/features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.shard{shard}.safetensors"
        ),
    log:
        "results/logs/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.shard{shard}.log",
    benchmark:
        "results/benchmarks/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.shard{shard}.tsv"
    wildcard_constraints:
        probe_model=probe_models_pattern(sharded=True),
        split=PROBE_SPLIT_DIR,
    params:
        shard=lambda wc: f"--shard {wc.shard}/{probe_shards()}",


rule probe_features_gather:
    input:
        shards=probe_shard_files,
    output:
        "results/probe/features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.safetensors",
    log:
        "results/logs/probe_features_gather/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.log",
    benchmark:
        "results/benchmarks/probe_features_gather/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.tsv"
    wildcard_constraints:
        probe_model=probe_models_pattern(sharded=True),
        split=PROBE_SPLIT_DIR,
    conda:
        "../envs/lm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        code=stage_code("probe"),
    shell:
        "spudflow probe gather {input.shards:q} --out {output:q} 2> {log:q}"


# One probe run: trains on the train split's features, selects on dev (or a held-out share),
# writes the probe, its history, metrics.parquet and predictions/{eval set}.conllu.
rule probe_train:
    input:
        unpack(probe_train_inputs),
    output:
        metrics="results/probe/runs/{treebank}/{probe_model}/{variant}/dist{dist}_label{label}/seed{probe_seed}/metrics.parquet",
    log:
        "results/logs/probe_train/{treebank}/{probe_model}/{variant}/dist{dist}_label{label}/seed{probe_seed}.log",
    benchmark:
        "results/benchmarks/probe_train/{treebank}/{probe_model}/{variant}/dist{dist}_label{label}/seed{probe_seed}.tsv"
    conda:
        "../envs/lm.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        outdir=subpath(output.metrics, parent=True),
        args=probe_train_args,
        code=stage_code("probe"),
    shell:
        "spudflow probe train {params.args} --threads {threads} --out {params.outdir:q}"
        " 2> {log:q}"


# The layers `auto` stands for: the best of the model's layer-sweep runs on the selection data
# (App. F.6); {treebank} is the test treebank (the metrics' treebank column).
rule probe_select_layers:
    input:
        metrics=probe_sweep_metrics,
    output:
        "results/probe/layers/{treebank}/{probe_model}.parquet",
    log:
        "results/logs/probe_select_layers/{treebank}/{probe_model}.log",
    benchmark:
        "results/benchmarks/probe_select_layers/{treebank}/{probe_model}.tsv"
    conda:
        "../envs/lm.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=stage_code("probe"),
    shell:
        "spudflow probe select-layers {input.metrics:q} --out {output:q} 2> {log:q}"
