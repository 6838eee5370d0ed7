"""The incremental promise: researchers run the pipeline many times, not once. After a series of
edits, config changes, a removed and restored input, forced rules and a run killed with SIGKILL,
each followed by an incremental run, every result ends byte-identical to a fresh run on the final
inputs.

One series on one copy of a finished tiny run (its first edit and run as the run cache keeps
them, workflow_helpers.finished_edited_run); the fresh run builds a second copy from the final
inputs. Results are compared file by file (logs, benchmarks, the score cache and scoring shards
aside: tests/test_incremental.py's result_files).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from preloaded_jobs import client_dir
from slurm_faults import install as install_faults
from test_incremental import result_files, stage_jobs, stages_with_rules
from waiting import running, wait_until
from workflow_helpers import (
    copy_workflow,
    edit_one_word,
    finished_edited_run,
    plan,
    planned_jobs,
    planning_error,
    run_workflow,
    update_config,
)

pytestmark = pytest.mark.slow

TINY_EN = Path("resources/tiny/tiny_en.conllu")
TINY_DE = Path("resources/tiny/tiny_de.conllu")
ENCODER = Path("resources/tiny/tiny_bert")


def change_one_key_per_stage(config: dict) -> None:
    """One setting of each stage, each reaching its command another way (a rule's params, a
    function-built option, a model's entry, a nested section)."""
    config["ingest"]["lenient"] = True                                   # ingest
    config["nonce"]["candidate_weights"] = "uniform"                     # nonce
    config["pairs"]["german_case"]["sample"]["seed"] = 1                 # pairs
    config["controls"]["tiny_bert"]["learning_rate"] = 0.002             # controls
    config["ngrams"]["tiny_en"]["order"] = 2                             # scoring (n-gram)
    config["models"]["tiny_bert"]["sample"]["seed"] = 1                  # scoring
    config["probe"]["lr"] = 0.002                                        # probe
    config["aggregate"]["spud_outlier_threshold"] = 100                  # aggregate


def final_inputs(workdir: Path) -> None:
    edit_one_word(workdir)
    update_config(workdir, change_one_key_per_stage)


def forced_rules(workdir: Path) -> list[str]:
    """One rule of each stage that has rules, the first of its jobs in plan order."""
    full = plan(workdir, forceall=True)
    return sorted({min(stage_jobs(full, stage))[0] for stage in stages_with_rules()})


def main_job(workdir: Path) -> list[str]:
    """The main job as `make run` starts it: the stale-lock wrapper, the profile."""
    snakemake = Path(sys.executable).parent / "snakemake"
    return [sys.executable, "-m", "spudflow.core.snakemake_lock", str(snakemake), "--profile",
            "profiles/default", "--cores", "2", "--max-threads", "1"]


def kill_mid_run(workdir: Path, faults_dir: Path) -> None:
    """Start the main job with its `spudflow` paused at the start of tiny_en's ingest job, and
    SIGKILL the main job and its jobs once that job waits (a kill between jobs' starts and ends,
    whatever the machine's speed)."""
    paused = faults_dir / "paused"
    env = install_faults(faults_dir / "bin", [
        {"command": "ingest", "arguments": [str(TINY_EN)], "pause_at_start": True,
         "ready": str(paused)}], faults_dir / "faults.json")
    env["PATH"] = f"{faults_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"
    process = subprocess.Popen(main_job(workdir), cwd=workdir, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True,
                               env={**os.environ, **env})
    try:
        wait_until(paused.exists, "tiny_en's ingest job paused", still=running(process))
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def preloaded_jobs_env() -> dict[str, str]:
    """This process's environment with the preloaded `spudflow` first on PATH (the jobs of a run
    that is not killed need not be fresh processes: tests/preloaded_jobs.py)."""
    found = client_dir()
    path = os.environ["PATH"] if found is None else f"{found}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path}


def work_left(workdir: Path) -> bool:
    """Whether a killed run left jobs to do: planned ones, or outputs Snakemake marks
    incomplete (a dry run without --rerun-incomplete stops on those)."""
    from snakemake.exceptions import IncompleteFilesException

    try:
        return bool(planned_jobs(workdir))
    except IncompleteFilesException:
        return True


def outputs(workdir: Path) -> dict[str, bytes]:
    """result_files() less the write marks (core/written_files.py): a mark may still list the
    hash of a file a rerun replaced; it is spudflow's bookkeeping, not a result."""
    return {name: data for name, data in result_files(workdir).items()
            if ".spudflow-written" not in Path(name).parts}


def test_series_of_incremental_runs_ends_as_a_fresh_run(tmp_path):
    # 1. One word of one sentence, then one key of each stage, each followed by a run (the
    # first run is the run cache's: a finished tiny run, the word edited, the workflow run).
    series = finished_edited_run(tmp_path / "series")
    update_config(series, change_one_key_per_stage)
    run_workflow(series)

    # 2. An input removed stops planning, naming it; restored (new mtime), the run goes on.
    treebank = series / TINY_DE
    saved = treebank.read_bytes()
    treebank.unlink()
    assert str(TINY_DE) in planning_error(series)
    treebank.write_bytes(saved)
    run_workflow(series)

    # 3. One rule of each stage forced.
    run_workflow(series, forcerun=forced_rules(series))

    # 4. A run killed with SIGKILL mid-way (a setting that reruns the treebanks' ingest jobs),
    # the setting put back to the final inputs' value, and the same command run again: it
    # takes the lock the killed run left and reruns what that run left unfinished.
    update_config(series, lambda config: config["ingest"].update(lenient=False))
    kill_mid_run(series, tmp_path / "faults")
    assert work_left(series)
    update_config(series, lambda config: config["ingest"].update(lenient=True))
    resumed = subprocess.run(main_job(series), cwd=series, capture_output=True, text=True,
                             timeout=900, env=preloaded_jobs_env())
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "left by a run that no longer runs (killed?): unlocked" in resumed.stderr
    assert planned_jobs(series) == set()

    fresh = copy_workflow(tmp_path / "fresh")
    final_inputs(fresh)
    # The probe's tiny encoder, built in this process, is the one the cached run was built with
    for name in ("tokenizer.json", "model.safetensors"):
        assert (fresh / ENCODER / name).read_bytes() == (series / ENCODER / name).read_bytes()
    run_workflow(fresh)

    got, want = outputs(series), outputs(fresh)
    assert sorted(got) == sorted(want), sorted(set(got) ^ set(want))
    differing = sorted(name for name in want if got[name] != want[name])
    assert not differing, f"{len(differing)} results differ from a fresh run: {differing[:10]}"
