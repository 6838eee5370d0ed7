"""Write outputs under temporary names and rename them into place only when all succeeded.

A command that fails half-way therefore leaves no partial output behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class AtomicOutputs:
    """Hands out temporary paths for final paths; `commit()` renames them all into place."""

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []

    def path(self, final: str | Path) -> Path:
        final = Path(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
        os.close(fd)
        self._pending.append((Path(tmp), final))
        return Path(tmp)

    def dir(self, final: str | Path) -> Path:
        final = Path(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
        self._pending.append((tmp, final))
        return tmp

    def commit(self) -> None:
        mask = _umask()
        for tmp, final in self._pending:
            # mkstemp/mkdtemp create private (0600/0700) entries; give them the usual modes.
            os.chmod(tmp, (0o777 if tmp.is_dir() else 0o666) & ~mask)
            if final.is_dir() and not final.is_symlink():
                shutil.rmtree(final)
            os.replace(tmp, final)
        self._pending.clear()

    def discard(self) -> None:
        for tmp, _ in self._pending:
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
        self._pending.clear()


@contextlib.contextmanager
def atomic_outputs() -> Iterator[AtomicOutputs]:
    """`with atomic_outputs() as out: write(out.path(final))`: all files appear, or none."""
    outputs = AtomicOutputs()
    try:
        yield outputs
    except BaseException:
        outputs.discard()
        raise
    outputs.commit()
