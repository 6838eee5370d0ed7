"""Incremental rebuilds: after a full run on the tiny config, exactly the right jobs rerun.

Each scenario works on its own copy of one finished run and compares the set of jobs Snakemake
plans with the set it must plan: the jobs that read what changed and everything downstream of
them in the full DAG. Stages added to the workflow are covered without new code here. A model
added to the config, or a scoring parameter changed, is the same pattern as the treebank and
parameter scenarios below (update_config, then planned_jobs against plan(forceall=True)).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from workflow_helpers import (
    REPO,
    clone_run,
    edit_file,
    finished_tiny_run,
    job,
    plan,
    planned_jobs,
    planning_error,
    run_workflow,
    shell_subcommand,
    snakemake_cli,
    stage_of_subcommand,
    update_config,
)

from spudflow.core.rules_support import code_version
from spudflow.stale_outputs import RECORDS

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


def test_a_model_taken_out_leaves_only_the_tables_and_figures_a_fresh_run_makes(rerun):
    """tiny_trigram, the only model of German case and Japanese, taken out of the config: after
    the next run, results/tables and results/figures hold the files the new config plans, as a
    fresh run of it would, and beside them a file of the user's and tables edited by hand
    (theirs now); the model's scores stay, as Snakemake leaves outputs no job plans."""
    workdir, _ = rerun
    records = list((workdir / RECORDS).glob("*.json"))
    assert [json.loads(r.read_text())["config"] for r in records] == ["config/config.yaml"]
    tables = workdir / "results" / "tables"
    own = tables / "my_notes.md"
    own.write_text("mine\n")
    edited = tables / "german_case_auc.md"
    edited.write_text(edited.read_text() + "edited by hand\n")
    # a Parquet table edited by hand (its artifact's metadata kept), then a run that records
    # the tables again (the figures that read it run again): not as its job left it
    parquet = tables / "german_case_auc_templates.parquet"
    table = pq.read_table(parquet)
    pq.write_table(table.slice(1), parquet)
    run_workflow(workdir)
    update_config(workdir, lambda config: config["models"].pop("tiny_trigram"))
    # from the command line, the config named: the same config as the runs above (whose
    # Snakefile read config/config.yaml by itself), so the same record
    done = snakemake_cli("--cores", "2", "--configfile", "config/config.yaml", cwd=workdir)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "a table or figure the config no longer makes" in done.stderr

    full = plan(workdir, forceall=True)
    planned = {path for outputs in full.outputs.values() for path, _ in outputs
               if Path(path).parts[1] in ("tables", "figures")}
    assert not [path for path in planned if "german_case" in path or "japanese" in path]
    left = {str(p.relative_to(workdir)) for folder in (tables, tables.parent / "figures")
            for p in folder.iterdir() if p.is_file()}
    assert left == planned | {str(p.relative_to(workdir)) for p in (own, edited, parquet)}
    for folder in (tables, tables.parent / "figures"):  # no mark of a removed file
        marked = {p.name.removesuffix(".sha256") for p in (folder / ".spudflow-written").iterdir()}
        assert marked <= {p.name for p in folder.iterdir()}
    assert (workdir / "results/scores/german_case/tiny_trigram/item_scores.parquet").is_file()


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


PROBE_METRICS = "results/probe/runs/tiny_en/tiny_bert/M0/dist0_label0/seed1/metrics.parquet"


def test_a_forced_probe_run_reruns_from_its_own_leftovers(rerun):
    """`snakemake --force` of a probe run's metrics: Snakemake removes metrics.parquet (the
    job's declared output) and `probe train` finds seed1/ with the rest of its files (history,
    probe, predictions) and a killed attempt's temporary folder beside it. It replaces its own
    folder (it refused it as "not a probe run spudflow wrote", exit 2, twice with the retry)."""
    workdir, _ = rerun
    seed_dir = (workdir / PROBE_METRICS).parent
    assert (seed_dir / "history.parquet").is_file()
    (seed_dir.parent / ".seed1.killed.tmp").mkdir()
    (seed_dir.parent / ".seed1.killed.tmp" / "history.parquet").write_bytes(b"PAR1")
    done = snakemake_cli("--cores", "1", "--force", PROBE_METRICS, cwd=workdir)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in seed_dir.iterdir()) == [
        "history.parquet", "metrics.parquet", "predictions", "predictions.parquet",
        "probe.safetensors", "sentence_counts.parquet"]


