# Input functions and config lookups of the probe stage's rules (rules/probe.smk).
import math

from spudflow.core import nonce_plan
from spudflow.core.probe_tasks import probe_tasks as configured_probe_tasks
from spudflow.core.probe_tasks import split_from_dir
from spudflow.core.training_share import PART_SEPARATOR, PARTS
from spudflow.probe.layer_choice import AUTO
from spudflow.probe.model_shape import model_shape

# The feature directory of a split: a split, or a share of one (SPLIT@train, SPLIT@heldout).
PROBE_SPLIT_DIR = rf"[A-Za-z0-9_-]+(?:{PART_SEPARATOR}(?:{'|'.join(PARTS)}))?"
# `spudflow probe train` options with the same name as the probe section's keys, in this order.
PROBE_TRAIN_OPTIONS = (
    "min_words",
    "distance",
    "rank",
    "lr",
    "batch_size",
    "max_epochs",
    "patience",
    "acl_predicted_as_unk",
    "max_train_sentences",
    "max_dev_sentences",
    "max_sentences_seed",
)


def probe_enabled():
    return "probe" in config and config["probe"]["enabled"]


def probe_seeds():
    """One probe run per seed; one probe_train job trains them all (any list outside a probe
    section: the rule's outputs are defined, and never asked for)."""
    return config["probe"]["seeds"] if "probe" in config else [1]


def probe_model_config(model):
    return config["probe"]["models"][model]


def probe_tasks():
    """treebank -> its task (spudflow.core.probe_tasks): checked, a config error otherwise."""
    return configured_probe_tasks(config) if probe_enabled() else {}


def probe_eval_sets():
    """`orig` and, when the probes are tested on nonce versions, the eval set names of the test
    split's versions (spudflow.core.nonce_plan): spud/seed1, ..."""
    if not nonce_plan.probe_tests_nonce(config):
        return ["orig"]
    return ["orig", *(f"{m}/seed{s}" for m, s in nonce_plan.nonce_versions(config))]


def probe_split_eval_sets(treebank, split_dir):
    """The eval sets a split's feature job extracts: every one (probe_eval_sets) on a task's
    test split (or share), `orig` on a split only trained or selected on."""
    tested = {(task.test.treebank, task.test.dir_name) for task in probe_tasks().values()}
    return probe_eval_sets() if (treebank, split_dir) in tested else ["orig"]


def probe_treebank_tokens(treebank, split, eval_set):
    if eval_set == "orig":
        return ingested(treebank, split)
    method, seed_dir = eval_set.split("/")  # spud/seed1
    return f"{nonce_dir(treebank, split, method, seed_dir.removeprefix('seed'))}/tokens.parquet"


def probe_task_layers(treebank, model):
    """(dist, label) layers of a model in a treebank's task (its `layers` override the
    model's); either may be `auto`."""
    return probe_tasks()[treebank].layer_pair(model, config["probe"]["models"])


def probe_auto_layers(treebank, model):
    """A layer is `auto`: chosen by the model's layer sweep (App. F.6), which then runs."""
    return AUTO in probe_task_layers(treebank, model)


def probe_sweep_layers(model):
    spec = probe_model_config(model)
    if not spec["layers"]:
        raise ValueError(
            f"config key probe.models.{model}.layers: needed by layer_sweep and `auto`"
        )
    return list(range(spec["layers"] + 1))


def probe_layer_pairs(treebank, model, baseline):
    """(dist, label) layer pairs probed for a model's baseline (`lm`: the model itself) in a
    treebank's task (a layer may be `auto`); the sweep adds (l, l) for every layer of `lm`."""
    if baseline == "M0":
        return [(0, 0)]
    pairs = [probe_task_layers(treebank, model)]
    if baseline == "lm" and (config["probe"]["layer_sweep"] or probe_auto_layers(treebank, model)):
        pairs += [(layer, layer) for layer in probe_sweep_layers(model)]
    return list(dict.fromkeys(pairs))


def probe_layer_choice_file(treebank, model):
    """The layers `auto` stands for (rule probe_select_layers), per task treebank and model."""
    return f"results/probe/layers/{treebank}/{model}.parquet"


