"""A `spudflow` for the tests' workflow runs whose jobs start with the heavy libraries imported.

Every Snakemake job is a fresh Python that imports torch, transformers, polars and the rest
before it does a second of work: a tiny score job spends 5.5 of its 6 s importing.
The tests run a few hundred such jobs. Here one server process per test process imports them
once; a job's `spudflow ARGS` (a small client script put first on PATH by run_workflow) hands
its arguments, working directory, environment and stdin/stdout/stderr to the server, which
forks a child that runs `spudflow.cli.main(ARGS)` as the console script would and sends back
its exit status. The command's code path is the real one; only interpreter start-up is shared.

A job whose PYTHONPATH is one folder holding another `spudflow` (a test's copy of the package,
changed) is forked too: its child drops the server's `spudflow` modules and imports the copy's,
as a fresh process on that PYTHONPATH would; the libraries it imports stay shared.

Where sharing could change what a job sees, the client runs the real `spudflow` instead: when
its environment differs from the server's in a variable a library reads at import time (the
Hugging Face hub cache and offline switch, thread counts, PYTHONPATH, ...), when the server has
stopped (a job that comes while it is still importing waits for it), or when
SPUDFLOW_PRELOADED_JOBS=off. Tests that measure a job's own process (its
benchmark, a kill) or the command line itself use real processes (run_workflow(preloaded=False),
snakemake_cli, the SLURM test).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import json
import os
import pkgutil
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

# Imported once by the server. A child imports anything else itself, as a fresh job would.
PRELOAD = (
    "numpy", "polars", "pyarrow.parquet", "yaml", "conllu", "tqdm", "filelock",
    "torch", "torch.optim", "torch._dynamo",
    "transformers", "transformers.modeling_utils", "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto", "transformers.models.gpt2.modeling_gpt2",
    "transformers.models.bert.modeling_bert", "transformers.models.electra.modeling_electra",
    "tokenizers", "safetensors.torch",
    "scipy.stats", "sklearn.linear_model", "sklearn.metrics", "statsmodels.api", "numba",
    "matplotlib.pyplot", "matplotlib.backends.backend_agg", "matplotlib.backends.backend_svg",
    "networkx", "spacy", "pyarrow.dataset", "pandas.io.formats.style", "tabulate",
    "spudflow.cli",
)
# Environment variables some library reads once, at import: a job whose value differs from the
# server's runs as a real process.
IMPORT_TIME_ENV = ("HF_", "HUGGINGFACE", "TRANSFORMERS", "TOKENIZERS", "TORCH", "PYTORCH",
                   "CUDA", "OMP_", "MKL_", "OPENBLAS", "GOTO", "VECLIB", "NUMEXPR", "NUMBA",
                   "MPL", "POLARS", "SPACY", "PYTHON", "XDG_", "HOME", "LD_",
                   "SPUDFLOW_PRELOADED_JOBS")
# What Snakemake sets for a job of one thread (snakemake/shell.py), as run_workflow's jobs are
# (max_threads=1): the server imports the libraries under the same thread settings.
ONE_THREAD_JOB = dict.fromkeys(("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                                "NUMEXPR_NUM_THREADS"), "1")
# A job a test starts itself (not through Snakemake) beside others: one thread, as a workflow
# job, so that client_dir's server forks it too.
TEST_JOB = ONE_THREAD_JOB
_LENGTH = struct.Struct("!Q")

CLIENT = """#!{python} -S
# `spudflow` for the tests' workflow runs: see tests/preloaded_jobs.py.
import json, os, signal, socket, struct, sys, time
REAL = {real!r}
SOCKET = {socket_path!r}
JOB = {{}}
def kill(number, frame):
    # SIGKILL can be neither caught nor passed on: kill_job sends SIGUSR1, and the forked job
    # (once there is one), then this client, die of SIGKILL as a job of its own would.
    if "pid" in JOB:
        os.kill(JOB["pid"], signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)
signal.signal(signal.SIGUSR1, kill)
def real():
    os.execv(REAL, [REAL, *sys.argv[1:]])
def connect():
    # The server is ready once its socket exists. Until then it is importing (seconds): wait
    # for it rather than import everything beside it, unless it stopped or is gone.
    deadline = time.monotonic() + 120
    while not os.path.exists(SOCKET):
        gone = not os.path.isdir(os.path.dirname(SOCKET)) or os.path.exists(SOCKET + ".stopped")
        if gone or time.monotonic() > deadline:
            return None
        time.sleep(0.1)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.connect(SOCKET)
    except OSError:
        return None
    return server
