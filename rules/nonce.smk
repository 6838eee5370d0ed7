# SPUD nonce treebanks: per split, method and seed, and the replacement tables (docs/nonce.md).
# A split's nonce treebanks: results/nonce/{treebank}/{split}/{method}/seed{seed}/, one per method
# and seed of the `nonce:` section that something reads (the SPUD items of a scored split, the
# probes' test splits; none without the section). The lexicon of a split is built from every
# configured split of its language. The tables' inputs are functions: what reads a nonce version
# is known once the pairs and probe rules are included.


from spudflow.core.plan_base import ingested, quoted, registry_files
from spudflow.core.rules_support import attempt_scaled
from spudflow.nonce.plan import NONCE_MEMORY, nonce_sources


rule nonce:
    input:
        tokens=lambda wc: ingested(wc.treebank, wc.split),
        pools=nonce_plan.nonce_pool_inputs,
        lexicon_from=nonce_plan.nonce_lexicon_inputs,
        lexicons=nonce_plan.nonce_lexicon_files,
    output:
        tokens="results/nonce/{treebank}/{split}/{method}/seed{seed}/tokens.parquet",
        sentences="results/nonce/{treebank}/{split}/{method}/seed{seed}/sentences.parquet",
        conllu="results/nonce/{treebank}/{split}/{method}/seed{seed}/nonce.conllu",
        stats="results/nonce/{treebank}/{split}/{method}/seed{seed}/replacement_stats.parquet",
    log:
        "results/logs/nonce/{treebank}/{split}/{method}/seed{seed}.log",
    resources:
        **attempt_scaled(mem_mb=NONCE_MEMORY, runtime=10),
    params:
        in_dir=subpath(input.tokens, parent=True),
        out_dir=subpath(output.tokens, parent=True),
        lang=lambda wc: nonce_plan.treebank_lang(wc.treebank),
        options=nonce_plan.nonce_options,
        sources=nonce_sources,
    shell:
        "spudflow nonce {params.in_dir:q} --lang {params.lang} --seed {wildcards.seed}"
        " --method {wildcards.method} --out {params.out_dir:q} --conllu {output.conllu:q}"
        " --treebank {wildcards.treebank} --split {wildcards.split} {params.options}"
        " {params.sources} 2> {log:q}"


# The two tables over every nonce treebank's replacement statistics: one rule, two commands.
rule table_nonce_ratio:
    input:
        stats=lambda wc: nonce_plan.nonce_stats_files(),
    output:
        **registry_files("table_nonce_ratio"),
    log:
        "results/logs/table_nonce_ratio.log",
    params:
        command="table-nonce-ratio",
        out_dir=subpath(output.parquet, parent=True),
        options="",
    shell:
        "spudflow {params.command} {input.stats:q} --out-dir {params.out_dir:q} {params.options}"
        " 2> {log:q}"


use rule table_nonce_ratio as table_nonce_ttr with:
    input:
        stats=lambda wc: nonce_plan.nonce_stats_files(),
        tokens=lambda wc: nonce_plan.nonce_ttr_tokens(),
        tokenizer=nonce_plan.nonce_ttr_tokenizer_inputs(),
    output:
        **registry_files("table_nonce_ttr"),
    log:
        "results/logs/table_nonce_ttr.log",
    params:
        command="table-nonce-ttr",
        options=nonce_plan.nonce_ttr_options(),


# Human evaluation kit (paper section 3.2): sheets of one split's original / SPUD / posfree
# triplets and their answer key; Tables 1-2 from the filled sheets (config human_eval).
if "human_eval" in config:

    rule human_eval_export:
        input:
            orig=ingested(*nonce_plan.human_eval_split()),
            spud=nonce_plan.human_eval_nonce("spud"),
            posfree=nonce_plan.human_eval_nonce("posfree"),
        output:
            key=f"{nonce_plan.human_eval_dir()}/answer_key.parquet",
            sheets=nonce_plan.human_eval_sheets(),
        log:
            "results/logs/human_eval_export.log",
        resources:
            **attempt_scaled(mem_mb=2000, runtime=5),
        params:
            orig=subpath(input.orig, parent=True),
            spud=subpath(input.spud, parent=True),
            posfree=subpath(input.posfree, parent=True),
            out_dir=subpath(output.key, parent=True),
            n=lookup(dpath="human_eval/n", within=config),
            seed=lookup(dpath="human_eval/seed", within=config),
            annotators=quoted(lookup(dpath="human_eval/annotators", within=config)),
        shell:
            "spudflow human-eval export --orig {params.orig:q} --spud {params.spud:q}"
            " --posfree {params.posfree:q} --n {params.n} --seed {params.seed}"
            " --annotators {params.annotators} --out {params.out_dir:q} 2> {log:q}"

    # Tables 1-2 only from filled sheets (human_eval.filled).
    if lookup(dpath="human_eval/filled", within=config):

        rule human_eval_tables:
            input:
                key=rules.human_eval_export.output.key,
                sheets=nonce_plan.human_eval_filled(),
            output:
                **registry_files("human_eval_tables"),
            log:
                "results/logs/human_eval_tables.log",
            params:
                out_dir=subpath(output.parquet, parent=True),
            shell:
                "spudflow human-eval tables {input.sheets:q} --key {input.key:q}"
                " --out-dir {params.out_dir:q} 2> {log:q}"
