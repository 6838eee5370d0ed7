"""The pipeline on a real single-node SLURM cluster (localhost) gives what a local run gives, also
when the cluster kills, requeues or interrupts its jobs.

Needs root (or SLURM and munge already installed): the fixture installs Debian's packages when
missing and starts munged, slurmctld and slurmd itself. It fails, never skips, when SLURM cannot
run. The runs use profiles/slurm with the plugin's partition selection (profiles/slurm/
partitions.yaml): the test cluster's partitions are named like the example's, `cpu` and `gpu`, and
its node has one (fake) GPU, so jobs of rules with `gpu=1` must land on `gpu` with a GPU and all
others on `cpu` without one. One CPU rule is given gpu=1 so this holds even before GPU stages run.

The cluster enforces each job's memory (tests/slurm_cluster.py) and requeues only jobs submitted
with --requeue. The faults a job meets are timed by tests/slurm_faults.py: one run of the
workflow has a job that needs more memory than its first attempt asks for, and a scoring shard
requeued half-way; the score cache test has four shard jobs of two models writing one cache,
one of them SIGKILLed in the middle of a cache write.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, SlurmUnavailable, node_hardware
from slurm_faults import install as install_faults
from waiting import HUNG_S, running, wait_until
from workflow_helpers import copy_workflow, finished_tiny_run, plan, planned_jobs

from spudflow.core.written_files import MARK_DIR

pytestmark = pytest.mark.slow

# A stuck status loop ignores SIGTERM, so a hung snakemake is killed with SIGKILL.
SNAKEMAKE_TIMEOUT_S = HUNG_S
FORCED_GPU_RULE = "table_treebank_stats"
# A slice of the tiny workflow in 10 jobs: ingest -> per-treebank stats -> a table (aggregate),
# and items + n-gram training -> scoring in scatter/gather shards (temporary directory outputs
# gathered by another job), so the test stays about a minute; the whole DAG runs locally in
# tests/test_workflow.py.
TARGETS = ("results/tables/treebank_stats.csv",
           "results/scores/blimp/tiny_trigram/item_scores.parquet")
# table_treebank_stats asks for 1000 MB on its first attempt and its `spudflow` process holds
# this much: SLURM kills it, and the retry asks for 1500. SLURM counts the whole job step, the
# job's own snakemake too (about 300 MB): with 1200 here the retry was once killed at 1516 MB.
# Just over 1000 MiB (1,048.6 MB) leaves the retry 200 MB to spare.
MEMORY_RULE = "table_treebank_stats"
NEEDS_MB = 1050
# The shard of BLiMP's 8 items (blocks of 3) that has two blocks; requeued before its second.
REQUEUED_SHARD = "2/2"
REQUEUED_LOG = "results/logs/score_shard/blimp/tiny_trigram/2-of-2.log"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        try:
            cluster.start()
        except SlurmUnavailable as error:
            pytest.fail(f"the SLURM test cluster could not start: {error}", pytrace=False)
        yield cluster
    finally:
        cluster.stop()
        if cluster.leftovers:  # SLURM lost track of them (slurm_cluster.py); killed by stop()
            warnings.warn(f"processes of the SLURM test cluster outlived it: {cluster.leftovers}",
                          stacklevel=1)


def comparable_results(workdir: Path) -> dict[str, bytes]:
    """Every result file except logs and benchmarks (they hold timings) and the score cache
    (segment names are random; its entries are what the score files hold), by relative path."""
    results = workdir / "results"
    return {
        str(p.relative_to(results)): p.read_bytes()
        for p in sorted(results.rglob("*"))
        if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "benchmarks", "cache")
    }


def marked_file(name: str) -> str:
    """The file a `.spudflow-written/NAME.sha256` entry marks (core/written_files.py); else
    `name`."""
    path = Path(name)
    if path.parent.name != MARK_DIR:
        return name
    return str(path.parent.parent / path.name.removesuffix(".sha256"))


def job_logs(workdir: Path, tail: int = 3000) -> str:
    """The SLURM logs the plugin kept (those of failed jobs)."""
    logs = sorted((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-tail:]}" for p in logs)


def rule_of(comment: str) -> str:
    """The rule name in the plugin's job comment `rule_<rule>[_wildcards_<values>]`."""
    return comment.removeprefix("rule_").split("_wildcards_")[0]


