"""The preloaded `spudflow` of the tests' workflow runs (tests/preloaded_jobs.py) behaves as the
real command: the same bytes, exit status and error line; and a job whose environment differs in
what a library reads at import runs as a real process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from preloaded_jobs import ONE_THREAD_JOB, client_dir

# the module's preloading client takes seconds to start, and every test here runs jobs through it
pytestmark = pytest.mark.slow

TINY_EN = Path(__file__).parent / "data" / "workflow" / "tiny_en.conllu"


@pytest.fixture(scope="module")
def client() -> Path:
    found = client_dir()
    if found is None:
        pytest.skip("SPUDFLOW_PRELOADED_JOBS=off")
    # not waited for: a job that comes while the server still imports waits for it (the first
    # test below, when this module started the server, checks that such a job is forked)
    return found / "spudflow"


def _jobs_log(client: Path) -> list[str]:
    log = client.parent.parent / "server.sock.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _spudflow(program: Path | str, *args, cwd: Path, env=None) -> subprocess.CompletedProcess:
    # As Snakemake starts a job of one thread: a shell, its thread variables set.
    environment = {**os.environ, **ONE_THREAD_JOB, **(env or {})}
    return subprocess.run([str(program), *map(str, args)], cwd=cwd, env=environment,
                          capture_output=True, text=True, check=False)


def _real() -> Path:
    return Path(sys.executable).parent / "spudflow"


@pytest.mark.slow
def test_a_preloaded_job_writes_the_bytes_a_fresh_process_writes(client, tmp_path):
    before = len(_jobs_log(client))
    outputs = {}
    for name, program in (("real", _real()), ("preloaded", client)):
        done = _spudflow(program, "ingest", TINY_EN, "--out", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        outputs[name] = {p.name: p.read_bytes() for p in sorted((tmp_path / name).iterdir())}
    assert set(outputs["real"]) == {"tokens.parquet", "sentences.parquet"}
    assert outputs["preloaded"] == outputs["real"]
    assert _jobs_log(client)[before:] == ["ingest forked"]


def test_bad_input_exits_2_with_the_same_line(client, tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("# sent_id = 1\n1\tword\n\n", encoding="utf-8")
    runs = [_spudflow(program, "ingest", bad, "--out", "out", cwd=tmp_path)
            for program in (_real(), client)]
    assert [run.returncode for run in runs] == [2, 2]
    assert runs[0].stderr.strip().startswith(f"{bad}:2:")
    assert runs[1].stderr == runs[0].stderr
    assert not (tmp_path / "out").exists()


def test_an_argument_error_and_an_exception_keep_their_exit_status(client, tmp_path):
    usage = _spudflow(client, "ingest", cwd=tmp_path)
    assert usage.returncode == 2
    assert "the following arguments are required" in usage.stderr
    missing = _spudflow(client, "ingest", tmp_path / "absent.conllu", "--out", "o", cwd=tmp_path)
    real = _spudflow(_real(), "ingest", tmp_path / "absent.conllu", "--out", "o", cwd=tmp_path)
    assert missing.returncode == real.returncode != 0
    assert missing.stderr.splitlines()[-1] == real.stderr.splitlines()[-1]


def test_a_job_whose_import_time_environment_differs_runs_as_a_real_process(client, tmp_path):
    before = len(_jobs_log(client))
    done = _spudflow(client, "ingest", TINY_EN, "--out", "out", cwd=tmp_path,
                     env={"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "4"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "tokens.parquet").is_file()
    assert _jobs_log(client)[before:] == ["ingest real: HF_HUB_OFFLINE OMP_NUM_THREADS"]


def test_a_job_on_a_copy_of_the_package_is_forked_with_the_copys_code(client, tmp_path):
    """A test's changed copy of spudflow (PYTHONPATH naming it alone) is imported anew in the
    forked job, as a fresh process on that PYTHONPATH would import it; a PYTHONPATH of more
    folders runs the real command."""
    root = tmp_path / "copy"
    shutil.copytree(Path(__file__).parents[1] / "workflow" / "spudflow", root / "spudflow",
                    ignore=shutil.ignore_patterns("__pycache__"))
    init = root / "spudflow" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8").replace(
        '__version__ = "', '__version__ = "copied-'), encoding="utf-8")
    before = len(_jobs_log(client))
    for path in (str(root), f"{root}{os.pathsep}{tmp_path}"):
        done = _spudflow(client, "--version", cwd=tmp_path, env={"PYTHONPATH": path})
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("spudflow copied-"), done.stdout
    assert _jobs_log(client)[before:] == [f"--version forked package {root}",
                                          "--version real: PYTHONPATH"]
    # the server's own package is the checkout's still
    done = _spudflow(client, "--version", cwd=tmp_path)
    assert not done.stdout.startswith("spudflow copied-")
