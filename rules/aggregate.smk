# Aggregation: tables and figures collected across treebanks, models and datasets, and the
# report's entries. Every table and figure, its rule, caption and report category is an entry of
# core/outputs_registry.py (registry_files(rule) gives a rule's files); rule all asks for those
# whose input the config produces (aggregate_outputs()). What it reads of the other stages (their rules files, included before this one):
#   items_datasets(family) -> [dataset, ...]      pairs: the items datasets of a family the config
#                                                 enables (core/dataset_families.py)
#   scoring_jobs() -> [(dataset, model), ...]     scoring: each makes
#                                                 results/scores/{dataset}/{model}/item_scores.parquet
#   probe_metrics_files() -> [path, ...]          probe: metrics.parquet files
#   probe_layer_choice_files() -> [path, ...]     probe: the layers chosen for `auto`
#   probe_gold_treebanks() -> [tokens.parquet, ...]  probe: the eval sets' gold treebanks
#   probe_eval_sets() -> [name, ...]              probe: orig and the nonce eval sets, each a
#                                                 run's predictions/{name}.conllu
#   probe_edge_args(wildcards, input) -> str      probe: table-probe-edges options
#   nonce_stats_files() -> [path, ...]            nonce: per-split replacement statistics


include: "plumbing/aggregate.smk"


rule table_treebank_stats:
    input:
        stats=[f"results/stats/{tb}/{split}.parquet" for tb, split in treebank_splits()],
    output:
        registry_files("table_treebank_stats"),
    log:
        "results/logs/table_treebank_stats.log",
    benchmark:
        "results/benchmarks/aggregate/table_treebank_stats.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(1000),
        runtime=grows_with_attempt(5),
    params:
        stem=subpath(output[1], strip_suffix=".parquet"),
        code=stage_code("aggregate"),
    shell:
        "spudflow table-treebank-stats {input.stats:q} --out {params.stem} 2> {log:q}"


rule table_nonce_replacements:
    input:
        tables=nonce_stats_files(),
    output:
        registry_files("table_nonce_replacements"),
    log:
        "results/logs/aggregate/table_nonce_replacements.log",
    benchmark:
        "results/benchmarks/aggregate/table_nonce_replacements.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(1000),
        runtime=grows_with_attempt(5),
    params:
        stem=subpath(output[1], strip_suffix=".parquet"),
        caption="Nonce treebanks: replacement statistics per treebank, method and seed.",
        code=stage_code("aggregate"),
    shell:
        "spudflow table-collect {input.tables:q} --out {params.stem:q}"
        " --caption {params.caption:q} 2> {log:q}"


rule table_probe:
    input:
        metrics=probe_metrics_files(),
        layer_choice=probe_layer_choice_files(),
    output:
        registry_files("table_probe"),
    log:
        "results/logs/aggregate/table_probe.log",
    benchmark:
        "results/benchmarks/aggregate/table_probe.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(2000),
        runtime=grows_with_attempt(10),
    params:
        out_dir=subpath(output[1], parent=True),
        layer_choice=lambda wc, input: quoted(
            ["--layer-choice", *input.layer_choice] if input.layer_choice else []
        ),
        code=stage_code("aggregate"),
    shell:
        "spudflow table-probe {input.metrics:q} {params.layer_choice}"
        " --out-dir {params.out_dir:q} 2> {log:q}"


# Edge directions (App. F.7): each run's predictions/{eval set}.conllu, written with its
# metrics.parquet, scored against the gold treebanks of the eval sets.
rule table_probe_edges:
    input:
        metrics=probe_metrics_files(),
        gold=probe_gold_treebanks(),
    output:
        registry_files("table_probe_edges"),
    log:
        "results/logs/aggregate/table_probe_edges.log",
    benchmark:
        "results/benchmarks/aggregate/table_probe_edges.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(probe_edges_memory),
        runtime=grows_with_attempt(probe_edges_runtime),
    params:
        out_dir=subpath(output[1], parent=True),
        args=probe_edge_args,
        code=stage_code("aggregate"),
    shell:
        "spudflow table-probe-edges {input.metrics:q} {params.args}"
        " --out-dir {params.out_dir:q} 2> {log:q}"


