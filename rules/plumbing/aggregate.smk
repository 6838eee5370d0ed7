# Input functions and config lookups of the aggregate stage's rules (rules/aggregate.smk).
from spudflow.aggregate.front_page import SECTIONS as FRONT_PAGE_SECTIONS

AGGREGATE = config["aggregate"]


def aggregate_datasets(kind):
    """The items datasets of one kind the config enables, in config order."""
    return [d for d in items_datasets() if d.startswith(kind)]


def aggregate_items(kind):
    return [items_file(d) for d in aggregate_datasets(kind)]


def aggregate_jobs(kind):
    datasets = set(aggregate_datasets(kind))
    return [(d, m) for d, m in scoring_jobs() if d in datasets]


def aggregate_scores(kind):
    return [f"results/scores/{d}/{m}/item_scores.parquet" for d, m in aggregate_jobs(kind)]


def aggregate_models(kind):
    """Models scored on datasets of this kind (for report captions)."""
    return sorted({m for _, m in aggregate_jobs(kind)})


def aggregate_outputs():
    """The aggregate targets whose inputs the config produces (one file per rule suffices)."""
    wanted = {
        "spud": ["tables/spud_ratio_summary.parquet", "figures/spud_log_ratios.svg"],
        "german_case": [
            "tables/german_case_auc.parquet",
            "figures/german_case_roc.svg",
            "figures/german_case_order_auc.svg",
            "figures/german_case_auc_templates.svg",
        ],
        "cola": ["tables/cola_thresholds.parquet"],
        "blimp": ["tables/blimp_overall.parquet", "figures/blimp_fields.svg"],
        "japanese": [
            "tables/japanese_accuracy.parquet",
            "figures/japanese_agreement.svg",
            "figures/japanese_agreement_graph.svg",
            "figures/japanese_length.svg",
        ],
    }
    outputs = [
        f"results/{f}" for kind, files in wanted.items() if aggregate_scores(kind) for f in files
    ]
    if probe_metrics_files():
        outputs += [
            "results/tables/probe_summary.parquet",
            "results/tables/probe_languages.parquet",
            "results/figures/probe_layers.svg",
            "results/tables/probe_edges.parquet",
        ]
    if nonce_stats_files():
        outputs.append("results/tables/nonce_replacements.parquet")
    if front_page_files(outputs):
        outputs.append("results/index.html")
    return outputs


def front_page_files(outputs=None):
    """The headline tables (.parquet) and figures (.svg) among the aggregate outputs: those the
    front page's sections show (aggregate/front_page.py)."""
    shown = {name for s in FRONT_PAGE_SECTIONS for name in (s.table, *s.figures)}
    outputs = aggregate_outputs() if outputs is None else outputs
    return [f for f in outputs if Path(f).stem in shown]


def front_page_args(wildcards, input):
    """`--table NAME=PATH` / `--figure NAME=PATH` of every input, shell-quoted."""
    options = {".parquet": "--table", ".svg": "--figure"}
    return quoted([arg for f in input for arg in (options[Path(f).suffix], f"{Path(f).stem}={f}")])