def test_every_job_reruns_from_its_own_leftovers(rerun):
    """--forceall on a finished run: Snakemake removes each job's declared outputs and nothing
    else (a probe run's other files, a folder's other outputs), and every command then
    replaces what it finds of its own previous output. After it, nothing is left to do."""
    workdir, _ = rerun
    run_workflow(workdir, forceall=True)
    assert planned_jobs(workdir) == set()


# A config path to a missing file after a run: Snakemake alone takes the old outputs made from it
# as up to date ("Nothing to be done"); the config check stops planning, as in a fresh folder.
MISSING_SOURCES = [
    (lambda c: c["treebanks"]["tiny_de"]["splits"].update(test="resources/tiny/gone.conllu"),
     "config key treebanks.tiny_de.splits.test: 'resources/tiny/gone.conllu': no such file"),
    (lambda c: c["pairs"]["german_case"].update(templates="config/templates/gone.tsv"),
     "config key pairs.german_case.templates: 'config/templates/gone.tsv': no such file"),
    (lambda c: c["pairs"]["blimp"].update(paths=["resources/blimp/gone.jsonl"]),
     "config key pairs.blimp.paths[0]: 'resources/blimp/gone.jsonl': no such file"),
    (lambda c: c["nonce"].update(lexicons={"en": ["resources/tiny/gone.tsv"]}),
     "config key nonce.lexicons.en[0]: 'resources/tiny/gone.tsv': no such file"),
    (lambda c: c["human_eval"]["filled"].update(annotator1="resources/tiny/gone.csv"),
     "config key human_eval.filled.annotator1: 'resources/tiny/gone.csv': no such file"),
]


@pytest.mark.parametrize(("edit", "message"), MISSING_SOURCES,
                         ids=[m.split(":")[0].removeprefix("config key ") for _, m in
                              MISSING_SOURCES])
def test_a_missing_config_file_after_a_run_stops_planning(rerun, edit, message):
    workdir, _ = rerun
    update_config(workdir, edit)
    assert message in planning_error(workdir).splitlines()


def test_a_removed_source_file_after_a_run_stops_planning(rerun):
    workdir, _ = rerun
    (workdir / "resources" / "tiny" / "tiny_de.conllu").unlink()
    assert ("config key treebanks.tiny_de.splits.test: 'resources/tiny/tiny_de.conllu': "
            "no such file") in planning_error(workdir).splitlines()


def _make_run(workdir, *extra):
    """`make run`'s command (the Makefile) on the tiny copy: the stale-lock wrapper, then
    Snakemake with the default profile; EXTRA narrows it to a few jobs."""
    import subprocess
    import sys

    snakemake = str(Path(sys.executable).parent / "snakemake")
    return subprocess.Popen(
        [sys.executable, "-m", "spudflow.core.snakemake_lock", snakemake,
         "--profile", "profiles/default", "--cores", "1", *extra],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_make_run_resumes_after_a_kill_and_refuses_a_live_run(rerun):
    """A run killed with SIGKILL leaves Snakemake's lock; `make run` removes it (one line) when
    no live run holds it and resumes. A second run beside a live one is still refused."""
    import os
    import signal

    from waiting import running, wait_until

    workdir, _ = rerun
    target = ("results/tables/treebank_stats.csv",)
    first = _make_run(workdir, "--forceall", *target)
    locks = workdir / ".snakemake" / "locks"
    started = workdir / "results" / "logs" / "ingest"
    wait_until(lambda: locks.is_dir() and any(locks.iterdir()) and started.is_dir()
               and any(started.rglob("*.log")), "the run starting a job", still=running(first))

    second = _make_run(workdir, *target)
    _, err = second.communicate(timeout=300)
    assert second.returncode != 0 and "cannot be locked" in err, err
    assert any(locks.iterdir())

    os.kill(first.pid, signal.SIGKILL)
    first.communicate()
    assert any(locks.iterdir())  # what a killed run leaves

    third = _make_run(workdir, *target)
    _, err = third.communicate(timeout=600)
    assert third.returncode == 0, err[-3000:]
    assert sum("unlocked" in line for line in err.splitlines()) == 1
    assert planned_jobs(workdir) == set()
