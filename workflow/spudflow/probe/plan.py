"""Input functions, resources and config lookups of the probe stage's rules (rules/probe.smk)."""

from __future__ import annotations

from pathlib import Path

from spudflow.core import device_map
from spudflow.core.artifacts import AUTO
from spudflow.core.plan import Plan
from spudflow.core.plan_base import (
    has_name,
    ingested,
    model_path_inputs,
    quoted,
    sample_args,
    share_dir,
)
from spudflow.core.plan_probe import probe_layer_choice_file, probe_pair_dir, probe_run_dir
from spudflow.core.probe_tasks import split_from_dir
from spudflow.core.rules_support import BASE_MB, cli_options, input_mb, memory_mb
from spudflow.core.training_share import PART_SEPARATOR, PARTS
from spudflow.probe.feature_file import eval_set_file
from spudflow.probe.model_shape import model_shape

# The feature directory of a split: a split, or a share of one (SPLIT@train, SPLIT@heldout).
PROBE_SPLIT_DIR = rf"[A-Za-z0-9_-]+(?:{PART_SEPARATOR}(?:{'|'.join(PARTS)}))?"
# Baselines with random weights, drawn for the model built (up to its highest layer).
RANDOM_BASELINES = ("MR", "MRC")
# `spudflow probe train` options with the same name as the probe section's keys, in this order.
PROBE_TRAIN_OPTIONS = (
    "min_words",
    "distance",
    "rank",
    "lr",
    "batch_size",
    "max_epochs",
    "patience",
    "batches",
    "acl_predicted_as_unk",
    "max_train_sentences",
    "max_dev_sentences",
    "max_sentences_seed",
)
# A feature job's memory: its encoder's weights (counted twice: stored float16 ones are loaded
# float32) and, per token row of the treebanks it reads (about 78,000 rows per MB of
# tokens.parquet), about 170 bytes of words plus 2 bytes per hidden unit and layer of its widest
# baseline's float16 features (measured on bench_scale.py's 1x and 16x EWT train,
# docs/running.md); a quarter of headroom, 6000 MB at least. A hub model not yet in the local
# cache when Snakemake plans gets the 6000.
PROBE_FEATURES_FLOOR_MB = 6000
TOKEN_ROWS_PER_MB = 78_000


def probe_eval_set_file(features_dir, baseline, eval_set):
    """One baseline's file of one eval set in a feature directory (spudflow.probe.feature_file)."""
    return eval_set_file(f"{features_dir}/{baseline}", eval_set)


def features_mb(rows, width, layers):
    """MB of features held for `rows` token rows: float16, `width` hidden units, `layers`."""
    return rows * 2 * width * layers / 1e6


def probe_wildcard_split(wildcards):
    return split_from_dir(wildcards.treebank, wildcards.split)


def probe_features_dir(model, probe_split):
    """The feature job's directory of a ProbeSplit (a share's is SPLIT@train / SPLIT@heldout):
    {baseline}/{eval set}.safetensors for each of the model's baselines."""
    return f"results/probe/features/{model}/{probe_split.treebank}/{probe_split.dir_name}"


def probe_feature_paths(wildcards, input):
    """`--sentences DIR` of a share's feature job: a path of its input (which it changes with)."""
    return quoted(["--sentences", Path(input.share).parent]) if has_name(input, "share") else ""


def probe_pair_dir_of(wildcards):
    w = wildcards
    return probe_pair_dir(w.treebank, w.probe_model, w.baseline, w.dist, w.label)


