"""The pipeline on a real single-node SLURM cluster (localhost) gives what a local run gives.

Needs root (or SLURM and munge already installed): the fixture installs Debian's packages when
missing and starts munged, slurmctld and slurmd itself. It fails, never skips, when SLURM cannot
run. The run uses profiles/slurm with the plugin's partition selection (profiles/slurm/
partitions.yaml): the test cluster's partitions are named like the example's, `cpu` and `gpu`, and
its node has one (fake) GPU, so jobs of rules with `gpu=1` must land on `gpu` with a GPU and all
others on `cpu` without one. One CPU rule is given gpu=1 so this holds even before GPU stages run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, SlurmUnavailable, node_hardware
from workflow_helpers import copy_workflow, finished_tiny_run, plan, planned_jobs

pytestmark = pytest.mark.slow

# A stuck status loop ignores SIGTERM, so snakemake is killed with SIGKILL after this long.
SNAKEMAKE_TIMEOUT_S = 600
FORCED_GPU_RULE = "table_treebank_stats"
# A slice of the tiny workflow in 10 jobs: ingest -> per-treebank stats -> a table (aggregate),
# and items + n-gram training -> scoring in scatter/gather shards (temporary directory outputs
# gathered by another job), so the test stays about a minute; the whole DAG runs locally in
# tests/test_workflow.py.
TARGETS = ("results/tables/treebank_stats.csv",
           "results/scores/blimp/tiny_trigram/item_scores.parquet")


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


def comparable_results(workdir: Path) -> dict[str, bytes]:
    """Every result file except logs and benchmarks (they hold timings) and the score cache
    (segment names are random; its entries are what the score files hold), by relative path."""
    results = workdir / "results"
    return {
        str(p.relative_to(results)): p.read_bytes()
        for p in sorted(results.rglob("*"))
        if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "benchmarks", "cache")
    }


def job_logs(workdir: Path, tail: int = 3000) -> str:
    """The SLURM logs the plugin kept (those of failed jobs)."""
    logs = sorted((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-tail:]}" for p in logs)


def rule_of(comment: str) -> str:
    """The rule name in the plugin's job comment `rule_<rule>[_wildcards_<values>]`."""
    return comment.removeprefix("rule_").split("_wildcards_")[0]


def test_pipeline_on_slurm_equals_local_run(slurm, tmp_path):
    # the local side: the whole tiny run (shared with other test files); the targets' files must
    # be byte-identical to its files of the same name
    local = finished_tiny_run(tmp_path / "local")

    workdir = copy_workflow(tmp_path / "slurm")
    full = plan(workdir, forceall=True, targets=TARGETS)
    submitted = Counter(job[0] for job in full.jobs if full.shell[job])
    gpu_rules = {job[0] for job in full.jobs if full.resources[job].get("gpu")}
    gpu_rules.add(FORCED_GPU_RULE)

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
    # `spudflow` and `snakemake` of this interpreter must be found inside the jobs too.
    path = os.pathsep.join([str(Path(sys.executable).parent), slurm.env["PATH"]])
    result = subprocess.run(command, cwd=workdir, env={**slurm.env, "PATH": path},
                            capture_output=True, text=True)
    assert result.returncode == 0, (
        f"snakemake on SLURM exited {result.returncode}:\n{result.stderr[-6000:]}\n"
        f"{job_logs(workdir)}\n{slurm.logs()}"
    )

    # Every rule's jobs went through SLURM, completed, and got a GPU exactly when they asked.
    jobs = slurm.jobs()
    assert Counter(rule_of(j["Comment"]) for j in jobs) == submitted
    for j in jobs:
        rule = rule_of(j["Comment"])
        assert j["JobState"] == "COMPLETED", (rule, j["JobState"])
        if rule in gpu_rules:
            assert j["Partition"] == "gpu", rule
            assert "gres:gpu:1" in j.get("TresPerJob", ""), (rule, j.get("TresPerJob"))
            assert j.get("JOB_GRES", "").startswith("gpu:1"), (rule, j.get("JOB_GRES"))
        else:
            assert j["Partition"] == "cpu", rule
            assert "gpu" not in j.get("TresPerJob", "") + j.get("JOB_GRES", ""), rule

    remote_results = comparable_results(workdir)
    assert any(name.endswith(".parquet") for name in remote_results)
    local_results = comparable_results(local)
    # the files of the planned jobs' outputs (directories by their files) in the local run
    made = {str(Path(path).relative_to("results")) for outputs in full.outputs.values()
            for path, _ in outputs if path.startswith("results/")}
    expected = {name for name in local_results
                if any(name == m or name.startswith(f"{m}/") for m in made)}
    assert remote_results.keys() == expected
    for name, content in remote_results.items():
        assert local_results[name] == content, f"{name} differs between SLURM and local runs"
    assert planned_jobs(workdir, targets=TARGETS) == set()
