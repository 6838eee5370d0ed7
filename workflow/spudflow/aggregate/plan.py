"""Input functions, resources and config lookups of the aggregate stage's rules
(rules/aggregate.smk): which tables and figures the config feeds, and each dataset family's
table options and caption values."""

from __future__ import annotations

import math
from pathlib import Path

from spudflow.core.artifacts import PROBE_PREDICTIONS_FILE, SCORES_LAYOUT, dataset_of_scores
from spudflow.core.dataset_families import DATASET_FAMILIES
from spudflow.core.outputs_registry import FIGURE, OUTPUTS, rule_outputs
from spudflow.core.plan import Plan
from spudflow.core.plan_base import quoted
from spudflow.core.plan_items import items_file
from spudflow.core.rules_support import cli_options, input_mb, memory_mb


def front_page_args(wildcards, input):
    """`--table NAME=PATH` / `--figure NAME=PATH` of every input, shell-quoted."""
    options = {".parquet": "--table", ".svg": "--figure"}
    return quoted([arg for f in input for arg in (options[Path(f).suffix], f"{Path(f).stem}={f}")])


class AggregatePlan(Plan):
    def aggregate_items(self, family):
        """The items files the config enables that feed one family's tables
        (core/dataset_families.py)."""
        return [items_file(d) for d in self.table_datasets(family)]

    def aggregate_jobs(self, family):
        datasets = set(self.table_datasets(family))
        return [(d, m) for d, m in self.scoring_jobs() if d in datasets]

    def aggregate_scores(self, family):
        return [SCORES_LAYOUT.format(dataset=d, model=m) for d, m in self.aggregate_jobs(family)]

    def japanese_table_memory(self, wildcards, input):
        """table_japanese_transitivity's mem_mb: it holds every items file (about 125 MB per MB of
        Parquet), one dataset's scores of one model at a time (about 60 MB per MB of that score
        file) and each pair's choice in every mode of that dataset (about 10 MB per MB of the
        dataset's score files). The full-size Japanese preset (20.7 MB of items; `base`: 47.7 MB of
        one model's scores, 291 MB of all eight) peaked at 6.6 GB without its regressions. With
        about a quarter of headroom, 4000 MB at least."""
        by_dataset = {}
        for path in input.score_files:
            by_dataset.setdefault(dataset_of_scores(Path(path)), []).append(path)
        largest = max((input_mb([path]) for path in input.score_files), default=0)
        dataset = max((input_mb(paths) for paths in by_dataset.values()), default=0)
        held = 125 * input_mb(input.item_files) + 60 * largest + 10 * dataset
        return memory_mb(held, floor_mb=4000)

    def japanese_table_runtime(self, wildcards, input):
        """table_japanese_transitivity's runtime (minutes): its regressions (a 10-fold cv.glmnet per
        dataset and mode) grow with the pairs; the full-size Japanese preset (670 MB of item scores,
        24 modes on four datasets) took 58 CPU minutes, 0.09 per MB (35 minutes' wall on two
        threads). 0.15 per MB, whatever the threads (its folds share them), at least 60."""
        return max(60, math.ceil(0.15 * input_mb(input.score_files)))

    def probe_predictions_files(self):
        """predictions.parquet of every probe run the aggregate stage reads (written with its
        metrics.parquet by the same probe_train job): table_probe's text of its examples."""
        return [
            str(Path(metrics).parent / PROBE_PREDICTIONS_FILE)
            for metrics in self.probe_metrics_files()
        ]

    def probe_edges_predictions(self, input):
        """The predictions.parquet files table_probe_edges reads: each run's (next to its
        metrics.parquet, written by the same probe_train job), every eval set's trees in one."""
        return [Path(metrics).parent / PROBE_PREDICTIONS_FILE for metrics in input.metrics]

    def probe_edges_runtime(self, wildcards, input):
        """table_probe_edges's runtime (minutes): it reads every run's predictions.parquet and
        joins each eval set's words with its gold treebank: bench/bench_probe_edges.py's 32 MB
        (570 MB of CoNLL-U) took 5.6 s, 16 MB 5.7 s on a machine loaded 5x (0.006 per MB); 0.02
        per MB, at least 10."""
        return max(10, math.ceil(0.02 * input_mb(self.probe_edges_predictions(input))))

    def probe_edges_memory(self, wildcards, input):
        """table_probe_edges's mem_mb: it holds one run's predicted trees at a time, joined with
        their gold words (bench_probe_edges.py's run of 1.1 million words per eval set, 8.2 MB of
        predictions.parquet, with 3 MB of gold: 620 MB above the interpreter's; 100 MB per MB of
        the largest file), and every gold treebank's words (a few MB per MB of their
        tokens.parquet). With about a quarter of headroom, 2000 MB at least."""
        largest = max((input_mb([p]) for p in self.probe_edges_predictions(input)), default=0)
        held = 100 * largest + 5 * input_mb(input.gold)
        return memory_mb(held, floor_mb=2000)

    def aggregate_models(self, family):
        """Models scored on datasets of this family (for report captions)."""
        return sorted({m for _, m in self.aggregate_jobs(family)})

    def aggregate_fed(self, feed):
        """Whether the config makes the input that feeds an output (core/outputs_registry.py)."""
        if feed == "probe":
            return bool(self.probe_metrics_files())
        if feed == "nonce":
            return bool(self.nonce_stats_files())
        if feed == "treebanks":
            return bool(self.treebank_splits())
        return bool(self.aggregate_scores(feed))  # a dataset family

    def aggregate_outputs(self):
        """The aggregate stage's tables and figures (core/outputs_registry.py) whose inputs the
        config produces, and the front page when it shows one of them."""
        outputs = [
            o.target for o in OUTPUTS if o.stage == "aggregate" and self.aggregate_fed(o.feed)
        ]
        if self.front_page_files(outputs):
            outputs.append("results/index.html")
        return outputs

    # Input functions, not lists: what the front page shows comes from its module, which
    # imports polars; evaluated when a job needs them, the Snakemake process of a cluster job
    # (two per job) plans its one job without them.
    def aggregate_targets(self, wildcards):
        """aggregate_outputs(), as rule all's input function."""
        return self.aggregate_outputs()

    def front_page_inputs(self, wildcards):
        """front_page_files(), as the front page rule's input function."""
        return self.front_page_files()

    def front_page_files(self, outputs=None):
        """The headline tables (.parquet) and figures (.svg) among the aggregate outputs and the
        human evaluation's tables (once sheets are filled): those the front page's sections show
        (aggregate/front_page.py)."""
        outputs = self.aggregate_outputs() if outputs is None else outputs
        if "human_eval" in self.config and self.config["human_eval"]["filled"]:
            outputs = [*outputs, *(o.target for o in rule_outputs("human_eval_tables"))]
        from spudflow.aggregate.front_page import shown_outputs

        shown = set(shown_outputs())
        return [f for f in outputs if f in shown]

    def family_table_rules(self):
        """(rule, family, command) of each dataset family's table rule: the registry's entries of
        the tables the family feeds (core/outputs_registry.py), in registry order."""
        return list(
            dict.fromkeys(
                (o.rule, o.feed, o.command)
                for o in OUTPUTS
                if o.output_type != FIGURE and o.feed in DATASET_FAMILIES
            )
        )

    def japanese_table_options(self):
        """`spudflow table-japanese-transitivity` options: cross-validation, regression and
        agreement settings (the regressions' threads are the job's: a --cores change reruns
        nothing)."""
        return quoted(
            cli_options(self.config["aggregate"], ("folds", "seed"))
            + cli_options(
                self.config["aggregate"]["regression"],
                ("lambda_choice", "n_lambda", "l1_ratio", "top", "max_iter", "convergence"),
            )
            + ["--decision", self.config["aggregate"]["japanese_decision"]]
            + self.uncertainty_options(bootstrap=True)
            + self.examples_options()
            + [
                a
                for m in self.config["aggregate"]["japanese_agreement_modes"]
                for a in ("--agreement-mode", m)
            ]
        )

    def examples_options(self):
        """A family's table command's options of its examples table: k and the tie-break seed."""
        aggregate = self.config["aggregate"]
        return ["--examples", aggregate["examples"], "--examples-seed", aggregate["seed"]]

    def probe_table_options(self):
        """`spudflow table-probe` options: the intervals over test sentences."""
        return quoted(self.uncertainty_options(bootstrap=True) + self.examples_options())

    def uncertainty_options(self, bootstrap):
        """aggregate.uncertainty as a table command's options: the level, and the bootstrap's
        resamples and seed where the table bootstraps."""
        uncertainty = self.config["aggregate"]["uncertainty"]
        options = ["--interval-level", uncertainty["level"]]
        if bootstrap:
            options += ["--resamples", uncertainty["resamples"],
                        "--interval-seed", uncertainty["seed"]]
        return options

    def japanese_section(self, key):
        """A pairs.japanese_transitivity value for a caption, read when a job is planned (the
        section may be left out)."""
        return lambda wildcards: self.pairs_section("japanese_transitivity").get(key)

    def figure_params(self, figure):
        """A figure rule's params besides its command, stem and code: its options ("" when none)
        and what its caption shows: the datasets and models of the family that feeds it, and its
        figure_own_params()."""
        params = {"options": ""}
        if figure.feed in DATASET_FAMILIES:
            params |= {
                "datasets": self.table_datasets(figure.feed),
                "models": self.aggregate_models(figure.feed),
            }
        return params | self.figure_own_params().get(figure.name, {})

    # What each dataset family's table (rules/aggregate.smk) sets of its own: threads,
    # mem_mb and runtime, its command's options (beside --items, --scores and --out-dir; `jobs`, a
    # function of the job's threads, is no rerun trigger) and the
    # config values its report captions show (`captions`, each a param of the rule).
    def family_tables(self):
        aggregate = self.config["aggregate"]
        return {
            "spud": dict(
                threads=1,
                mem_mb=4000,
                runtime=15,
                options=quoted(
                    ["--extremes", aggregate["extremes"]]
                    + ["--outlier-threshold", aggregate["spud_outlier_threshold"]]
                    + ["--outliers-above", aggregate["spud_outliers_above"]]
                    + ["--outliers-below", aggregate["spud_outliers_below"]]
                    + self.uncertainty_options(bootstrap=True)
                    + self.examples_options()
                ),
                captions=dict(
                    extremes=aggregate["extremes"],
                    outlier_threshold=aggregate["spud_outlier_threshold"],
                    outliers_above=aggregate["spud_outliers_above"],
                    outliers_below=aggregate["spud_outliers_below"],
                ),
            ),
            "german_case": dict(
                threads=1,
                mem_mb=2000,
                runtime=10,
                options=f"--animacy {aggregate['german_animacy']} "
                + quoted(self.uncertainty_options(bootstrap=True) + self.examples_options()),
                captions=dict(animacy=aggregate["german_animacy"]),
            ),
            "cola": dict(
                threads=1,
                mem_mb=2000,
                runtime=10,
                options=quoted(cli_options(aggregate, ("folds", "seed")))
                + f" --criterion {aggregate['cola_criterion']} "
                + quoted(self.uncertainty_options(bootstrap=True) + self.examples_options()),
                captions=dict(
                    folds=aggregate["folds"],
                    seed=aggregate["seed"],
                    criterion=aggregate["cola_criterion"],
                ),
            ),
            "blimp": dict(threads=1, mem_mb=2000, runtime=10,
                          options=quoted(self.uncertainty_options(bootstrap=True)
                                         + self.examples_options()),
                          captions={}),
            # the one that needs more: a cross-validated regression per dataset and mode
            "japanese_transitivity": dict(
                threads=4,
                mem_mb=self.japanese_table_memory,
                runtime=self.japanese_table_runtime,
                options=self.japanese_table_options(),
                jobs=lambda wildcards, threads: f"--jobs {threads}",
                captions=dict(
                    agreement_modes=aggregate["japanese_agreement_modes"],
                    decision=aggregate["japanese_decision"],
                    lexicon=self.japanese_section("lexicon"),
                    corpus=self.japanese_section("corpus"),
                    rank_by=self.japanese_section("rank_by"),
                    min_count=self.japanese_section("min_count"),
                    n_verb_pairs=self.japanese_section("n_verb_pairs"),
                    folds=aggregate["folds"],
                    regression=aggregate["regression"],
                ),
            ),
        }

    # The figures with options of their own (`options`, after --out) or config values in their
    # captions besides their datasets and models; every other figure has none.
    def figure_own_params(self):
        aggregate = self.config["aggregate"]
        return {
            "japanese_agreement": dict(agreement_modes=aggregate["japanese_agreement_modes"]),
            "japanese_agreement_graph": dict(
                threshold=aggregate["japanese_graph_threshold"],
                agreement_modes=aggregate["japanese_agreement_modes"],
                options=quoted(
                    cli_options(
                        {"threshold": aggregate["japanese_graph_threshold"]}, ("threshold",)
                    )
                ),
            ),
        }
