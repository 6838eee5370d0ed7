# Aggregation: tables and figures collected across treebanks, models and datasets, and the
# report's entries. Input functions (and what they expect of the other stages): common.smk.
AGGREGATE = config["aggregate"]


rule table_treebank_stats:
    input:
        stats=[f"results/stats/{tb}/{split}.parquet" for tb, split in treebank_splits()],
        code=stage_code("aggregate"),
    output:
        table_files("treebank_stats", "treebank_stats.rst", "Treebanks"),
    params:
        stem=subpath(output[1], strip_suffix=".parquet"),
    log:
        "results/logs/table_treebank_stats.log",
    benchmark:
        "results/benchmarks/aggregate/table_treebank_stats.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-treebank-stats {input.stats:q} --out {params.stem} 2> {log:q}"


rule table_nonce_replacements:
    input:
        tables=aggregate_replacement_tables(),
        code=stage_code("aggregate"),
    output:
        table_files("nonce_replacements", "nonce_replacements.rst", "Treebanks"),
    params:
        stem=subpath(output[1], strip_suffix=".parquet"),
        caption="Nonce treebanks: replacement statistics per treebank, method and seed.",
    log:
        "results/logs/aggregate/table_nonce_replacements.log",
    benchmark:
        "results/benchmarks/aggregate/table_nonce_replacements.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-collect {input.tables:q} --out {params.stem:q}"
        " --caption {params.caption:q} 2> {log:q}"


rule table_spud_scores:
    input:
        item_files=aggregate_items("spud"),
        score_files=aggregate_scores("spud"),
        code=stage_code("aggregate"),
    output:
        table_files("spud_ratio_summary", "spud_ratio_summary.rst", "SPUD scoring"),
        table_files("spud_wilcoxon", "spud_wilcoxon.rst", "SPUD scoring"),
        table_files("spud_extremes", "spud_extremes.rst", "SPUD scoring"),
        data_files("spud_ratios"),
    params:
        out_dir=subpath(output[1], parent=True),
        extremes=AGGREGATE["extremes"],
        datasets=aggregate_datasets("spud"),
        models=aggregate_models("spud"),
    log:
        "results/logs/aggregate/table_spud_scores.log",
    benchmark:
        "results/benchmarks/aggregate/table_spud_scores.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-spud-scores --items {input.item_files:q} --scores {input.score_files:q}"
        " --out-dir {params.out_dir:q} --extremes {params.extremes} 2> {log:q}"


rule figure_spud_ratios:
    input:
        table=f"{TABLES_DIR}/spud_ratios.parquet",
        code=stage_code("aggregate"),
    output:
        figure_files("spud_log_ratios", "spud_log_ratios.rst", "SPUD scoring"),
    params:
        stem=subpath(output[1], strip_suffix=".png"),
        datasets=aggregate_datasets("spud"),
        models=aggregate_models("spud"),
    log:
        "results/logs/aggregate/figure_spud_ratios.log",
    benchmark:
        "results/benchmarks/aggregate/figure_spud_ratios.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow figure-spud-ratios {input.table:q} --out {params.stem:q} 2> {log:q}"


rule table_german_case:
    input:
        item_files=aggregate_items("german_case"),
        score_files=aggregate_scores("german_case"),
        code=stage_code("aggregate"),
    output:
        table_files("german_case_auc", "german_case_auc.rst", "German case"),
        table_files("german_case_auc_templates", "german_case_auc_templates.rst", "German case"),
        table_files("german_case_auc_violation", "german_case_auc_violation.rst", "German case"),
        table_files("german_case_animacy", "german_case_animacy.rst", "German case"),
        table_files("german_case_order", "german_case_order.rst", "German case"),
        data_files("german_case_roc"),
    params:
        out_dir=subpath(output[1], parent=True),
        datasets=aggregate_datasets("german_case"),
        models=aggregate_models("german_case"),
    log:
        "results/logs/aggregate/table_german_case.log",
    benchmark:
        "results/benchmarks/aggregate/table_german_case.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-german-case --items {input.item_files:q} --scores {input.score_files:q}"
        " --out-dir {params.out_dir:q} 2> {log:q}"


rule figure_german_roc:
    input:
        table=f"{TABLES_DIR}/german_case_roc.parquet",
        code=stage_code("aggregate"),
    output:
        figure_files("german_case_roc", "german_case_roc.rst", "German case"),
    params:
        stem=subpath(output[1], strip_suffix=".png"),
        datasets=aggregate_datasets("german_case"),
        models=aggregate_models("german_case"),
    log:
        "results/logs/aggregate/figure_german_roc.log",
    benchmark:
        "results/benchmarks/aggregate/figure_german_roc.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow figure-german-roc {input.table:q} --out {params.stem:q} 2> {log:q}"


rule table_cola:
    input:
        item_files=aggregate_items("cola"),
        score_files=aggregate_scores("cola"),
        code=stage_code("aggregate"),
    output:
        table_files("cola_thresholds", "cola_thresholds.rst", "CoLA"),
    params:
        out_dir=subpath(output[1], parent=True),
        folds=AGGREGATE["folds"],
        seed=AGGREGATE["seed"],
        criterion=AGGREGATE["cola_criterion"],
        datasets=aggregate_datasets("cola"),
        models=aggregate_models("cola"),
    log:
        "results/logs/aggregate/table_cola.log",
    benchmark:
        "results/benchmarks/aggregate/table_cola.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-cola --items {input.item_files:q} --scores {input.score_files:q}"
        " --out-dir {params.out_dir:q} --folds {params.folds} --seed {params.seed}"
        " --criterion {params.criterion} 2> {log:q}"


