"""Incremental rebuilds: after a full run on the tiny config, exactly the right jobs rerun.

Each scenario works on its own copy of one finished run and compares the set of jobs Snakemake
plans with the set it must plan: the jobs that read what changed and everything downstream of
them in the full DAG. Stages added to the workflow are covered without new code here. A model
added to the config, or a scoring parameter changed, is the same pattern as the treebank and
parameter scenarios below (update_config, then planned_jobs against plan(forceall=True)).
"""

from __future__ import annotations

import pytest
from workflow_helpers import (
    REPO,
    clone_run,
    edit_file,
    finished_tiny_run,
    job,
    plan,
    planned_jobs,
    run_workflow,
    shell_subcommand,
    stage_of_subcommand,
    update_config,
)

from spudflow.core.rules_support import code_version

PACKAGE = REPO / "workflow" / "spudflow"

pytestmark = pytest.mark.slow

TINY_EN = {"treebank": "tiny_en", "split": "test"}
TINY_DE = {"treebank": "tiny_de", "split": "test"}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A workflow copy after a full run, and the plan of its whole DAG."""
    workdir = finished_tiny_run(tmp_path_factory.mktemp("incremental") / "finished")
    return workdir, plan(workdir, forceall=True)


@pytest.fixture
def rerun(finished_run, tmp_path):
    """A fresh copy of the finished run to change, and the full plan."""
    workdir, full = finished_run
    return clone_run(workdir, tmp_path / "copy"), full


def stage_jobs(full, stage):
    """Jobs whose shell command runs a `spudflow` subcommand of `stage`."""
    stages = stage_of_subcommand()
    return {j for j in full.jobs if stages.get(shell_subcommand(full.shell[j])) == stage}


def test_full_run_covers_both_treebanks(finished_run):
    _, full = finished_run
    for wildcards in (TINY_EN, TINY_DE):
        assert job("ingest", **wildcards) in full.jobs
        assert job("treebank_stats", **wildcards) in full.jobs
    assert job("table_treebank_stats") in full.jobs


def test_noop_rerun_plans_nothing(finished_run, rerun):
    workdir, _ = finished_run
    assert planned_jobs(workdir) == set()
    # A moved checkout is no change either (inputs are recorded as relative paths).
    moved, _ = rerun
    assert planned_jobs(moved) == set()


def test_changed_treebank_reruns_only_its_downstream_jobs(rerun):
    workdir, full = rerun
    treebank = workdir / "resources" / "tiny" / "tiny_de.conllu"
    # Drop the last sentence: still valid CoNLL-U, different content.
    sentences = treebank.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    treebank.write_text("\n\n".join(sentences[:-1]) + "\n\n", encoding="utf-8")

    readers = {j for j in full.jobs if "resources/tiny/tiny_de.conllu" in full.inputs[j]}
    assert readers == {job("ingest", **TINY_DE)}
    expected = full.downstream(readers)
    assert {job("treebank_stats", **TINY_DE), job("table_treebank_stats")} <= expected

    planned = planned_jobs(workdir)
    assert planned == expected
    assert not [j for j in planned if ("treebank", "tiny_en") in j[1]]

    # Running the plan rewrites the tiny_de outputs and leaves the tiny_en ones alone.
    untouched = sorted((workdir / "results").glob("**/tiny_en/**/*.parquet"))
    assert untouched
    before = {p: p.stat().st_mtime_ns for p in untouched}
    ingested = workdir / "results/ingest/tiny_de/test/tokens.parquet"
    ingested_before = ingested.stat().st_mtime_ns
    run_workflow(workdir)
    assert {p: p.stat().st_mtime_ns for p in untouched} == before
    assert ingested.stat().st_mtime_ns > ingested_before
    assert planned_jobs(workdir) == set()


def test_added_treebank_adds_only_its_jobs(rerun):
    workdir, _ = rerun
    tiny = workdir / "resources" / "tiny"
    (tiny / "tiny_en2.conllu").write_bytes((tiny / "tiny_en.conllu").read_bytes())
    update_config(workdir, lambda config: config["treebanks"].update(
        tiny_en2={"lang": "en", "splits": {"test": "resources/tiny/tiny_en2.conllu"}}))

    full = plan(workdir, forceall=True)
    added = {j for j in full.jobs if ("treebank", "tiny_en2") in j[1]}
    assert {job("ingest", treebank="tiny_en2", split="test"),
            job("treebank_stats", treebank="tiny_en2", split="test")} <= added
    assert planned_jobs(workdir) == full.downstream(added)


def test_changed_rule_parameter_reruns_that_rule_and_dependents(rerun):
    workdir, full = rerun
    update_config(workdir, lambda config: config["ingest"].update(lenient=True))
    ingest_jobs = {j for j in full.jobs if j[0] == "ingest"}
    assert planned_jobs(workdir) == full.downstream(ingest_jobs)


def test_added_model_and_changed_model_parameter(rerun):
    """Scenario 2: a model added to the config adds only its scoring jobs (and the tables that
    read them). Scenario 3: a changed scoring parameter of one model reruns only that model's
    scoring and the tables using it; the other model's scores stay."""
    workdir, _ = rerun
    update_config(workdir, lambda config: config["models"].update(tiny_addk={
        "source": "results/ngram/tiny_en.parquet", "kind": "ngram", "methods": ["addk"],
        "allow_training_overlap": True}))
    full = plan(workdir, forceall=True)
    added = {j for j in full.jobs if ("model", "tiny_addk") in j[1]}
    assert added and {j[0] for j in added} == {"score"}
    planned = planned_jobs(workdir)
    assert planned == full.downstream(added)
    assert not [j for j in planned if ("model", "tiny_trigram") in j[1]]
    # Scenario 3 starts from the added model's scores (the tables reading them stay planned:
    # they are downstream of its scoring jobs either way; tables over several models run in
    # tests/test_every_table.py).
    run_workflow(workdir, targets=sorted(path for j in added for path, _ in full.outputs[j]))

    update_config(workdir, lambda config: config["models"]["tiny_addk"].update(
        methods=["addk", "kn"]))
    full = plan(workdir, forceall=True)
    changed = {j for j in full.jobs if ("model", "tiny_addk") in j[1]}
    planned = planned_jobs(workdir)
    assert planned == full.downstream(changed)
    # the scoring jobs, then the tables and figures reading them and the front page
    assert {j[0] for j in planned} - {"score", "all", "front_page"} <= {
        j[0] for j in full.jobs if j[0].startswith(("table_", "figure_"))}


