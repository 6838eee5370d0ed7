# Aggregation: tables collected across treebanks, models and datasets.


rule table_treebank_stats:
    input:
        stats=[f"results/stats/{tb}/{split}.parquet" for tb, split in treebank_splits()],
        code=stage_code("aggregate"),
    output:
        multiext("results/tables/treebank_stats", ".parquet", ".csv", ".md", ".tex"),
    params:
        stem=lambda wc, output: output[0].removesuffix(".parquet"),
    log:
        "results/logs/table_treebank_stats.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow table-treebank-stats {input.stats:q} --out {params.stem} 2> {log:q}"