if os.environ.get("SPUDFLOW_PRELOADED_JOBS") == "off":
    real()
server = connect()
if server is None:
    real()
request = json.dumps({{"program": REAL, "argv": sys.argv[1:], "cwd": os.getcwd(),
                      "env": dict(os.environ)}}).encode()
socket.send_fds(server, [struct.pack("!Q", len(request)) + request], [0, 1, 2])
replies = server.makefile("r", encoding="utf-8")
first = json.loads(replies.readline() or '{{"fallback": true}}')
if first.get("fallback"):
    real()
JOB.update(first)
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda number, frame: os.kill(first["pid"], number))
last = replies.readline()
sys.exit(json.loads(last)["status"] if last else 1)
"""


def kill_job(process: subprocess.Popen, client: Path | None) -> None:
    """SIGKILL a job a test started as `client/spudflow ARGS` (the job forked for it, then the
    client itself, whose status is then -SIGKILL) or, with no client, as a process of its own.
    A client whose environment made it run the real `spudflow` (see the module's docstring)
    would die of SIGUSR1 instead: preloaded_test_jobs' clients share their server's."""
    process.send_signal(signal.SIGKILL if client is None else signal.SIGUSR1)


def _import_time_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_ENV)}


def _differs(own_env: dict[str, str], set_by_imports: dict[str, str],
             env: dict[str, str]) -> list[str]:
    """The import-time variables in which a job's `env` differs from the server's: a variable
    the server's imports set is the same when the job has it unset or at that value (the job
    inherited it from a process that had made the same imports)."""
    job_env = _import_time_env(env)
    return sorted(k for k in own_env.keys() | job_env.keys()
                  if own_env.get(k) != job_env.get(k)
                  and not (k in set_by_imports and job_env.get(k) in (None, set_by_imports[k])))


def _copy_of_package(differs: list[str], env: dict[str, str]) -> str | None:
    """The folder of another `spudflow` when PYTHONPATH, naming only that folder, is the one
    import-time variable in which the job differs from the server; else None."""
    root = env.get("PYTHONPATH", "")
    if differs != ["PYTHONPATH"] or os.pathsep in root or not os.path.isabs(root):
        return None
    return root if os.path.isfile(os.path.join(root, "spudflow", "__init__.py")) else None


def _import_package_from(root: str) -> None:
    """Forget the server's `spudflow` and put `root` first on the path: the job imports the
    copy's modules, as a process with PYTHONPATH=root would."""
    for name in [m for m in sys.modules if m == "spudflow" or m.startswith("spudflow.")]:
        del sys.modules[name]
    sys.path.insert(0, root)
    importlib.invalidate_caches()


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < _LENGTH.size or len(data) < _LENGTH.size + _LENGTH.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("the client hung up mid-request")
        data += more
    return json.loads(data[_LENGTH.size:]), fds


