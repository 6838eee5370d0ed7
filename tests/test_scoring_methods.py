"""The scoring methods' registry (core/scoring_methods.py) against everything that names a
method: the scorers, `--method`, the help texts, config/schema.yaml's per-kind enums,
docs/scoring.md's table and the outlier table's columns. A method is its entry and its function;
the rest follows (the last test adds one in a copy of the workflow)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow_helpers import REPO, copy_workflow, in_copy, update_config

from spudflow.cli import build_parser
from spudflow.core import scoring_methods
from spudflow.core.errors import InputError
from spudflow.core.scoring_methods import BY_NAME, KINDS, REGION_SUFFIX, SCORING_METHODS, methods_of
from spudflow.core.table_artifacts import TABLES
from spudflow.scoring.methods import parse_methods, scoring_function

RENDERED = [REPO / "config" / "schema.yaml", REPO / "docs" / "scoring.md"]


def test_names_are_unique_and_each_entry_names_a_kind_and_a_function():
    assert len(BY_NAME) == len(SCORING_METHODS)
    for method in SCORING_METHODS:
        assert method.kind in KINDS, method.name
        assert not method.name.endswith(REGION_SUFFIX), method.name
        assert callable(scoring_function(method.name)), method.name
        assert scoring_function(method.name + REGION_SUFFIX) is scoring_function(method.name)


def test_the_schema_and_the_docs_are_rendered_from_the_registry():
    assert scoring_methods.main(["--check", *map(str, RENDERED)]) == 0


def test_the_schema_gives_each_kind_its_methods_and_their_region_variants():
    schema = yaml.safe_load(RENDERED[0].read_text(encoding="utf-8"))
    clauses = schema["properties"]["models"]["additionalProperties"]["allOf"]
    enums = {c["if"]["properties"]["kind"]["const"]: c["then"]["properties"]["methods"]["items"]
             ["enum"] for c in clauses
             if "const" in c.get("if", {}).get("properties", {}).get("kind", {})}
    assert enums == {kind: [*methods_of(kind), *(m + REGION_SUFFIX for m in methods_of(kind))]
                     for kind in KINDS}


def test_the_rewrite_command_checks_then_rewrites_a_stale_block(tmp_path, capsys):
    page = tmp_path / "page.md"
    stale = "intro\n<!-- scoring methods -->\n| old |\n<!-- /scoring methods -->\nafter\n"
    page.write_text(stale, encoding="utf-8")
    assert scoring_methods.main(["--check", str(page)]) == 1
    assert f"stale scoring methods: {page}" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == stale
    assert scoring_methods.main([str(page)]) == 0
    assert scoring_methods.main(["--check", str(page)]) == 0
    assert "| ngram | `kn` |" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["score", "control-train"])
def test_the_help_names_every_method_of_the_kinds_it_takes(command):
    parser = build_parser()
    text = " ".join(parser._subparsers._group_actions[0].choices[command].description.split())
    kinds = KINDS if command == "score" else ("masked", "causal", "electra")
    for kind in kinds:
        assert ", ".join(methods_of(kind)) in text, kind


def test_method_checks_against_the_registry():
    assert parse_methods("masked", "pppl_l2r_region, unmasked") == ["pppl_l2r_region", "unmasked"]
    with pytest.raises(InputError, match="cannot do 'kn'"):
        parse_methods("masked", "kn")
    with pytest.raises(InputError, match="unknown method 'nope'"):
        parse_methods("ngram", "nope")


def test_the_outlier_table_has_a_ratio_column_for_each_method_of_its_roles():
    columns = {c for c in TABLES["spud_outliers"].polars_schema() if c.startswith("r_")}
    roles = (scoring_methods.OUTLIER_CAUSAL, scoring_methods.OUTLIER_MASKED)
    assert columns == {f"r_{m}" for role in roles for m in scoring_methods.outlier_methods(role)}
    assert scoring_methods.outlier_methods(scoring_methods.OUTLIER_CAUSAL) == ("ppl",)


NEW_ENTRY = """    Method("uniform", "ngram", "log 1 / V, V the model's symbols.",
           "spudflow.scoring.uniform:score_uniform"),
"""
NEW_FUNCTION = '''"""A test's method: every word the same probability."""

import math

import numpy as np


def score_uniform(scorer, encoded, targets, bar=None):
    return [np.full(len(t), -math.log(len(scorer.model.vocab))) for t in targets]
'''


def _add_a_method(copy: Path) -> None:
    code = copy / "workflow" / "spudflow"
    registry = code / "core" / "scoring_methods.py"
    text = registry.read_text(encoding="utf-8")
    end = text.index("\n)\nBY_NAME") + 1  # the tuple's closing line
    registry.write_text(text[:end] + NEW_ENTRY + text[end:], encoding="utf-8")
    (code / "scoring" / "uniform.py").write_text(NEW_FUNCTION, encoding="utf-8")


@pytest.mark.slow
def test_a_new_method_is_its_entry_and_its_function(tmp_path):
    """In a copy of the tiny workflow, a method added as one registry line and its function is
    in the schema and the docs once rendered, the config takes it, and a run scores it into the
    SPUD ratio table."""
    copy = copy_workflow(tmp_path / "workflow")
    _add_a_method(copy)
    schema = copy / "config" / "schema.yaml"
    rewritten = in_copy(copy, "-m", "spudflow.core.scoring_methods", str(schema))
    assert rewritten.returncode == 0, rewritten.stderr
    assert "kn, addk, uniform, kn_region" in schema.read_text(encoding="utf-8")
    docs = in_copy(copy, "-c", "from spudflow.core import scoring_methods as m; "
                    "print(m.render_docs())")
    assert "| ngram | `uniform` |" in docs.stdout, docs.stderr
    # the n-gram model alone (no control to train, no masked model to score: a shorter run)
    update_config(copy, lambda c: c.update(models={"tiny_trigram": {
        **c["models"]["tiny_trigram"], "methods": ["kn", "uniform"]}}))
    table = "results/tables/spud_ratio_summary.parquet"
    ran = in_copy(copy, "-m", "snakemake", table, "--cores", "2", "--max-threads", "1")
    assert ran.returncode == 0, ran.stderr[-3000:]
    summary = pl.read_parquet(copy / table).filter(pl.col("model") == "tiny_trigram")
    assert set(summary["method"]) == {"kn", "uniform"}
    # every word equally likely: the ratio of a pair is 1 wherever both sentences have n words
    scores = pl.read_parquet(copy / "results" / "scores" / "spud_tiny_en_test" / "tiny_trigram"
                             / "item_scores.parquet").filter(pl.col("method") == "uniform")
    assert scores.height and scores["logprob_sum"].is_not_null().all()
