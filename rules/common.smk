# Helpers shared by every rules file: config lookups, input functions, wildcard constraints.
from pathlib import Path

SPUDFLOW_SOURCE = Path(workflow.basedir) / "workflow" / "spudflow"


wildcard_constraints:
    treebank=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    split=r"[A-Za-z0-9_-]+",


def stage_code(*stages):
    """Python sources of the stages a rule runs, plus the shared core and CLI.

    Listed as inputs so that a change to a stage's code reruns that stage's jobs and their
    dependents (Snakemake itself tracks only the shell text)."""
    files = [SPUDFLOW_SOURCE / "cli.py"]
    for stage in (*stages, "core"):
        files += sorted((SPUDFLOW_SOURCE / stage).rglob("*.py"))
    return [str(f) for f in files]


def treebank_splits():
    """(treebank, split) pairs of the config, in config order."""
    return [(tb, split) for tb, spec in config["treebanks"].items() for split in spec["splits"]]


def treebank_lang(treebank):
    return config["treebanks"][treebank]["lang"]


def is_url(location):
    return location.split(":", 1)[0] in ("http", "https", "ftp", "file")


def split_location(treebank, split):
    return config["treebanks"][treebank]["splits"][split]


def treebank_source(wildcards):
    """The local CoNLL-U file of a split: the configured path, or where its URL is downloaded."""
    location = split_location(wildcards.treebank, wildcards.split)
    if not is_url(location):
        return location
    suffix = ".conllu.gz" if location.endswith(".gz") else ".conllu"
    return f"resources/downloads/{wildcards.treebank}/{wildcards.split}{suffix}"


def ingested(treebank, split):
    return f"results/ingest/{treebank}/{split}/tokens.parquet"


def all_outputs():
    outputs = ["results/tables/treebank_stats.parquet"]
    outputs += [ingested(tb, split) for tb, split in treebank_splits()]
    outputs += scoring_outputs()
    return outputs


# --- scoring ---
import shlex


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    ngram=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


def scoring_datasets():
    """Items datasets to score: `scoring.datasets` when set, else every dataset the pairs stage
    enables (its items_datasets(), when that stage is part of the workflow)."""
    configured = config.get("scoring", {}).get("datasets")
    if configured is not None:
        return list(configured)
    return list(items_datasets()) if "items_datasets" in globals() else []


def scoring_models():
    return list(config.get("models", {}))


def model_config(model):
    return config["models"][model]


def is_transformer(model):
    return model_config(model)["kind"] != "ngram"


def ngram_model_path(ngram):
    return f"results/ngram/{ngram}.parquet"


def is_pipeline_path(source):
    """A model source that is a file or folder (made by a rule or present), not a hub id or
    `pypi:` package."""
    return not source.startswith("pypi:") and (
        source.startswith(("results/", "resources/")) or Path(source).exists())


def model_source_inputs(wildcards):
    source = model_config(wildcards.model)["source"]
    return [source] if is_pipeline_path(source) else []


def unigram_inputs(wildcards=None):
    return [ngram_model_path(name) for name in config.get("scoring", {}).get("unigram", [])]


def score_args(wildcards):
    """`spudflow score` options from the model's config entry (docs/scoring.md)."""
    spec = model_config(wildcards.model)
    args = ["--kind", spec["kind"], "--method", ",".join(spec["methods"]),
            "--shard-size", str(config.get("scoring", {}).get("shard_size", 2000))]
    if spec.get("gguf_file"):
        args += ["--gguf-file", spec["gguf_file"]]
    if spec.get("languages"):
        args += ["--languages", ",".join(spec["languages"])]
    for key in ("device", "dtype", "batch_tokens"):
        if spec.get(key) is not None:
            args += [f"--{key.replace('_', '-')}", str(spec[key])]
    if spec.get("trust_remote_code"):
        args.append("--trust-remote-code")
    for path in unigram_inputs():
        args += ["--unigram", path]
    return " ".join(shlex.quote(a) for a in args)


def ngram_text_inputs(wildcards):
    """Training text of an n-gram model: `treebank/split` entries are ingested splits (their
    directories are passed on), anything else is a text file."""
    inputs = []
    for entry in config["ngrams"][wildcards.ngram]["text"]:
        treebank, _, split = entry.partition("/")
        if treebank in config["treebanks"] and split in config["treebanks"][treebank]["splits"]:
            inputs.append(ingested(treebank, split))
        else:
            inputs.append(entry)
    return inputs


def ngram_train_args(wildcards, input):
    spec = config["ngrams"][wildcards.ngram]
    sources = [str(Path(p).parent) if Path(p).name == "tokens.parquet" else p for p in input.text]
    args = [*sources, "--lang", spec["lang"], "--order", str(spec.get("order", 3)),
            "--k", str(spec.get("k", 1.0)), "--discount", str(spec.get("discount", 0.75)),
            "--min-count", str(spec.get("min_count", 1))]
    return " ".join(shlex.quote(a) for a in args)


def score_outputs(dataset, model):
    return [f"results/scores/{dataset}/{model}/{name}.parquet"
            for name in ("token_scores", "item_scores")]


def scoring_outputs():
    return [path for dataset in scoring_datasets() for model in scoring_models()
            for path in score_outputs(dataset, model)]
