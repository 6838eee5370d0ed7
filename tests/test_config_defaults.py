"""One value per default: where a config key of config/schema.yaml is passed to a `spudflow`
command option, the schema's default (what the pipeline uses) and the option's argparse default
(what the command does when run by hand) must agree. The rules pass every such key explicitly
(rules/*.smk read the schema-filled config), so the argparse default matters only outside
Snakemake, where a silent difference would give different numbers."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from spudflow.cli import build_parser

SCHEMA = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"

# config key (`*`: any name under that section) -> (command, option dest[, how the option spells
# the schema value]). Every option of a command that a rule fills from the config is here.
JOINED = ",".join
NEGATED = lambda value: not value  # noqa: E731 - `--no-punct` stores the opposite of `punct`
SAME_AS_CLI = {
    "ingest.lenient": ("ingest", "lenient"),
    "training_shares.*.seed": ("training-share", "seed"),
    "nonce.upos": ("nonce", "upos", JOINED),
    "human_eval.n": ("human-eval export", "n"),
    "human_eval.seed": ("human-eval export", "seed"),
    "human_eval.annotators": ("human-eval export", "annotators"),
    "pairs.spud.min_words": ("pairs spud", "min_words"),
    "pairs.japanese_transitivity.n_verb_pairs": ("pairs japanese-transitivity", "n_verb_pairs"),
    "pairs.japanese_transitivity.rank_by": ("pairs japanese-transitivity", "rank_by"),
    "pairs.japanese_transitivity.min_count": ("pairs japanese-transitivity", "min_count"),
    "pairs.german_case.sample.seed": ("pairs german-case", "seed"),
    "pairs.cola.sample.seed": ("pairs cola", "seed"),
    "pairs.cola.phenomena": ("pairs cola", "phenomena"),
    "pairs.blimp.sample.seed": ("pairs blimp", "seed"),
    "pairs.japanese_transitivity.sample.base.seed": ("pairs japanese-transitivity", "seed"),
    "controls.*.seed": ("train-control", "seed"),
    "controls.*.vocab_size": ("train-control", "vocab_size"),
    "controls.*.layers": ("train-control", "layers"),
    "controls.*.hidden": ("train-control", "hidden"),
    "controls.*.heads": ("train-control", "heads"),
    "controls.*.max_length": ("train-control", "max_length"),
    "controls.*.epochs": ("train-control", "epochs"),
    "controls.*.batch_size": ("train-control", "batch_size"),
    "controls.*.learning_rate": ("train-control", "learning_rate"),
    "controls.*.max_sentences": ("train-control", "max_sentences"),
    "ngrams.*.order": ("ngram-train", "order"),
    "ngrams.*.k": ("ngram-train", "k"),
    "ngrams.*.discount": ("ngram-train", "discount"),
    "ngrams.*.min_count": ("ngram-train", "min_count"),
    "models.*.device": ("score", "device"),
    "models.*.dtype": ("score", "dtype"),
    "models.*.trust_remote_code": ("score", "trust_remote_code"),
    "models.*.sample.seed": ("score", "sample_seed"),
    "scoring.block_size": ("score", "block_size"),
    "probe.models.*.device": ("probe features", "device"),
    "probe.models.*.init_seed": ("probe features", "init_seed"),
    "probe.models.*.max_length": ("probe features", "max_length"),
    "probe.sample.seed": ("probe features", "sample_seed"),
    "probe.holdout": ("probe train", "holdout"),
    "probe.holdout_seed": ("probe train", "holdout_seed"),
    "probe.min_words": ("probe train", "min_words"),
    "probe.distance": ("probe train", "distance"),
    "probe.rank": ("probe train", "rank"),
    "probe.lr": ("probe train", "lr"),
    "probe.batch_size": ("probe train", "batch_size"),
    "probe.max_epochs": ("probe train", "max_epochs"),
    "probe.patience": ("probe train", "patience"),
    "probe.subtypes": ("probe train", "subtypes"),
    "probe.punct": ("probe train", "no_punct", NEGATED),
    "aggregate.extremes": ("table-spud-scores", "extremes"),
    "aggregate.folds": ("table-cola", "folds"),
    "aggregate.seed": ("table-cola", "seed"),
    "aggregate.cola_criterion": ("table-cola", "criterion"),
    "aggregate.german_animacy": ("table-german-case", "animacy"),
    "aggregate.japanese_decision": ("table-japanese", "decision"),
    "aggregate.japanese_graph_threshold": ("figure-japanese-agreement-graph", "threshold"),
    "aggregate.regression.lambda_choice": ("table-japanese", "lambda_choice"),
    "aggregate.regression.n_lambda": ("table-japanese", "n_lambda"),
    "aggregate.regression.l1_ratio": ("table-japanese", "l1_ratio"),
    "aggregate.regression.top": ("table-japanese", "top"),
    "aggregate.regression.max_iter": ("table-japanese", "max_iter"),
}
# Japanese regression folds and seed are the same config keys as CoLA's.
SAME_AS_CLI_TOO = {
    "aggregate.folds": ("table-japanese", "folds"),
    "aggregate.seed": ("table-japanese", "seed"),
}


def resolve(node: dict, schema: dict) -> dict:
    while "$ref" in node:
        target = schema
        for step in node["$ref"].removeprefix("#/").split("/"):
            target = target[step]
        node = target
    return node


def schema_default(key: str):
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    node = schema
    for part in key.split("."):
        node = resolve(node, schema)
        node = node["additionalProperties"] if part == "*" else node["properties"][part]
    node = resolve(node, schema)
    assert "default" in node, f"config key {key}: no default in config/schema.yaml"
    return node["default"]


def command_parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for word in command.split():
        [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = subparsers.choices[word]
    return parser


def cli_default(command: str, dest: str):
    actions = {a.dest: a for a in command_parser(command)._actions}
    assert dest in actions, f"`spudflow {command}` has no option with dest {dest!r}"
    return actions[dest].default


CASES = [(key, *spec) for key, spec in SAME_AS_CLI.items()]
CASES += [(key, *spec) for key, spec in SAME_AS_CLI_TOO.items()]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}->{c[1]}" for c in CASES])
def test_schema_default_is_the_command_default(case):
    key, command, dest, *spelling = case
    expected = schema_default(key)
    if spelling:
        expected = spelling[0](expected)
    assert cli_default(command, dest) == expected, (
        f"config key {key} defaults to {schema_default(key)!r} in config/schema.yaml, but "
        f"`spudflow {command}` defaults its option to {cli_default(command, dest)!r}"
    )
