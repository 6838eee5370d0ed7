# Helpers shared by every rules file: config lookups, input functions, wildcard constraints.
import os
from pathlib import Path

SPUDFLOW_SOURCE = Path(workflow.basedir) / "workflow" / "spudflow"
# A stage's code: its modules and the data files it ships (pyproject's package-data).
STAGE_CODE_SUFFIXES = (".py", ".tsv", ".yaml", ".txt")


wildcard_constraints:
    treebank=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    split=r"[A-Za-z0-9_-]+",


def stage_code(*stages):
    """Source and data files of the stages a rule runs, plus the shared core and CLI.

    Listed as inputs so that a change to a stage's code reruns that stage's jobs and their
    dependents (Snakemake itself tracks only the shell text). Paths are relative to the working
    directory: Snakemake records each job's set of input paths, so absolute ones would rerun
    everything after the checkout moves."""
    files = [SPUDFLOW_SOURCE / "cli.py"]
    for stage in (*stages, "core"):
        files += sorted(
            f for f in (SPUDFLOW_SOURCE / stage).rglob("*") if f.suffix in STAGE_CODE_SUFFIXES
        )
    return [os.path.relpath(f) for f in files]


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


def training_shares():
    """`treebank/split` -> {share, seed}: the sentences only the pipeline's own models train on
    (docs/controls.md, "Training data overlap")."""
    shares = config.get("training_shares") or {}
    for name in shares:
        treebank, _, split = name.partition("/")
        if split not in config["treebanks"].get(treebank, {}).get("splits", {}):
            raise ValueError(f"config key training_shares.{name}: not a configured treebank/split")
    return shares


def training_share_dir(treebank, split):
    return f"results/shares/{treebank}/{split}/train"


def training_share_args(treebank, split):
    share = training_shares()[f"{treebank}/{split}"]
    return f"--share {share['share']} --seed {share.get('seed', 0)}"


def check_training_overlap():
    """Stop planning with a config error when a model the pipeline trains would score a sentence
    it was trained on (spudflow.core.overlap), unless models.NAME.allow_training_overlap."""
    from spudflow.core.config import ConfigError
    from spudflow.core.overlap import dataset_sources, model_training, overlap_errors

    training_shares()
    models = config.get("models") or {}
    training = {m: t for m in models if (t := model_training(config, m)) is not None}
    jobs = [(d, m) for d, m in scoring_jobs() if m in training]
    spud, blimp = spud_items_splits(), blimp_files()
    scored = {d: dataset_sources(config, d, spud, blimp) for d in {d for d, _ in jobs}}
    allowed = [m for m, spec in models.items() if spec.get("allow_training_overlap")]
    errors = overlap_errors(jobs, training, scored, allowed)
    if errors:
        raise ConfigError("\n".join(errors))


def all_outputs():
    outputs = ["results/tables/treebank_stats.parquet"]
    outputs += [ingested(tb, split) for tb, split in treebank_splits()]
    outputs += nonce_outputs()
    outputs += [items_file(dataset) for dataset in items_datasets()]
    outputs += control_outputs()
    outputs += scoring_outputs()
    outputs += probe_outputs()
    outputs += aggregate_outputs()
    return outputs


# --- aggregate ---
# The aggregate stage reads what the pairs, scoring, probe and nonce stages write. It finds those
# files through these functions of the other stages' blocks (looked up when called, so the order of
# the blocks does not matter) and leaves a table out of all_outputs() while the config produces no
# input for it:
#   items_datasets() -> [dataset, ...]            pairs: the items datasets the config enables
#   items_dataset_kind(dataset) -> kind           pairs, optional: spud | german_case | cola |
#                                                 blimp | japanese (else: the name's prefix)
#   scoring_jobs() -> [(dataset, model), ...]     scoring: each makes
#                                                 results/scores/{dataset}/{model}/item_scores.parquet
#   probe_metrics_files() -> [path, ...]          probe: metrics.parquet files
#   nonce_replacement_tables() -> [path, ...]     nonce: per-treebank replacement statistics
AGGREGATE_KINDS = ("spud", "german_case", "cola", "blimp", "japanese")
TABLES_DIR = "results/tables"
FIGURES_DIR = "results/figures"


