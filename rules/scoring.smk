# Scoring: word n-gram models trained on treebank text, and every items dataset scored by every
# configured model (token_scores.parquet + item_scores.parquet; docs/scoring.md).
import re

# `spudflow score` options with the same name as a model's config keys, in this order.
MODEL_OPTIONS = ("device", "dtype", "batch_tokens", "trust_remote_code")


def scoring_datasets():
    """Items datasets to score: `scoring.datasets` when set, else every dataset the pairs stage
    enables."""
    configured = config["scoring"].get("datasets")
    return list(items_datasets() if configured is None else configured)


def model_config(model):
    return config["models"][model]


def is_transformer(model):
    return model_config(model)["kind"] != "ngram"


def model_source_inputs(wildcards):
    source = model_config(wildcards.model)["source"]
    return [source] if is_pipeline_path(source) else []


def unigram_inputs(wildcards=None):
    return [f"results/ngram/{name}.parquet" for name in config["scoring"].get("unigram", [])]


def score_args(wildcards):
    """`spudflow score` options from the model's config entry (docs/scoring.md)."""
    spec = model_config(wildcards.model)
    args = ["--kind", spec["kind"], "--method", ",".join(spec["methods"])]
    args += ["--block-size", config["scoring"]["block_size"]]
    args += cli_options(spec, ("gguf_file", "languages"))
    if spec.get("sample", {}).get("n") is not None:
        args += ["--sample", spec["sample"]["n"], "--sample-seed", spec["sample"]["seed"]]
    args += cli_options(spec, MODEL_OPTIONS)
    for path in unigram_inputs():
        args += ["--unigram", path]
    return quoted(args)


def ngram_text_inputs(wildcards):
    return training_text_inputs(config["ngrams"][wildcards.ngram]["text"])


def ngram_train_args(wildcards, input):
    spec = config["ngrams"][wildcards.ngram]
    options = cli_options(spec, ("lang", "order", "k", "discount", "min_count"))
    return quoted(training_text_sources(input.text) + options)


def scoring_jobs():
    """(dataset, model) of every scoring job: every dataset for every model, or the model's own
    `datasets:` list when it has one, and only datasets in the model's `languages` (when set).
    The aggregate stage reads their item_scores."""
    jobs = []
    for model, spec in config["models"].items():
        only, languages = spec.get("datasets"), spec.get("languages")
        jobs += [
            (d, model)
            for d in scoring_datasets()
            if (only is None or d in only)
            and (languages is None or items_dataset_language(d) in languages)
        ]
    return jobs


def scoring_outputs():
    return [
        f"results/scores/{dataset}/{model}/{name}.parquet"
        for dataset, model in scoring_jobs()
        for name in ("token_scores", "item_scores")
    ]


# Scatter/gather: a model with more than one shard scores each dataset in `score_shard` jobs
# (results/scores/{dataset}/{model}/shards/{i}-of-{n}/) that `score_gather` joins into the files
# `score` writes for the others. Each model is matched by exactly one of the two rules that write
# results/scores/{dataset}/{model}/*.parquet (their `model` wildcard constraints below).
def model_shards(model):
    """Number of shards of the model's scoring jobs: its `shards:`, else `scoring.shards`."""
    return model_config(model).get("shards") or config["scoring"]["shards"]


def scoring_models_pattern(sharded):
    """Regex matching exactly the configured models with (or without) several shards."""
    names = [m for m in config["models"] if (model_shards(m) > 1) == sharded]
    return "|".join(re.escape(name) for name in names) or "(?!)"  # (?!): matches nothing


def score_shard_dirs(wildcards):
    n = model_shards(wildcards.model)
    return [
        f"results/scores/{wildcards.dataset}/{wildcards.model}/shards/{i}-of-{n}"
        for i in range(1, n + 1)
    ]


def score_shard_inputs(wildcards):
    return [
        f"{d}/{name}.parquet"
        for d in score_shard_dirs(wildcards)
        for name in ("token_scores", "item_scores")
    ]


