# Input functions and config lookups of the scoring stage's rules (rules/scoring.smk).
import math
import re

# `spudflow score` options with the same name as a model's config keys, in this order.
MODEL_OPTIONS = ("device", "dtype", "batch_tokens", "trust_remote_code")
# `spudflow ngram-train` options with the same name as an n-gram's config keys.
NGRAM_OPTIONS = ("lang", "order", "k", "discount", "min_count", "lowercase", "unknown")
NGRAM_OPTIONS += ("kneser_ney", "words")


def scoring_datasets():
    """Items datasets to score: `scoring.datasets` when set, else every dataset the pairs stage
    enables."""
    configured = config["scoring"].get("datasets")
    return list(items_datasets() if configured is None else configured)


def model_config(model):
    return config["models"][model]


def is_transformer(model):
    return model_config(model)["kind"] != "ngram"


# A scoring job holds its token and item score rows until it writes them: about 280 MB per MB
# of items file and method (peak RSS scoring the Japanese preset's 749,500-item datasets in a
# full rehearsal, docs/running.md), asked for with a quarter of headroom on top of the model's.
SCORE_MB_PER_ITEMS_MB = 350


def score_memory(wildcards):
    """`mem_mb` of a score, score_shard or score_gather job: the model's (8000 a transformer,
    4000 an n-gram model) plus the score rows of the items it holds (a shard's fraction; a sampled
    model's are counted whole). The items file is read when Snakemake evaluates resources again
    before the job runs."""
    floor = 8000 if is_transformer(wildcards.model) else 4000
    methods = len(model_config(wildcards.model)["methods"])
    fraction = 1 / int(wildcards.shards) if "shards" in wildcards.keys() else 1
    items = input_mb([f"results/items/{wildcards.dataset}.parquet"])
    return math.ceil(floor + SCORE_MB_PER_ITEMS_MB * methods * items * fraction)


def model_source_inputs(wildcards):
    return model_path_inputs(model_config(wildcards.model)["source"])


def unigram_inputs(wildcards=None):
    return [f"results/ngram/{name}.parquet" for name in config["scoring"].get("unigram", [])]


def score_args(wildcards):
    """`spudflow score` options from the model's config entry (docs/scoring.md)."""
    spec = model_config(wildcards.model)
    args = ["--kind", spec["kind"], "--method", ",".join(spec["methods"])]
    args += ["--block-size", config["scoring"]["block_size"]]
    args += cli_options(config["scoring"], ("cache",))
    # Only a job that scores pppl_l2r is given its words: the others' commands stay as they were.
    if any(m.removesuffix("_region") == "pppl_l2r" for m in spec["methods"]):
        args += cli_options(config["scoring"], ("l2r_words",))
    args += cli_options(spec, ("gguf_file", "revision", "languages"))
    if spec.get("sample", {}).get("n") is not None:
        args += ["--sample", spec["sample"]["n"], "--sample-seed", spec["sample"]["seed"]]
    args += cli_options(spec, MODEL_OPTIONS)
    # Lau et al.'s measures take the unigram term from the n-gram model itself.
    if spec["measures"] == "lau":
        args += ["--measures", "lau"]
    else:
        for path in unigram_inputs():
            args += ["--unigram", path]
    return quoted(args)


def ngram_text_inputs(wildcards):
    return training_text_inputs(config["ngrams"][wildcards.ngram]["text"])


def ngram_train_args(wildcards):
    """`spudflow ngram-train` settings: a function of the wildcards only, so that a changed
    setting reruns the job (Snakemake compares such params with the last run's)."""
    return quoted(cli_options(config["ngrams"][wildcards.ngram], NGRAM_OPTIONS))


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
            and (languages is None or items_dataset_language(d) in (None, *languages))
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