# The tables of one dataset family: its items and their scores -> tables in results/tables. The
# other families' rules reuse its input names and shell; each states its own env, threads, resources
# and options (the Japanese regression is the one that needs more).
rule table_blimp:
    input:
        item_files=aggregate_items("blimp"),
        score_files=aggregate_scores("blimp"),
    output:
        registry_files("table_blimp"),
    log:
        "results/logs/aggregate/table_blimp.log",
    benchmark:
        "results/benchmarks/aggregate/table_blimp.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(2000),
        runtime=grows_with_attempt(10),
    params:
        command="table-blimp",
        out_dir=subpath(output[1], parent=True),
        options="",
        datasets=aggregate_datasets("blimp"),
        models=aggregate_models("blimp"),
        code=stage_code("aggregate"),
    shell:
        "spudflow {params.command} --items {input.item_files:q} --scores {input.score_files:q}"
        " --out-dir {params.out_dir:q} {params.options} 2> {log:q}"


use rule table_blimp as table_spud_scores with:
    input:
        item_files=aggregate_items("spud"),
        score_files=aggregate_scores("spud"),
    output:
        registry_files("table_spud_scores"),
    log:
        "results/logs/aggregate/table_spud_scores.log",
    benchmark:
        "results/benchmarks/aggregate/table_spud_scores.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(4000),
        runtime=grows_with_attempt(15),
    params:
        command="table-spud-scores",
        options=quoted(
            ["--extremes", AGGREGATE["extremes"]]
            + ["--outlier-threshold", AGGREGATE["spud_outlier_threshold"]]
            + ["--outliers-above", AGGREGATE["spud_outliers_above"]]
            + ["--outliers-below", AGGREGATE["spud_outliers_below"]]
        ),
        extremes=AGGREGATE["extremes"],
        outlier_threshold=AGGREGATE["spud_outlier_threshold"],
        outliers_above=AGGREGATE["spud_outliers_above"],
        outliers_below=AGGREGATE["spud_outliers_below"],
        datasets=aggregate_datasets("spud"),
        models=aggregate_models("spud"),


use rule table_blimp as table_german_case with:
    input:
        item_files=aggregate_items("german_case"),
        score_files=aggregate_scores("german_case"),
    output:
        registry_files("table_german_case"),
    log:
        "results/logs/aggregate/table_german_case.log",
    benchmark:
        "results/benchmarks/aggregate/table_german_case.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(2000),
        runtime=grows_with_attempt(10),
    params:
        command="table-german-case",
        options=f"--animacy {AGGREGATE['german_animacy']}",
        animacy=AGGREGATE["german_animacy"],
        datasets=aggregate_datasets("german_case"),
        models=aggregate_models("german_case"),


use rule table_blimp as table_cola with:
    input:
        item_files=aggregate_items("cola"),
        score_files=aggregate_scores("cola"),
    output:
        registry_files("table_cola"),
    log:
        "results/logs/aggregate/table_cola.log",
    benchmark:
        "results/benchmarks/aggregate/table_cola.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(2000),
        runtime=grows_with_attempt(10),
    params:
        command="table-cola",
        options=quoted(cli_options(AGGREGATE, ("folds", "seed")))
        + f" --criterion {AGGREGATE['cola_criterion']}",
        folds=AGGREGATE["folds"],
        seed=AGGREGATE["seed"],
        criterion=AGGREGATE["cola_criterion"],
        datasets=aggregate_datasets("cola"),
        models=aggregate_models("cola"),


