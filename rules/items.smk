# Items datasets (docs/items.md): minimal pairs and template sentences in one items artifact,
# written to results/items/{dataset}.parquet. A rule reads its `pairs:` section only when one of
# its jobs is planned (input and params functions): a section left out is a family not built.


from pathlib import Path

from spudflow.core.dataset_families import BUILT_FAMILIES, JAPANESE_VARIANTS
from spudflow.core.plan_items import items_file
from spudflow.core.rules_support import attempt_scaled
from spudflow.items.plan import (
    JAPANESE_COUNTED_LEXICON,
    PAIRS_URL_FAMILIES,
    SPUD_ITEMS_MEMORY,
    spud_nonce_options,
)


rule items_spud:
    input:
        unpack(items_plan.spud_items_input),
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
        lang=lambda wc: items_plan.treebank_lang(items_plan.spud_items_splits()[wc.dataset][0]),
        min_words=lambda wc: items_plan.pairs_section("spud")["min_words"],
        leave_out=items_plan.spud_leave_out_args,
    shell:
        "spudflow items spud --orig {params.orig:q} {params.nonce} --lang {params.lang}"
        " --min-words {params.min_words} {params.leave_out} --dataset {wildcards.dataset}"
        " --out {output:q} 2> {log:q}"


# Only when pairs.japanese_transitivity.corpus names a corpus (the thesis's Wikipedia counts).
rule japanese_verb_counts:
    input:
        corpus=lambda wc: items_plan.pairs_section("japanese_transitivity")["corpus"],
        lexicon=lambda wc: items_plan.pairs_section("japanese_transitivity")["lexicon"],
    output:
        JAPANESE_COUNTED_LEXICON,
    log:
        "results/logs/japanese_verb_counts.log",
    resources:
        **attempt_scaled(mem_mb=4000, runtime=720),
    shell:
        "spudflow items count-verbs {input.corpus:q} --lexicon {input.lexicon:q}"
        " --out {output:q} 2> {log:q}"


rule items_japanese_transitivity:
    input:
        lexicon=lambda wc: items_plan.japanese_lexicon(),
    output:
        "results/items/japanese_transitivity_{variant}.parquet",
    log:
        "results/logs/items_japanese_transitivity/{variant}.log",
    wildcard_constraints:
        variant="|".join(JAPANESE_VARIANTS),
    resources:
        **attempt_scaled(mem_mb=8000, runtime=30),
    params:
        n_verb_pairs=lambda wc: items_plan.pairs_section("japanese_transitivity")["n_verb_pairs"],
        ranking=items_plan.japanese_ranking_args,
        sample=items_plan.japanese_sample_args,
    shell:
        "spudflow items japanese-transitivity --lexicon {input.lexicon:q}"
        " --variant {wildcards.variant} --n-verb-pairs {params.n_verb_pairs} {params.ranking}"
        " {params.sample} --out {output:q} 2> {log:q}"


# An items dataset's file given by URL (the CoLA phenomenon sets, the German case paper's
# sentence files; core/pairs_files.py), downloaded under its own file name.
rule fetch_pairs_file:
    input:
        items_plan.pairs_file_input,
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
        url=items_plan.pairs_file_url,
        checksum=items_plan.pairs_file_checksum,
        max_bytes=lookup(dpath="fetch/max_bytes", within=config),
    shell:
        "spudflow fetch {params.url:q} --out {output:q}{params.checksum}"
        " --max-bytes {params.max_bytes} 2> {log:q}"


# A family with a builder (core/dataset_families.py): its one dataset, made by its builder module
# (spudflow/items/BUILDER.py), which gives the job's inputs and command arguments from its
# `pairs:` section. One rule per registry entry: a new dataset adds no rule here.
for family in BUILT_FAMILIES.values():

    rule:
        name:
            f"items_{family.name}"
        input:
            unpack(items_plan.builder_inputs(family.name)),
        output:
            items_file(family.name),
        log:
            f"results/logs/items_{family.name}.log",
        resources:
            **attempt_scaled(mem_mb=family.mem_mb, runtime=family.runtime),
        params:
            **items_plan.builder_params(family.name),
        shell:
            "spudflow items {params.command} {params.arguments} --out {output:q} 2> {log:q}"
