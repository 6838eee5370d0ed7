"""SHA-256 of model files, remembered so that a model is hashed once per change, not per job.

The memo is one JSON-lines file in the score cache folder (`file-hashes.jsonl`). A line keys a
hash by the file's absolute path, size, mtime_ns, inode and ctime_ns: rewriting, touching or
replacing the file changes the key, and the file is hashed again. Size, mtime and inode alone
are not enough: another model of the same size written in place (ext4 reuses the inode) with its
timestamp set back (reproducible archives set 1980-01-01) would keep the old key; the ctime moves
with every write and cannot be set back. Jobs append whole lines with one O_APPEND
write; each line carries a checksum of itself, so a line torn or interleaved by concurrent writers
(a shared file system without atomic appends) is ignored, never read as a hash: the worst a race
costs is hashing a file again. A file that changes while it is hashed is not remembered.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from spudflow.core.logs import get_logger

log = get_logger("spudflow.scoring")

MEMO_FILE = "file-hashes.jsonl"


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_key(path: Path) -> list:
    stat = path.stat()
    return [str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns]


def _check(key: list, sha256: str) -> str:
    return hashlib.sha256(json.dumps([key, sha256]).encode()).hexdigest()[:16]


class FileHashes:
    """File hashes through the memo file `path` (None: no memo, every file is hashed)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._known: dict[str, str] | None = None
        self.hashed = 0   # files read and hashed by this object (the rest came from the memo)

    def sha256(self, path: Path) -> str:
        key = _file_key(path)
        known = self._memo()
        found = known.get(json.dumps(key))
        if found is not None:
            return found
        sha256 = file_sha256(path)
        self.hashed += 1
        if _file_key(path) == key:  # unchanged while it was read
            known[json.dumps(key)] = sha256
            self._append(key, sha256)
        return sha256

    def _memo(self) -> dict[str, str]:
        if self._known is None:
            self._known = {}
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines() if self.path else []
            except FileNotFoundError:
                lines = []
            for line in lines:
                try:
                    entry = json.loads(line)
                    key, sha256 = entry["key"], entry["sha256"]
                    if entry["check"] == _check(key, sha256):
                        self._known[json.dumps(key)] = sha256
                except (ValueError, KeyError, TypeError):
                    continue  # torn or foreign line
        return self._known

    def _append(self, key: list, sha256: str) -> None:
        if self.path is None:
            return
        line = json.dumps({"key": key, "sha256": sha256, "check": _check(key, sha256)})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, (line + "\n").encode())
            finally:
                os.close(fd)
        except OSError as error:  # the memo only saves time: a full or read-only disk is no error
            log.warning("cache: cannot remember file hashes in %s (%s); hashing without a memo",
                        self.path, error)
            self.path = None
