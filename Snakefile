# spudflow: what do language models know about syntax? See README.md.
import os

from snakemake.utils import min_version, validate

from spudflow.core.config import check_config, fill_defaults

min_version("9.0")

# Where envs/*.post-deploy.sh find the package to install into per-rule conda envs.
os.environ.setdefault("SPUDFLOW_REPO", workflow.basedir)


# The embedded default; a config file given with --configfile replaces it whole.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


check_config(config, workflow.source_path("config/schema.yaml"))
# Sections whose keys all have defaults may be left out of a config; the schema fills them in.
fill_defaults(config, workflow.source_path("config/schema.yaml"))
validate(config, "config/schema.yaml")


# `snakemake --report results/report.html`: this text, then every table and figure marked with
# report() in the rules files, each with its caption from report/.
report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/ingest.smk"
include: "rules/nonce.smk"
include: "rules/pairs.smk"
include: "rules/controls.smk"
include: "rules/scoring.smk"
include: "rules/probe.smk"
include: "rules/aggregate.smk"


# No model may score sentences it was trained on (docs/controls.md, "Training data overlap").
check_training_overlap()


rule all:
    input:
        all_outputs(),
    default_target: True
