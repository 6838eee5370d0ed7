"""What the aggregate stage plans from the probe stage: the tasks, their runs' metrics files,
layer choices, eval sets and gold treebanks (spudflow.core.probe_tasks checks the tasks)."""

from __future__ import annotations

from pathlib import Path

from spudflow.core import nonce_plan
from spudflow.core.artifacts import AUTO
from spudflow.core.plan_base import PlanBase, ingested, quoted
from spudflow.core.plan_nonce import nonce_dir
from spudflow.core.probe_tasks import layer_sweeps
from spudflow.core.probe_tasks import probe_tasks as configured_probe_tasks
from spudflow.core.rules_support import cli_options


def probe_pair_dir(treebank, model, baseline, dist, label):
    """The seed{S} folders of one probe_train job."""
    return f"results/probe/runs/{treebank}/{model}/{baseline}/dist{dist}_label{label}"


def probe_run_dir(treebank, model, baseline, dist, label, seed):
    return f"{probe_pair_dir(treebank, model, baseline, dist, label)}/seed{seed}"


def probe_layer_choice_file(treebank, model):
    """The layers `auto` stands for (rule probe_select_layers), per task treebank and model."""
    return f"results/probe/layers/{treebank}/{model}.parquet"


class ProbeQueries(PlanBase):
    def probe_enabled(self):
        return "probe" in self.config and self.config["probe"]["enabled"]

    def probe_seeds(self):
        """One probe run per seed; one probe_train job trains them all (any list outside a probe
        section: the rule's outputs are defined, and never asked for)."""
        return self.config["probe"]["seeds"] if "probe" in self.config else [1]

    def probe_model_config(self, model):
        return self.config["probe"]["models"][model]

    def probe_tasks(self):
        """treebank -> its task (spudflow.core.probe_tasks): checked, a config error otherwise."""
        return configured_probe_tasks(self.config) if self.probe_enabled() else {}

    def probe_eval_sets(self):
        """`orig` and, when the probes are tested on nonce versions, the eval set names of the test
        split's versions (spudflow.core.nonce_plan): spud/seed1, ..."""
        if not nonce_plan.probe_tests_nonce(self.config):
            return ["orig"]
        return ["orig", *(f"{m}/seed{s}" for m, s in nonce_plan.nonce_versions(self.config))]

    def probe_treebank_tokens(self, treebank, split, eval_set):
        if eval_set == "orig":
            return ingested(treebank, split)
        method, seed_dir = eval_set.split("/")  # spud/seed1
        return f"{nonce_dir(treebank, split, method, seed_dir.removeprefix('seed'))}/tokens.parquet"

    def probe_task_layers(self, treebank, model):
        """(dist, label) layers of a model in a treebank's task (its `layers` override the
        model's); either may be `auto`."""
        return self.probe_tasks()[treebank].layer_pair(model, self.config["probe"]["models"])

    def probe_auto_layers(self, treebank, model):
        """A layer is `auto`: chosen by the model's layer sweep (App. F.6), which then runs."""
        return AUTO in self.probe_task_layers(treebank, model)

    def probe_sweep_layers(self, model):
        spec = self.probe_model_config(model)
        if not spec["layers"]:
            raise ValueError(
                f"config key probe.models.{model}.layers: needed by layer_sweep and `auto`"
            )
        return list(range(spec["layers"] + 1))

    def probe_swept(self, treebank, model):
        """Whether probe.layer_sweep sweeps a model in a treebank's task (true: every task)."""
        return (treebank, model) in layer_sweeps(self.config["probe"], self.probe_tasks())

    def probe_layer_pairs(self, treebank, model, baseline):
        """(dist, label) layer pairs probed for a model's baseline (`lm`: the model itself) in a
        treebank's task (a layer may be `auto`); the sweep (of this task, or for an `auto`
        layer) adds (l, l) for every layer of `lm`. The feature files hold the configured pair's
        layers (ProbePlan.probe_feature_layers); a sweep run of another layer extracts its
        splits itself."""
        if baseline == "M0":
            return [(0, 0)]
        pairs = [self.probe_task_layers(treebank, model)]
        if baseline == "lm" and (
            self.probe_swept(treebank, model) or self.probe_auto_layers(treebank, model)
        ):
            pairs += [(layer, layer) for layer in self.probe_sweep_layers(model)]
        return list(dict.fromkeys(pairs))

    def probe_layer_choice_files(self):
        """Layer choices of the tasks' models with an `auto` layer (read by the aggregate stage)."""
        return [
            probe_layer_choice_file(treebank, model)
            for treebank, task in self.probe_tasks().items()
            for model in task.models
            if self.probe_auto_layers(treebank, model)
        ]

    def probe_baselines(self, model):
        """Every baseline a model is probed as: `lm` (the model itself) and its configured ones;
        one feature job builds them all."""
        return ["lm", *self.probe_model_config(model)["baselines"]]

    def probe_metrics_files(self):
        """metrics.parquet of every configured probe run (each task's models); the aggregate stage
        reads them."""
        return [
            f"{probe_run_dir(treebank, model, baseline, dist, label, seed)}/metrics.parquet"
            for treebank, task in self.probe_tasks().items()
            for model in task.models
            for baseline in self.probe_baselines(model)
            for dist, label in self.probe_layer_pairs(treebank, model, baseline)
            for seed in self.config["probe"]["seeds"]
        ]

    def probe_gold_sets(self):
        """(treebank, eval set, gold tokens.parquet) of every eval set of every task: the whole
        test split (the predictions hold its evaluated sentences, in order)."""
        sets = []
        for treebank, task in self.probe_tasks().items():
            test = task.test
            sets += [
                (treebank, s, self.probe_treebank_tokens(test.treebank, test.split, s))
                for s in self.probe_eval_sets()
            ]
        return sets

    def probe_gold_treebanks(self):
        return [tokens for _, _, tokens in self.probe_gold_sets()]

    def probe_edge_args(self, wildcards):
        """`spudflow table-probe-edges` options: the gold treebanks, and the runs' word counting."""
        args = []
        for treebank, eval_set, tokens in self.probe_gold_sets():
            args += ["--gold", treebank, eval_set, str(Path(tokens).parent)]
        return quoted(args + self.probe_word_options())

    def probe_word_options(self):
        """`--no-punct` / `--subtypes` (probe.punct, probe.subtypes): which words and labels a probe
        run counts; `probe train` and `table-probe-edges` must count the same."""
        probe = self.config["probe"]
        return (["--no-punct"] if not probe["punct"] else []) + cli_options(probe, ("subtypes",))
