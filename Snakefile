# spudflow: what do language models know about syntax? See README.md.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "config/schema.yaml")


include: "rules/common.smk"
include: "rules/ingest.smk"
include: "rules/scoring.smk"
include: "rules/aggregate.smk"


rule all:
    input:
        all_outputs(),
    default_target: True