def result_files(workdir):
    """Every result file but logs, benchmarks, the score cache (random segment names) and
    scoring shards, by relative path."""
    results = workdir / "results"
    return {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*"))
            if p.is_file()
            and p.relative_to(results).parts[0] not in ("logs", "benchmarks", "cache")
            and "shards" not in p.relative_to(results).parts}


def test_changed_shard_count_reruns_only_scoring_and_changes_no_result(rerun):
    """The tiny config scores tiny_trigram in 2 scatter/gather shards. In one job or in 3
    shards, only its scoring jobs are planned again (and the tables that read them); the 3-shard
    run's results are byte-identical to the 2-shard run's. (Gathered shards against one job, byte
    for byte: tests/test_scoring_shards.py.)"""
    workdir, _ = rerun
    before = result_files(workdir)
    assert any(name.startswith("scores/") for name in before)
    for shards, rules in ((None, {"score"}), (3, {"score_shard", "score_gather"})):
        update_config(workdir, lambda config, shards=shards: config["models"][
            "tiny_trigram"].update(shards=shards))
        full = plan(workdir, forceall=True)
        scoring = {j for j in full.jobs if ("model", "tiny_trigram") in j[1]}
        assert {j[0] for j in scoring} == rules
        assert planned_jobs(workdir) == full.downstream(scoring)
    run_workflow(workdir)
    assert result_files(workdir) == before
    assert (workdir / "results/scores/blimp/tiny_trigram/shards/3-of-3").is_dir()


def stages_with_rules():
    return sorted(
        p.name
        for p in (REPO / "workflow" / "spudflow").iterdir()
        # rehearse runs the workflow; no rule runs it
        if (p / "cli.py").is_file() and p.name not in ("core", "rehearse")
    )


@pytest.mark.parametrize("stage", stages_with_rules())
def test_stage_code_change_reruns_that_stage_and_dependents(rerun, stage):
    workdir, full = rerun
    direct = stage_jobs(full, stage)
    assert direct, f"no rule runs a `spudflow` command of stage {stage!r}"
    for j in direct:
        assert full.params[j].get("code") == code_version(PACKAGE, stage), (
            f"{j[0]} runs stage {stage!r} but has no params code=stage_code({stage!r})"
        )
    edit_file(workdir / "workflow" / "spudflow" / stage / "cli.py")

    assert planned_jobs(workdir) == full.downstream(direct)


def test_ingest_code_change_plan_is_exact(rerun):
    workdir, full = rerun
    edit_file(workdir / "workflow" / "spudflow" / "ingest" / "convert.py")
    planned = planned_jobs(workdir)
    ingest_jobs = {
        job(rule, **wildcards)
        for rule in ("ingest", "treebank_stats")
        for wildcards in (TINY_EN, TINY_DE)
    }
    assert ingest_jobs | {job("table_treebank_stats"), job("all")} <= planned
    assert planned == full.downstream(ingest_jobs)


def test_aggregate_code_change_reruns_only_tables(rerun):
    workdir, full = rerun
    edit_file(workdir / "workflow" / "spudflow" / "aggregate" / "cli.py")
    planned = planned_jobs(workdir)
    assert job("table_treebank_stats") in planned
    assert not {j for j in planned if j[0] in ("ingest", "treebank_stats")}
    assert planned == full.downstream(stage_jobs(full, "aggregate"))


def test_core_code_change_reruns_everything(rerun):
    workdir, full = rerun
    edit_file(workdir / "workflow" / "spudflow" / "core" / "treebank.py")
    assert planned_jobs(workdir) == set(full.jobs)


def test_non_code_file_in_stage_reruns_nothing(rerun):
    workdir, _ = rerun
    (workdir / "workflow" / "spudflow" / "ingest" / "notes.md").write_text("scratch\n")
    assert planned_jobs(workdir) == set()
