# Input functions and config lookups of the aggregate stage's rules (rules/aggregate.smk).
import math
from pathlib import Path

from spudflow.aggregate.front_page import shown_outputs as front_page_shown
from spudflow.aggregate.inputs import dataset_of_scores
from spudflow.core.dataset_families import DATASET_FAMILIES
from spudflow.core.outputs_registry import FIGURE, FIGURE_OUTPUTS, OUTPUTS

AGGREGATE = config["aggregate"]


def aggregate_items(family):
    """The items files of one family (core/dataset_families.py) the config enables."""
    return [items_file(d) for d in items_datasets(family)]


def aggregate_jobs(family):
    datasets = set(items_datasets(family))
    return [(d, m) for d, m in scoring_jobs() if d in datasets]


def aggregate_scores(family):
    return [f"results/scores/{d}/{m}/item_scores.parquet" for d, m in aggregate_jobs(family)]


def japanese_table_memory(wildcards, input):
    """table_japanese's mem_mb: it holds every items file (about 125 MB per MB of Parquet), one
    dataset's scores of one model at a time (about 60 MB per MB of that score file) and each
    pair's choice in every mode of that dataset (about 10 MB per MB of the dataset's score
    files). The full-size Japanese preset (20.7 MB of items; `base`: 47.7 MB of one model's
    scores, 291 MB of all eight) peaked at 6.6 GB without its regressions. With about a quarter
    of headroom, 4000 MB at least."""
    by_dataset = {}
    for path in input.score_files:
        by_dataset.setdefault(dataset_of_scores(Path(path)), []).append(path)
    largest = max((input_mb([path]) for path in input.score_files), default=0)
    dataset = max((input_mb(paths) for paths in by_dataset.values()), default=0)
    held = 125 * input_mb(input.item_files) + 60 * largest + 10 * dataset
    return max(4000, math.ceil(1000 + 1.25 * held))


def japanese_table_runtime(wildcards, input):
    """table_japanese's runtime (minutes): its regressions (a 10-fold cv.glmnet per dataset and
    mode) grow with the pairs; the full-size Japanese preset (670 MB of item scores, 24 modes
    on four datasets) took 58 CPU minutes, 0.09 per MB (35 minutes' wall on two threads).
    0.15 per MB, whatever the threads (its folds share them), at least 60."""
    return max(60, math.ceil(0.15 * input_mb(input.score_files)))


def probe_edges_predictions(input):
    """The predictions CoNLL-U files table_probe_edges parses: each run's (next to its
    metrics.parquet, written by the same probe_train job) of every eval set."""
    return [
        Path(metrics).parent / "predictions" / f"{eval_set}.conllu"
        for metrics in input.metrics
        for eval_set in probe_eval_sets()
    ]


def probe_edges_runtime(wildcards, input):
    """table_probe_edges's runtime (minutes): `conllu` parses every predictions file on one
    thread: the full-size SPUD preset's 7,130 MB took 27.4 minutes, bench_scale.py's 16x 207 MB
    1.4 minutes (0.004-0.007 per MB); 0.008 per MB, at least 10."""
    return max(10, math.ceil(0.008 * input_mb(probe_edges_predictions(input))))


def probe_edges_memory(wildcards, input):
    """table_probe_edges's mem_mb: it parses one predictions file at a time into Python objects
    (about 60 MB per MB of the largest) and keeps every gold treebank's words (a few MB per MB
    of their tokens.parquet): peaks 1,892 MB in the full-size SPUD preset (largest file 27 MB,
    98.7 MB of gold), 7,279 MB in bench_scale.py's 16x (109 MB, 97 MB). With about a quarter of
    headroom, 2000 MB at least."""
    largest = max((input_mb([p]) for p in probe_edges_predictions(input)), default=0)
    held = 60 * largest + 5 * input_mb(input.gold)
    return max(2000, math.ceil(1000 + 1.25 * held))


def aggregate_models(family):
    """Models scored on datasets of this family (for report captions)."""
    return sorted({m for _, m in aggregate_jobs(family)})


def aggregate_fed(feed):
    """Whether the config makes the input that feeds an output (core/outputs_registry.py)."""
    if feed == "probe":
        return bool(probe_metrics_files())
    if feed == "nonce":
        return bool(nonce_stats_files())
    if feed == "treebanks":
        return bool(treebank_splits())
    return bool(aggregate_scores(feed))  # a dataset family


def aggregate_outputs():
    """The aggregate stage's tables and figures (core/outputs_registry.py) whose inputs the
    config produces, and the front page when it shows one of them."""
    outputs = [o.target for o in OUTPUTS if o.stage == "aggregate" and aggregate_fed(o.feed)]
    if front_page_files(outputs):
        outputs.append("results/index.html")
    return outputs


def front_page_files(outputs=None):
    """The headline tables (.parquet) and figures (.svg) among the aggregate outputs and the human
    evaluation's tables: those the front page's sections show (aggregate/front_page.py)."""
    outputs = aggregate_outputs() if outputs is None else outputs
    shown = set(front_page_shown())
    return [f for f in [*outputs, *human_eval_outputs()] if f in shown]


