# SPUD nonce treebanks: per split, method and seed, and the replacement tables (docs/nonce.md).
# A split's nonce treebanks: results/nonce/{treebank}/{split}/{method}/seed{seed}/, one per method
# and seed of the `nonce:` section (none without it). The lexicon of a split is built from every
# configured split of its language.


def nonce_dir(treebank, split, method, seed):
    return f"results/nonce/{treebank}/{split}/{method}/seed{seed}"


def nonce_tokens(treebank, split):
    """tokens.parquet of every nonce version (methods x seeds of `nonce:`) of a split."""
    nonce = config["nonce"]
    return [
        f"{nonce_dir(treebank, split, method, seed)}/tokens.parquet"
        for method in nonce["methods"]
        for seed in nonce["seeds"]
    ]


def nonce_runs():
    """(treebank, split, method, seed) of every configured nonce treebank."""
    if "nonce" not in config:
        return []
    nonce = config["nonce"]
    return [
        (tb, split, method, seed)
        for tb, split in treebank_splits()
        for method in nonce["methods"]
        for seed in nonce["seeds"]
    ]


def nonce_stats_files():
    """The per-split replacement statistics (docs/nonce.md); the aggregate stage reads them."""
    return [f"{nonce_dir(*run)}/replacement_stats.parquet" for run in nonce_runs()]


def nonce_outputs():
    runs = nonce_runs()
    outputs = []
    for run in runs:
        outputs += [f"{nonce_dir(*run)}/tokens.parquet", f"{nonce_dir(*run)}/nonce.conllu"]
    if runs:
        outputs += [
            "results/tables/nonce_replacement_ratio.parquet",
            "results/tables/nonce_type_token_ratio.parquet",
        ]
    return outputs


def nonce_pool_inputs(wildcards):
    """Ingested splits named in config nonce.pools for this treebank."""
    names = config["nonce"]["pools"].get(wildcards.treebank, [])
    key = f"nonce.pools.{wildcards.treebank}"
    return [ingested(*configured_split(name, key)) for name in names]


def nonce_lexicon_inputs(wildcards):
    """Every other ingested split of the treebank's language: the lexicon's data."""
    lang = treebank_lang(wildcards.treebank)
    return [
        ingested(tb, split)
        for tb, split in treebank_splits()
        if treebank_lang(tb) == lang and (tb, split) != (wildcards.treebank, wildcards.split)
    ]


def nonce_lexicon_files(wildcards):
    return config["nonce"]["lexicons"].get(treebank_lang(wildcards.treebank), [])


def nonce_options(wildcards, input):
    """The optional arguments of `spudflow nonce` for one run, shell-quoted."""
    nonce = config["nonce"]
    options = nonce["languages"].get(treebank_lang(wildcards.treebank), {})
    dirs = lambda files: quoted(Path(f).parent for f in files)
    return " ".join(
        filter(
            None,
            [
                f"--upos {','.join(nonce['upos'])}",
                f"--pool {dirs(input.pools)}" if input.pools else "",
                f"--lexicon-from {dirs(input.lexicon_from)}" if input.lexicon_from else "",
                f"--lexicon {quoted(input.lexicons)}" if input.lexicons else "",
                *[f"--option {name}={str(value).lower()}" for name, value in sorted(options.items())],
            ],
        )
    )


rule nonce:
    input:
        tokens=lambda wc: ingested(wc.treebank, wc.split),
        pools=nonce_pool_inputs,
        lexicon_from=nonce_lexicon_inputs,
        lexicons=nonce_lexicon_files,
    output:
        tokens="results/nonce/{treebank}/{split}/{method}/seed{seed}/tokens.parquet",
        sentences="results/nonce/{treebank}/{split}/{method}/seed{seed}/sentences.parquet",
        conllu="results/nonce/{treebank}/{split}/{method}/seed{seed}/nonce.conllu",
        stats="results/nonce/{treebank}/{split}/{method}/seed{seed}/replacement_stats.parquet",
    params:
        indir=subpath(input.tokens, parent=True),
        outdir=subpath(output.tokens, parent=True),
        lang=lambda wc: treebank_lang(wc.treebank),
        options=nonce_options,
        code=stage_code("nonce"),
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
        " --treebank {wildcards.treebank} --split {wildcards.split} {params.options}"
        " 2> {log:q}"


# The two tables over every nonce treebank's replacement statistics: one rule, two commands.
rule table_nonce_ratio:
    input:
        stats=nonce_stats_files(),
    output:
        table_files("nonce_replacement_ratio", "nonce_replacement_ratio.rst", "Treebanks"),
    params:
        command="table-nonce-ratio",
        stem=subpath(output[1], strip_suffix=".parquet"),
        code=stage_code("nonce"),
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
        "spudflow {params.command} {input.stats:q} --out {params.stem:q} 2> {log:q}"


use rule table_nonce_ratio as table_nonce_ttr with:
    output:
        table_files("nonce_type_token_ratio", "nonce_type_token_ratio.rst", "Treebanks"),
    params:
        command="table-nonce-ttr",
    log:
        "results/logs/nonce/table_nonce_ttr.log",
    benchmark:
        "results/benchmarks/nonce/table_nonce_ttr.tsv"
