"""Processes a test session started that outlive it (tests/conftest.py checks at its end).

Each test process marks its environment with a token of its own (SESSION_VARIABLE) when its
session starts; every process started from it inherits the mark, also those that were
reparented (a daemon, a SLURM job step whose job is gone), so /proc finds them all. Processes
that empty their environment are not found. Linux only, as the suite's SLURM and fork tests."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from pathlib import Path

from waiting import wait_until

SESSION_VARIABLE = "SPUDFLOW_TEST_SESSION"
# A process just killed by its test (and so still exiting) gets this long to go away by itself.
EXIT_GRACE_S = 30


def mark_session() -> str:
    token = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    os.environ[SESSION_VARIABLE] = token
    return token


def marked(variable: str, value: str) -> dict[int, str]:
    """pid -> command line of each live process but this one whose environment has
    variable=value (a zombie's environment reads empty: it is not counted)."""
    wanted = f"{variable}={value}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                found[int(entry.name)] = (entry / "cmdline").read_bytes() \
                    .replace(b"\0", b" ").decode(errors="replace").strip()[:200]
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def end_all(variable: str, value: str, grace_s: float = EXIT_GRACE_S) -> dict[int, str]:
    """Processes marked variable=value still alive after grace_s (waiting for them to exit),
    then SIGKILLed; pid -> command line."""
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not marked(variable, value), "marked processes to exit",
                   timeout_s=grace_s)
    left = marked(variable, value)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left
