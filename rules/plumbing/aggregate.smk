# Input functions and config lookups of the aggregate stage's rules (rules/aggregate.smk).
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
        "german_case": ["tables/german_case_auc.parquet", "figures/german_case_roc.svg"],
        "cola": ["tables/cola_thresholds.parquet"],
        "blimp": ["tables/blimp_overall.parquet", "figures/blimp_fields.svg"],
        "japanese": ["tables/japanese_accuracy.parquet", "figures/japanese_agreement.svg"],
    }
    outputs = [
        f"results/{f}" for kind, files in wanted.items() if aggregate_scores(kind) for f in files
    ]
    if probe_metrics_files():
        outputs += [
            "results/tables/probe_summary.parquet",
            "results/figures/probe_layers.svg",
            "results/tables/probe_edges.parquet",
        ]
    if nonce_stats_files():
        outputs.append("results/tables/nonce_replacements.parquet")
    return outputs