def _stage_function(name, default):
    """Another stage's input function from its block of this file, or `default` without it."""
    function = globals().get(name)
    return function() if callable(function) else default


def _kind_from_name(dataset):
    return next((kind for kind in AGGREGATE_KINDS if dataset.startswith(kind)), None)


def aggregate_datasets(kind):
    """The items datasets of one kind the config enables, in config order."""
    kind_of = globals().get("items_dataset_kind") or _kind_from_name
    return [d for d in _stage_function("items_datasets", []) if kind_of(d) == kind]


def aggregate_items(kind):
    return [f"results/items/{d}.parquet" for d in aggregate_datasets(kind)]


def _aggregate_jobs(kind):
    datasets = set(aggregate_datasets(kind))
    return [(d, m) for d, m in _stage_function("scoring_jobs", []) if d in datasets]


def aggregate_scores(kind):
    return [f"results/scores/{d}/{m}/item_scores.parquet" for d, m in _aggregate_jobs(kind)]


def aggregate_models(kind):
    """Models scored on datasets of this kind (for report captions)."""
    return sorted({m for _, m in _aggregate_jobs(kind)})


def aggregate_probe_metrics():
    return list(_stage_function("probe_metrics_files", []))


def aggregate_replacement_tables():
    return list(_stage_function("nonce_replacement_tables", []))


def table_files(name, caption, category):
    """NAME.{csv,parquet,md,tex} under results/tables; the CSV goes into the report."""
    stem = f"{TABLES_DIR}/{name}"
    csv = report(f"{stem}.csv", caption=f"../report/{caption}", category=category)
    return [csv, f"{stem}.parquet", f"{stem}.md", f"{stem}.tex"]


def data_files(name):
    """Per-item data behind a figure: NAME.parquet and NAME.csv, not in the report."""
    return [f"{TABLES_DIR}/{name}.parquet", f"{TABLES_DIR}/{name}.csv"]


def figure_files(name, caption, category):
    """NAME.png and NAME.svg under results/figures; the SVG goes into the report."""
    stem = f"{FIGURES_DIR}/{name}"
    svg = report(f"{stem}.svg", caption=f"../report/{caption}", category=category)
    return [svg, f"{stem}.png"]


def aggregate_outputs():
    """The aggregate targets whose inputs the config produces (one file per rule suffices)."""
    wanted = {
        "spud": ["tables/spud_ratio_summary.parquet", "figures/spud_log_ratios.svg"],
        "german_case": ["tables/german_case_auc.parquet", "figures/german_case_roc.svg"],
        "cola": ["tables/cola_thresholds.parquet"],
        "blimp": ["tables/blimp_overall.parquet", "figures/blimp_fields.svg"],
        "japanese": ["tables/japanese_accuracy.parquet", "figures/japanese_agreement.svg"],
    }
    outputs = [f"results/{f}" for kind, files in wanted.items() if aggregate_scores(kind)
               for f in files]
    if aggregate_probe_metrics():
        outputs += ["results/tables/probe_summary.parquet", "results/figures/probe_layers.svg"]
    if aggregate_replacement_tables():
        outputs.append("results/tables/nonce_replacements.parquet")
    return outputs


# --- pairs ---
import shlex

JAPANESE_VARIANTS = ("base", "rare", "longer", "relative")


def pairs_section(name):
    """The config of one items dataset family under `pairs:` ({} when absent)."""
    return (config.get("pairs") or {}).get(name) or {}


def pairs_enabled(name):
    return bool(pairs_section(name).get("enabled", False))


