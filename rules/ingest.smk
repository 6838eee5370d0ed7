# Ingestion: CoNLL-U -> Parquet (tokens + sentences), per-split statistics and training shares.
# A split given as a list of files is ingested as one, the files in order.


from spudflow.core.rules_support import attempt_scaled
from spudflow.ingest.plan import INGEST_MEMORY


# One downloaded file: a split's URL ({download} = the split), or the N-th URL of a split given
# as a list ({download} = split.N; core/split_files.py).
rule fetch_treebank:
    input:
        ingest_plan.fetch_input,
    output:
        "resources/downloads/{treebank}/{download}.{ext}",
    log:
        "results/logs/fetch_treebank/{treebank}/{download}.{ext}.log",
    wildcard_constraints:
        download=r"[A-Za-z0-9_-]+(?:\.[1-9][0-9]*)?",
        ext=r"conllu|conllu\.gz",
    resources:
        **attempt_scaled(mem_mb=500, runtime=30),
    params:
        url=ingest_plan.fetch_url,
        checksum=ingest_plan.fetch_checksum,
        max_bytes=lookup(dpath="fetch/max_bytes", within=config),
    shell:
        "spudflow fetch {params.url:q} --out {output:q}{params.checksum}"
        " --max-bytes {params.max_bytes} 2> {log:q}"


rule ingest:
    input:
        conllu=ingest_plan.treebank_source,
    output:
        tokens="results/ingest/{treebank}/{split}/tokens.parquet",
        sentences="results/ingest/{treebank}/{split}/sentences.parquet",
    log:
        "results/logs/ingest/{treebank}/{split}.log",
    resources:
        **attempt_scaled(mem_mb=INGEST_MEMORY, runtime=10),
    params:
        out_dir=subpath(output.tokens, parent=True),
        lenient="--lenient" if lookup(dpath="ingest/lenient", within=config) else "",
    shell:
        "spudflow ingest {input.conllu:q} --out {params.out_dir:q} {params.lenient} 2> {log:q}"


rule treebank_stats:
    input:
        tokens=rules.ingest.output.tokens,
        sentences=rules.ingest.output.sentences,
    output:
        "results/stats/{treebank}/{split}.parquet",
    log:
        "results/logs/treebank_stats/{treebank}/{split}.log",
    params:
        in_dir=subpath(input.tokens, parent=True),
        lang=lambda wc: ingest_plan.treebank_lang(wc.treebank),
    shell:
        "spudflow stats {params.in_dir:q} --treebank {wildcards.treebank} --split {wildcards.split}"
        " --lang {params.lang} --out {output:q} 2> {log:q}"


# The training share of a split (config training_shares): the sentences the pipeline's own models
# may train on; the SPUD items of the split leave them out. Part `heldout` is the rest of the split
# (what the items keep), which the probe may test on (docs/probe.md, "Tasks").
rule training_share:
    input:
        tokens=rules.ingest.output.tokens,
        sentences=rules.ingest.output.sentences,
    output:
        tokens="results/shares/{treebank}/{split}/{part}/tokens.parquet",
        sentences="results/shares/{treebank}/{split}/{part}/sentences.parquet",
    log:
        "results/logs/training_share/{treebank}/{split}/{part}.log",
    params:
        in_dir=subpath(input.tokens, parent=True),
        out_dir=subpath(output.tokens, parent=True),
        share=ingest_plan.training_share_args,
    shell:
        "spudflow training-share {params.in_dir:q} {params.share} --out {params.out_dir:q} 2> {log:q}"
