"""What every rule of rules/<stage>.smk has besides its own lines, set in one place.

A rule writes what is its own: input, output, log, resources, params and shell (threads when not
one). The Snakefile then gives each rule the rules files defined (complete_rules) what follows
from its stage and its log:

- benchmark: its log path under results/benchmarks/, .tsv for .log (README, "Logs");
- conda: its stage's environment (STAGE_ENVS);
- resources, for a rule that gives none: a small job's (SMALL_JOB), grown with each attempt
  like every rule's, except what `--set-resources` gives the rule;
- params.code: its stage's code version (rules_support.code_version), the last param, so that a
  code change reruns the stage's jobs; a download (outputs under resources/downloads/) has none, so
  that a code change fetches nothing again.

Needs no Snakemake: a rule is anything with Snakemake's Rule attributes used below.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from spudflow.core.rules_support import attempt_scaled, code_version

# The conda environment (envs/NAME.yaml) of each stage's rules, by its rules file.
STAGE_ENVS = {
    "ingest": "core",
    "nonce": "core",
    "items": "core",
    "controls": "lm",
    "scoring": "lm",
    "probe": "lm",
    "aggregate": "stats",
}
DOWNLOADS = "resources/downloads/"
# mem_mb and runtime (minutes) of a rule without `resources:`: a table or a statistic of one split.
SMALL_JOB = {"mem_mb": 1000, "runtime": 5}
MEMORY = ("mem", "mem_mb", "mem_mib")  # one resource, three spellings


def benchmark_of_log(log: str) -> str:
    """results/logs/RULE/WILDCARDS.log -> results/benchmarks/RULE/WILDCARDS.tsv."""
    top, suffix = "results/logs/", ".log"
    if not (log.startswith(top) and log.endswith(suffix)):
        raise ValueError(f"{log}: a rule's log is {top}RULE[/WILDCARDS]{suffix}")
    return f"results/benchmarks/{log[len(top):-len(suffix)]}.tsv"


def stage_of(rule) -> str:
    """The stage whose rules file defined `rule` (rules/STAGE.smk)."""
    stage = PurePosixPath(str(rule.snakefile)).stem
    if stage not in STAGE_ENVS:
        raise ValueError(f"rule {rule.name}: {rule.snakefile} is no stage's rules file")
    return stage


def is_download(rule) -> bool:
    return all(str(path).startswith(DOWNLOADS) for path in rule.output)


def small_job(overwritten) -> dict:
    """SMALL_JOB's resources, attempt-scaled, less those `overwritten` (by --set-resources)."""
    taken = set(overwritten) | (set(MEMORY) if set(MEMORY) & set(overwritten) else set())
    return attempt_scaled(**{k: v for k, v in SMALL_JOB.items() if k not in taken})


def complete_rule(rule, code_dir: Path) -> None:
    """Give `rule` (one that runs a command) its benchmark, conda env and params.code."""
    stage = stage_of(rule)
    (log,) = rule.ruleinfo.log.paths  # as written: Snakemake applies a module's prefix itself
    rule.benchmark_modifier = rule.log_modifier
    rule.benchmark = benchmark_of_log(log)
    rule.conda_env = f"../envs/{STAGE_ENVS[stage]}.yaml"  # relative to rules/, like `conda:`
    if rule.ruleinfo.resources is None:
        rule.resources.update(small_job(rule.workflow.resource_settings.overwrite_resources
                                        .get(rule.name, {})))
    if not is_download(rule):
        rule.set_params(code=code_version(code_dir, stage))


def complete_rules(rules: Iterable, code_dir: Path) -> None:
    """complete_rule() for each of `rules` that runs something (not a target rule like all)."""
    for rule in rules:
        if not rule.norun:
            complete_rule(rule, code_dir)
