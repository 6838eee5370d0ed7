"""`make run` after a killed run: clear Snakemake's stale lock, then become Snakemake.

Snakemake locks its working directory with files in .snakemake/locks/ and removes them when it
exits; a run killed with SIGKILL (or the machine going down) leaves them, and every later run
stops with a LockException until `snakemake --unlock`. The files name no process, so this
wrapper records who holds them: before it execs Snakemake (same process, same pid) it writes
the host, pid and start time to .snakemake/spudflow-run.json. The lock is stale when

- the recorded run is on this host and no longer alive (its pid gone, or reused by a process
  started later), or no run is recorded, and
- no live process on this host runs snakemake in this directory (a run started without this
  wrapper, or one whose record a later wrapper replaced).

A stale lock is removed with one line on stderr; a live run's lock, or one recorded on another
host (a shared file system), is left for Snakemake to refuse as before.

    python -m spudflow.core.snakemake_lock SNAKEMAKE [ARGS...]
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from pathlib import Path

import psutil

LOCKS = Path(".snakemake") / "locks"
OWNER = Path(".snakemake") / "spudflow-run.json"


def _start_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def _recorded_owner_alive(owner: Path) -> bool | None:
    """Whether the run recorded in OWNER is alive: True, False, or None (nothing recorded that
    can be read)."""
    try:
        record = json.loads(owner.read_text(encoding="utf-8"))
        host, pid, started = record["host"], int(record["pid"]), float(record["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if host != socket.gethostname():
        return True  # another machine's process cannot be seen from here: assume it lives
    found = _start_time(pid)
    return found is not None and abs(found - started) < 1.0


def _ancestors() -> set[int]:
    pids = set()
    try:
        process = psutil.Process()
        while process is not None:
            pids.add(process.pid)
            process = process.parent()
    except psutil.Error:
        pass
    return pids


def live_snakemake_here(workdir: Path) -> list[int]:
    """Pids of live processes on this host (other than this one and its ancestors, such as the
    shell `make` started) that run snakemake with WORKDIR as their working directory."""
    here = os.path.realpath(workdir)
    skip = _ancestors()
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        info = process.info
        if info["pid"] in skip or not info["cmdline"] or info["cwd"] is None:
            continue
        if os.path.realpath(info["cwd"]) != here:
            continue
        if any("snakemake" in Path(part).name or part == "snakemake"
               for part in info["cmdline"][:3]):
            found.append(info["pid"])
    return found


def clear_stale_lock(workdir: Path = Path(".")) -> bool:
    """Remove WORKDIR's Snakemake lock when no live run holds it; True when one was removed."""
    locks = workdir / LOCKS
    if not locks.is_dir() or not any(locks.iterdir()):
        return False
    if _recorded_owner_alive(workdir / OWNER) or live_snakemake_here(workdir):
        return False
    shutil.rmtree(locks)
    print(f"spudflow: {locks} was left by a run that no longer runs (killed?): unlocked; "
          "its unfinished jobs run again", file=sys.stderr)
    return True


def record_owner(workdir: Path = Path(".")) -> None:
    """Write this process as the run holding WORKDIR's lock (it execs Snakemake next)."""
    owner = workdir / OWNER
    owner.parent.mkdir(parents=True, exist_ok=True)
    record = {"host": socket.gethostname(), "pid": os.getpid(),
              "started": _start_time(os.getpid())}
    tmp = owner.with_name(f".{owner.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(tmp, owner)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m spudflow.core.snakemake_lock SNAKEMAKE [ARGS...]",
              file=sys.stderr)
        return 2
    clear_stale_lock()
    locks = LOCKS
    if not (locks.is_dir() and any(locks.iterdir())):
        record_owner()  # a live run's lock stays, and so does its record: Snakemake refuses
    os.execvp(argv[0], argv)
    return 1  # not reached: exec replaces this process


if __name__ == "__main__":
    sys.exit(main())