def probe_layer_choice_files():
    """Layer choices of the tasks' models with an `auto` layer (read by the aggregate stage)."""
    return [
        probe_layer_choice_file(treebank, model)
        for treebank, task in probe_tasks().items()
        for model in task.models
        if probe_auto_layers(treebank, model)
    ]


def probe_sweep_metrics(wildcards):
    """metrics.parquet of every sweep run (model itself, (l, l), every seed) of one model."""
    run_dir = lambda layer, seed: probe_run_dir(
        wildcards.treebank, wildcards.probe_model, "lm", layer, layer, seed
    )
    return [
        f"{run_dir(layer, seed)}/metrics.parquet"
        for layer in probe_sweep_layers(wildcards.probe_model)
        for seed in config["probe"]["seeds"]
    ]


def probe_baselines(model):
    """Every baseline a model is probed as: `lm` (the model itself) and its configured ones;
    one feature job builds them all."""
    return ["lm", *probe_model_config(model)["baselines"]]


def probe_features_dir(model, probe_split):
    """The feature job's directory of a ProbeSplit (a share's is SPLIT@train / SPLIT@heldout):
    {baseline}/{eval set}.safetensors for each of the model's baselines."""
    return f"results/probe/features/{model}/{probe_split.treebank}/{probe_split.dir_name}"


def probe_eval_set_file(features_dir, baseline, eval_set):
    """One baseline's file of one eval set in a feature directory (spudflow.probe.feature_file)."""
    from spudflow.probe.feature_file import eval_set_file

    return eval_set_file(f"{features_dir}/{baseline}", eval_set)


def probe_wildcard_split(wildcards):
    return split_from_dir(wildcards.treebank, wildcards.split)


def probe_feature_inputs(wildcards):
    """The treebanks (original and nonce versions) of a feature job's eval sets and, for a
    share, the share's sentences, which restrict them (the same sentences in every version)."""
    found = probe_wildcard_split(wildcards)
    inputs = {
        "tokens": [
            probe_treebank_tokens(found.treebank, found.split, s)
            for s in probe_split_eval_sets(wildcards.treebank, wildcards.split)
        ]
    }
    if found.part:
        share = share_dir(found.treebank, found.split, found.part)
        inputs["share"] = f"{share}/sentences.parquet"
    return inputs


def probe_model_inputs(wildcards):
    return model_path_inputs(probe_model_config(wildcards.probe_model)["source"])


def probe_feature_layers(treebank, model, baseline):
    """The layers a baseline's features hold: those of its layer pairs, every layer where one
    is `auto` (whichever the sweep chooses)."""
    pairs = probe_layer_pairs(treebank, model, baseline)
    layers = {layer for pair in pairs for layer in pair}
    if AUTO in layers:
        layers = set(probe_sweep_layers(model))
    return ",".join(map(str, sorted(layers)))


# A feature job's memory: its encoder's weights (counted twice: stored float16 ones are loaded
# float32) and, per token row of the treebanks it reads (about 78,000 rows per MB of
# tokens.parquet), about 170 bytes of words plus 2 bytes per hidden unit and layer of its widest
# baseline's float16 features (measured on bench_scale.py's 1x and 16x EWT train,
# docs/running.md); a quarter of headroom, 6000 MB at least. A hub model not yet in the local
# cache when Snakemake plans gets the 6000.
PROBE_FEATURES_FLOOR_MB = 6000
TOKEN_ROWS_PER_MB = 78_000


def probe_features_memory(wildcards, input):
    model, treebank = wildcards.probe_model, wildcards.treebank
    spec = probe_model_config(model)
    shape = model_shape(spec["source"], spec.get("revision"))
    if shape is None:
        return PROBE_FEATURES_FLOOR_MB
    width, weights_mb = shape
    layers = max(
        len(probe_feature_layers(treebank, model, b).split(",")) for b in probe_baselines(model)
    )
    fraction = 1 / probe_shards() if "shard" in wildcards.keys() else 1
    rows = input_mb(input.tokens) * TOKEN_ROWS_PER_MB * fraction
    held_mb = rows * (170 + 2 * width * layers) / 1e6
    return max(PROBE_FEATURES_FLOOR_MB, math.ceil(1000 + 2 * weights_mb + 1.25 * held_mb))