def spud_items_splits():
    """SPUD items dataset name -> (treebank, split). Needs the nonce stage: without a `nonce:`
    config section there are no nonce treebanks, hence no SPUD items."""
    if not pairs_enabled("spud") or "nonce" not in config:
        return {}
    chosen = pairs_section("spud").get("treebanks") or list(config["treebanks"])
    unknown = [tb for tb in chosen if tb not in config["treebanks"]]
    if unknown:
        raise ValueError(f"config pairs.spud.treebanks: unknown treebank(s) {unknown}")
    datasets = {}
    for tb, split in treebank_splits():
        if tb in chosen:
            name = f"spud_{tb}_{split}"
            if name in datasets:
                raise ValueError(f"config treebanks: two splits give the dataset name {name}")
            datasets[name] = (tb, split)
    return datasets


def japanese_variants():
    if not pairs_enabled("japanese_transitivity"):
        return []
    chosen = pairs_section("japanese_transitivity").get("datasets") or []
    return [v for v in JAPANESE_VARIANTS if v in chosen]


def items_datasets():
    """Names of the items datasets the config enables (results/items/{name}.parquet)."""
    names = list(spud_items_splits())
    if pairs_enabled("german_case"):
        names.append("german_case")
    names += [f"japanese_transitivity_{v}" for v in japanese_variants()]
    for name in ("cola", "blimp"):
        if pairs_enabled(name):
            names.append(name)
    return names


def items_dataset_language(dataset):
    """The language of an items dataset's sentences."""
    splits = spud_items_splits()
    if dataset in splits:
        return treebank_lang(splits[dataset][0])
    if dataset == "german_case":
        return "de"
    if dataset.startswith("japanese_transitivity_"):
        return "ja"
    return "en"  # cola, blimp


def items_file(dataset):
    return f"results/items/{dataset}.parquet"


def nonce_tokens(treebank, split):
    """tokens.parquet of every nonce version (methods x seeds of `nonce:`) of a split."""
    nonce = config["nonce"]
    return [f"results/nonce/{treebank}/{split}/{method}/seed{seed}/tokens.parquet"
            for method in nonce["methods"] for seed in nonce["seeds"]]


def spud_items_input(wildcards):
    datasets = spud_items_splits()
    if wildcards.dataset not in datasets:
        raise ValueError(f"{wildcards.dataset} is not a SPUD items dataset of the config "
                         f"(known: {', '.join(datasets) or 'none'})")
    treebank, split = datasets[wildcards.dataset]
    return {"orig": ingested(treebank, split), "nonce": nonce_tokens(treebank, split)}


def spud_leave_out_args(dataset):
    """`--leave-out-share`: the split's training share (config training_shares) is not scored."""
    treebank, split = spud_items_splits()[dataset]
    share = training_shares().get(f"{treebank}/{split}")
    if not share:
        return ""
    return f"--leave-out-share {share['share']} --share-seed {share.get('seed', 0)}"


def nonce_args(nonce_tokens_files):
    """`--nonce DIR` options for the nonce versions' tokens.parquet files."""
    return " ".join(f"--nonce {shlex.quote(str(Path(f).parent))}" for f in nonce_tokens_files)


def sample_args(sample):
    """`--sample N --seed S` from a `sample: {n, seed}` config entry; "" keeps everything."""
    sample = sample or {}
    if sample.get("n") is None:
        return ""
    return f"--sample {sample['n']} --seed {sample.get('seed', 0)}"


def blimp_files():
    """The paradigm files of pairs.blimp.paths; a directory stands for its *.jsonl files."""
    files = []
    for location in pairs_section("blimp").get("paths", []):
        path = Path(location)
        files += sorted(str(p) for p in path.glob("*.jsonl")) if path.is_dir() else [location]
    return files


# --- nonce ---
# A split's nonce treebanks: results/nonce/{treebank}/{split}/{method}/seed{seed}/, one per method
# and seed of the `nonce:` section (none without it). The lexicon of a split is built from every
# configured split of its language.
import shlex


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    ngram=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    method=r"spud|pos",
    seed=r"[0-9]+",


def nonce_config(key):
    return config["nonce"][key]


def nonce_dir(treebank, split, method, seed):
    return f"results/nonce/{treebank}/{split}/{method}/seed{seed}"