def job_env(slurm: SlurmCluster, bin_dir: Path, faults: dict[str, str]) -> dict[str, str]:
    """The cluster's environment with the faulty `spudflow` (bin_dir) first on PATH, then this
    interpreter's `snakemake` and `spudflow`: jobs inherit it (sbatch --export=ALL)."""
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), slurm.env["PATH"]])
    return {**slurm.env, **faults, "PATH": path}


def wait_for(path: Path, process: subprocess.Popen | None) -> str:
    """The text of `path` once a job wrote it (a fault's `ready` file, written whole)."""
    return wait_until(lambda: path.is_file() and path.read_text(), f"a job at its fault ({path})",
                      still=running(process) if process else None)


def requeue(slurm: SlurmCluster, job_id: str) -> None:
    """What a preemption does to a job: back into the queue, to start again. Slurm holds a
    requeued job for two minutes (its BeginTime); the test releases it at once."""
    slurm.run("scontrol", "requeue", job_id)
    wait_until(lambda: slurm.run("squeue", "-h", "-j", job_id, "-o", "%T").strip() == "PENDING",
               f"job {job_id} requeued")
    slurm.run("scontrol", "update", f"JobId={job_id}", "StartTime=now")


@dataclass
class SlurmRun:
    workdir: Path
    local: Path
    planned: object  # workflow_helpers.Plan of TARGETS
    jobs: list[dict[str, str]]
    requeued: str  # the requeued job's id


@pytest.fixture(scope="module")
def healed_run(slurm, tmp_path_factory) -> SlurmRun:
    """TARGETS on SLURM with profiles/slurm (retries, requeue), after which nothing is left to
    do: MEMORY_RULE needs NEEDS_MB and is killed on its first attempt, the BLiMP shard
    REQUEUED_SHARD is requeued before its second block."""
    tmp_path = tmp_path_factory.mktemp("healed")
    # the local side: the whole tiny run (shared with other test files); the targets' files must
    # be byte-identical to its files of the same name
    local = finished_tiny_run(tmp_path / "local")

    workdir = copy_workflow(tmp_path / "slurm")
    full = plan(workdir, forceall=True, targets=TARGETS)
    paused = tmp_path / "paused"
    faults = install_faults(tmp_path / "bin", [
        {"command": MEMORY_RULE.replace("_", "-"), "ballast_mb": NEEDS_MB},
        {"command": "score", "arguments": ["--shard", REQUEUED_SHARD, "tiny_trigram"],
         "pause_before_block": 2, "ready": str(paused)},
    ], tmp_path / "faults.json")
    command = [
        "timeout", "-s", "KILL", str(SNAKEMAKE_TIMEOUT_S),
        # snakemake with the plugin's status back-off capped for seconds-long jobs
        sys.executable, str(Path(__file__).with_name("slurm_snakemake.py")),
        "--profile", "profiles/slurm", "--workflow-profile",
        "none", "--jobs", "4",
        "--slurm-no-account", "--slurm-status-command", "squeue",
        "--slurm-init-seconds-before-status-checks", "1",
        "--slurm-partition-config", "profiles/slurm/partitions.yaml",
        "--set-resources", f"{FORCED_GPU_RULE}:gpu=1", "--latency-wait", "10",
        # A job asking for more CPUs than the node has stays pending for ever (PartitionConfig);
        # real clusters have more, the one-node test cluster has this machine's.
        "--max-threads", str(node_hardware()["CPUs"]),
        *TARGETS,
    ]
    output = tmp_path / "snakemake.log"
    with output.open("w") as log:
        process = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                   env=job_env(slurm, tmp_path / "bin", faults))
        try:
            job_id = wait_for(paused, process)
            requeue(slurm, job_id)
        finally:
            process.wait()
    assert process.returncode == 0, (
        f"snakemake on SLURM exited {process.returncode}:\n{output.read_text()[-6000:]}\n"
        f"{job_logs(workdir)}\n{slurm.logs()}"
    )
    jobs = [j for j in slurm.jobs() if Path(j.get("WorkDir", "")) == workdir]
    return SlurmRun(workdir, local, full, jobs, job_id)


