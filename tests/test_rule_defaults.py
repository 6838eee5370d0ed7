"""What every rule has besides its own lines comes from one place (spudflow.core.rule_defaults):
its benchmark beside its log, its stage's conda env and its stage's code version, the last param;
a download gets no code version (a code change must not fetch again)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spudflow.core.rule_defaults import benchmark_of_log, complete_rules, small_job
from spudflow.core.rules_support import code_version


class FakeRule(SimpleNamespace):
    """The attributes of Snakemake's Rule that complete_rule reads and sets."""

    def set_params(self, **params):
        self.params.update(params)


def fake_rule(name, snakefile, output, log, norun=False, resources=None, overwritten=None):
    settings = SimpleNamespace(overwrite_resources={name: overwritten} if overwritten else {})
    return FakeRule(name=name, snakefile=snakefile, output=output, norun=norun, params={"a": 1},
                    ruleinfo=SimpleNamespace(log=SimpleNamespace(paths=[log]),
                                             resources=resources),
                    log_modifier=None, benchmark=None, conda_env=None, resources={},
                    workflow=SimpleNamespace(resource_settings=settings))


def test_a_benchmark_lies_beside_its_log():
    assert benchmark_of_log("results/logs/ingest/{treebank}/{split}.log") == \
        "results/benchmarks/ingest/{treebank}/{split}.tsv"
    assert benchmark_of_log("results/logs/front_page.log") == "results/benchmarks/front_page.tsv"
    with pytest.raises(ValueError, match="results/logs/RULE"):
        benchmark_of_log("logs/ingest.log")


def test_each_rule_gets_its_stages_env_and_code_and_a_download_no_code(tmp_path):
    code = tmp_path / "spudflow"
    for stage in ("ingest", "aggregate", "core"):
        (code / stage).mkdir(parents=True)
        (code / stage / "x.py").write_text(stage)
    (code / "cli.py").write_text("")
    ingest = fake_rule("ingest", "/w/rules/ingest.smk", ["results/ingest/{t}/a.parquet"],
                       "results/logs/ingest/{t}.log")
    table = fake_rule("table", "/w/rules/aggregate.smk", ["results/tables/t.csv"],
                      "results/logs/table.log")
    fetch = fake_rule("fetch", "/w/rules/ingest.smk", ["resources/downloads/{t}/{d}.conllu"],
                      "results/logs/fetch/{t}/{d}.log")
    target = fake_rule("all", "/w/Snakefile", [], None, norun=True)
    complete_rules([ingest, table, fetch, target], code)

    assert (ingest.benchmark, ingest.conda_env) == ("results/benchmarks/ingest/{t}.tsv",
                                                    "../envs/core.yaml")
    assert list(ingest.params.items()) == [("a", 1), ("code", code_version(code, "ingest"))]
    assert table.conda_env == "../envs/stats.yaml"
    assert table.params["code"] == code_version(code, "aggregate") != ingest.params["code"]
    assert fetch.params == {"a": 1} and fetch.benchmark == "results/benchmarks/fetch/{t}/{d}.tsv"
    assert target.benchmark is None and target.params == {"a": 1}


def test_a_rule_outside_a_stages_rules_file_is_refused(tmp_path):
    stray = fake_rule("x", "/w/rules/common.smk", ["results/x"], "results/logs/x.log")
    with pytest.raises(ValueError, match="no stage's rules file"):
        complete_rules([stray], tmp_path)


def test_a_rule_without_resources_is_a_small_job_unless_set_resources_says_otherwise():
    scaled = small_job({})
    assert sorted(scaled) == ["mem_mb", "runtime"]
    assert [scaled["mem_mb"]({}, [], 1, attempt) for attempt in (1, 2, 3)] == [1000, 1500, 2250]
    assert [scaled["runtime"]({}, [], 1, attempt) for attempt in (1, 2)] == [5, 8]
    assert sorted(small_job({"runtime": 240})) == ["mem_mb"]
    assert sorted(small_job({"mem": "4G"})) == ["runtime"]


def test_complete_rules_leaves_a_rules_own_resources(tmp_path):
    own = fake_rule("own", "/w/rules/nonce.smk", ["results/x"], "results/logs/own.log",
                    resources=((), {"mem_mb": 9000}))
    small = fake_rule("small", "/w/rules/nonce.smk", ["results/y"], "results/logs/small.log",
                      overwritten={"runtime": 240})
    (tmp_path / "cli.py").write_text("")
    complete_rules([own, small], tmp_path)
    assert own.resources == {} and sorted(small.resources) == ["mem_mb"]