def probe_feature_args(wildcards):
    """`spudflow probe features` settings of one feature job, every baseline (docs/probe.md):
    a function of the wildcards only, so that Snakemake compares them with the last run's (a
    params function of `input` is not a rerun trigger)."""
    model, treebank = wildcards.probe_model, wildcards.treebank
    spec = probe_model_config(model)
    args = ["--baselines"]
    args += [f"{b}={probe_feature_layers(treebank, model, b)}" for b in probe_baselines(model)]
    args += ["--eval-sets", *probe_split_eval_sets(treebank, wildcards.split)]
    args += ["--device", spec["device"], "--init-seed", spec["init_seed"]]
    args = quoted(args + cli_options(spec, ("max_length", "revision")))
    return " ".join(filter(None, [args, sample_args(config["probe"]["sample"], "--sample-seed")]))


def probe_feature_paths(wildcards, input):
    """`--sentences DIR` of a share's feature job: a path of its input (which it changes with)."""
    return quoted(["--sentences", Path(input.share).parent]) if "share" in input.keys() else ""


# With probe.feature_shards > 1, each split's features are scattered over shard jobs (contiguous
# blocks of sentences, every eval set) and gathered into the directory one job would have
# written; each feature directory is made by exactly one of probe_features and
# probe_features_gather (their wildcard constraints).
def probe_shards():
    return config["probe"]["feature_shards"] if probe_enabled() else 1


def probe_models_pattern(sharded):
    """Regex matching every probe model when the features are (not) sharded, else nothing."""
    return r"[A-Za-z0-9][A-Za-z0-9_.-]*" if (probe_shards() > 1) == sharded else "(?!)"


def probe_shard_dirs(wildcards):
    stem = probe_features_dir(wildcards.probe_model, probe_wildcard_split(wildcards))
    return [f"{stem}.shard{i}" for i in range(1, probe_shards() + 1)]


def probe_gather_memory(wildcards, input):
    """A probe_features_gather job's mem_mb: it holds one gathered file at a time, read from
    its shards and concatenated (twice its bytes: 1.84 GB file, 3.71 GB peak by
    `/usr/bin/time`), with a quarter of headroom; 4000 MB at least. The shard directories are
    there when Snakemake evaluates it again before running the job."""
    gathered = {}  # file name in a shard -> MB over all shards
    for shard in map(Path, input.shards):
        for path in filter(Path.is_file, shard.rglob("*")):
            name = path.relative_to(shard)
            gathered[name] = gathered.get(name, 0) + input_mb([path])
    return max(4000, math.ceil(1000 + 2.5 * max(gathered.values(), default=0)))


def probe_train_inputs(wildcards):
    """Feature directories and treebanks of a probe run: train, dev (when configured), the
    eval sets' (the test split's directory holds them all, of every baseline)."""
    model = wildcards.probe_model
    task = probe_tasks()[wildcards.treebank]
    inputs = {}
    for role in ("train", "dev"):
        found = getattr(task, role)
        if found:
            inputs[f"{role}_features"] = probe_features_dir(model, found)
            inputs[f"{role}_treebank"] = ingested(found.treebank, found.split)
    test = task.test
    inputs["eval_features"] = probe_features_dir(model, test)
    inputs["eval_treebanks"] = [
        probe_treebank_tokens(test.treebank, test.split, s) for s in probe_eval_sets()
    ]
    if AUTO in (wildcards.dist, wildcards.label):
        inputs["layer_choice"] = probe_layer_choice_file(wildcards.treebank, model)
    return inputs


def probe_train_paths(wildcards, input):
    """`spudflow probe train`'s data options of one job: the features and treebanks of its
    train, dev and eval sets and its layer choice, shell-quoted (the job's input: a change
    reruns it as an input change)."""
    parent = lambda path: str(Path(path).parent)
    file = lambda features_dir, name: probe_eval_set_file(features_dir, wildcards.baseline, name)
    orig = lambda features_dir: file(features_dir, "orig")
    args = ["--train", orig(input.train_features), parent(input.train_treebank)]
    if "dev_features" in input.keys():
        args += ["--dev", orig(input.dev_features), parent(input.dev_treebank)]
    for name, tokens in zip(probe_eval_sets(), input.eval_treebanks, strict=True):
        args += ["--eval", name, file(input.eval_features, name), parent(tokens)]
    if "layer_choice" in input.keys():
        args += ["--layer-choice", input.layer_choice]
    return quoted(args)


