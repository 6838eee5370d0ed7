"""Logs and benchmarks in one scheme, by rule name (README, "Logs"): a job of rule RULE writes its
stderr to results/logs/RULE/WILDCARDS.log and its run time to results/benchmarks/RULE/WILDCARDS.tsv,
every wildcard of its outputs in the path; a rule without wildcards to results/logs/RULE.log and
results/benchmarks/RULE.tsv. Checked on every rule of the default config, with the human
evaluation's sheets filled (the one rule it leaves out)."""

from __future__ import annotations

import re

import pytest
from workflow_helpers import copy_checkout, default_config, workflow_rules

WILDCARD = re.compile(r"\{(\w+)")


def scheme_errors(rule: str, wildcards: frozenset[str], path: str | None, top: str,
                  suffix: str) -> list[str]:
    """What is wrong with one log (top `results/logs`, suffix .log) or benchmark path."""
    if path is None:
        return [f"{rule}: no {top.rsplit('/', 1)[1]} path"]
    if not wildcards:
        expected = f"{top}/{rule}{suffix}"
        return [] if path == expected else [f"{rule}: {path}, not {expected}"]
    errors = []
    if not (path.startswith(f"{top}/{rule}/") and path.endswith(suffix)):
        errors.append(f"{rule}: {path} is not {top}/{rule}/WILDCARDS{suffix}")
    if set(WILDCARD.findall(path)) != wildcards:
        errors.append(f"{rule}: {path} does not hold each of {sorted(wildcards)} once")
    return errors


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    config = default_config()
    kit = config["human_eval"]
    kit["filled"] = {name: f"sheets/{name}.csv" for name in kit["annotators"]}
    copy = copy_checkout(tmp_path_factory.mktemp("logs") / "workflow", config,
                         user_files=kit["filled"].values())
    return [rule for rule in workflow_rules(copy) if rule.runs_something]


@pytest.mark.slow
def test_every_rule_logs_and_benchmarks_under_its_name(rules):
    assert {"human_eval_tables", "probe_features_shard", "figure_probe_layers",
            "table_japanese_transitivity"} <= {rule.name for rule in rules}
    errors = []
    for rule in rules:
        if len(rule.logs) != 1:
            errors.append(f"{rule.name}: {len(rule.logs)} log files, not one")
        for log in rule.logs or (None,):
            errors += scheme_errors(rule.name, rule.wildcards, log, "results/logs", ".log")
        errors += scheme_errors(rule.name, rule.wildcards, rule.benchmark, "results/benchmarks",
                                ".tsv")
    assert errors == []


@pytest.mark.parametrize(("rule", "wildcards", "path", "wrong"), [
    ("table_blimp", (), "results/logs/aggregate/table_blimp.log", "not results/logs/table_blimp"),
    ("items_spud", ("dataset",), "results/logs/pairs/{dataset}.log", "is not results/logs/items"),
    ("probe_features_shard", ("probe_model", "shard", "split", "treebank"),
     "results/logs/probe_features/{probe_model}/{treebank}/{split}.shard{shard}.log",
     "is not results/logs/probe_features_shard/"),
    ("score", ("dataset", "model"), "results/logs/score/{dataset}.log", "does not hold each"),
])
def test_the_old_paths_fail_the_scheme(rule, wildcards, path, wrong):
    """Paths as they were before the scheme: by stage, or under another rule's name."""
    errors = scheme_errors(rule, frozenset(wildcards), path, "results/logs", ".log")
    assert len(errors) == 1 and wrong in errors[0]
