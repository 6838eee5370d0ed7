"""Waiting in a test for another process: on something it does (a file it writes, a state it
reaches, its exit), checked every POLL_S, never for a fixed time.

HUNG_S bounds a wait only so that a hung test fails instead of hanging the suite: no healthy run,
however slow the machine, comes near it, so it is the one timeout the waits share."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

HUNG_S = 1800
POLL_S = 0.1
T = TypeVar("T")


def wait_until(condition: Callable[[], T], what: str, *, still: Callable[[], object] = None,
               timeout_s: float = HUNG_S) -> T:
    """condition()'s first true value. `still` is called between checks to fail fast (raise)
    when what should make the condition true is gone, e.g. a process that ended first."""
    hung = time.monotonic() + timeout_s
    while not (value := condition()):
        if still is not None:
            still()
        if time.monotonic() > hung:
            raise AssertionError(f"hung: {what}, still not so after {timeout_s:.0f} s")
        time.sleep(POLL_S)
    return value


def running(process) -> Callable[[], None]:
    """A `still` for wait_until: fails when the subprocess.Popen has ended, with the end of
    what it wrote to stderr where that was piped (why it ended)."""
    def check() -> None:
        if process.poll() is None:
            return
        said = process.stderr.read() if process.stderr is not None else ""
        said = (said.decode(errors="replace") if isinstance(said, bytes) else said)[-3000:]
        raise AssertionError(f"{process.args!r} ended ({process.returncode}) first"
                             + (f":\n{said}" if said else ""))
    return check
