"""Input functions, resources and config lookups of the scoring stage's rules
(rules/scoring.smk)."""

from __future__ import annotations

import re

from spudflow.core import device_map
from spudflow.core.plan import Plan
from spudflow.core.plan_base import has_name, model_path_inputs, quoted
from spudflow.core.rules_support import cli_options, input_mb, memory_mb
from spudflow.core.scoring_methods import uses_l2r_words

# `spudflow score` options with the same name as a model's config keys, in this order.
MODEL_OPTIONS = ("device", "dtype", "batch_tokens", "trust_remote_code")
# `spudflow ngram-train` options with the same name as an n-gram's config keys.
NGRAM_OPTIONS = ("lang", "order", "k", "discount", "min_count", "lowercase", "unknown")
NGRAM_OPTIONS += ("kneser_ney", "words")
# A scoring job holds its token and item score rows until it writes them: about 280 MB per MB
# of items file and method (peak RSS scoring the Japanese preset's 749,500-item datasets in a
# full rehearsal, docs/running.md), asked for with a quarter of headroom on top of the model's.
SCORE_MB_PER_ITEMS_MB = 350


class ScoringPlan(Plan):
    def is_transformer(self, model):
        return self.model_config(model)["kind"] != "ngram"

    def score_runtime(self, wildcards):
        """`runtime` (minutes) of a score or score_shard job: 4 hours a transformer, 30 minutes
        an n-gram model."""
        return 240 if self.is_transformer(wildcards.model) else 30

    def score_memory(self, wildcards):
        """`mem_mb` of a score or score_shard job: the model's (8000 a transformer, 4000 an
        n-gram model) plus the score rows of the items it holds (a shard's fraction; a sampled
        model's are counted whole), plus a split model's CPU budget (its layers placed on the
        CPU). The items file is read when Snakemake evaluates resources again before the job
        runs."""
        host = device_map.host_budget_mb(self.model_config(wildcards.model))
        return self.score_gather_memory(wildcards, host)

    def score_gather_memory(self, wildcards, host_mb=0.0):
        """`mem_mb` of a score_gather job: the score rows, without a model."""
        floor = 8000 if self.is_transformer(wildcards.model) else 4000
        methods = len(self.model_config(wildcards.model)["methods"])
        fraction = 1 / int(wildcards.shards) if has_name(wildcards, "shards") else 1
        items = input_mb([f"results/items/{wildcards.dataset}.parquet"])
        return memory_mb(
            SCORE_MB_PER_ITEMS_MB * methods * items * fraction + host_mb, floor, floor, headroom=1
        )

    def score_gpus(self, wildcards):
        """`gpu` of a score or score_shard job: none for an n-gram model; a transformer one, or
        with a `device_map` the GPUs its weights need in its dtype (core/device_map.py)."""
        spec = self.model_config(wildcards.model)
        if spec["kind"] == "ngram":
            return 0
        if spec.get("device_map") is None:
            return 1
        folder = device_map.model_folder(spec["source"], spec.get("revision"))
        weights = None if spec.get("gguf_file") else device_map.loaded_weight_bytes(
            folder, spec["dtype"])
        return device_map.gpus_needed(spec, weights)

    def score_placement(self, wildcards, input):
        """`--device-map`, `--max-memory`, `--offload-folder`: a params function of `input`
        (Snakemake's derived params), so that a new map, which changes no score, reruns no
        job."""
        return quoted(device_map.option_values(self.model_config(wildcards.model)))

    def model_source_inputs(self, wildcards):
        return model_path_inputs(self.model_config(wildcards.model)["source"])

    def unigram_inputs(self, wildcards=None):
        # scoring.unigram: optional, no schema default (none: no unigram term)
        unigrams = self.config["scoring"].get("unigram", [])
        return [f"results/ngram/{name}.parquet" for name in unigrams]

    def score_args(self, wildcards):
        """`spudflow score` options from the model's config entry (docs/scoring.md)."""
        spec = self.model_config(wildcards.model)
        args = ["--kind", spec["kind"], "--method", ",".join(spec["methods"])]
        args += ["--block-size", self.config["scoring"]["block_size"]]
        args += cli_options(self.config["scoring"], ("cache",))
        # Only a job that scores pppl_l2r is given its words: the others' commands stay as they
        # were.
        if uses_l2r_words(spec["methods"]):
            args += cli_options(self.config["scoring"], ("l2r_words",))
        args += cli_options(spec, ("gguf_file", "revision", "languages"))
        # a model's `sample:` is optional, with no schema default (none: every item)
        if spec.get("sample", {}).get("n") is not None:
            args += ["--sample", spec["sample"]["n"], "--sample-seed", spec["sample"]["seed"]]
        args += cli_options(spec, MODEL_OPTIONS)
        # Lau et al.'s measures take the unigram term from the n-gram model itself.
        if spec["measures"] == "lau":
            args += ["--measures", "lau"]
        else:
            for path in self.unigram_inputs():
                args += ["--unigram", path]
        return quoted(args)

    def ngram_text_inputs(self, wildcards):
        return self.training_text_inputs(self.config["ngrams"][wildcards.ngram]["text"])

    def ngram_train_args(self, wildcards):
        """`spudflow ngram-train` settings: a function of the wildcards only, so that a changed
        setting reruns the job (Snakemake compares such params with the last run's)."""
        return quoted(cli_options(self.config["ngrams"][wildcards.ngram], NGRAM_OPTIONS))

    def scoring_outputs(self):
        return [
            f"results/scores/{dataset}/{model}/{name}.parquet"
            for dataset, model in self.scoring_jobs()
            for name in ("token_scores", "item_scores")
        ]

    def model_shards(self, model):
        """Number of shards of the model's scoring jobs: its `shards:`, else `scoring.shards`."""
        # models.NAME.shards has no schema default: unset, scoring.shards decides
        return self.model_config(model).get("shards") or self.config["scoring"]["shards"]

    def scoring_models_pattern(self, sharded):
        """Regex matching exactly the configured models with (or without) several shards."""
        names = [m for m in self.config["models"] if (self.model_shards(m) > 1) == sharded]
        return "|".join(re.escape(name) for name in names) or "(?!)"  # (?!): matches nothing

    def score_shard_dirs(self, wildcards):
        n = self.model_shards(wildcards.model)
        return [
            f"results/scores/{wildcards.dataset}/{wildcards.model}/shards/{i}-of-{n}"
            for i in range(1, n + 1)
        ]

    def score_shard_inputs(self, wildcards):
        return [
            f"{d}/{name}.parquet"
            for d in self.score_shard_dirs(wildcards)
            for name in ("token_scores", "item_scores")
        ]
