# Ingestion: CoNLL-U -> Parquet (tokens + sentences), per-split statistics and training shares.


def is_url(location):
    return location.split(":", 1)[0] in ("http", "https", "ftp", "file")


def split_location(treebank, split):
    return config["treebanks"][treebank]["splits"][split]


def treebank_source(wildcards):
    """The local CoNLL-U file of a split: the configured path, or where its URL is downloaded."""
    location = split_location(wildcards.treebank, wildcards.split)
    if not is_url(location):
        return location
    suffix = ".conllu.gz" if location.endswith(".gz") else ".conllu"
    return f"resources/downloads/{wildcards.treebank}/{wildcards.split}{suffix}"


def training_share_args(wildcards):
    share = training_shares()[f"{wildcards.treebank}/{wildcards.split}"]
    return f"--share {share['share']} --seed {share['seed']}"


def ingest_outputs():
    outputs = ["results/tables/treebank_stats.parquet"]
    return outputs + [ingested(tb, split) for tb, split in treebank_splits()]


rule fetch_treebank:
    output:
        "resources/downloads/{treebank}/{split}.{ext}",
    wildcard_constraints:
        ext=r"conllu|conllu\.gz",
    params:
        url=lambda wc: split_location(wc.treebank, wc.split),
    log:
        "results/logs/fetch_treebank/{treebank}/{split}.{ext}.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=30,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow fetch {params.url:q} --out {output:q} 2> {log:q}"


rule ingest:
    input:
        conllu=treebank_source,
    output:
        tokens="results/ingest/{treebank}/{split}/tokens.parquet",
        sentences="results/ingest/{treebank}/{split}/sentences.parquet",
    params:
        outdir=subpath(output.tokens, parent=True),
        lenient="--lenient" if config["ingest"]["lenient"] else "",
        code=stage_code("ingest"),
    log:
        "results/logs/ingest/{treebank}/{split}.log",
    benchmark:
        "results/benchmarks/ingest/{treebank}/{split}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow ingest {input.conllu:q} --out {params.outdir:q} {params.lenient} 2> {log:q}"


rule treebank_stats:
    input:
        tokens=rules.ingest.output.tokens,
        sentences=rules.ingest.output.sentences,
    output:
        "results/stats/{treebank}/{split}.parquet",
    params:
        outdir=subpath(input.tokens, parent=True),
        lang=lambda wc: treebank_lang(wc.treebank),
        code=stage_code("ingest"),
    log:
        "results/logs/treebank_stats/{treebank}/{split}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow stats {params.outdir:q} --treebank {wildcards.treebank} --split {wildcards.split}"
        " --lang {params.lang} --out {output:q} 2> {log:q}"


# The training share of a split (config training_shares): the sentences the pipeline's own models
# may train on; the SPUD items of the split leave them out.
rule training_share:
    input:
        tokens=rules.ingest.output.tokens,
        sentences=rules.ingest.output.sentences,
    output:
        tokens="results/shares/{treebank}/{split}/train/tokens.parquet",
        sentences="results/shares/{treebank}/{split}/train/sentences.parquet",
    params:
        indir=subpath(input.tokens, parent=True),
        outdir=subpath(output.tokens, parent=True),
        share=training_share_args,
        code=stage_code("ingest"),
    log:
        "results/logs/training_share/{treebank}/{split}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/core.yaml"
    shell:
        "spudflow training-share {params.indir:q} {params.share} --out {params.outdir:q}"
        " 2> {log:q}"
