# Items datasets (docs/pairs.md): minimal pairs and template sentences in one items artifact,
# written to results/items/{dataset}.parquet. A rule reads its `pairs:` section only when one of
# its jobs is planned (input and params functions): a section left out is a family not built.


from pathlib import Path

from spudflow.core.dataset_families import JAPANESE_VARIANTS
from spudflow.core.plan_base import sample_args
from spudflow.core.rules_support import attempt_scaled
from spudflow.pairs.plan import (
    JAPANESE_COUNTED_LEXICON,
    PAIRS_URL_FAMILIES,
    SPUD_ITEMS_MEMORY,
    german_case_source_args,
    spud_nonce_options,
)


rule items_spud:
    input:
        unpack(pairs_plan.spud_items_input),
    output:
        "results/items/{dataset}.parquet",
    log:
        "results/logs/items_spud/{dataset}.log",
    wildcard_constraints:
        dataset=r"spud_[A-Za-z0-9_.-]+",
    resources:
        **attempt_scaled(mem_mb=SPUD_ITEMS_MEMORY, runtime=10),
    params:
        orig=lambda wc, input: Path(input.orig).parent,
        nonce=spud_nonce_options,
        lang=lambda wc: pairs_plan.treebank_lang(pairs_plan.spud_items_splits()[wc.dataset][0]),
        min_words=lambda wc: pairs_plan.pairs_section("spud")["min_words"],
        leave_out=pairs_plan.spud_leave_out_args,
    shell:
        "spudflow pairs spud --orig {params.orig:q} {params.nonce} --lang {params.lang}"
        " --min-words {params.min_words} {params.leave_out} --dataset {wildcards.dataset}"
        " --out {output:q} 2> {log:q}"


rule items_german_case:
    input:
        unpack(pairs_plan.german_case_items_input),
    output:
        "results/items/german_case.parquet",
    log:
        "results/logs/items_german_case.log",
    resources:
        **attempt_scaled(mem_mb=2000, runtime=10),
    params:
        source=german_case_source_args,
        sample=lambda wc: sample_args(pairs_plan.pairs_section("german_case")["sample"]),
    shell:
        "spudflow pairs german-case {params.source} {params.sample} --out {output:q} 2> {log:q}"


# Only when pairs.japanese_transitivity.corpus names a corpus (the thesis's Wikipedia counts).
rule japanese_verb_counts:
    input:
        corpus=lambda wc: pairs_plan.pairs_section("japanese_transitivity")["corpus"],
        lexicon=lambda wc: pairs_plan.pairs_section("japanese_transitivity")["lexicon"],
    output:
        JAPANESE_COUNTED_LEXICON,
    log:
        "results/logs/japanese_verb_counts.log",
    resources:
        **attempt_scaled(mem_mb=4000, runtime=720),
    shell:
        "spudflow pairs count-verbs {input.corpus:q} --lexicon {input.lexicon:q}"
        " --out {output:q} 2> {log:q}"


rule items_japanese_transitivity:
    input:
        lexicon=lambda wc: pairs_plan.japanese_lexicon(),
    output:
        "results/items/japanese_transitivity_{variant}.parquet",
    log:
        "results/logs/items_japanese_transitivity/{variant}.log",
    wildcard_constraints:
        variant="|".join(JAPANESE_VARIANTS),
    resources:
        **attempt_scaled(mem_mb=8000, runtime=30),
    params:
        n_verb_pairs=lambda wc: pairs_plan.pairs_section("japanese_transitivity")["n_verb_pairs"],
        ranking=pairs_plan.japanese_ranking_args,
        sample=pairs_plan.japanese_sample_args,
    shell:
        "spudflow pairs japanese-transitivity --lexicon {input.lexicon:q}"
        " --variant {wildcards.variant} --n-verb-pairs {params.n_verb_pairs} {params.ranking}"
        " {params.sample} --out {output:q} 2> {log:q}"


rule items_cola:
    input:
        tsv=lambda wc: pairs_plan.pairs_section("cola")["files"],
        phenomena=lambda wc: pairs_plan.cola_phenomena(),
    output:
        "results/items/cola.parquet",
    log:
        "results/logs/items_cola.log",
    resources:
        **attempt_scaled(mem_mb=2000, runtime=10),
    params:
        phenomena=lambda wc: pairs_plan.cola_phenomena_args(),
        sample=lambda wc: sample_args(pairs_plan.pairs_section("cola")["sample"]),
        words=lambda wc: pairs_plan.pairs_section("cola")["words"],
    shell:
        "spudflow pairs cola {input.tsv:q} {params.phenomena} {params.sample}"
        " --words {params.words} --out {output:q} 2> {log:q}"


# An items dataset's file given by URL (the CoLA phenomenon sets, the German case paper's
# sentence files; core/pairs_files.py), downloaded under its own file name.
rule fetch_pairs_file:
    input:
        pairs_plan.pairs_file_input,
    output:
        "resources/downloads/pairs/{family}/{name}",
    log:
        "results/logs/fetch_pairs_file/{family}/{name}.log",
    wildcard_constraints:
        family=PAIRS_URL_FAMILIES,
        name=r"[A-Za-z0-9_.-]+",
    resources:
        **attempt_scaled(mem_mb=500, runtime=30),
    params:
        url=pairs_plan.pairs_file_url,
        checksum=pairs_plan.pairs_file_checksum,
        max_bytes=lookup(dpath="fetch/max_bytes", within=config),
    shell:
        "spudflow fetch {params.url:q} --out {output:q}{params.checksum}"
        " --max-bytes {params.max_bytes} 2> {log:q}"


rule items_blimp:
    input:
        jsonl=lambda wc: pairs_plan.blimp_files(),
    output:
        "results/items/blimp.parquet",
    log:
        "results/logs/items_blimp.log",
    resources:
        **attempt_scaled(mem_mb=4000, runtime=20),
    params:
        sample=lambda wc: sample_args(pairs_plan.pairs_section("blimp")["sample"]),
    shell:
        "spudflow pairs blimp {input.jsonl:q} {params.sample} --out {output:q} 2> {log:q}"
