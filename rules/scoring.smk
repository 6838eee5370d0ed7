# Scoring: word n-gram models trained on treebank text, and every items dataset scored by every
# configured model (token_scores.parquet + item_scores.parquet; docs/scoring.md).


from spudflow.core.plan_base import quoted, training_text_sources
from spudflow.core.rules_support import attempt_scaled


rule ngram_train:
    input:
        text=scoring_plan.ngram_text_inputs,
    output:
        "results/ngram/{ngram}.parquet",
    log:
        "results/logs/ngram_train/{ngram}.log",
    resources:
        **attempt_scaled(mem_mb=4000, runtime=30),
    params:
        text=lambda wc, input: quoted(training_text_sources(input.text)),
        args=scoring_plan.ngram_train_args,
    shell:
        "spudflow ngram-train {params.text} {params.args} --out {output:q} 2> {log:q}"


# One job per items dataset x model (models with one shard; see score_shard for the others).
# Transformer models ask for the GPU slot (gpu=1; on a machine without one they run on the CPU),
# one split across devices (`device_map`) for the GPUs its weights need; n-gram models need none.
# The device map reaches the command through a params function of `input`, no rerun trigger: it
# changes no score (core/device_map.py).
rule score:
    input:
        item_table="results/items/{dataset}.parquet",
        model=scoring_plan.model_source_inputs,
        unigram=scoring_plan.unigram_inputs,
    output:
        token_scores="results/scores/{dataset}/{model}/token_scores.parquet",
        item_scores="results/scores/{dataset}/{model}/item_scores.parquet",
    log:
        "results/logs/score/{dataset}/{model}.log",
    wildcard_constraints:
        model=scoring_plan.scoring_models_pattern(sharded=False),
    threads: 4
    resources:
        **attempt_scaled(mem_mb=scoring_plan.score_memory, runtime=scoring_plan.score_runtime),
        gpu=scoring_plan.score_gpus,
    params:
        out_dir=subpath(output.token_scores, parent=True),
        source=lambda wc: scoring_plan.model_config(wc.model)["source"],
        args=scoring_plan.score_args,
        placement=scoring_plan.score_placement,
        shard="",
    shell:
        "spudflow score {input.item_table:q} --model {params.source:q} --name {wildcards.model}"
        " {params.shard} --out {params.out_dir:q} --threads {threads} {params.args}"
        " {params.placement} 2> {log:q}"


# Models with `shards` > 1: one job per items dataset x model x shard, each scoring a contiguous
# range of the items (whole `block_size` blocks), then one gather job per dataset x model that
# writes the same files, byte for byte, as `score` would (docs/scoring.md, "Shards").
use rule score as score_shard with:
    output:
        token_scores="results/scores/{dataset}/{model}/shards/{shard}-of-{shards}/token_scores.parquet",
        item_scores="results/scores/{dataset}/{model}/shards/{shard}-of-{shards}/item_scores.parquet",
    log:
        "results/logs/score_shard/{dataset}/{model}/{shard}-of-{shards}.log",
    wildcard_constraints:
        model=scoring_plan.scoring_models_pattern(sharded=True),
    params:
        shard=lambda wc: f"--shard {wc.shard}/{wc.shards}",


rule score_gather:
    input:
        shards=scoring_plan.score_shard_inputs,
    output:
        token_scores="results/scores/{dataset}/{model}/token_scores.parquet",
        item_scores="results/scores/{dataset}/{model}/item_scores.parquet",
    log:
        "results/logs/score_gather/{dataset}/{model}.log",
    wildcard_constraints:
        model=scoring_plan.scoring_models_pattern(sharded=True),
    resources:
        **attempt_scaled(mem_mb=scoring_plan.score_gather_memory, runtime=30),
    params:
        shard_dirs=scoring_plan.score_shard_dirs,
        out_dir=subpath(output.token_scores, parent=True),
    shell:
        "spudflow score-gather {params.shard_dirs:q} --out {params.out_dir:q} 2> {log:q}"
