# Input functions and config lookups of the probe stage's rules (rules/probe.smk).
PROBE_TRAIN_OPTIONS = (
    "min_words",
    "distance",
    "rank",
    "lr",
    "batch_size",
    "max_epochs",
    "patience",
)


def probe_enabled():
    return "probe" in config and config["probe"]["enabled"]


def probe_model_config(model):
    return config["probe"]["models"][model]


def probe_split(key):
    """(treebank, split) of probe.train / probe.dev / probe.test (None for a null dev)."""
    value = config["probe"].get(key)
    return None if value is None else configured_split(value, f"probe.{key}")


def probe_eval_sets():
    """`orig` and the eval set names of the test split's nonce versions: spud/seed1, ..."""
    if not config["probe"]["nonce"] or "nonce" not in config:
        return ["orig"]
    nonce = config["nonce"]
    return ["orig", *(f"{m}/seed{s}" for m in nonce["methods"] for s in nonce["seeds"])]


def probe_treebank_tokens(treebank, split, probe_set):
    if probe_set == "orig":
        return ingested(treebank, split)
    method, seed_dir = probe_set.split("/")  # spud/seed1
    return f"{nonce_dir(treebank, split, method, seed_dir.removeprefix('seed'))}/tokens.parquet"


PROBE_AUTO = "auto"


def probe_auto_layers(model):
    """The model has a layer `auto`: chosen by its layer sweep (App. F.6), which then runs."""
    spec = probe_model_config(model)
    return PROBE_AUTO in (spec["dist_layer"], spec["label_layer"])


def probe_sweep_layers(model):
    spec = probe_model_config(model)
    if not spec["layers"]:
        raise ValueError(
            f"config key probe.models.{model}.layers: needed by layer_sweep and `auto`"
        )
    return list(range(spec["layers"] + 1))


def probe_layer_pairs(model, variant):
    """(dist, label) layer pairs probed for a model variant (a layer may be `auto`); the sweep
    adds (l, l) for every layer of the model itself."""
    spec = probe_model_config(model)
    if variant == "M0":
        return [(0, 0)]
    pairs = [(spec["dist_layer"], spec["label_layer"])]
    if variant == "lm" and (config["probe"]["layer_sweep"] or probe_auto_layers(model)):
        pairs += [(layer, layer) for layer in probe_sweep_layers(model)]
    return list(dict.fromkeys(pairs))


def probe_layer_choice_file(treebank, model):
    """The layers `auto` stands for (rule probe_select_layers), per test treebank and model."""
    return f"results/probe/layers/{treebank}/{model}.parquet"


def probe_layer_choice_files():
    """Layer choices of the models with an `auto` layer (read by the aggregate stage)."""
    if not probe_enabled():
        return []
    test = probe_split("test")[0]
    models = [m for m in config["probe"]["models"] if probe_auto_layers(m)]
    return [probe_layer_choice_file(test, m) for m in models]


def probe_sweep_metrics(wildcards):
    """metrics.parquet of every sweep run (model itself, (l, l), every seed) of one model."""
    if wildcards.treebank != probe_split("test")[0]:
        raise ValueError(f"{wildcards.treebank}: the probes are tested on {probe_split('test')}")
    return [
        f"{probe_run_dir(wildcards.probe_model, 'lm', layer, layer, seed)}/metrics.parquet"
        for layer in probe_sweep_layers(wildcards.probe_model)
        for seed in config["probe"]["seeds"]
    ]


def probe_features_file(model, variant, treebank, split, probe_set):
    return f"results/probe/features/{model}/{variant}/{treebank}/{split}/{probe_set}.safetensors"


def probe_feature_treebank(wildcards):
    return probe_treebank_tokens(wildcards.treebank, wildcards.split, wildcards.probe_set)


def probe_model_inputs(wildcards):
    return model_path_inputs(probe_model_config(wildcards.probe_model)["source"])


def probe_feature_args(wildcards):
    """`spudflow probe features` options of one feature job (docs/probe.md)."""
    spec = probe_model_config(wildcards.probe_model)
    pairs = probe_layer_pairs(wildcards.probe_model, wildcards.variant)
    layers = {layer for pair in pairs for layer in pair}
    if PROBE_AUTO in layers:  # whichever layer the sweep chooses
        layers = set(probe_sweep_layers(wildcards.probe_model))
    layers = sorted(layers)
    args = ["--layers", ",".join(map(str, layers)), "--device", spec["device"]]
    if wildcards.variant != "lm":
        args += ["--baseline", wildcards.variant, "--init-seed", spec["init_seed"]]
    args = quoted(args + cli_options(spec, ("max_length",)))
    return " ".join(filter(None, [args, sample_args(config["probe"]["sample"], "--sample-seed")]))


