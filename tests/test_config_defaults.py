"""One value per default: where a config key of config/schema.yaml is passed to a `spudflow`
command option, the schema's default (what the pipeline uses) and the option's argparse default
(what the command does when run by hand) must agree. The rules pass every such key explicitly
(rules/*.smk read the schema-filled config), so the argparse default matters only outside
Snakemake, where a silent difference would give different numbers."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import pytest
import yaml

from spudflow.cli import build_parser

SCHEMA = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"


# Built and read once per test process: the parameter lists below look up ~70 options at
# collection, and no test changes either.
@functools.cache
def schema_file() -> dict:
    return yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))


@functools.cache
def parser_of_all() -> argparse.ArgumentParser:
    return build_parser()

# config key (`*`: any name under that section) -> (command, option dest[, how the option spells
# the schema value]). Every option of a command that a rule fills from the config is here.
JOINED = ",".join
NEGATED = lambda value: not value  # noqa: E731 - `--no-punct` stores the opposite of `punct`
SAME_AS_CLI = {
    "ingest.lenient": ("ingest", "lenient"),
    "fetch.max_bytes": ("fetch", "max_bytes"),
    "training_shares.*.seed": ("training-share", "seed"),
    "nonce.upos": ("nonce", "upos", JOINED),
    "human_eval.n": ("human-eval export", "n"),
    "human_eval.seed": ("human-eval export", "seed"),
    "human_eval.annotators": ("human-eval export", "annotators"),
    "pairs.spud.min_words": ("items spud", "min_words"),
    "pairs.japanese_transitivity.n_verb_pairs": ("items japanese-transitivity", "n_verb_pairs"),
    "pairs.japanese_transitivity.rank_by": ("items japanese-transitivity", "rank_by"),
    "pairs.japanese_transitivity.min_count": ("items japanese-transitivity", "min_count"),
    "pairs.german_case.sample.seed": ("items german-case", "seed"),
    "pairs.cola.sample.seed": ("items cola", "seed"),
    "pairs.cola.phenomena": ("items cola", "phenomena"),
    "pairs.blimp.sample.seed": ("items blimp", "seed"),
    "pairs.blimp_acceptability.sample.seed": ("items blimp-acceptability", "seed"),
    "pairs.blimp_acceptability.split_by": ("items blimp-acceptability", "split_by"),
    "pairs.japanese_transitivity.sample.base.seed": ("items japanese-transitivity", "seed"),
    "controls.*.seed": ("control-train", "seed"),
    "controls.*.vocab_size": ("control-train", "vocab_size"),
    "controls.*.layers": ("control-train", "layers"),
    "controls.*.hidden": ("control-train", "hidden"),
    "controls.*.heads": ("control-train", "heads"),
    "controls.*.max_length": ("control-train", "max_length"),
    "controls.*.epochs": ("control-train", "epochs"),
    "controls.*.batch_size": ("control-train", "batch_size"),
    "controls.*.learning_rate": ("control-train", "learning_rate"),
    "controls.*.max_sentences": ("control-train", "max_sentences"),
    "ngrams.*.order": ("ngram-train", "order"),
    "ngrams.*.k": ("ngram-train", "k"),
    "ngrams.*.discount": ("ngram-train", "discount"),
    "ngrams.*.min_count": ("ngram-train", "min_count"),
    "models.*.device": ("score", "device"),
    "models.*.dtype": ("score", "dtype"),
    "models.*.trust_remote_code": ("score", "trust_remote_code"),
    "models.*.sample.seed": ("score", "sample_seed"),
    "scoring.block_size": ("score", "block_size"),
    "scoring.l2r_words": ("score", "l2r_words"),
    "probe.models.*.device": ("probe features", "device"),
    "probe.models.*.init_seed": ("probe features", "init_seed"),
    "probe.models.*.max_length": ("probe features", "max_length"),
    "probe.sample.seed": ("probe features", "sample_seed"),
    "probe.holdout": ("probe train", "holdout"),
    "probe.holdout_seed": ("probe train", "holdout_seed"),
    "probe.max_train_sentences": ("probe train", "max_train_sentences"),
    "probe.max_dev_sentences": ("probe train", "max_dev_sentences"),
    "probe.max_sentences_seed": ("probe train", "max_sentences_seed"),
    "probe.min_words": ("probe train", "min_words"),
    "probe.distance": ("probe train", "distance"),
    "probe.rank": ("probe train", "rank"),
    "probe.lr": ("probe train", "lr"),
    "probe.batch_size": ("probe train", "batch_size"),
    "probe.max_epochs": ("probe train", "max_epochs"),
    "probe.patience": ("probe train", "patience"),
    "probe.batches": ("probe train", "batches"),
    "probe.subtypes": ("probe train", "subtypes"),
    "probe.punct": ("probe train", "no_punct", NEGATED),
    "probe.acl_predicted_as_unk": ("probe train", "acl_predicted_as_unk"),
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
    "aggregate.regression.convergence": ("table-japanese", "convergence"),
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
    schema = schema_file()
    node = schema
    for part in key.split("."):
        node = resolve(node, schema)
        node = node["additionalProperties"] if part == "*" else node["properties"][part]
    node = resolve(node, schema)
    assert "default" in node, f"config key {key}: no default in config/schema.yaml"
    return node["default"]


def command_parser(command: str) -> argparse.ArgumentParser:
    parser = parser_of_all()
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


# --- One constraint per value: an option whose argparse type checks a config key's constraints
# (spudflow.core.option_types) checks exactly those of config/schema.yaml. ---
CONSTRAINT_KEYWORDS = ("type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                       "pattern")
# Options filled from a config key without a default, or from one value of a list.
SAME_CONSTRAINTS = {
    "nonce.seeds": [("nonce", "seed")],
    "probe.seeds": [("probe train", "seeds")],
    "human_eval.nonce_seed": [("nonce", "seed")],
    "training_shares.*.share": [("training-share", "fraction"), ("items spud", "leave_out_share")],
    "treebanks.*.lang": [("stats", "lang"), ("nonce", "lang"), ("items spud", "lang")],
    "ngrams.*.lang": [("ngram-train", "lang")],
    "models.*.languages": [("score", "languages"), ("score", "lang")],
    "pairs.german_case.sample.n": [("items german-case", "sample")],
}


def schema_node(key: str) -> dict:
    schema = schema_file()
    node = schema
    for part in key.split("."):
        node = resolve(node, schema)
        node = node["additionalProperties"] if part == "*" else node["properties"][part]
    node = resolve(node, schema)
    types = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
    node = resolve(node["items"], schema) if "array" in types else node
    constraints = {k: node[k] for k in CONSTRAINT_KEYWORDS if k in node}
    if isinstance(constraints.get("type"), list):  # null: the option is left out
        constraints["type"] = next(t for t in constraints["type"] if t != "null")
    return constraints


def option_type(command: str, dest: str):
    return {a.dest: a for a in command_parser(command)._actions}[dest].type


# Options whose type checks a schema (the others are checked by their command, where at all).
CONSTRAINT_CASES = [(key, command, dest) for key, (command, dest, *_) in
                    {**SAME_AS_CLI, **SAME_AS_CLI_TOO}.items()]
CONSTRAINT_CASES += [(key, command, dest) for key, options in SAME_CONSTRAINTS.items()
                     for command, dest in options]
CONSTRAINT_CASES = [c for c in CONSTRAINT_CASES if hasattr(option_type(*c[1:]), "schema")]


def test_seeds_languages_shares_and_the_ngram_order_are_compared():
    assert {"training_shares.*.seed", "nonce.seeds", "probe.seeds", "aggregate.seed",
            "treebanks.*.lang", "models.*.languages", "training_shares.*.share",
            "ngrams.*.order"} <= {key for key, _, _ in CONSTRAINT_CASES}


@pytest.mark.parametrize("case", CONSTRAINT_CASES, ids=[f"{c[0]}->{c[1]}" for c in
                                                        CONSTRAINT_CASES])
def test_an_option_checks_what_the_schema_checks(case):
    key, command, dest = case
    checked = option_type(command, dest).schema
    assert checked == schema_node(key), (
        f"config key {key}: config/schema.yaml says {schema_node(key)}, `spudflow {command}` "
        f"checks {checked}")


@pytest.mark.slow
def test_every_seed_of_the_schema_is_a_32_bit_seed():
    """numpy's and scikit-learn's seeds: what `--seed` accepts (option_types.SEED)."""
    from spudflow.core.option_types import SEED

    schema = schema_file()
    seeds = []

    def walk(node, key):
        node = resolve(node, schema)
        for name, child in (node.get("properties") or {}).items():
            path = f"{key}.{name}" if key else name
            if name.endswith(("seed", "seeds")):
                seeds.append(path)
            walk(child, path)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{key}.*")

    walk(schema, "")
    assert len(seeds) >= 12
    assert {key: schema_node(key) for key in seeds} == dict.fromkeys(seeds, SEED)


def test_two_folds_stop_a_config_with_japanese_regressions_but_not_one_without():
    """`aggregate.folds: 2` is what the CoLA thresholds take, but cv.glmnet (the Japanese
    regressions) needs 3: caught by the config check, not at the Japanese table job."""
    from spudflow.core.config import ConfigError, check_config

    config = yaml.safe_load((SCHEMA.parent / "config.yaml").read_text(encoding="utf-8"))
    config.setdefault("aggregate", {})["folds"] = 2
    with pytest.raises(ConfigError) as stopped:
        check_config(config, SCHEMA)
    assert str(stopped.value) == (
        "config key aggregate.folds: 2 folds, but the Japanese regressions "
        "(pairs.japanese_transitivity) run cv.glmnet, which needs at least 3")
    config["pairs"]["japanese_transitivity"]["enabled"] = False
    check_config(config, SCHEMA)
    config["pairs"]["japanese_transitivity"]["enabled"] = True
    config["aggregate"]["folds"] = 3
    check_config(config, SCHEMA)


def test_two_splits_of_one_treebank_naming_one_file_stop_the_config():
    """dev and test naming one file: the probe would select on its test data and report it as
    held out. The config check names the key, before anything runs."""
    from spudflow.core.config import ConfigError, check_config

    config = yaml.safe_load((SCHEMA.parent / "config.yaml").read_text(encoding="utf-8"))
    splits = config["treebanks"]["en_pud"]["splits"]
    test = splits["test"]
    check_config(config, SCHEMA)
    splits["dev"] = test
    with pytest.raises(ConfigError) as stopped:
        check_config(config, SCHEMA)
    assert str(stopped.value) == (
        f"config key treebanks.en_pud.splits.dev: {test} is also split test's file; a split "
        "tested on the data another split trains or selects on is no held-out split")
    splits["dev"] = ["other.conllu", test.replace("/en_pud", "/./en_pud")]  # in a list, respelt
    with pytest.raises(ConfigError, match="splits.dev: .* is also split test's file"):
        check_config(config, SCHEMA)
    splits["dev"] = "other.conllu"
    config["treebanks"]["de_pud"]["splits"]["test"] = "other.conllu"  # another treebank: fine
    check_config(config, SCHEMA)


@pytest.mark.parametrize(("edit", "message"), [
    # a billion shards: `snakemake -n` grew to 20 GB planning their jobs
    (lambda c: c["scoring"].update(shards=10**9),
     "config key scoring.shards: 1000000000 is greater than the maximum of 1000"),
    (lambda c: c["models"]["smollm2_135m"].update(shards=5000),
     "config key models.smollm2_135m.shards: 5000 is greater than the maximum of 1000"),
    (lambda c: c["probe"].update(feature_shards=10**6),
     "config key probe.feature_shards: 1000000 is greater than the maximum of 1000"),
    (lambda c: c["nonce"].update(seeds=list(range(500))),
     "config key nonce.seeds: 500 entries, more than the maximum of 100"),
    (lambda c: c["probe"].update(seeds=list(range(101))),
     "config key probe.seeds: 101 entries, more than the maximum of 100"),
    (lambda c: c["aggregate"].update(folds=10**6),
     "config key aggregate.folds: 1000000 is greater than the maximum of 100"),
    # NaN passes every bound: a probe trained on NaN gradients
    (lambda c: c["probe"].update(lr=float("nan")),
     "config key probe.lr: nan is not a finite number"),
    (lambda c: c["aggregate"].update(spud_outliers_above=float("inf")),
     "config key aggregate.spud_outliers_above: inf is not a finite number"),
])
def test_counts_that_multiply_jobs_are_bounded_and_numbers_finite(edit, message):
    from workflow_helpers import default_config

    from spudflow.core.config import config_errors

    config = default_config()
    schema = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"
    assert config_errors(config, schema) == []
    edit(config)
    assert config_errors(config, schema) == [message]


@pytest.mark.parametrize("overlay", [None, "tests/data/workflow/config.yaml"])
def test_the_filled_defaults_are_snakemakes_and_no_filled_config_shares_them(overlay):
    """The Snakefile fills the schema's defaults with one validator per process (the schema is
    parsed once): the same config as snakemake.utils.validate(set_default=True) gives, and a
    filled config changed afterwards (the rules' plans add entries to filled maps) leaves the
    next one's defaults as they were."""
    import copy

    from snakemake.utils import validate

    from spudflow.core.config import fill_schema_defaults

    repo = SCHEMA.parents[1]
    given = yaml.safe_load((repo / "config" / "config.yaml").read_text(encoding="utf-8"))
    if overlay:  # the tests' tiny config: its sections replace the default's
        given.update(yaml.safe_load((repo / overlay).read_text(encoding="utf-8")))
    want = copy.deepcopy(given)
    validate(want, str(SCHEMA), set_default=True)
    first = copy.deepcopy(given)
    fill_schema_defaults(first, SCHEMA)
    assert first == want
    assert "fetch" not in given and first["fetch"]["mirror"] == {}  # filled from the schema
    first["fetch"]["mirror"]["https://example.org/a"] = "changed"
    second = copy.deepcopy(given)
    fill_schema_defaults(second, SCHEMA)
    assert second == want