def check_training_overlap():
    """Stop planning with a config error when a model the pipeline trains would score a sentence
    it was trained on (spudflow.core.overlap), unless models.NAME.allow_training_overlap."""
    from spudflow.core.config import ConfigError
    from spudflow.core.overlap import dataset_sources, model_training, overlap_errors

    training_shares()
    models = config["models"]
    training = {m: t for m in models if (t := model_training(config, m)) is not None}
    jobs = [(d, m) for d, m in scoring_jobs() if m in training]
    spud, blimp = spud_items_splits(), blimp_files()
    scored = {d: dataset_sources(config, d, spud, blimp) for d in {d for d, _ in jobs}}
    allowed = [m for m, spec in models.items() if spec["allow_training_overlap"]]
    errors = overlap_errors(jobs, training, scored, allowed)
    if errors:
        raise ConfigError("\n".join(errors))


rule ngram_train:
    input:
        text=ngram_text_inputs,
    output:
        "results/ngram/{ngram}.parquet",
    params:
        args=ngram_train_args,
        code=stage_code("scoring"),
    log:
        "results/logs/ngram_train/{ngram}.log",
    benchmark:
        "results/benchmarks/ngram_train/{ngram}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/lm.yaml"
    shell:
        "spudflow ngram-train {params.args} --out {output:q} 2> {log:q}"


# One job per items dataset x model (models with one shard; see score_shard for the others).
# Transformer models ask for the GPU slot (gpu=1; on a machine without one they run on the CPU);
# n-gram models need none.
rule score:
    input:
        item_table="results/items/{dataset}.parquet",
        model=model_source_inputs,
        unigram=unigram_inputs,
    output:
        token_scores="results/scores/{dataset}/{model}/token_scores.parquet",
        item_scores="results/scores/{dataset}/{model}/item_scores.parquet",
    params:
        outdir=subpath(output.token_scores, parent=True),
        source=lambda wc: model_config(wc.model)["source"],
        args=score_args,
        shard="",
        code=stage_code("scoring"),
    log:
        "results/logs/score/{dataset}/{model}.log",
    benchmark:
        "results/benchmarks/score/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=scoring_models_pattern(sharded=False),
    threads: 4
    resources:
        mem_mb=lambda wc: 8000 if is_transformer(wc.model) else 4000,
        runtime=lambda wc: 240 if is_transformer(wc.model) else 30,
        gpu=lambda wc: 1 if is_transformer(wc.model) else 0,
    conda:
        "../envs/lm.yaml"
    shell:
        "spudflow score {input.item_table:q} --model {params.source:q} --name {wildcards.model}"
        " {params.shard} --out {params.outdir:q} --threads {threads} {params.args} 2> {log:q}"


# Models with `shards` > 1: one job per items dataset x model x shard, each scoring a contiguous
# range of the items (whole `block_size` blocks), then one gather job per dataset x model that
# writes the same files, byte for byte, as `score` would (docs/scoring.md, "Shards").
use rule score as score_shard with:
    output:
        token_scores="results/scores/{dataset}/{model}/shards/{shard}-of-{shards}/token_scores.parquet",
        item_scores="results/scores/{dataset}/{model}/shards/{shard}-of-{shards}/item_scores.parquet",
    params:
        shard=lambda wc: f"--shard {wc.shard}/{wc.shards}",
    log:
        "results/logs/score_shard/{dataset}/{model}/{shard}-of-{shards}.log",
    benchmark:
        "results/benchmarks/score_shard/{dataset}/{model}/{shard}-of-{shards}.tsv"
    wildcard_constraints:
        model=scoring_models_pattern(sharded=True),


rule score_gather:
    input:
        shards=score_shard_inputs,
    output:
        token_scores="results/scores/{dataset}/{model}/token_scores.parquet",
        item_scores="results/scores/{dataset}/{model}/item_scores.parquet",
    params:
        shard_dirs=score_shard_dirs,
        outdir=subpath(output.token_scores, parent=True),
        code=stage_code("scoring"),
    log:
        "results/logs/score_gather/{dataset}/{model}.log",
    benchmark:
        "results/benchmarks/score_gather/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=scoring_models_pattern(sharded=True),
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/lm.yaml"
    shell:
        "spudflow score-gather {params.shard_dirs:q} --out {params.outdir:q} 2> {log:q}"