def test_pipeline_on_slurm_equals_local_run(healed_run):
    run = healed_run
    full = run.planned
    submitted = Counter(job[0] for job in full.jobs if full.shell[job])
    gpu_rules = {job[0] for job in full.jobs if full.resources[job].get("gpu")}
    gpu_rules.add(FORCED_GPU_RULE)

    # Every rule's jobs went through SLURM and got a GPU exactly when they asked; all completed
    # but the first attempt of MEMORY_RULE (the test below), submitted once more.
    retried = Counter({MEMORY_RULE: 1})
    assert Counter(rule_of(j["Comment"]) for j in run.jobs) == submitted + retried
    for j in run.jobs:
        rule = rule_of(j["Comment"])
        if rule != MEMORY_RULE:
            assert j["JobState"] == "COMPLETED", (rule, j["JobState"])
        if rule in gpu_rules:
            assert j["Partition"] == "gpu", rule
            assert "gres:gpu:1" in j.get("TresPerJob", ""), (rule, j.get("TresPerJob"))
            assert j.get("JOB_GRES", "").startswith("gpu:1"), (rule, j.get("JOB_GRES"))
        else:
            assert j["Partition"] == "cpu", rule
            assert "gpu" not in j.get("TresPerJob", "") + j.get("JOB_GRES", ""), rule

    remote_results = comparable_results(run.workdir)
    assert any(name.endswith(".parquet") for name in remote_results)
    local_results = comparable_results(run.local)
    # the files of the planned jobs' outputs (directories by their files) in the local run
    made = {str(Path(path).relative_to("results")) for outputs in full.outputs.values()
            for path, _ in outputs if path.startswith("results/")}
    expected = {name for name in local_results
                if any(marked_file(name) == m or name.startswith(f"{m}/") for m in made)}
    assert remote_results.keys() == expected
    for name, content in remote_results.items():
        assert local_results[name] == content, f"{name} differs between SLURM and local runs"
    assert planned_jobs(run.workdir, targets=TARGETS) == set()


def memory_kills(slurm: SlurmCluster) -> dict[str, tuple[int, int]]:
    """Job id -> (bytes used, bytes allowed) of each job step SLURM killed for memory."""
    found = re.findall(r"StepId=(\d+)\.\S+ exceeded memory limit \((\d+) > (\d+)\)",
                       (slurm.root / "log" / "slurmd.log").read_text(errors="replace"))
    return {job: (int(used), int(allowed)) for job, used, allowed in found}


def test_a_job_killed_for_memory_comes_back_asking_for_more(healed_run, slurm):
    """MEMORY_RULE's first attempt asks for its 1000 MB and 5 minutes and is killed by SLURM
    for holding NEEDS_MB; Snakemake (profiles/slurm: retries) submits it again with 1.5 times
    as much of both, and it writes the same table as the local run."""
    first, second = sorted((j for j in healed_run.jobs if rule_of(j["Comment"]) == MEMORY_RULE),
                           key=lambda j: int(j["JobId"]))
    assert (first["MinMemoryNode"], first["TimeLimit"], first["JobState"]) == \
        ("1000M", "00:05:00", "FAILED")
    used, allowed = memory_kills(slurm)[first["JobId"]]  # sampled once a second
    assert allowed == 1000 * 2**20 < used
    assert (second["MinMemoryNode"], second["TimeLimit"], second["JobState"]) == \
        ("1500M", "00:08:00", "COMPLETED")
    assert second["JobId"] not in memory_kills(slurm)
    for suffix in ("csv", "parquet", "md", "tex"):
        name = f"results/tables/treebank_stats.{suffix}"
        assert (healed_run.workdir / name).read_bytes() == (healed_run.local / name).read_bytes()


