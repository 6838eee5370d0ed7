# SPUD nonce treebanks: per split, method and seed, and the replacement tables.


rule nonce:
    input:
        tokens=lambda wc: ingested(wc.treebank, wc.split),
        pools=nonce_pool_inputs,
        lexicon_from=nonce_lexicon_inputs,
        lexicons=nonce_lexicon_files,
        code=stage_code("nonce"),
    output:
        tokens="results/nonce/{treebank}/{split}/{method}/seed{seed}/tokens.parquet",
        sentences="results/nonce/{treebank}/{split}/{method}/seed{seed}/sentences.parquet",
        conllu="results/nonce/{treebank}/{split}/{method}/seed{seed}/nonce.conllu",
        stats="results/nonce/{treebank}/{split}/{method}/seed{seed}/replacement_stats.parquet",
    params:
        indir=subpath(input.tokens, parent=True),
        outdir=subpath(output.tokens, parent=True),
        lang=lambda wc: treebank_lang(wc.treebank),
        arguments=nonce_arguments,
    log:
        "results/logs/nonce/{treebank}/{split}/{method}/seed{seed}.log",
    benchmark:
        "results/benchmarks/nonce/{treebank}/{split}/{method}/seed{seed}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow nonce {params.indir:q} --lang {params.lang} --seed {wildcards.seed}"
        " --method {wildcards.method} --out {params.outdir:q} --conllu {output.conllu:q}"
        " --treebank {wildcards.treebank} --split {wildcards.split} {params.arguments}"
        " 2> {log:q}"


rule table_nonce_ratio:
    input:
        stats=nonce_stats_files(),
        code=stage_code("nonce"),
    output:
        table_files("nonce_replacement_ratio", "nonce_replacement_ratio.rst", "Treebanks"),
    params:
        stem=subpath(output[1], strip_suffix=".parquet"),
    log:
        "results/logs/nonce/table_nonce_ratio.log",
    benchmark:
        "results/benchmarks/nonce/table_nonce_ratio.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow table-nonce-ratio {input.stats:q} --out {params.stem:q} 2> {log:q}"


rule table_nonce_ttr:
    input:
        stats=nonce_stats_files(),
        code=stage_code("nonce"),
    output:
        table_files("nonce_type_token_ratio", "nonce_type_token_ratio.rst", "Treebanks"),
    params:
        stem=subpath(output[1], strip_suffix=".parquet"),
    log:
        "results/logs/nonce/table_nonce_ttr.log",
    benchmark:
        "results/benchmarks/nonce/table_nonce_ttr.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow table-nonce-ttr {input.stats:q} --out {params.stem:q} 2> {log:q}"