def _exit_status(code: object) -> int:
    """What sys.exit(code) makes the process's exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _drop_inherited_exit_finalizers() -> None:
    """The server's imports left weakref finalizers that run at exit (torch unregisters each of
    its operator libraries, a tenth of a tiny job's CPU time). They free what dies with the
    process anyway, and a temporary folder of the server's would be the server's to remove, not
    each job's. The job's own finalizers still run at its exit."""
    for finalizer in list(weakref.finalize._registry):
        finalizer.atexit = False


def _run_job(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the forked child: become the job, run the command, report its status; never returns."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _drop_inherited_exit_finalizers()
        tempfile.tempdir = None  # TMPDIR is the job's (Snakemake sets it per job)
        sys.argv = [request["program"], *request["argv"]]
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        if request.get("package"):
            _import_package_from(request["package"])
        from spudflow.cli import main

        try:
            status = _exit_status(main(request["argv"]))
        except SystemExit as stop:
            status = _exit_status(stop.code)
        except BaseException:  # noqa: BLE001 - the console script prints it and exits 1
            traceback.print_exc()
            status = 1
        atexit._run_exitfuncs()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.sendall(json.dumps({"status": status}).encode() + b"\n")
        finally:
            os._exit(status)


def serve(socket_path: str) -> None:
    """Import PRELOAD, then fork one child per request on `socket_path` until killed. If it
    stops otherwise, `socket_path`.stopped tells the clients waiting for it not to wait."""
    try:
        _serve(socket_path)
    finally:
        Path(socket_path + ".stopped").touch()


def _serve(socket_path: str) -> None:
    started_with = dict(os.environ)
    own_env = _import_time_env(started_with)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    # A job's first step is building the parser, which imports every stage's command modules
    # (a sixth of a tiny job's CPU time); its command imports more of the package: the server
    # builds the parser that main() shares (the jobs inherit it) and imports all of the package
    # once (but the console entry point, which would run a command).
    importlib.import_module("spudflow.cli").shared_parser()
    package = importlib.import_module("spudflow")
    for module in pkgutil.walk_packages(package.__path__, "spudflow."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
    # What the imports put in the environment (torch's inductor cache dir, ...): a fresh job
    # would have set them too, so each child gets them beside its own environment.
    set_by_imports = {k: v for k, v in os.environ.items() if started_with.get(k) != v}
    # The imported heap (over half a million objects with torch) is left out of the cyclic garbage
    # collector: a job's collections would otherwise walk it, and in doing so copy every page
    # the fork shares (the gc.freeze documentation's advice for a process that forks).
    gc.collect()
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_path + ".tmp")
    listener.listen(64)
    listener.settimeout(5)
    os.rename(socket_path + ".tmp", socket_path)  # clients connect only once it is ready
    parent = os.getppid()
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the test process is gone (killed): so is the server
                return
            continue
        conn.setblocking(True)
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            continue
        differs = _differs(own_env, set_by_imports, request["env"])
        package = _copy_of_package(differs, request["env"])
        if package:
            differs = []
        with open(socket_path + ".log", "a", encoding="utf-8") as log:  # what ran how
            print(" ".join(request["argv"][:1]), "real:" if differs else "forked", *differs,
                  *([f"package {package}"] if package else []), file=log)
        if differs or len(fds) != 3:
            conn.sendall(b'{"fallback": true}\n')
        elif os.fork() == 0:
            listener.close()
            _run_job(conn, {**request, "env": {**set_by_imports, **request["env"]},
                            "package": package}, fds)
        for fd in fds:
            os.close(fd)
        conn.close()


@functools.cache
def client_dir() -> Path | None:
    """A folder holding the client `spudflow`, with its server started (once per test process,
    stopped at exit); None when SPUDFLOW_PRELOADED_JOBS=off."""
    if os.environ.get("SPUDFLOW_PRELOADED_JOBS") == "off":
        return None
    found, stop = _start_server({})
    _STOPS.append(stop)
    return found


_STOPS: list[Callable[[], None]] = []


@atexit.register
def stop_client_dir() -> None:
    """Stop client_dir's server (tests/conftest.py does at the session's end, before it checks
    that no process the tests started is left)."""
    while _STOPS:
        _STOPS.pop()()
    client_dir.cache_clear()


@contextlib.contextmanager
def client_dir_for(changes: Mapping[str, str]) -> Iterator[Path | None]:
    """As client_dir, for jobs whose environment is this process's with `changes` (a command
    that sets the hub cache for its jobs, say): a server that imports under those, stopped when
    the block ends."""
    if os.environ.get("SPUDFLOW_PRELOADED_JOBS") == "off":
        yield None
        return
    found, stop = _start_server(changes)
    try:
        yield found
    finally:
        stop()


def _start_server(changes: Mapping[str, str]) -> tuple[Path, Callable[[], None]]:
    """The client's folder and how to stop its server, which imports in this process's
    environment with `changes` and one thread (as Snakemake runs a job of one thread)."""
    root = Path(tempfile.mkdtemp(prefix="sf-jobs-"))
    socket_path = str(root / "server.sock")
    with open(root / "server.err", "wb") as errors:
        server = subprocess.Popen([sys.executable, __file__, socket_path],
                                  stdin=subprocess.DEVNULL, stdout=errors, stderr=errors,
                                  env={**os.environ, **ONE_THREAD_JOB, **changes})

    def stop() -> None:
        server.terminate()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)

    real = shutil.which("spudflow", path=str(Path(sys.executable).parent))
    if real is None:
        stop()
        raise FileNotFoundError(f"no spudflow beside {sys.executable}")
    client = root / "bin" / "spudflow"
    client.parent.mkdir()
    client.write_text(CLIENT.format(python=sys.executable, real=real, socket_path=socket_path),
                      encoding="utf-8")
    client.chmod(0o755)
    return client.parent, stop


if __name__ == "__main__":
    serve(sys.argv[1])