def test_a_requeued_scoring_job_resumes_from_its_blocks(healed_run):
    """The shard requeued half-way (profiles/slurm: slurm-requeue) ran again under the same job
    id, reused the block it had written and finished with the local run's bytes."""
    (job,) = [j for j in healed_run.jobs if j["JobId"] == healed_run.requeued]
    assert rule_of(job["Comment"]) == "score_shard"
    assert (job["Requeue"], job["Restarts"], job["JobState"]) == ("1", "1", "COMPLETED")
    log = (healed_run.workdir / REQUEUED_LOG).read_text()
    assert "block 1/2: already done, reusing it" in log
    assert "block 2/2 kn" in log
    shard = "results/scores/blimp/tiny_trigram/shards/2-of-2"
    for name in ("token_scores.parquet", "item_scores.parquet"):
        assert (healed_run.workdir / shard / name).read_bytes() == \
            (healed_run.local / shard / name).read_bytes()


# The score cache test: German case's 288 items in blocks of 16, two n-gram models (trained on
# tiny_en and tiny_de) in two shards each, all four jobs at once, every job compacting the cache
# as soon as a setting has more than two segments. The first shard of tiny_en is SIGKILLed with
# its third segment half written.
CACHE_ITEMS = "results/items/german_case.parquet"
CACHE_SCORE_OPTIONS = ("--kind", "ngram", "--method", "kn,addk", "--block-size", "16",
                       "--threads", "1")
KILLED = ("tiny_en", 1)


@pytest.fixture
def spudflow(caplog):
    """`spudflow ARGS` here, in this process (not on the cluster); its log."""
    from spudflow.cli import main

    def run(*args) -> str:
        caplog.clear()
        with caplog.at_level("INFO"):
            assert main([str(a) for a in args]) == 0, f"spudflow {args[0]} failed"
        return caplog.text

    return run


def submit(slurm: SlurmCluster, env: dict[str, str], log: Path, *args) -> str:
    """An sbatch job of `spudflow ARGS` (one CPU, shared with other jobs); its id."""
    command = " ".join(["spudflow", *map(str, args)])
    return slurm.run("sbatch", "--parsable", "--oversubscribe", "-c", "1", "--mem", "1000",
                     "--chdir", str(log.parent), "-o", str(log), "--wrap", command,
                     env=env).strip()


def wait_until_ended(slurm: SlurmCluster, job_ids: list[str]) -> dict:
    def ended() -> dict | None:
        jobs = {j["JobId"]: j for j in slurm.jobs() if j["JobId"] in job_ids}
        done = all(j["JobState"] in ("COMPLETED", "FAILED", "CANCELLED") for j in jobs.values())
        return (jobs,) if done else None
    return wait_until(ended, f"jobs {job_ids} ended")[0]


def cache_counts(log: str) -> tuple[int, int]:
    (hits, computed), = re.findall(r"cache: (\d+) hits, (\d+) computed", log)
    return int(hits), int(computed)


