# Controls: small BERT, GPT-2 and ELECTRA models trained from scratch on the treebanks' own text
# (docs/controls.md), each a save_pretrained directory the scoring stage loads: a `models:` entry
# uses it as `source: results/controls/NAME`.
# `spudflow control-train` options with the same name as the control's config keys.


from spudflow.controls.plan import control_text_args
from spudflow.core.rules_support import attempt_scaled


rule control_train:
    input:
        text=controls_plan.control_text_inputs,
    output:
        directory("results/controls/{control}"),
    log:
        "results/logs/control_train/{control}.log",
    # One thread (the default): tiny matrices gain little from more, and two jobs then share 2
    # cores; training runs on the CPU whatever the machine (no GPU slot).
    resources:
        **attempt_scaled(mem_mb=4000, runtime=30),
        gpu=0,
    params:
        text=control_text_args,
        args=controls_plan.control_train_args,
    shell:
        "spudflow control-train {params.text} {params.args} --threads {threads}"
        " --out {output:q} 2> {log:q}"
