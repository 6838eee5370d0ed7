# DepProbe: word features from frozen encoder layers, then one probe per task (treebank) x
# model baseline x layers x seed, tested on the task's original test split (or share) and its
# nonce versions (docs/probe.md). Features of a split trained or selected on: one job per
# (model, treebank, split) builds each baseline's encoder in turn (lm, the model itself, and the
# model's M0, MR, MRC), writing results/probe/features/{model}/{treebank}/{split}/{baseline}/
# orig.safetensors; split a split name or a share SPLIT@train / SPLIT@heldout. A test split's
# eval sets are extracted by each probe_train job with its own encoder and layers, in memory:
# eleven versions of each test split would be most of a paper preset's disk. The feature files
# hold the configured layer pairs' layers; a layer sweep's run of another layer extracts its
# training and selection splits in memory too (every layer of a model would be most of the rest).
# runs: results/probe/runs/{treebank}/{model}/{baseline}/dist{D}_label{L}/seed{S}/ (D, L a layer
# or `auto`, the layer sweep's choice in results/probe/layers/{treebank}/{model}.parquet), every
# seed of a layer pair in one probe_train job.
# Nothing without an enabled `probe:` section.


from pathlib import Path

from spudflow.core.artifacts import AUTO
from spudflow.core.rules_support import attempt_scaled
from spudflow.probe.plan import PROBE_SPLIT_DIR, probe_feature_paths, probe_pair_dir_of


# The probe rules' own wildcards (the shared ones are in rules/common.smk).
wildcard_constraints:
    probe_model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    baseline=r"lm|M0|MR|MRC",
    dist=rf"[0-9]+|{AUTO}",
    label=rf"[0-9]+|{AUTO}",


# A task naming an unknown treebank/split/share, or training and testing on the same sentences,
# stops planning (spudflow.core.probe_tasks).
probe_plan.probe_tasks()


rule probe_features:
    input:
        unpack(probe_plan.probe_feature_inputs),
        model=probe_plan.probe_model_inputs,
    output:
        directory("results/probe/features/{probe_model}/{treebank}/{split}"),
    log:
        "results/logs/probe_features/{probe_model}/{treebank}/{split}.log",
    wildcard_constraints:
        probe_model=probe_plan.probe_models_pattern(sharded=False),
        split=PROBE_SPLIT_DIR,
    threads: 2
    # one encoder in memory at a time; an hour per baseline; the GPUs of a `device_map`'s weights
    resources:
        **attempt_scaled(
            mem_mb=probe_plan.probe_features_memory, runtime=probe_plan.probe_features_runtime
        ),
        gpu=probe_plan.probe_features_gpus,
    params:
        treebanks=lambda wc, input: [Path(tokens).parent for tokens in input.tokens],
        source=lambda wc: probe_plan.probe_model_config(wc.probe_model)["source"],
        shard="",
        args=probe_plan.probe_feature_args,
        # a params function of `input`, no rerun trigger: the map changes no feature
        placement=probe_plan.probe_feature_placement,
        sentences=probe_feature_paths,
    shell:
        "spudflow probe features {params.treebanks:q} --model {params.source:q}"
        " {params.shard} {params.args} {params.placement} {params.sentences}"
        " --threads {threads} --out {output:q} 2> {log:q}"


use rule probe_features as probe_features_shard with:
    output:
        temp(directory("results/probe/features/{probe_model}/{treebank}/{split}.shard{shard}")),
    log:
        "results/logs/probe_features_shard/{probe_model}/{treebank}/{split}.shard{shard}.log",
    wildcard_constraints:
        probe_model=probe_plan.probe_models_pattern(sharded=True),
        split=PROBE_SPLIT_DIR,
    params:
        shard=lambda wc: f"--shard {wc.shard}/{probe_plan.probe_shards()}",


rule probe_features_gather:
    input:
        shards=probe_plan.probe_shard_dirs,
    output:
        directory("results/probe/features/{probe_model}/{treebank}/{split}"),
    log:
        "results/logs/probe_features_gather/{probe_model}/{treebank}/{split}.log",
    wildcard_constraints:
        probe_model=probe_plan.probe_models_pattern(sharded=True),
        split=PROBE_SPLIT_DIR,
    resources:
        **attempt_scaled(mem_mb=probe_plan.probe_gather_memory, runtime=10),
    shell:
        "spudflow probe gather {input.shards:q} --out {output:q} 2> {log:q}"


# The probe runs of one layer pair, one per seed (probe.seeds), in one job: the features are
# loaded (the eval sets' extracted) once and each seed trains from its own seed (the files of a
# seed trained alone). Each trains on the train split's features (stored, or extracted by the
# job: probe_plan.probe_extracts_splits), selects on dev (or a held-out share) and writes
# seed{S}/: the probe, its history, metrics.parquet, sentence_counts.parquet (counts per sentence),
# predictions.parquet (the predicted trees, read by table_probe_edges)
# and predictions/{eval set}.conllu.
rule probe_train:
    input:
        unpack(probe_plan.probe_train_inputs),
    output:
        **probe_plan.probe_train_outputs(),
    log:
        "results/logs/probe_train/{treebank}/{probe_model}/{baseline}/dist{dist}_label{label}.log",
    threads: 2
    resources:
        **attempt_scaled(
            mem_mb=probe_plan.probe_train_memory, runtime=probe_plan.probe_train_runtime()
        ),
        gpu=probe_plan.probe_features_gpus,
    params:
        out_dir=probe_pair_dir_of,
        data=probe_plan.probe_train_paths,
        args=probe_plan.probe_train_args,
        # a params function of `input`, no rerun trigger: the map changes no feature
        placement=probe_plan.probe_feature_placement,
    shell:
        "spudflow probe train {params.data} {params.args} {params.placement}"
        " --threads {threads} --out {params.out_dir:q} 2> {log:q}"


# The layers `auto` stands for: the best of the model's layer-sweep runs on the selection data
# (App. F.6); {treebank} is the test treebank (the metrics' treebank column).
rule probe_select_layers:
    input:
        metrics=probe_plan.probe_sweep_metrics,
    output:
        "results/probe/layers/{treebank}/{probe_model}.parquet",
    log:
        "results/logs/probe_select_layers/{treebank}/{probe_model}.log",
    shell:
        "spudflow probe select-layers {input.metrics:q} --out {output:q} 2> {log:q}"
