# Controls: small BERT, GPT-2 and ELECTRA models trained from scratch on the treebanks' own text
# (docs/controls.md), each a save_pretrained directory the scoring stage loads: a `models:` entry
# uses it as `source: results/controls/NAME`.
# `spudflow train-control` options with the same name as the control's config keys.


from spudflow.controls.plan import control_text_args
from spudflow.core.rules_support import grows_with_attempt


rule train_control:
    input:
        text=controls_plan.control_text_inputs,
    output:
        directory("results/controls/{control}"),
    log:
        "results/logs/train_control/{control}.log",
    benchmark:
        "results/benchmarks/train_control/{control}.tsv"
    conda:
        "../envs/lm.yaml"
    # One thread: tiny matrices gain little from more, and two jobs then share 2 cores;
    # training runs on the CPU whatever the machine (no GPU slot).
    threads: 1
    resources:
        mem_mb=grows_with_attempt(4000),
        runtime=grows_with_attempt(30),
        gpu=0,
    params:
        text=control_text_args,
        args=controls_plan.control_train_args,
        code=controls_plan.stage_code("controls"),
    shell:
        "spudflow train-control {params.text} {params.args} --threads {threads}"
        " --out {output:q} 2> {log:q}"
