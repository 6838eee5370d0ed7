# spudflow: what do language models know about syntax? See README.md.
# Reading order: this file, then rules/common.smk (what every stage shares), then each stage's
# rules/<stage>.smk with its input functions and config lookups in rules/plumbing/<stage>.smk
# (included at its top), then the stage's code in workflow/spudflow/<stage>/.
import os

from snakemake.utils import min_version, validate

from spudflow.core.config import check_config

min_version("9.0")

# Where envs/*.post-deploy.sh find the package to install into per-rule conda envs.
os.environ.setdefault("SPUDFLOW_REPO", workflow.basedir)


# The embedded default; a config file given with --configfile replaces it whole.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# Every problem of the config, one line per key; then the schema's defaults are filled in
# (set_default=True, also into sections left out whose schema default is {}), the one place a
# config default lives: the rules read config keys without defaults of their own.
check_config(config, workflow.source_path("config/schema.yaml"))
validate(config, "config/schema.yaml", set_default=True)


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
    default_target: True
    input:
        ingest_outputs(),
        nonce_outputs(),
        [items_file(dataset) for dataset in items_datasets()],
        control_outputs(),
        scoring_outputs(),
        probe_metrics_files(),
        aggregate_outputs(),