def test_one_score_cache_shared_by_concurrent_shard_jobs_survives_a_kill(slurm, tmp_path,
                                                                         spudflow):
    """Four shard jobs write one cache at once, compacting it under each other; one is
    SIGKILLed with a segment half written and then run again. Its shards gathered, and a rerun
    of each model that finds every item in the cache, give a cold run's bytes; `cache verify`
    finds nothing torn."""
    local = finished_tiny_run(tmp_path / "local")
    items = local / CACHE_ITEMS
    models = {"tiny_en": local / "results/ngram/tiny_en.parquet",
              "tiny_de": tmp_path / "tiny_de.parquet"}
    spudflow("ngram-train", local / "results/ingest/tiny_de/test", "--lang", "de",
             "--out", models["tiny_de"])
    # what a cold run computes: each model in one job without a cache
    for name, model in models.items():
        spudflow("score", items, "--model", model, "--name", name,
                 "--out", tmp_path / "cold" / name, *CACHE_SCORE_OPTIONS)

    # on shared scratch: the four shard jobs at once, the killed one stopped mid-write
    cache = tmp_path / "scratch" / "cache"
    paused = tmp_path / "paused"
    faults = install_faults(tmp_path / "bin", [
        {"command": "score", "barrier": str(tmp_path / "arrived"), "count": 4},
        {"command": "score", "arguments": ["--shard", f"{KILLED[1]}/2", KILLED[0]],
         "pause_mid_write": 3, "ready": str(paused)},
    ], tmp_path / "faults.json")
    env = job_env(slurm, tmp_path / "bin", faults)

    def shard_args(name: str, shard: int) -> list:
        return ["score", items, "--model", models[name], "--name", name, "--shard", f"{shard}/2",
                "--out", tmp_path / "shards" / name / str(shard), "--cache", cache,
                "--cache-compact-after", 2, *CACHE_SCORE_OPTIONS]

    logs = {(name, shard): tmp_path / f"{name}-{shard}.log" for name in models for shard in (1, 2)}
    ids = {key: submit(slurm, env, log, *shard_args(*key)) for key, log in logs.items()}
    killed = wait_for(paused, None)
    assert killed == ids[KILLED]
    slurm.run("scancel", "--signal=KILL", "--full", killed)
    jobs = wait_until_ended(slurm, list(ids.values()))
    # they ran at the same time, and only the killed one failed
    assert max(j["StartTime"] for j in jobs.values()) <= min(j["EndTime"] for j in jobs.values())
    assert {key: jobs[i]["JobState"] for key, i in ids.items()} == {
        key: "CANCELLED" if key == KILLED else "COMPLETED" for key in ids}
    # what the kill left: a half-written temporary file, which no reader opens
    assert list(cache.glob("*/.tmp-*.parquet"))
    assert "removed 0 torn segments" in spudflow("cache", "verify", cache)

    # the others compacted the folders under each other
    assert all("cache: compacted" in logs[key].read_text() for key in logs if key != KILLED)

    # the rerun of the killed job, as Snakemake's retry does: it resumes from its blocks
    faults_again = {**env, "SPUDFLOW_TEST_FAULTS": str(tmp_path / "no-faults.json")}
    (tmp_path / "no-faults.json").write_text("[]")
    rerun = submit(slurm, faults_again, tmp_path / "rerun.log", *shard_args(*KILLED))
    assert wait_until_ended(slurm, [rerun])[rerun]["JobState"] == "COMPLETED"
    assert "block 1/9: already done, reusing it" in (tmp_path / "rerun.log").read_text()
    # each model's shards gathered are the cold run's bytes
    for name in models:
        spudflow("score-gather", tmp_path / "shards" / name / "1", tmp_path / "shards" / name / "2",
                 "--out", tmp_path / "gathered" / name)
        for table in ("token_scores.parquet", "item_scores.parquet"):
            assert (tmp_path / "gathered" / name / table).read_bytes() == \
                (tmp_path / "cold" / name / table).read_bytes(), (name, table)
    # every item scored by any job is in the cache: a rerun of each model computes nothing, and
    # what the cache returns are the cold run's bits
    for name, model in models.items():
        log = spudflow("score", items, "--model", model, "--name", name, "--cache", cache,
                       "--out", tmp_path / "warm" / name, *CACHE_SCORE_OPTIONS)
        assert cache_counts(log)[1] == 0, log
        for table in ("token_scores.parquet", "item_scores.parquet"):
            assert (tmp_path / "warm" / name / table).read_bytes() == \
                (tmp_path / "cold" / name / table).read_bytes(), (name, table)
    assert "removed 0 torn segments" in spudflow("cache", "verify", cache)