use rule table_blimp as table_japanese with:
    input:
        item_files=aggregate_items("japanese_transitivity"),
        score_files=aggregate_scores("japanese_transitivity"),
    output:
        registry_files("table_japanese"),
    log:
        "results/logs/aggregate/table_japanese.log",
    benchmark:
        "results/benchmarks/aggregate/table_japanese.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 4
    resources:
        mem_mb=grows_with_attempt(japanese_table_memory),
        runtime=grows_with_attempt(japanese_table_runtime),
    params:
        command="table-japanese",
        options=lambda wc, threads: quoted(
            cli_options(AGGREGATE, ("folds", "seed"))
            + cli_options(
                AGGREGATE["regression"],
                ("lambda_choice", "n_lambda", "l1_ratio", "top", "max_iter"),
            )
            + ["--jobs", threads, "--decision", AGGREGATE["japanese_decision"]]
            + [a for m in AGGREGATE["japanese_agreement_modes"] for a in ("--agreement-mode", m)]
        ),
        agreement_modes=AGGREGATE["japanese_agreement_modes"],
        decision=AGGREGATE["japanese_decision"],
        lexicon=lambda wc: pairs_section("japanese_transitivity").get("lexicon"),
        corpus=lambda wc: pairs_section("japanese_transitivity").get("corpus"),
        rank_by=lambda wc: pairs_section("japanese_transitivity").get("rank_by"),
        min_count=lambda wc: pairs_section("japanese_transitivity").get("min_count"),
        n_verb_pairs=lambda wc: pairs_section("japanese_transitivity").get("n_verb_pairs"),
        folds=AGGREGATE["folds"],
        regression=AGGREGATE["regression"],
        datasets=aggregate_datasets("japanese_transitivity"),
        models=aggregate_models("japanese_transitivity"),


# A figure: one table -> NAME.svg and NAME.png in results/figures, its table and command from the
# registry entry. The other figures' rules reuse this rule's env, threads, resources and shell
# (every figure is one small table drawn once) and add the datasets and models of their captions.
rule figure_probe_layers:
    input:
        table=figure_table("probe_layers"),
    output:
        registry_files("figure_probe_layers"),
    log:
        "results/logs/aggregate/figure_probe_layers.log",
    benchmark:
        "results/benchmarks/aggregate/figure_probe_layers.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(2000),
        runtime=grows_with_attempt(10),
    params:
        command=figure_command("probe_layers"),
        stem=subpath(output[1], strip_suffix=".png"),
        code=stage_code("aggregate"),
    shell:
        "spudflow {params.command} {input.table:q} --out {params.stem:q} 2> {log:q}"


use rule figure_probe_layers as figure_spud_log_ratios with:
    input:
        table=figure_table("spud_log_ratios"),
    output:
        registry_files("figure_spud_log_ratios"),
    log:
        "results/logs/aggregate/figure_spud_log_ratios.log",
    benchmark:
        "results/benchmarks/aggregate/figure_spud_log_ratios.tsv"
    params:
        command=figure_command("spud_log_ratios"),
        datasets=aggregate_datasets("spud"),
        models=aggregate_models("spud"),


use rule figure_probe_layers as figure_german_case_roc with:
    input:
        table=figure_table("german_case_roc"),
    output:
        registry_files("figure_german_case_roc"),
    log:
        "results/logs/aggregate/figure_german_case_roc.log",
    benchmark:
        "results/benchmarks/aggregate/figure_german_case_roc.tsv"
    params:
        command=figure_command("german_case_roc"),
        datasets=aggregate_datasets("german_case"),
        models=aggregate_models("german_case"),


use rule figure_probe_layers as figure_german_case_order_auc with:
    input:
        table=figure_table("german_case_order_auc"),
    output:
        registry_files("figure_german_case_order_auc"),
    log:
        "results/logs/aggregate/figure_german_case_order_auc.log",
    benchmark:
        "results/benchmarks/aggregate/figure_german_case_order_auc.tsv"
    params:
        command=figure_command("german_case_order_auc"),
        datasets=aggregate_datasets("german_case"),
        models=aggregate_models("german_case"),


