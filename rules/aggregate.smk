# Aggregation: tables and figures collected across treebanks, models and datasets, and the
# report's entries. Every table and figure, its rule, caption and report category is an entry of
# core/outputs_registry.py (registry_files(rule) gives a rule's files, a table's report caption
# NAME.caption.rst among them, written by its command from the entry); rule all asks for those
# whose input the config produces (aggregate_outputs()). What it reads of the other stages (their rules files, included before this one):
#   table_datasets(family) -> [dataset, ...]      pairs: the items datasets the config enables
#                                                 that feed a family's tables
#                                                 (core/dataset_families.py)
#   scoring_jobs() -> [(dataset, model), ...]     scoring: each makes
#                                                 results/scores/{dataset}/{model}/item_scores.parquet
#   probe_metrics_files() -> [path, ...]          probe: metrics.parquet files
#   probe_layer_choice_files() -> [path, ...]     probe: the layers chosen for `auto`
#   probe_gold_treebanks() -> [tokens.parquet, ...]  probe: the eval sets' gold treebanks
#   probe_eval_sets() -> [name, ...]              probe: orig and the nonce eval sets, each a
#                                                 run's predictions/{name}.conllu
#   probe_edge_args(wildcards) -> str             probe: table-probe-edges options
#   nonce_stats_files() -> [path, ...]            nonce: per-split replacement statistics


from spudflow.aggregate.plan import front_page_args
from spudflow.core.outputs_registry import FIGURE_OUTPUTS
from spudflow.core.plan_base import quoted, registry_files
from spudflow.core.rules_support import attempt_scaled


rule table_treebank_stats:
    input:
        stats=[
            f"results/stats/{tb}/{split}.parquet" for tb, split in aggregate_plan.treebank_splits()
        ],
    output:
        **registry_files("table_treebank_stats"),
    log:
        "results/logs/table_treebank_stats.log",
    params:
        out_dir=subpath(output.parquet, parent=True),
    shell:
        "spudflow table-treebank-stats {input.stats:q} --out-dir {params.out_dir:q} 2> {log:q}"


rule table_nonce_replacements:
    input:
        stats=aggregate_plan.nonce_stats_files(),
    output:
        **registry_files("table_nonce_replacements"),
    log:
        "results/logs/table_nonce_replacements.log",
    params:
        out_dir=subpath(output.parquet, parent=True),
    shell:
        "spudflow table-collect {input.stats:q} --out-dir {params.out_dir:q} 2> {log:q}"


rule table_probe:
    input:
        metrics=aggregate_plan.probe_metrics_files(),
        layer_choice=aggregate_plan.probe_layer_choice_files(),
        predictions=aggregate_plan.probe_predictions_files(),
    output:
        **registry_files("table_probe"),
    log:
        "results/logs/table_probe.log",
    resources:
        **attempt_scaled(mem_mb=2000, runtime=10),
    params:
        out_dir=subpath(output.parquet, parent=True),
        layer_choice=lambda wc, input: quoted(
            ["--layer-choice", *input.layer_choice] if input.layer_choice else []
        ),
        options=aggregate_plan.probe_table_options(),
    shell:
        "spudflow table-probe {input.metrics:q} {params.layer_choice} {params.options}"
        " --predictions {input.predictions:q} --out-dir {params.out_dir:q} 2> {log:q}"


# Edge directions (App. F.7): each run's predicted trees (predictions.parquet, written with its
# metrics.parquet and predictions CoNLL-U), scored against the gold treebanks of the eval sets.
rule table_probe_edges:
    input:
        metrics=aggregate_plan.probe_metrics_files(),
        gold=aggregate_plan.probe_gold_treebanks(),
    output:
        **registry_files("table_probe_edges"),
    log:
        "results/logs/table_probe_edges.log",
    resources:
        **attempt_scaled(
            mem_mb=aggregate_plan.probe_edges_memory, runtime=aggregate_plan.probe_edges_runtime
        ),
    params:
        out_dir=subpath(output.parquet, parent=True),
        args=aggregate_plan.probe_edge_args,
    shell:
        "spudflow table-probe-edges {input.metrics:q} {params.args}"
        " --out-dir {params.out_dir:q} 2> {log:q}"


# The tables of one dataset family: its items and their scores -> tables in results/tables, one
# rule per family, made from the registry's entries (the rule and command of the tables the family
# feeds). Each family's command options, threads, resources and the config values its captions
# show are its entry of AggregatePlan.family_tables (spudflow/aggregate/plan.py).
for rule_name, family, command in aggregate_plan.family_table_rules():
    table = aggregate_plan.family_tables()[family]

    rule:
        name:
            rule_name
        input:
            item_files=aggregate_plan.aggregate_items(family),
            score_files=aggregate_plan.aggregate_scores(family),
        output:
            **registry_files(rule_name),
        log:
            f"results/logs/{rule_name}.log",
        threads: table["threads"]
        resources:
            **attempt_scaled(mem_mb=table["mem_mb"], runtime=table["runtime"]),
        params:
            **table["captions"],
            command=command,
            out_dir=subpath(output.parquet, parent=True),
            options=table["options"],
            jobs=table.get("jobs", ""),
            datasets=aggregate_plan.table_datasets(family),
            models=aggregate_plan.aggregate_models(family),
        shell:
            "spudflow {params.command} --items {input.item_files:q} --scores {input.score_files:q}"
            " --out-dir {params.out_dir:q} {params.options} {params.jobs} 2> {log:q}"


# A figure: one table -> NAME.svg and NAME.png in results/figures, one rule per entry of the
# registry, which gives its name, table and command (every figure is one small table drawn once).
# A figure fed by a dataset family shows that family's datasets and models in its caption; the
# few with options of their own, or other config values in their captions, have an entry in
# AggregatePlan.figure_own_params (spudflow/aggregate/plan.py).
for figure in FIGURE_OUTPUTS.values():

    rule:
        name:
            figure.rule
        input:
            table=f"results/tables/{figure.table}.parquet",
        output:
            **registry_files(figure.rule),
        log:
            f"results/logs/{figure.rule}.log",
        resources:
            **attempt_scaled(mem_mb=2000, runtime=10),
        params:
            **aggregate_plan.figure_params(figure),
            command=figure.command,
            stem=subpath(output.png, strip_suffix=".png"),
        shell:
            "spudflow {params.command} {input.table:q} --out {params.stem:q} {params.options}"
            " 2> {log:q}"


# The front page: one headline table per paper, linking to the full tables, figures and the
# Snakemake report (docs/aggregate.md, "Front page").
rule front_page:
    input:
        aggregate_plan.front_page_inputs,
    output:
        "results/index.html",
    log:
        "results/logs/front_page.log",
    params:
        args=front_page_args,
    shell:
        "spudflow front-page {params.args} --out {output:q} 2> {log:q}"