def nonce_runs():
    """(treebank, split, method, seed) of every configured nonce treebank."""
    if "nonce" not in config:
        return []
    return [(tb, split, method, seed) for tb, split in treebank_splits()
            for method in nonce_config("methods") for seed in nonce_config("seeds")]


def nonce_stats_files():
    return [f"{nonce_dir(*run)}/replacement_stats.parquet" for run in nonce_runs()]


def nonce_replacement_tables():
    """For the aggregate stage: the per-split replacement statistics (docs/nonce.md)."""
    return nonce_stats_files()


def nonce_outputs():
    runs = nonce_runs()
    outputs = []
    for run in runs:
        outputs += [f"{nonce_dir(*run)}/tokens.parquet", f"{nonce_dir(*run)}/nonce.conllu"]
    if runs:
        outputs += ["results/tables/nonce_replacement_ratio.parquet",
                    "results/tables/nonce_type_token_ratio.parquet"]
    return outputs


def nonce_pool_inputs(wildcards):
    """Ingested splits named in config nonce.pools for this treebank."""
    inputs = []
    for name in nonce_config("pools").get(wildcards.treebank, []):
        tb, split = name.split("/", 1)
        if split not in config["treebanks"].get(tb, {}).get("splits", {}):
            raise ValueError(f"config key nonce.pools.{wildcards.treebank}: {name!r} is not a "
                             "configured treebank/split")
        inputs.append(ingested(tb, split))
    return inputs


def nonce_lexicon_inputs(wildcards):
    """Every other ingested split of the treebank's language: the lexicon's data."""
    lang = treebank_lang(wildcards.treebank)
    return [ingested(tb, split) for tb, split in treebank_splits()
            if treebank_lang(tb) == lang and (tb, split) != (wildcards.treebank, wildcards.split)]


def nonce_lexicon_files(wildcards):
    return nonce_config("lexicons").get(treebank_lang(wildcards.treebank), [])


def _dirs_option(flag, tokens_files):
    dirs = [str(Path(f).parent) for f in tokens_files]
    return f"{flag} {' '.join(shlex.quote(d) for d in dirs)}" if dirs else ""


def nonce_arguments(wildcards, input):
    """The optional arguments of `spudflow nonce` for one run, shell-quoted."""
    lang = treebank_lang(wildcards.treebank)
    options = nonce_config("languages").get(lang, {})
    return " ".join(filter(None, [
        f"--upos {','.join(nonce_config('upos'))}",
        _dirs_option("--pool", input.pools),
        _dirs_option("--lexicon-from", input.lexicon_from),
        f"--lexicon {' '.join(shlex.quote(f) for f in input.lexicons)}" if input.lexicons else "",
        *[f"--option {name}={str(value).lower()}" for name, value in sorted(options.items())],
    ]))


# --- scoring ---
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
    if (spec.get("sample") or {}).get("n") is not None:
        args += ["--sample", str(spec["sample"]["n"]), "--sample-seed",
                 str(spec["sample"].get("seed", 0))]
    for key in ("device", "dtype", "batch_tokens"):
        if spec.get(key) is not None:
            args += [f"--{key.replace('_', '-')}", str(spec[key])]
    if spec.get("trust_remote_code"):
        args.append("--trust-remote-code")
    for path in unigram_inputs():
        args += ["--unigram", path]
    return " ".join(shlex.quote(a) for a in args)


def training_text_inputs(entries):
    """Training text of a model the pipeline trains (n-gram, control): `treebank/split` entries
    are ingested splits, `treebank/split:train` their training shares, anything else is a text
    file."""
    inputs = []
    for entry in entries:
        name = entry.removesuffix(":train")
        treebank, _, split = name.partition("/")
        if treebank in config["treebanks"] and split in config["treebanks"][treebank]["splits"]:
            if name == entry:
                inputs.append(ingested(treebank, split))
            elif name in training_shares():
                inputs.append(f"{training_share_dir(treebank, split)}/tokens.parquet")
            else:
                raise ValueError(f"config: training text {entry!r} names a training share, but "
                                 f"training_shares has no entry {name!r}")
        else:
            inputs.append(entry)
    return inputs