def front_page_args(wildcards, input):
    """`--table NAME=PATH` / `--figure NAME=PATH` of every input, shell-quoted."""
    options = {".parquet": "--table", ".svg": "--figure"}
    return quoted([arg for f in input for arg in (options[Path(f).suffix], f"{Path(f).stem}={f}")])


def family_table_rules():
    """(rule, family, command) of each dataset family's table rule: the registry's entries of
    the tables the family feeds (core/outputs_registry.py), in registry order."""
    return list(
        dict.fromkeys(
            (o.rule, o.feed, o.command)
            for o in OUTPUTS
            if o.output_type != FIGURE and o.feed in DATASET_FAMILIES
        )
    )


def japanese_table_options():
    """`spudflow table-japanese` options: cross-validation, regression and agreement settings
    (the regressions' threads are the job's: a --cores change reruns nothing)."""
    return quoted(
        cli_options(AGGREGATE, ("folds", "seed"))
        + cli_options(
            AGGREGATE["regression"],
            ("lambda_choice", "n_lambda", "l1_ratio", "top", "max_iter"),
        )
        + ["--decision", AGGREGATE["japanese_decision"]]
        + [a for m in AGGREGATE["japanese_agreement_modes"] for a in ("--agreement-mode", m)]
    )


def japanese_section(key):
    """A pairs.japanese_transitivity value for a caption, read when a job is planned (the
    section may be left out)."""
    return lambda wildcards: pairs_section("japanese_transitivity").get(key)


# What each dataset family's table (rules/aggregate.smk) sets of its own: threads,
# mem_mb and runtime, its command's options (beside --items, --scores and --out-dir; `jobs`, a
# function of the job's threads, is no rerun trigger) and the
# config values its report captions show (`captions`, each a param of the rule).
FAMILY_TABLES = {
    "spud": dict(
        threads=1,
        mem_mb=4000,
        runtime=15,
        options=quoted(
            ["--extremes", AGGREGATE["extremes"]]
            + ["--outlier-threshold", AGGREGATE["spud_outlier_threshold"]]
            + ["--outliers-above", AGGREGATE["spud_outliers_above"]]
            + ["--outliers-below", AGGREGATE["spud_outliers_below"]]
        ),
        captions=dict(
            extremes=AGGREGATE["extremes"],
            outlier_threshold=AGGREGATE["spud_outlier_threshold"],
            outliers_above=AGGREGATE["spud_outliers_above"],
            outliers_below=AGGREGATE["spud_outliers_below"],
        ),
    ),
    "german_case": dict(
        threads=1,
        mem_mb=2000,
        runtime=10,
        options=f"--animacy {AGGREGATE['german_animacy']}",
        captions=dict(animacy=AGGREGATE["german_animacy"]),
    ),
    "cola": dict(
        threads=1,
        mem_mb=2000,
        runtime=10,
        options=quoted(cli_options(AGGREGATE, ("folds", "seed")))
        + f" --criterion {AGGREGATE['cola_criterion']}",
        captions=dict(
            folds=AGGREGATE["folds"],
            seed=AGGREGATE["seed"],
            criterion=AGGREGATE["cola_criterion"],
        ),
    ),
    "blimp": dict(threads=1, mem_mb=2000, runtime=10, options="", captions={}),
    # the one that needs more: a cross-validated regression per dataset and mode
    "japanese_transitivity": dict(
        threads=4,
        mem_mb=japanese_table_memory,
        runtime=japanese_table_runtime,
        options=japanese_table_options(),
        jobs=lambda wildcards, threads: f"--jobs {threads}",
        captions=dict(
            agreement_modes=AGGREGATE["japanese_agreement_modes"],
            decision=AGGREGATE["japanese_decision"],
            lexicon=japanese_section("lexicon"),
            corpus=japanese_section("corpus"),
            rank_by=japanese_section("rank_by"),
            min_count=japanese_section("min_count"),
            n_verb_pairs=japanese_section("n_verb_pairs"),
            folds=AGGREGATE["folds"],
            regression=AGGREGATE["regression"],
        ),
    ),
}

# The figures with options of their own (`options`, after --out) or config values in their
# captions besides their datasets and models; every other figure has none.
FIGURE_PARAMS = {
    "japanese_agreement": dict(agreement_modes=AGGREGATE["japanese_agreement_modes"]),
    "japanese_agreement_graph": dict(
        threshold=AGGREGATE["japanese_graph_threshold"],
        agreement_modes=AGGREGATE["japanese_agreement_modes"],
        options=quoted(
            cli_options({"threshold": AGGREGATE["japanese_graph_threshold"]}, ("threshold",))
        ),
    ),
}


def figure_params(figure):
    """A figure rule's params besides its command, stem and code: its options ("" when none)
    and what its caption shows: the datasets and models of the family that feeds it, and its
    FIGURE_PARAMS."""
    params = {"options": ""}
    if figure.feed in DATASET_FAMILIES:
        params |= {
            "datasets": items_datasets(figure.feed),
            "models": aggregate_models(figure.feed),
        }
    return params | FIGURE_PARAMS.get(figure.name, {})
