# The wildcard constraints every stage's rules share. What the rules plan with (input functions,
# params, resources) is Python: each rules file reads its stage's plan object, which the
# Snakefile builds from the validated config (spudflow.<stage>.plan, spudflow.core.plan).
# A rule holds only what is its own: its benchmark (beside its log), its stage's conda env, its
# params.code and, without `resources:`, a small job's mem_mb and runtime are set on every rule
# in one place (spudflow.core.rule_defaults, called by the Snakefile).


wildcard_constraints:
    treebank=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    split=r"[A-Za-z0-9_-]+",
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    model=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    ngram=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    control=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    method=r"spud|posfree|pos",
    seed=r"[0-9]+",
    shard=r"[1-9][0-9]*",
    part=r"train|heldout",
    shards=r"[1-9][0-9]*",
