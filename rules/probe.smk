# DepProbe: word features from frozen encoder layers (the only step that runs the LM), then one
# probe per model variant x layers x seed, tested on the original test split and its nonce
# versions (docs/probe.md).

# With probe.feature_shards > 1, each split's features are scattered over shard jobs (contiguous
# blocks of sentences) and gathered into the file one job would have written.
if probe_shards() > 1:

    rule probe_features_shard:
        input:
            tokens=probe_feature_treebank,
            model=probe_model_inputs,
            code=stage_code("probe"),
        output:
            temp("results/probe/features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.shard{shard}.safetensors"),
        params:
            treebank=lambda wc, input: Path(input.tokens).parent,
            source=lambda wc: probe_model_config(wc.probe_model)["source"],
            args=probe_feature_args,
            shards=probe_shards(),
        log:
            "results/logs/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.shard{shard}.log",
        benchmark:
            "results/benchmarks/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.shard{shard}.tsv"
        threads: 2
        resources:
            mem_mb=6000,
            runtime=60,
            gpu=1,
        conda:
            "../envs/lm.yaml"
        shell:
            "spudflow probe features {params.treebank:q} --model {params.source:q}"
            " --shard {wildcards.shard}/{params.shards} {params.args} --threads {threads}"
            " --out {output:q} 2> {log:q}"

    rule probe_features_gather:
        input:
            shards=probe_shard_files,
            code=stage_code("probe"),
        output:
            "results/probe/features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.safetensors",
        log:
            "results/logs/probe_features_gather/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.log",
        benchmark:
            "results/benchmarks/probe_features_gather/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.tsv"
        threads: 1
        resources:
            mem_mb=4000,
            runtime=10,
        conda:
            "../envs/lm.yaml"
        shell:
            "spudflow probe gather {input.shards:q} --out {output:q} 2> {log:q}"

else:

    rule probe_features:
        input:
            tokens=probe_feature_treebank,
            model=probe_model_inputs,
            code=stage_code("probe"),
        output:
            "results/probe/features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.safetensors",
        params:
            treebank=lambda wc, input: Path(input.tokens).parent,
            source=lambda wc: probe_model_config(wc.probe_model)["source"],
            args=probe_feature_args,
        log:
            "results/logs/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.log",
        benchmark:
            "results/benchmarks/probe_features/{probe_model}/{variant}/{treebank}/{split}/{probe_set}.tsv"
        threads: 2
        resources:
            mem_mb=6000,
            runtime=60,
            gpu=1,
        conda:
            "../envs/lm.yaml"
        shell:
            "spudflow probe features {params.treebank:q} --model {params.source:q}"
            " {params.args} --threads {threads} --out {output:q} 2> {log:q}"


# One probe run: trains on the train split's features, selects on dev (or a held-out share),
# writes the probe, its history, metrics.parquet and predictions/{eval set}.conllu.
rule probe_train:
    input:
        unpack(probe_train_inputs),
        code=stage_code("probe"),
    output:
        metrics="results/probe/runs/{probe_model}/{variant}/dist{dist}_label{label}/seed{probe_seed}/metrics.parquet",
    params:
        outdir=subpath(output.metrics, parent=True),
        args=probe_train_args,
    log:
        "results/logs/probe_train/{probe_model}/{variant}/dist{dist}_label{label}/seed{probe_seed}.log",
    benchmark:
        "results/benchmarks/probe_train/{probe_model}/{variant}/dist{dist}_label{label}/seed{probe_seed}.tsv"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/lm.yaml"
    shell:
        "spudflow probe train {params.args} --threads {threads} --out {params.outdir:q}"
        " 2> {log:q}"