def training_text_sources(paths):
    """The command-line sources of training_text_inputs(): a split's directory, or the file."""
    return [str(Path(p).parent) if Path(p).name == "tokens.parquet" else p for p in paths]


def ngram_text_inputs(wildcards):
    return training_text_inputs(config["ngrams"][wildcards.ngram]["text"])


def ngram_train_args(wildcards, input):
    spec = config["ngrams"][wildcards.ngram]
    args = [*training_text_sources(input.text), "--lang", spec["lang"], "--order", str(spec.get("order", 3)),
            "--k", str(spec.get("k", 1.0)), "--discount", str(spec.get("discount", 0.75)),
            "--min-count", str(spec.get("min_count", 1))]
    return " ".join(shlex.quote(a) for a in args)


def score_outputs(dataset, model):
    return [f"results/scores/{dataset}/{model}/{name}.parquet"
            for name in ("token_scores", "item_scores")]


def scoring_jobs():
    """(dataset, model) of every scoring job: every dataset for every model, or the model's own
    `datasets:` list when it has one, and only datasets in the model's `languages` (when set).
    The aggregate stage reads their item_scores."""
    jobs = []
    for model in scoring_models():
        only = model_config(model).get("datasets")
        languages = model_config(model).get("languages")
        jobs += [(d, model) for d in scoring_datasets() if (only is None or d in only)
                 and (languages is None or items_dataset_language(d) in languages)]
    return jobs


def scoring_outputs():
    return [path for dataset, model in scoring_jobs() for path in score_outputs(dataset, model)]


# Scatter/gather: a model with more than one shard scores each dataset in `score_shard` jobs
# (results/scores/{dataset}/{model}/shards/{i}-of-{n}/) that `score_gather` joins into the files
# `score` writes for the others. Each model is matched by exactly one of the two rules that write
# results/scores/{dataset}/{model}/*.parquet (their `model` wildcard constraints below).
def model_shards(model):
    """Number of shards of the model's scoring jobs: its `shards:`, else `scoring.shards`."""
    return model_config(model).get("shards") or config.get("scoring", {}).get("shards", 1)


def scoring_models_pattern(sharded):
    """Regex matching exactly the configured models with (or without) several shards."""
    import re

    names = [m for m in scoring_models() if (model_shards(m) > 1) == sharded]
    return "|".join(re.escape(name) for name in names) or "(?!)"  # (?!): matches nothing


def score_shard_dirs(wildcards):
    n = model_shards(wildcards.model)
    return [f"results/scores/{wildcards.dataset}/{wildcards.model}/shards/{i}-of-{n}"
            for i in range(1, n + 1)]


def score_shard_inputs(wildcards):
    return [f"{d}/{name}.parquet" for d in score_shard_dirs(wildcards)
            for name in ("token_scores", "item_scores")]


# --- probe ---
# DepProbe (docs/probe.md). Features: one file per (model, variant, treebank, split, eval set)
# under results/probe/features/, variant = lm (the model itself) or a baseline (M0, MR, MRC);
# runs: results/probe/runs/{model}/{variant}/dist{D}_label{L}/seed{S}/. Nothing without an
# enabled `probe:` section.
import shlex

PROBE_VARIANTS = ("lm", "M0", "MR", "MRC")


wildcard_constraints:
    probe_model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    variant=r"lm|M0|MR|MRC",
    probe_set=r"orig|(?:spud|pos)/seed[0-9]+",
    probe_seed=r"[0-9]+",
    dist=r"[0-9]+",
    label=r"[0-9]+",
    shard=r"[0-9]+",


def probe_enabled():
    return bool(config.get("probe")) and config["probe"].get("enabled", True)


def probe_config(key):
    return config["probe"][key]


def probe_model_config(model):
    return config["probe"]["models"][model]