def probe_train_args(wildcards):
    """`spudflow probe train`'s settings of one job, every seed (docs/probe.md), shell-quoted:
    a function of the wildcards only, so that a changed setting reruns the job (Snakemake
    compares such params with the last run's; one of `input` it does not)."""
    probe = config["probe"]
    args = []
    if not probe_tasks()[wildcards.treebank].dev:
        args += cli_options(probe, ("holdout", "holdout_seed"))
    args += ["--dist-layer", wildcards.dist, "--label-layer", wildcards.label]
    args += ["--seeds", *map(str, probe_seeds()), "--treebank", wildcards.treebank]
    args += ["--model", wildcards.probe_model, *cli_options(probe, PROBE_TRAIN_OPTIONS)]
    if wildcards.baseline != "lm":
        args += ["--baseline", wildcards.baseline]
    return quoted(args + probe_word_options())


def probe_train_memory(wildcards, input):
    """A probe_train job's mem_mb (what SLURM enforces). It holds its baseline's feature files
    as read (float16; the training split's once more when part of it is held out,
    probe.holdout) and its treebanks' words and gold trees, about 36 MB per MB of
    tokens.parquet. Rates from `/usr/bin/time` peaks at 1x and 16x EWT train, 32 and 768 wide,
    with about a quarter of headroom (docs/running.md, "What a full run costs"); 4000 MB at
    least."""
    file = lambda features_dir, name: probe_eval_set_file(features_dir, wildcards.baseline, name)
    train = file(input.train_features, "orig")
    features = [
        train,
        file(input.dev_features, "orig") if "dev_features" in input.keys() else train,
    ]
    features += [file(input.eval_features, name) for name in probe_eval_sets()]
    dev = [input.dev_treebank] if "dev_treebank" in input.keys() else []
    treebanks = [input.train_treebank, *dev, *input.eval_treebanks]
    return max(4000, math.ceil(1000 + 1.25 * input_mb(features) + 36 * input_mb(treebanks)))


def probe_pair_dir(treebank, model, baseline, dist, label):
    """The seed{S} folders of one probe_train job."""
    return f"results/probe/runs/{treebank}/{model}/{baseline}/dist{dist}_label{label}"


def probe_pair_dir_of(wildcards):
    w = wildcards
    return probe_pair_dir(w.treebank, w.probe_model, w.baseline, w.dist, w.label)


def probe_run_dir(treebank, model, baseline, dist, label, seed):
    return f"{probe_pair_dir(treebank, model, baseline, dist, label)}/seed{seed}"


def probe_metrics_files():
    """metrics.parquet of every configured probe run (each task's models); the aggregate stage
    reads them."""
    return [
        f"{probe_run_dir(treebank, model, baseline, dist, label, seed)}/metrics.parquet"
        for treebank, task in probe_tasks().items()
        for model in task.models
        for baseline in probe_baselines(model)
        for dist, label in probe_layer_pairs(treebank, model, baseline)
        for seed in config["probe"]["seeds"]
    ]


def probe_gold_sets():
    """(treebank, eval set, gold tokens.parquet) of every eval set of every task: the whole
    test split (the predictions hold its evaluated sentences, in order)."""
    sets = []
    for treebank, task in probe_tasks().items():
        test = task.test
        sets += [
            (treebank, s, probe_treebank_tokens(test.treebank, test.split, s))
            for s in probe_eval_sets()
        ]
    return sets


def probe_gold_treebanks():
    return [tokens for _, _, tokens in probe_gold_sets()]


def probe_edge_args(wildcards):
    """`spudflow table-probe-edges` options: the gold treebanks, and the runs' word counting."""
    args = []
    for treebank, eval_set, tokens in probe_gold_sets():
        args += ["--gold", treebank, eval_set, str(Path(tokens).parent)]
    return quoted(args + probe_word_options())


def probe_word_options():
    """`--no-punct` / `--subtypes` (probe.punct, probe.subtypes): which words and labels a probe
    run counts; `probe train` and `table-probe-edges` must count the same."""
    probe = config["probe"]
    return (["--no-punct"] if not probe["punct"] else []) + cli_options(probe, ("subtypes",))
