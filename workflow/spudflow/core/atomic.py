"""Write outputs under temporary names and rename them into place only when all succeeded.

A command that fails half-way therefore leaves no partial output behind. One write rule holds
for every command: spudflow replaces only what it wrote. A file only where spudflow wrote it
(a Parquet file of the same artifact, by its metadata; any other file listed with its current
bytes' hash in the marks beside it, core/written_files.py) or where it is empty; a folder only an
empty one or one the writer recognises as its own previous output (by the metadata of the files
in it). Anything else at an output path (a folder given as a file's path, the working directory,
a user's file, a file of spudflow's that someone edited since) is bad input: exit 2, nothing
written, nothing removed.

Temporary names carry the host and the process id (`.NAME.spudflow-HOST-PID-XXXXXXXX.tmp`): a
killed job leaves one behind, and the next writer of the same output removes those whose
process is gone from this host, never a live job's (nor another host's, nor a name spudflow did
not make).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"


def _tmp_prefix(final: Path) -> str:
    return f".{final.name}.spudflow-{_host()}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temporaries(final: Path) -> list[Path]:
    """Remove the temporary files and folders that killed writers of FINAL left beside it:
    names spudflow makes (_tmp_prefix), of this host, whose process is gone. Returns them."""
    pattern = re.compile(rf"^\.{re.escape(final.name)}\.spudflow-(?P<host>[A-Za-z0-9_]+)-"
                         r"(?P<pid>[0-9]+)-[A-Za-z0-9_]+\.(?:tmp|old)$")
    removed = []
    try:
        candidates = list(final.parent.iterdir())
    except OSError:
        return removed
    for path in candidates:
        match = pattern.match(path.name)
        if (match is None or match["host"] != _host() or _alive(int(match["pid"]))
                or int(match["pid"]) == os.getpid()):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        removed.append(path)
    return removed


@dataclass
class _Pending:
    tmp: Path
    final: Path
    description: str | None = None  # what a folder holds (`a probe run`); None for a file
    recognise: Callable[[Path], bool] | None = None  # a previous folder of that description?


def _refuse_directory(final: Path) -> None:
    if final.is_dir():
        raise InputError(final, None, "is a directory; spudflow writes a file here and never "
                         "replaces a directory: nothing written")


def _make_parent(final: Path) -> None:
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(final, None, "lies under a file, not a folder: nothing written") \
            from None


def _recognised(folder: Path, recognise: Callable[[Path], bool]) -> bool:
    try:
        return bool(recognise(folder))
    except (InputError, OSError, ValueError):
        return False


def _check_folder(final: Path, description: str, recognise: Callable[[Path], bool]) -> None:
    """Bad input unless FINAL is absent, empty, or a previous folder of DESCRIPTION."""
    if final.is_symlink() or final.exists() and not final.is_dir():
        raise InputError(final, None, f"is a file or link where spudflow writes a folder "
                         f"({description}): nothing written")
    if not final.exists() or not any(final.iterdir()) or _recognised(final, recognise):
        return
    raise InputError(final, None, f"a folder that is not {description} spudflow wrote: nothing "
                     "written; remove it or choose another path")


def _check_file(tmp: Path, final: Path) -> list[str]:
    """Bad input unless FINAL may be replaced by TMP; returns the hashes of FINAL's bytes that
    are spudflow's (kept in its mark until the new bytes are in place)."""
    from spudflow.core.output_formats import file_format, self_marked

    return _check_file_as(final, self_marked(tmp), lambda: file_format(tmp))


# `check_replaceable`'s WRITES when the command has not said what it writes: any file of
# spudflow's may be replaced for now; the exact artifact is checked when the file is renamed.
ANY_OF_SPUDFLOWS = "any file of spudflow's"


def check_replaceable(final: str | Path, writes: str | None) -> None:
    """The write rule's decision for one output file, made before any work: bad input unless
    FINAL is absent, empty, or may be replaced by a file of WRITES (`parquet_of(ARTIFACT)` or
    SAFETENSORS of core/output_formats.py for a file that carries its own mark; None for any
    other file, marked beside it; ANY_OF_SPUDFLOWS when the command does not say). The same
    decision is made again when the file is renamed into place."""
    final = Path(final)
    if writes == ANY_OF_SPUDFLOWS:
        from spudflow.core.output_formats import self_marked

        _refuse_directory(final)
        old = self_marked(final) if final.is_file() and final.stat().st_size else None
        if old is not None and ("no spudflow" in old or "unreadable" in old):
            raise InputError(final, None, f"holds {old}; spudflow replaces only a file it "
                             "wrote: nothing written; remove it or choose another path")
        writes = old  # a Parquet or safetensors file of spudflow's, else one marked beside it
    _check_file_as(final, writes, lambda: "a file of another format")


def check_folder_replaceable(final: str | Path, description: str,
                             recognise: Callable[[Path], bool]) -> None:
    """The write rule's decision for one output folder, made before any work (and again when
    it is renamed into place): bad input unless FINAL is absent, empty, or a previous folder of
    DESCRIPTION (`a control model`) that RECOGNISE knows."""
    _check_folder(Path(final), description, recognise)