use rule figure_probe_layers as figure_german_case_auc_templates with:
    input:
        table=figure_table("german_case_auc_templates"),
    output:
        registry_files("figure_german_case_auc_templates"),
    log:
        "results/logs/aggregate/figure_german_case_auc_templates.log",
    benchmark:
        "results/benchmarks/aggregate/figure_german_case_auc_templates.tsv"
    params:
        command=figure_command("german_case_auc_templates"),
        datasets=aggregate_datasets("german_case"),
        models=aggregate_models("german_case"),


use rule figure_probe_layers as figure_blimp_fields with:
    input:
        table=figure_table("blimp_fields"),
    output:
        registry_files("figure_blimp_fields"),
    log:
        "results/logs/aggregate/figure_blimp_fields.log",
    benchmark:
        "results/benchmarks/aggregate/figure_blimp_fields.tsv"
    params:
        command=figure_command("blimp_fields"),
        datasets=aggregate_datasets("blimp"),
        models=aggregate_models("blimp"),


use rule figure_probe_layers as figure_japanese_agreement with:
    input:
        table=figure_table("japanese_agreement"),
    output:
        registry_files("figure_japanese_agreement"),
    log:
        "results/logs/aggregate/figure_japanese_agreement.log",
    benchmark:
        "results/benchmarks/aggregate/figure_japanese_agreement.tsv"
    params:
        command=figure_command("japanese_agreement"),
        datasets=aggregate_datasets("japanese_transitivity"),
        models=aggregate_models("japanese_transitivity"),
        agreement_modes=AGGREGATE["japanese_agreement_modes"],


# Its own rule: the figure command takes the pruning threshold (thesis §5.6) from the config.
rule figure_japanese_agreement_graph:
    input:
        table=figure_table("japanese_agreement_graph"),
    output:
        registry_files("figure_japanese_agreement_graph"),
    log:
        "results/logs/aggregate/figure_japanese_agreement_graph.log",
    benchmark:
        "results/benchmarks/aggregate/figure_japanese_agreement_graph.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(2000),
        runtime=grows_with_attempt(10),
    params:
        stem=subpath(output[1], strip_suffix=".png"),
        threshold=AGGREGATE["japanese_graph_threshold"],
        agreement_modes=AGGREGATE["japanese_agreement_modes"],
        options=quoted(
            cli_options({"threshold": AGGREGATE["japanese_graph_threshold"]}, ("threshold",))
        ),
        datasets=aggregate_datasets("japanese_transitivity"),
        models=aggregate_models("japanese_transitivity"),
        code=stage_code("aggregate"),
    shell:
        "spudflow figure-japanese-agreement-graph {input.table:q} --out {params.stem:q}"
        " {params.options} 2> {log:q}"


use rule figure_probe_layers as figure_japanese_length with:
    input:
        table=figure_table("japanese_length"),
    output:
        registry_files("figure_japanese_length"),
    log:
        "results/logs/aggregate/figure_japanese_length.log",
    benchmark:
        "results/benchmarks/aggregate/figure_japanese_length.tsv"
    params:
        command=figure_command("japanese_length"),
        datasets=aggregate_datasets("japanese_transitivity"),
        models=aggregate_models("japanese_transitivity"),


# The front page: one headline table per paper, linking to the full tables, figures and the
# Snakemake report (docs/aggregate.md, "Front page").
rule front_page:
    input:
        front_page_files(),
    output:
        "results/index.html",
    log:
        "results/logs/aggregate/front_page.log",
    benchmark:
        "results/benchmarks/aggregate/front_page.tsv"
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=grows_with_attempt(1000),
        runtime=grows_with_attempt(5),
    params:
        args=front_page_args,
        code=stage_code("aggregate"),
    shell:
        "spudflow front-page {params.args} --out {output:q} 2> {log:q}"