def probe_split(key):
    """(treebank, split) of probe.train / probe.dev / probe.test (None for a null dev)."""
    value = config["probe"].get(key)
    if value is None:
        return None
    treebank, _, split = value.partition("/")
    if split not in config["treebanks"].get(treebank, {}).get("splits", {}):
        raise ValueError(f"config key probe.{key}: {value!r} is not a configured treebank/split")
    return treebank, split


def probe_nonce_sets():
    """Eval set names of the test split's nonce versions: spud/seed1, ..."""
    if not config["probe"].get("nonce", True) or "nonce" not in config:
        return []
    return [f"{method}/seed{seed}" for method in nonce_config("methods")
            for seed in nonce_config("seeds")]


def probe_treebank_tokens(treebank, split, probe_set):
    if probe_set == "orig":
        return ingested(treebank, split)
    method, seed_dir = probe_set.split("/")  # spud/seed1
    return f"{nonce_dir(treebank, split, method, seed_dir.removeprefix('seed'))}/tokens.parquet"


def probe_variants(model):
    return ["lm", *probe_model_config(model).get("baselines", [])]


def probe_layer_pairs(model, variant):
    """(dist, label) layer pairs probed for a model variant; the sweep adds (l, l) for every
    layer of the model itself."""
    spec = probe_model_config(model)
    if variant == "M0":
        return [(0, 0)]
    pairs = [(spec["dist_layer"], spec["label_layer"])]
    if variant == "lm" and config["probe"].get("layer_sweep"):
        if not spec.get("layers"):
            raise ValueError(f"config key probe.models.{model}.layers: needed by layer_sweep")
        pairs += [(layer, layer) for layer in range(spec["layers"] + 1)]
    return list(dict.fromkeys(pairs))


def probe_feature_layers(wildcards):
    pairs = probe_layer_pairs(wildcards.probe_model, wildcards.variant)
    return ",".join(str(layer) for layer in sorted({layer for pair in pairs for layer in pair}))


def probe_features_file(model, variant, treebank, split, probe_set):
    return f"results/probe/features/{model}/{variant}/{treebank}/{split}/{probe_set}.safetensors"


def probe_feature_treebank(wildcards):
    return probe_treebank_tokens(wildcards.treebank, wildcards.split, wildcards.probe_set)


def probe_model_inputs(wildcards):
    source = probe_model_config(wildcards.probe_model)["source"]
    return [source] if is_pipeline_path(source) else []


def probe_feature_args(wildcards):
    """`spudflow probe features` options of one feature job (docs/probe.md)."""
    spec = probe_model_config(wildcards.probe_model)
    args = ["--layers", probe_feature_layers(wildcards), "--device", spec.get("device", "auto")]
    if wildcards.variant != "lm":
        args += ["--baseline", wildcards.variant, "--init-seed", str(spec.get("init_seed", 0))]
    if spec.get("max_length") is not None:
        args += ["--max-length", str(spec["max_length"])]
    sample = config["probe"].get("sample") or {}
    if sample.get("n") is not None:
        args += ["--sample", str(sample["n"]), "--sample-seed", str(sample.get("seed", 0))]
    return " ".join(shlex.quote(a) for a in args)


def probe_shards():
    return int(config["probe"].get("feature_shards", 1)) if probe_enabled() else 1


def probe_shard_files(wildcards):
    stem = probe_features_file(wildcards.probe_model, wildcards.variant, wildcards.treebank,
                               wildcards.split, wildcards.probe_set)[:-len(".safetensors")]
    return [f"{stem}.shard{i}.safetensors" for i in range(probe_shards())]


def probe_eval_sets():
    return ["orig", *probe_nonce_sets()]


def probe_train_inputs(wildcards):
    """Feature files and treebanks of a probe run: train, dev (when configured), eval sets."""
    model, variant = wildcards.probe_model, wildcards.variant
    inputs = {}
    for role in ("train", "dev"):
        split = probe_split(role)
        if split:
            inputs[f"{role}_features"] = probe_features_file(model, variant, *split, "orig")
            inputs[f"{role}_treebank"] = ingested(*split)
    test = probe_split("test")
    inputs["eval_features"] = [probe_features_file(model, variant, *test, s)
                               for s in probe_eval_sets()]
    inputs["eval_treebanks"] = [probe_treebank_tokens(*test, s) for s in probe_eval_sets()]
    return inputs