rule table_blimp:
    input:
        item_files=aggregate_items("blimp"),
        score_files=aggregate_scores("blimp"),
        code=stage_code("aggregate"),
    output:
        table_files("blimp_overall", "blimp_overall.rst", "BLiMP"),
        table_files("blimp_field", "blimp_field.rst", "BLiMP"),
        table_files("blimp_paradigm", "blimp_paradigm.rst", "BLiMP"),
    params:
        out_dir=subpath(output[1], parent=True),
        datasets=aggregate_datasets("blimp"),
        models=aggregate_models("blimp"),
    log:
        "results/logs/aggregate/table_blimp.log",
    benchmark:
        "results/benchmarks/aggregate/table_blimp.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-blimp --items {input.item_files:q} --scores {input.score_files:q}"
        " --out-dir {params.out_dir:q} 2> {log:q}"


rule figure_blimp_fields:
    input:
        table=f"{TABLES_DIR}/blimp_field.parquet",
        code=stage_code("aggregate"),
    output:
        figure_files("blimp_fields", "blimp_fields.rst", "BLiMP"),
    params:
        stem=subpath(output[1], strip_suffix=".png"),
        datasets=aggregate_datasets("blimp"),
        models=aggregate_models("blimp"),
    log:
        "results/logs/aggregate/figure_blimp_fields.log",
    benchmark:
        "results/benchmarks/aggregate/figure_blimp_fields.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow figure-blimp-fields {input.table:q} --out {params.stem:q} 2> {log:q}"


rule table_japanese:
    input:
        item_files=aggregate_items("japanese"),
        score_files=aggregate_scores("japanese"),
        code=stage_code("aggregate"),
    output:
        table_files("japanese_accuracy", "japanese_accuracy.rst", "Japanese transitivity"),
        table_files("japanese_agreement", "japanese_agreement.rst", "Japanese transitivity"),
        table_files("japanese_regression", "japanese_regression.rst", "Japanese transitivity"),
    params:
        out_dir=subpath(output[1], parent=True),
        folds=AGGREGATE["folds"],
        seed=AGGREGATE["seed"],
        c=AGGREGATE["regression"]["c"],
        l1_ratio=AGGREGATE["regression"]["l1_ratio"],
        top=AGGREGATE["regression"]["top"],
        max_iter=AGGREGATE["regression"]["max_iter"],
        decision=AGGREGATE["japanese_decision"],
        datasets=aggregate_datasets("japanese"),
        models=aggregate_models("japanese"),
    log:
        "results/logs/aggregate/table_japanese.log",
    benchmark:
        "results/benchmarks/aggregate/table_japanese.tsv"
    threads: 4
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-japanese --items {input.item_files:q} --scores {input.score_files:q}"
        " --out-dir {params.out_dir:q} --folds {params.folds} --seed {params.seed}"
        " --c {params.c} --l1-ratio {params.l1_ratio} --top {params.top}"
        " --max-iter {params.max_iter} --jobs {threads} --decision {params.decision}"
        " 2> {log:q}"


rule figure_japanese_agreement:
    input:
        table=f"{TABLES_DIR}/japanese_agreement.parquet",
        code=stage_code("aggregate"),
    output:
        figure_files("japanese_agreement", "japanese_agreement_figure.rst",
                     "Japanese transitivity"),
    params:
        stem=subpath(output[1], strip_suffix=".png"),
        datasets=aggregate_datasets("japanese"),
        models=aggregate_models("japanese"),
    log:
        "results/logs/aggregate/figure_japanese_agreement.log",
    benchmark:
        "results/benchmarks/aggregate/figure_japanese_agreement.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow figure-japanese-agreement {input.table:q} --out {params.stem:q} 2> {log:q}"


rule table_probe:
    input:
        metrics=aggregate_probe_metrics(),
        code=stage_code("aggregate"),
    output:
        table_files("probe_summary", "probe_summary.rst", "DepProbe"),
        table_files("probe_layers", "probe_layers.rst", "DepProbe"),
    params:
        out_dir=subpath(output[1], parent=True),
    log:
        "results/logs/aggregate/table_probe.log",
    benchmark:
        "results/benchmarks/aggregate/table_probe.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow table-probe {input.metrics:q} --out-dir {params.out_dir:q} 2> {log:q}"


rule figure_probe_layers:
    input:
        table=f"{TABLES_DIR}/probe_layers.parquet",
        code=stage_code("aggregate"),
    output:
        figure_files("probe_layers", "probe_layers_figure.rst", "DepProbe"),
    params:
        stem=subpath(output[1], strip_suffix=".png"),
    log:
        "results/logs/aggregate/figure_probe_layers.log",
    benchmark:
        "results/benchmarks/aggregate/figure_probe_layers.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    shell:
        "spudflow figure-probe-layers {input.table:q} --out {params.stem:q} 2> {log:q}"
