"""A command that fails on the system rather than on its input's content: a full disk, a file
size limit (`ulimit -f`), a file it may not read or write, a read-only file system. Each is bad
input for the user to fix, said in one line naming the path, and the command leaves nothing
behind: the outputs it had begun (folders it created, blocks of an interrupted scoring job) are
removed, as atomic outputs remove their temporary files.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import signal
from collections.abc import Mapping
from pathlib import Path

from spudflow.core.errors import InputError

# errno -> what the user is told (the path comes first)
SYSTEM_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large: over the file size limit (ulimit -f) or the file system's",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
}
# Arguments that name outputs (tests/test_bad_input_commands.py checks that every output
# argument has one of these destinations).
OUTPUT_DESTS = ("out", "out_dir", "conllu", "workdir")


def ignore_file_size_signal() -> None:
    """Past `ulimit -f` the kernel sends SIGXFSZ, which kills the process with a core dump and
    no word; ignored, the write fails with EFBIG, which is reported like a full disk."""
    # no such signal on this system, or not the main thread
    with contextlib.suppress(AttributeError, ValueError):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def system_error(error: OSError, fallback: str | Path | None) -> InputError | None:
    """ERROR as one line `PATH: what is wrong: nothing written`, or None when it is not one of
    SYSTEM_REASONS (a bug keeps its traceback). PATH is the file the system named, else the
    output an atomic write was filling (core/atomic.py sets it), else FALLBACK."""
    reason = SYSTEM_REASONS.get(error.errno)
    if reason is None:
        return None
    path = error.filename or getattr(error, "spudflow_output", None) or fallback or "(output)"
    return InputError(path, None, f"{reason}: nothing written")


class NewOutputs:
    """The output paths of a command that did not exist when it started: on failure, whatever
    the command made there, and the folders it made above them, are removed. An output that
    existed keeps its content; only scoring's `.partial-*` blocks the command added go."""

    def __init__(self, options: Mapping[str, object]) -> None:
        """OPTIONS: the command's parsed options by name (`vars` of its Namespace)."""
        self._new: list[tuple[Path, Path]] = []    # (path, its closest existing ancestor)
        self._kept: list[tuple[Path, set[str]]] = []  # (existing folder, its .partial-* names)
        for dest in OUTPUT_DESTS:
            value = options.get(dest)
            for path in value if isinstance(value, list) else [value]:
                if not isinstance(path, (str, Path)):
                    continue
                path = Path(path)
                if path.exists() or path.is_symlink():
                    if path.is_dir() and not path.is_symlink():
                        self._kept.append((path, set(_partials(path))))
                    continue
                ancestor = next((p for p in path.parents if p.exists() or p.is_symlink()),
                                Path("."))
                self._new.append((path, ancestor))

    def first(self) -> Path | None:
        return next((path for path, _ in self._new), None) or \
            next((path for path, _ in self._kept), None)

    def remove(self) -> None:
        for folder, before in self._kept:
            for name in set(_partials(folder)) - before:
                shutil.rmtree(folder / name, ignore_errors=True)
        for path, ancestor in self._new:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            elif path.is_symlink() or path.exists():
                path.unlink(missing_ok=True)
            for parent in path.parents:  # the folders made above it, while empty
                if parent == ancestor or not parent.is_dir() or any(parent.iterdir()):
                    break
                parent.rmdir()


def _partials(folder: Path) -> list[str]:
    try:
        return [p.name for p in folder.iterdir() if p.name.startswith(".partial-")]
    except OSError:
        return []