def probe_train_args(wildcards, input):
    """`spudflow probe train` options of one run (docs/probe.md), shell-quoted."""
    probe = config["probe"]
    parent = lambda path: str(Path(path).parent)
    args = ["--train", input.train_features, parent(input.train_treebank)]
    if "dev_features" in input.keys():
        args += ["--dev", input.dev_features, parent(input.dev_treebank)]
    else:
        args += ["--holdout", str(probe.get("holdout", 0.1)),
                 "--holdout-seed", str(probe.get("holdout_seed", 0))]
    for name, features, tokens in zip(probe_eval_sets(), input.eval_features,
                                      input.eval_treebanks):
        args += ["--eval", name, features, parent(tokens)]
    args += ["--dist-layer", wildcards.dist, "--label-layer", wildcards.label,
             "--seed", wildcards.probe_seed, "--treebank", probe_split("test")[0],
             "--model", wildcards.probe_model, "--min-words", str(probe.get("min_words", 4)),
             "--distance", probe.get("distance", "squared"), "--rank", str(probe.get("rank", 128)),
             "--lr", str(probe.get("lr", 0.001)), "--batch-size", str(probe.get("batch_size", 32)),
             "--max-epochs", str(probe.get("max_epochs", 30)),
             "--patience", str(probe.get("patience", 3))]
    if wildcards.variant != "lm":
        args += ["--baseline", wildcards.variant]
    if probe.get("subtypes"):
        args.append("--subtypes")
    if not probe.get("punct", True):
        args.append("--no-punct")
    return " ".join(shlex.quote(str(a)) for a in args)


def probe_run_dir(model, variant, dist, label, seed):
    return f"results/probe/runs/{model}/{variant}/dist{dist}_label{label}/seed{seed}"


def probe_runs():
    """(model, variant, dist, label, seed) of every configured probe run."""
    if not probe_enabled():
        return []
    return [(model, variant, dist, label, seed) for model in config["probe"]["models"]
            for variant in probe_variants(model)
            for dist, label in probe_layer_pairs(model, variant)
            for seed in config["probe"].get("seeds", [1, 2, 3])]


def probe_metrics_files():
    """For the aggregate stage: metrics.parquet of every probe run."""
    return [f"{probe_run_dir(*run)}/metrics.parquet" for run in probe_runs()]


def probe_outputs():
    return probe_metrics_files()


# --- controls ---
# Control LMs trained from scratch on treebank text: results/controls/{control}/, a
# save_pretrained directory that a `models:` entry uses as `source: results/controls/NAME`.
wildcard_constraints:
    control=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


def control_config(control):
    return config["controls"][control]


def control_dir(control):
    return f"results/controls/{control}"


def control_outputs():
    return [control_dir(name) for name in config.get("controls") or {}]


def control_text_inputs(wildcards):
    """Training text: `treebank/split` entries are ingested splits, anything else a text file;
    null: every configured split."""
    entries = control_config(wildcards.control).get("text")
    if entries is None:
        return [ingested(tb, split) for tb, split in treebank_splits()]
    return training_text_inputs(entries)


def control_train_args(wildcards, input):
    """`spudflow train-control` options from the control's config entry (docs/controls.md)."""
    spec = control_config(wildcards.control)
    args = ["--kind", spec["kind"]]
    for source in training_text_sources(input.text):
        args += ["--text", source]
    for key in ("seed", "vocab_size", "layers", "hidden", "heads", "max_length", "epochs",
                "batch_size", "learning_rate", "max_sentences"):
        if spec.get(key) is not None:
            args += [f"--{key.replace('_', '-')}", str(spec[key])]
    return " ".join(shlex.quote(a) for a in args)
