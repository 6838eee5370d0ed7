# Input functions and config lookups of the aggregate stage's rules (rules/aggregate.smk).
import math

from spudflow.aggregate.front_page import shown_outputs as front_page_shown
from spudflow.aggregate.inputs import dataset_of_scores
from spudflow.core.outputs_registry import FIGURE_OUTPUTS, OUTPUTS

AGGREGATE = config["aggregate"]


def aggregate_datasets(family):
    """The items datasets of one family (core/dataset_families.py) the config enables, in config
    order."""
    return items_datasets(family)


def aggregate_items(family):
    return [items_file(d) for d in aggregate_datasets(family)]


def aggregate_jobs(family):
    datasets = set(aggregate_datasets(family))
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


def probe_edges_work_mb():
    """What table_probe_edges parses: each probe run's predictions of every eval set, about
    the size of that eval set's gold CoNLL-U, so the MB of each gold tokens.parquet times the
    runs of its treebank."""
    return sum(
        len(probe_metrics_files(treebank)) * input_mb([tokens])
        for treebank, _, tokens in probe_gold_sets()
    )


def probe_edges_runtime(wildcards, input):
    """table_probe_edges's runtime (minutes): `conllu` parses every run's predictions on one
    thread. The full-size SPUD preset (1,528 MB of probe_edges_work_mb(): 81 runs, 7.1 GB of
    predictions) took 27.4 minutes, 0.018 per MB; 0.03 per MB, at least 10."""
    return max(10, math.ceil(0.03 * probe_edges_work_mb()))


def probe_edges_memory(wildcards, input):
    """table_probe_edges's mem_mb: it keeps every gold treebank's words and trees as Python
    objects and parses one predictions file at a time; the full-size SPUD preset (98.7 MB of
    gold tokens.parquet, 55 eval sets) peaked at 1,892 MB, about 16 MB per MB of them. With
    about a quarter of headroom, 2000 MB at least."""
    return max(2000, math.ceil(1000 + 1.25 * 16 * input_mb(input.gold)))


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
    """The headline tables (.parquet) and figures (.svg) among the aggregate outputs: those the
    front page's sections show (aggregate/front_page.py)."""
    outputs = aggregate_outputs() if outputs is None else outputs
    shown = set(front_page_shown())
    return [f for f in outputs if f in shown]


def front_page_args(wildcards, input):
    """`--table NAME=PATH` / `--figure NAME=PATH` of every input, shell-quoted."""
    options = {".parquet": "--table", ".svg": "--figure"}
    return quoted([arg for f in input for arg in (options[Path(f).suffix], f"{Path(f).stem}={f}")])


def figure_table(name):
    """The table a registry figure draws."""
    return f"results/tables/{FIGURE_OUTPUTS[name].table}.parquet"


def figure_command(name):
    return FIGURE_OUTPUTS[name].command