class ProbePlan(Plan):
    def probe_train_outputs(self) -> dict[str, list[str]]:
        """A probe run's files per probe seed (wildcards treebank, probe_model, baseline, dist,
        label left to the rule): its metrics, the per-sentence counts behind them (the
        tables' intervals over sentences) and its predicted trees (what table_probe_edges
        reads; the predictions CoNLL-U is written beside them)."""
        run = ("results/probe/runs/{treebank}/{probe_model}/{baseline}/dist{dist}_label{label}"
               "/seed")
        return {name: [f"{run}{seed}/{file}" for seed in self.probe_seeds()]
                for name, file in (("metrics", "metrics.parquet"),
                                   ("sentences", "sentence_counts.parquet"),
                                   ("predictions", "predictions.parquet"))}

    def probe_sweep_metrics(self, wildcards):
        """metrics.parquet of every sweep run (model itself, (l, l), every seed) of one model."""

        def run_dir(layer, seed):
            return probe_run_dir(
                wildcards.treebank, wildcards.probe_model, "lm", layer, layer, seed
            )

        return [
            f"{run_dir(layer, seed)}/metrics.parquet"
            for layer in self.probe_sweep_layers(wildcards.probe_model)
            for seed in self.config["probe"]["seeds"]
        ]

    def probe_feature_inputs(self, wildcards):
        """The treebank of a feature job (a split trained or selected on: a test split's eval
        sets are extracted by the probe_train jobs, never stored) and, for a share, the share's
        sentences, which restrict it."""
        found = probe_wildcard_split(wildcards)
        inputs = {"tokens": [self.probe_treebank_tokens(found.treebank, found.split, "orig")]}
        if found.part:
            share = share_dir(found.treebank, found.split, found.part)
            inputs["share"] = f"{share}/sentences.parquet"
        return inputs

    def probe_model_inputs(self, wildcards):
        return model_path_inputs(self.probe_model_config(wildcards.probe_model)["source"])

    def probe_feature_layers(self, treebank, model, baseline):
        """The layers a baseline's features hold: those of its configured pair (M0: 0), every
        layer where one is `auto` (whichever the sweep chooses). A layer sweep's run of
        another layer extracts its training and selection features itself
        (probe_extracts_splits): the sweep's layers of a 12-layer model would be most of the
        stored features."""
        pair = (0, 0) if baseline == "M0" else self.probe_task_layers(treebank, model)
        layers = set(self.probe_sweep_layers(model)) if AUTO in pair else set(pair)
        return ",".join(map(str, sorted(layers)))

    def probe_extracts_splits(self, wildcards):
        """Whether a probe_train job extracts its training and selection splits' features in
        memory (as it does its test split's): its layers are not among those the feature jobs
        store."""
        pair = {wildcards.dist, wildcards.label}
        if AUTO in pair:
            return False  # the feature jobs store every layer the sweep can choose
        stored = self.probe_feature_layers(wildcards.treebank, wildcards.probe_model,
                                           wildcards.baseline).split(",")
        return not pair <= set(stored)

    def probe_features_runtime(self, wildcards):
        """`runtime` (minutes) of a probe_features job: an hour per baseline."""
        return 60 * len(self.probe_baselines(wildcards.probe_model))

    def probe_train_runtime(self):
        """`runtime` (minutes) of a probe_train job: an hour per seed, and one for the features
        it extracts (its eval sets', and a sweep run's training and selection splits')."""
        return 60 * (len(self.probe_seeds()) + 1)

    def probe_features_memory(self, wildcards, input):
        model, treebank = wildcards.probe_model, wildcards.treebank
        spec = self.probe_model_config(model)
        shape = model_shape(spec["source"], spec["revision"])
        if shape is None:
            return PROBE_FEATURES_FLOOR_MB
        width, weights_mb = shape
        layers = max(
            len(self.probe_feature_layers(treebank, model, b).split(","))
            for b in self.probe_baselines(model)
        )
        fraction = 1 / self.probe_shards() if has_name(wildcards, "shard") else 1
        rows = input_mb(input.tokens) * TOKEN_ROWS_PER_MB
        share = self._extracted_share(treebank, wildcards.split, input.tokens[0])
        # a capped split's every shard reads and tokenizes all of it to draw the sample
        read = rows if share < 1 else rows * fraction
        held_mb = read * 170 / 1e6 + features_mb(rows * fraction * share, width, layers)
        held_mb += device_map.host_budget_mb(spec)  # a split encoder's layers on the CPU
        return memory_mb(held_mb, PROBE_FEATURES_FLOOR_MB, base_mb=BASE_MB + 2 * weights_mb)

    def _extracted_share(self, treebank, split_dir, tokens):
        """The share of a split's words whose features a capped extraction holds (the whole
        split, `tokens`, is read and tokenized): the cap over the split's sentences, with half
        to spare (the sample leaves the short sentences out: its sentences are longer than the
        split's, 1.13 times in EWT train at probe.min_words 4, 1.35 at 10); 1 uncapped, or
        while the split's sentences.parquet cannot be read yet."""
        most = self.probe_feature_cap(treebank, split_dir)
        if most is None:
            return 1.0
        import pyarrow.parquet as pq

        try:
            sentences = pq.read_metadata(Path(tokens).parent / "sentences.parquet")
        except (OSError, ValueError):
            return 1.0
        return min(1.0, 1.5 * most / max(sentences.num_rows, 1))

    def probe_features_gpus(self, wildcards):
        """`gpu` of a probe_features job: one, or with a `device_map` the GPUs the encoder's
        weights need in float32 (core/device_map.py)."""
        spec = self.probe_model_config(wildcards.probe_model)
        if spec.get("device_map") is None:
            return 1
        folder = device_map.model_folder(spec["source"], spec.get("revision"))
        return device_map.gpus_needed(spec, device_map.loaded_weight_bytes(folder, "float32"))

    def probe_feature_placement(self, wildcards, input):
        """`--device-map`, `--max-memory`, `--offload-folder`: a params function of `input`
        (derived params), so that a new map, which changes no feature, reruns no job."""
        return quoted(device_map.option_values(self.probe_model_config(wildcards.probe_model)))

    def probe_feature_args(self, wildcards):
        """`spudflow probe features` settings of one feature job, every baseline (docs/probe.md):
        a function of the wildcards only, so that Snakemake compares them with the last run's (a
        params function of `input` is not a rerun trigger)."""
        model, treebank = wildcards.probe_model, wildcards.treebank
        args = ["--baselines"]
        args += [
            f"{b}={self.probe_feature_layers(treebank, model, b)}"
            for b in self.probe_baselines(model)
        ]
        args += ["--eval-sets", "orig"]
        cap = self.probe_feature_cap_args(treebank, wildcards.split)
        return self.probe_encoder_args(model, args, cap)

    def probe_encoder_args(self, model, before, after=()):
        """The encoder options of `probe features` (its source is the rule's own parameter) and
        of `probe train --eval-extract` (before: `--encoder SOURCE`), around `before` and
        `after`: one definition, so that a test split's features extracted by the probe job
        are those a feature job would write."""
        spec = self.probe_model_config(model)
        args = [*before, "--device", spec["device"], "--init-seed", spec["init_seed"], *after]
        args = quoted(args + cli_options(spec, ("max_length", "revision")))
        return " ".join(
            filter(None, [args, sample_args(self.config["probe"]["sample"], "--sample-seed")])
        )

    def probe_feature_cap_args(self, treebank, split_dir):
        """probe_feature_cap as `probe features` options: the job extracts only the sentences
        the probes read (an eighth of German HDT's training split in the SPUD preset)."""
        most = self.probe_feature_cap(treebank, split_dir)
        if most is None:
            return []
        probe = self.config["probe"]
        return ["--max-sentences", most, "--max-sentences-seed", probe["max_sentences_seed"],
                "--min-words", probe["min_words"]]

    def probe_feature_cap(self, treebank, split_dir):
        """The probe's cap of a split that every task using it trains on (max_train_sentences)
        or selects on (max_dev_sentences); None for a split tested on, used in two roles, or
        not capped."""
        roles = set()
        for task in self.probe_tasks().values():
            for role in ("train", "dev", "test"):
                found = getattr(task, role)
                if found is not None and (found.treebank, found.dir_name) == (treebank, split_dir):
                    roles.add(role)
        if len(roles) != 1 or roles == {"test"}:
            return None
        return self.config["probe"][f"max_{roles.pop()}_sentences"]

    def probe_shards(self):
        return self.config["probe"]["feature_shards"] if self.probe_enabled() else 1

    def probe_models_pattern(self, sharded):
        """Regex matching every probe model when the features are (not) sharded, else nothing."""
        return r"[A-Za-z0-9][A-Za-z0-9_.-]*" if (self.probe_shards() > 1) == sharded else "(?!)"

    def probe_shard_dirs(self, wildcards):
        stem = probe_features_dir(wildcards.probe_model, probe_wildcard_split(wildcards))
        return [f"{stem}.shard{i}" for i in range(1, self.probe_shards() + 1)]

    def probe_gather_memory(self, wildcards, input):
        """A probe_features_gather job's mem_mb: it holds one gathered file at a time, read from
        its shards and concatenated (twice its bytes: 1.84 GB file, 3.71 GB peak by
        `/usr/bin/time`), with a quarter of headroom; 4000 MB at least. The shard directories are
        there when Snakemake evaluates it again before running the job."""
        gathered = {}  # file name in a shard -> MB over all shards
        for shard in map(Path, input.shards):
            for path in filter(Path.is_file, shard.rglob("*")):
                name = path.relative_to(shard)
                gathered[name] = gathered.get(name, 0) + input_mb([path])
        return memory_mb(2 * max(gathered.values(), default=0), floor_mb=4000)

    def probe_train_inputs(self, wildcards):
        """Feature directories and treebanks of a probe run's train and dev (when configured)
        sets (treebanks and share sentences only when the job extracts them,
        probe_extracts_splits); its eval sets' treebanks (and a test share's sentences), whose
        features the job extracts itself with the model (input when local): a test split's
        features are never stored."""
        model = wildcards.probe_model
        task = self.probe_tasks()[wildcards.treebank]
        extracts = self.probe_extracts_splits(wildcards)
        inputs = {}
        for role in ("train", "dev"):
            found = getattr(task, role)
            if not found:
                continue
            inputs[f"{role}_treebank"] = ingested(found.treebank, found.split)
            if not extracts:
                inputs[f"{role}_features"] = probe_features_dir(model, found)
            elif found.part:
                share = share_dir(found.treebank, found.split, found.part)
                inputs[f"{role}_share"] = f"{share}/sentences.parquet"
        test = task.test
        inputs["eval_treebanks"] = [
            self.probe_treebank_tokens(test.treebank, test.split, s) for s in self.probe_eval_sets()
        ]
        if test.part:
            share = share_dir(test.treebank, test.split, test.part)
            inputs["eval_share"] = f"{share}/sentences.parquet"
        inputs["encoder"] = self.probe_model_inputs(wildcards)
        if AUTO in (wildcards.dist, wildcards.label):
            inputs["layer_choice"] = probe_layer_choice_file(wildcards.treebank, model)
        return inputs

    def probe_train_paths(self, wildcards, input):
        """`spudflow probe train`'s data options of one job: the features and treebanks of its
        train and dev sets, its eval sets' treebanks (and a test share's folder) and its layer
        choice, shell-quoted (the job's input: a change reruns it as an input change)."""

        def parent(path):
            return str(Path(path).parent)

        args = []
        if has_name(input, "train_features"):
            train, dev = self._train_dev_files(wildcards, input)
            args += ["--train", train, parent(input.train_treebank)]
            if has_name(input, "dev_features"):
                args += ["--dev", dev, parent(input.dev_treebank)]
        else:
            for role in ("train", "dev"):
                if has_name(input, f"{role}_treebank"):
                    args += [f"--{role}-extract", parent(getattr(input, f"{role}_treebank"))]
                if has_name(input, f"{role}_share"):
                    args += [f"--{role}-sentences", parent(getattr(input, f"{role}_share"))]
        for name, tokens in zip(self.probe_eval_sets(), input.eval_treebanks, strict=True):
            args += ["--eval-extract", name, parent(tokens)]
        if has_name(input, "eval_share"):
            args += ["--sentences", parent(input.eval_share)]
        if has_name(input, "layer_choice"):
            args += ["--layer-choice", input.layer_choice]
        return quoted(args)

    @staticmethod
    def _train_dev_files(wildcards, input):
        """The job's baseline's feature files of its train and dev sets (dev: the train file
        when a share of it is held out instead)."""
        train = probe_eval_set_file(input.train_features, wildcards.baseline, "orig")
        if not has_name(input, "dev_features"):
            return train, train
        return train, probe_eval_set_file(input.dev_features, wildcards.baseline, "orig")

    def probe_train_args(self, wildcards):
        """`spudflow probe train`'s settings of one job, every seed (docs/probe.md), shell-quoted:
        a function of the wildcards only, so that a changed setting reruns the job (Snakemake
        compares such params with the last run's; one of `input` it does not)."""
        probe = self.config["probe"]
        args = []
        if not self.probe_tasks()[wildcards.treebank].dev:
            args += cli_options(probe, ("holdout", "holdout_seed"))
        args += ["--dist-layer", wildcards.dist, "--label-layer", wildcards.label]
        args += ["--seeds", *map(str, self.probe_seeds()), "--treebank", wildcards.treebank]
        args += ["--model", wildcards.probe_model, *cli_options(probe, PROBE_TRAIN_OPTIONS)]
        if wildcards.baseline != "lm":
            args += ["--baseline", wildcards.baseline]
        settings = quoted(args + self.probe_word_options())
        model = wildcards.probe_model
        encoder = ["--encoder", self.probe_model_config(model)["source"]]
        if wildcards.baseline in RANDOM_BASELINES:
            # the model its feature jobs build: its random weights are drawn for that model
            layers = self.probe_feature_layers(wildcards.treebank, model, wildcards.baseline)
            encoder += ["--encoder-top", max(map(int, layers.split(",")))]
        return f"{settings} {self.probe_encoder_args(model, encoder)}"

    def probe_train_memory(self, wildcards, input):
        """A probe_train job's mem_mb (what SLURM enforces). It holds its baseline's train and
        dev feature files as read (float16; the training split's once more when part of it is
        held out, probe.holdout), its treebanks' words and gold trees, about 36 MB per MB of
        tokens.parquet (rates from `/usr/bin/time` peaks at 1x and 16x EWT train, 32 and 768
        wide, docs/running.md, "What a full run costs"), and, while it extracts its eval sets'
        features, the encoder's weights (twice) and those features (2 bytes per token row,
        hidden unit and layer, about 78,000 rows per MB of tokens.parquet). A job that
        extracts its train and dev splits too (probe_extracts_splits) holds their features
        instead of the files (capped as a feature job's, _extracted_share) and reads each split
        whole (170 bytes per token row, as a feature job). A quarter of headroom, 4000 MB at
        least (a hub model not in the local cache when Snakemake plans: probe_features'
        floor)."""

        stored = has_name(input, "train_features")
        dev = [input.dev_treebank] if has_name(input, "dev_treebank") else []
        treebanks = [input.train_treebank, *dev, *input.eval_treebanks]
        held_mb = input_mb(list(self._train_dev_files(wildcards, input))) if stored else 0
        spec = self.probe_model_config(wildcards.probe_model)
        shape = model_shape(spec["source"], spec["revision"])
        if shape is None:
            return memory_mb(held_mb, PROBE_FEATURES_FLOOR_MB,
                             base_mb=BASE_MB + 36 * input_mb(treebanks))
        width, weights_mb = shape
        layers = 2 if wildcards.dist == AUTO or wildcards.dist != wildcards.label else 1
        rows = input_mb(input.eval_treebanks) * TOKEN_ROWS_PER_MB
        if not stored:  # its training and selection splits' features too, each read whole
            task = self.probe_tasks()[wildcards.treebank]
            for found, tokens in zip((task.train, task.dev), [input.train_treebank, *dev],
                                     strict=False):
                read = input_mb([tokens]) * TOKEN_ROWS_PER_MB
                held_mb += read * 170 / 1e6
                kept = read * self._extracted_share(found.treebank, found.dir_name, tokens)
                # the training split's once more when part of it is held out (split_off copies)
                rows += kept * (2 if task.dev is None and found is task.train else 1)
        held_mb += features_mb(rows, width, layers) + device_map.host_budget_mb(spec)
        return memory_mb(held_mb, 4000,
                         base_mb=BASE_MB + 36 * input_mb(treebanks) + 2 * weights_mb)