# With probe.feature_shards > 1, each split's features are scattered over shard jobs (contiguous
# blocks of sentences) and gathered into the file one job would have written; each features file
# is made by exactly one of probe_features and probe_features_gather (their wildcard constraints).
def probe_shards():
    return config["probe"]["feature_shards"] if probe_enabled() else 1


def probe_models_pattern(sharded):
    """Regex matching every probe model when the features are (not) sharded, else nothing."""
    return r"[A-Za-z0-9][A-Za-z0-9_.-]*" if (probe_shards() > 1) == sharded else "(?!)"


def probe_shard_files(wildcards):
    stem = probe_features_file(
        wildcards.probe_model,
        wildcards.variant,
        wildcards.treebank,
        wildcards.split,
        wildcards.probe_set,
    ).removesuffix(".safetensors")
    return [f"{stem}.shard{i}.safetensors" for i in range(1, probe_shards() + 1)]


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
    inputs["eval_features"] = [
        probe_features_file(model, variant, *test, s) for s in probe_eval_sets()
    ]
    inputs["eval_treebanks"] = [probe_treebank_tokens(*test, s) for s in probe_eval_sets()]
    if PROBE_AUTO in (wildcards.dist, wildcards.label):
        inputs["layer_choice"] = probe_layer_choice_file(test[0], model)
    return inputs


def probe_train_args(wildcards, input):
    """`spudflow probe train` options of one run (docs/probe.md), shell-quoted."""
    probe = config["probe"]
    parent = lambda path: str(Path(path).parent)
    args = ["--train", input.train_features, parent(input.train_treebank)]
    if "dev_features" in input.keys():
        args += ["--dev", input.dev_features, parent(input.dev_treebank)]
    else:
        args += cli_options(probe, ("holdout", "holdout_seed"))
    for name, features, tokens in zip(probe_eval_sets(), input.eval_features, input.eval_treebanks):
        args += ["--eval", name, features, parent(tokens)]
    args += ["--dist-layer", wildcards.dist, "--label-layer", wildcards.label]
    if "layer_choice" in input.keys():
        args += ["--layer-choice", input.layer_choice]
    args += ["--seed", wildcards.probe_seed, "--treebank", probe_split("test")[0]]
    args += ["--model", wildcards.probe_model, *cli_options(probe, PROBE_TRAIN_OPTIONS)]
    if wildcards.variant != "lm":
        args += ["--baseline", wildcards.variant]
    args += cli_options(probe, ("subtypes",))
    if not probe["punct"]:
        args.append("--no-punct")
    return quoted(args)


def probe_run_dir(model, variant, dist, label, seed):
    return f"results/probe/runs/{model}/{variant}/dist{dist}_label{label}/seed{seed}"


def probe_metrics_files():
    """metrics.parquet of every configured probe run; the aggregate stage reads them."""
    if not probe_enabled():
        return []
    return [
        f"{probe_run_dir(model, variant, dist, label, seed)}/metrics.parquet"
        for model in config["probe"]["models"]
        for variant in ["lm", *probe_model_config(model)["baselines"]]
        for dist, label in probe_layer_pairs(model, variant)
        for seed in config["probe"]["seeds"]
    ]


def probe_gold_sets():
    """(treebank, eval set, gold tokens.parquet) of every eval set of the probe runs."""
    if not probe_enabled():
        return []
    test = probe_split("test")
    return [(test[0], s, probe_treebank_tokens(*test, s)) for s in probe_eval_sets()]


def probe_gold_treebanks():
    return [tokens for _, _, tokens in probe_gold_sets()]


def probe_edge_args(wildcards, input):
    """`spudflow table-probe-edges` options: the gold treebanks, and the runs' word counting."""
    args = []
    for treebank, eval_set, tokens in probe_gold_sets():
        args += ["--gold", treebank, eval_set, str(Path(tokens).parent)]
    if not config["probe"]["punct"]:
        args.append("--no-punct")
    if config["probe"]["subtypes"]:
        args.append("--subtypes")
    return quoted(args)
