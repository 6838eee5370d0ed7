# spudflow: what do language models know about syntax? See README.md.
# Reading order: this file, then each stage's rules/<stage>.smk, whose input functions, resources
# and config lookups are its plan object's (workflow/spudflow/<stage>/plan.py, on the shared
# spudflow.core.plan), then the stage's code in workflow/spudflow/<stage>/.
import os
from pathlib import Path

from snakemake.logging import logger
from snakemake.sourcecache import LocalSourceFile
from snakemake.utils import min_version

from spudflow.aggregate.plan import AggregatePlan
from spudflow.controls.plan import ControlsPlan
from spudflow.core.config import (
    check_config,
    check_config_encoding,
    check_config_files,
    fill_named_entries,
    fill_schema_defaults,
)
from spudflow.core.config_references import check_references
from spudflow.core.plan_items import items_file
from spudflow.core.rule_defaults import complete_rules
from spudflow.core.workflow_paths import (
    code_dir,
    local_workflow_file,
    remote_workflow_file,
    resolve_workflow_paths,
)
from spudflow.ingest.plan import IngestPlan
from spudflow.nonce.plan import NoncePlan
from spudflow.items.plan import ItemsPlan
from spudflow.probe.plan import ProbePlan
from spudflow.scoring.plan import ScoringPlan
from spudflow.stale_outputs import (
    config_key,
    left_by_its_job,
    planned_files,
    settle_outputs,
)

min_version("9.0")

# This workflow's own directory: a local path, or (a module from github(...)) a remote one. Not
# workflow.basedir, which is the deploying project's when spudflow runs as a module.
WORKFLOW_DIR = workflow.current_basedir
if isinstance(WORKFLOW_DIR, LocalSourceFile):
    package_spec = WORKFLOW_DIR.get_path_or_uri(secret_free=True)
    workflow_file = local_workflow_file(Path(package_spec), Path.cwd())
    SPUDFLOW_CODE = code_dir(Path(package_spec))
else:
    package_spec = f"git+https://{WORKFLOW_DIR.host}/{WORKFLOW_DIR.repo}@{WORKFLOW_DIR.ref}"
    workflow_file = remote_workflow_file(WORKFLOW_DIR, workflow.sourcecache)
    SPUDFLOW_CODE = code_dir(None)

# What envs/*.post-deploy.sh install into per-rule conda envs: this checkout, or the release.
os.environ.setdefault("SPUDFLOW_REPO", package_spec)


# The config: a --configfile's, or (as a module) the `config:` the deploying Snakefile passes;
# else config/config.yaml of the working directory (Snakemake's convention, as in .test/); else
# the workflow's embedded default. Any of them is taken whole (docs/running.md).
DEFAULT_CONFIG = "config/config.yaml"
if not os.path.exists(DEFAULT_CONFIG):
    DEFAULT_CONFIG = workflow.source_path(DEFAULT_CONFIG)
if not workflow.overwrite_configfiles:
    check_config_encoding([DEFAULT_CONFIG])  # one line naming file and line, not a traceback

    configfile: DEFAULT_CONFIG


# Which config this run is, for the record of its tables and figures (onsuccess, below): its
# files as named, in order, and the --config values, taken before anything is filled in.
# (config_settings.config: --config alone; its overwrite_config holds the files' contents too)
CONFIG_KEY = config_key(workflow.configfiles, dict(workflow.config_settings.config))

# A key given twice in a config file: YAML keeps the last without a word.
check_config_files(workflow.configfiles)
# Every problem of the config, one line per key; then the schema's defaults are filled in
# (also into sections left out whose schema default is {}), the one place a
# config default lives: the rules read config keys without defaults of their own. A renamed
# key's old spelling is read as the new one, with a line in the log (core/renamed.py).
SCHEMA = workflow.source_path("config/schema.yaml")
for deprecated in check_config(config, SCHEMA):
    logger.warning(deprecated)
if not workflow.modifier.skip_validation:
    fill_schema_defaults(config, SCHEMA)
# Maps keyed by a treebank or language get an entry for each configured one (none: its meaning
# when left out), so the rules index them without a fallback.
fill_named_entries(config)
# `workflow:REL` values name files shipped with spudflow; every other path is the run's, relative
# to the working directory (spudflow.core.workflow_paths).
resolve_workflow_paths(config, workflow_file)
# Every name a value refers to (treebank, split, share, dataset, n-gram, control, probe task,
# model) names something configured: one line per problem, before any rule is read.
check_references(config)

# What each stage's rules plan with, from the validated config: rules/<stage>.smk reads only its
# own <stage>_plan (spudflow/<stage>/plan.py), and every plan answers what the others make
# (spudflow.core.plan).
ingest_plan = IngestPlan(config, SPUDFLOW_CODE)
nonce_plan = NoncePlan(config, SPUDFLOW_CODE)
items_plan = ItemsPlan(config, SPUDFLOW_CODE)
controls_plan = ControlsPlan(config, SPUDFLOW_CODE)
scoring_plan = ScoringPlan(config, SPUDFLOW_CODE)
probe_plan = ProbePlan(config, SPUDFLOW_CODE)
aggregate_plan = AggregatePlan(config, SPUDFLOW_CODE)


# `snakemake --report results/report.html`: this text, then every table and figure marked with
# report() in the rules files, each with its caption from report/.
report: "report/workflow.rst"


# The rules defined from here on are this workflow's (as a module, the deploying Snakefile's own
# come before).
RULES_BEFORE = len(workflow.rules)


include: "rules/common.smk"
include: "rules/ingest.smk"
include: "rules/nonce.smk"
include: "rules/items.smk"
include: "rules/controls.smk"
include: "rules/scoring.smk"
include: "rules/probe.smk"
include: "rules/aggregate.smk"


# Each rule's benchmark (beside its log), conda env and params.code, from its stage and its log:
# one place for what every rule has (spudflow.core.rule_defaults).
complete_rules(list(workflow.rules)[RULES_BEFORE:], SPUDFLOW_CODE)

# No model may score sentences it was trained on (docs/controls.md, "Training data overlap").
# Checked where the run is planned; a job's own Snakemake (a SLURM job step) reads the same
# config, already checked, and would spend a second reading the training texts again.
if workflow.is_main_process:
    scoring_plan.check_training_overlap()


rule all:
    default_target: True
    input:
        ingest_plan.ingest_outputs(),
        nonce_plan.nonce_outputs(),
        [items_file(dataset) for dataset in items_plan.items_datasets()],
        controls_plan.control_outputs(),
        scoring_plan.scoring_outputs(),
        probe_plan.probe_metrics_files(),
        aggregate_plan.aggregate_targets,


# Tables and figures an earlier run of this config made that it no longer makes (a model taken
# out) are removed after a successful run, as a fresh run would not have them: only files
# spudflow wrote and nobody changed since, none another config's run left as they are
# (spudflow/stale_outputs.py). Not with --immediate-submit, whose onsuccess comes before any job
# has run.
onsuccess:
    if workflow.is_main_process and not workflow.remote_execution_settings.immediate_submit:
        try:
            targets = nonce_plan.nonce_outputs() + aggregate_plan.aggregate_outputs()
            removed, problems = settle_outputs(
                CONFIG_KEY, planned_files(targets), left_by_its_job(workflow.persistence)
            )
        except Exception as error:  # the run succeeded: this must not turn it into a failure
            removed, problems = [], [f"earlier runs' tables and figures not checked: {error}"]
        for path in removed:
            logger.info(f"removed {path}: a table or figure the config no longer makes")
        for problem in problems:
            logger.warning(problem)