def _check_file_as(final: Path, new: str | None, new_format: Callable[[], str]) -> list[str]:
    """`_check_file` for a new file whose own mark is NEW (None: a file marked beside it)."""
    from spudflow.core.output_formats import file_format, self_marked
    from spudflow.core.written_files import written_hash

    _refuse_directory(final)
    if not final.is_file() or final.stat().st_size == 0:  # nothing there to lose
        return []
    old = self_marked(final)
    if old or new:  # Parquet, safetensors: the artifact in the file is its mark
        if old == new and "no spudflow artifact" not in old:
            return []
        raise InputError(final, None, f"holds {old or file_format(final)}; spudflow writes "
                         f"{new or new_format()} here and replaces only a file of that "
                         "artifact: nothing written; remove it or choose another path")
    old_hash = written_hash(final)
    if old_hash is None:
        raise InputError(final, None, "a file spudflow did not write, or changed since it did; "
                         "spudflow replaces only what it wrote: nothing written; remove it or "
                         "choose another path")
    return [old_hash]


def _marked_file(tmp: Path) -> bool:
    """Whether a file is marked beside it (core/written_files.py): all but those that carry
    their own mark (Parquet, safetensors)."""
    from spudflow.core.output_formats import self_marked

    return tmp.stat().st_size > 0 and self_marked(tmp) is None


class AtomicOutputs:
    """Hands out temporary paths for final paths; `commit()` renames them all into place."""

    def __init__(self) -> None:
        self._pending: list[_Pending] = []

    def path(self, final: str | Path) -> Path:
        final = Path(final)
        _refuse_directory(final)
        _make_parent(final)
        remove_stale_temporaries(final)
        fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(final), suffix=".tmp", dir=final.parent)
        os.close(fd)
        self._pending.append(_Pending(Path(tmp), final))
        return Path(tmp)

    def dir(self, final: str | Path, description: str, recognise: Callable[[Path], bool]) -> Path:
        """A temporary folder for FINAL, a folder of DESCRIPTION (`a probe run`, for messages),
        which replaces an existing FINAL only where it is empty or RECOGNISE(FINAL) (a previous
        output of that description, known by the metadata of its files)."""
        final = Path(final)
        _check_folder(final, description, recognise)
        _make_parent(final)
        remove_stale_temporaries(final)
        tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(final), suffix=".tmp", dir=final.parent))
        self._pending.append(_Pending(tmp, final, description, recognise))
        return tmp

    def commit(self) -> None:
        from spudflow.core.written_files import mark, sha256_of

        # Every output is checked before the first is renamed: all appear, or none.
        previous: dict[Path, list[str]] = {}
        for pending in self._pending:
            if pending.description is None:
                previous[pending.final] = _check_file(pending.tmp, pending.final)
            else:
                _check_folder(pending.final, pending.description, pending.recognise)
        marks: list[tuple[Path, str]] = []
        for pending in self._pending:
            if pending.description is None and _marked_file(pending.tmp):
                new = sha256_of(pending.tmp)
                # both hashes until the rename: a crash in between leaves a file still ours
                mark(pending.final, [new, *previous[pending.final]])
                marks.append((pending.final, new))
        mask = _umask()
        for pending in self._pending:
            tmp, final = pending.tmp, pending.final
            # mkstemp/mkdtemp create private (0600/0700) entries; give them the usual modes.
            os.chmod(tmp, (0o777 if tmp.is_dir() else 0o666) & ~mask)
            if pending.description is not None and final.is_dir():
                # The old folder goes aside first: a crash between the renames keeps it.
                old = Path(tempfile.mkdtemp(prefix=_tmp_prefix(final), suffix=".old",
                                            dir=final.parent))
                os.replace(final, old / final.name)
                os.replace(tmp, final)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, final)
        for final, new in marks:
            with contextlib.suppress(InputError):  # the two-hash mark still holds
                mark(final, [new])
        self._pending.clear()

    def discard(self) -> None:
        for pending in self._pending:
            if pending.tmp.is_dir():
                shutil.rmtree(pending.tmp, ignore_errors=True)
            else:
                pending.tmp.unlink(missing_ok=True)
        self._pending.clear()


@contextlib.contextmanager
def atomic_outputs() -> Iterator[AtomicOutputs]:
    """`with atomic_outputs() as out: write(out.path(final))`: all files appear, or none."""
    outputs = AtomicOutputs()
    try:
        yield outputs
        outputs.commit()
    except BaseException as error:
        if isinstance(error, OSError) and not error.filename and outputs._pending:
            # a write() that failed (a full disk) names no file: the output being written
            # is the one whose temporary file changed last
            latest = max(outputs._pending, key=lambda p: _mtime(p.tmp))
            error.spudflow_output = str(latest.final)
        outputs.discard()
        raise


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
