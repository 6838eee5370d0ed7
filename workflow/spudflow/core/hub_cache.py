"""An offline Hugging Face hub cache built from local model folders, in huggingface_hub's layout:

    CACHE/models--ORG--NAME/blobs/<sha256>          file contents
    CACHE/models--ORG--NAME/snapshots/<commit>/F    relative symlink to the blob of F
    CACHE/models--ORG--NAME/refs/main               the commit `main` points at

With HF_HUB_CACHE=CACHE and HF_HUB_OFFLINE=1, transformers loads `ORG/NAME` from it as from a
download, so a run that names hub models (the paper presets) can be rehearsed without network.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path


def repo_folder(cache: Path, repo_id: str) -> Path:
    return Path(cache) / ("models--" + repo_id.replace("/", "--"))


def add_snapshot(cache: Path, repo_id: str, source: Path, ref: str | None = "main") -> str:
    """Copy the files of the `source` folder into CACHE as one snapshot of `repo_id` and point
    `ref` at it (None: leave the refs alone); returns the commit, a SHA-1 of the files' names and
    contents (the same folder gives the same commit)."""
    repo = repo_folder(cache, repo_id)
    files = sorted(p for p in Path(source).iterdir() if p.is_file())
    commit = hashlib.sha1()
    blobs = {}
    for path in files:
        blob = hashlib.sha256(path.read_bytes()).hexdigest()
        blobs[path.name] = blob
        commit.update(f"{path.name}\0{blob}\0".encode())
    snapshot = repo / "snapshots" / commit.hexdigest()
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for path in files:
        blob = repo / "blobs" / blobs[path.name]
        if not blob.exists():
            shutil.copyfile(path, blob)
        link = snapshot / path.name
        if not link.is_symlink():
            link.symlink_to(os.path.relpath(blob, snapshot))
    if ref is not None:
        point_ref(cache, repo_id, commit.hexdigest(), ref)
    return commit.hexdigest()


def point_ref(cache: Path, repo_id: str, commit: str, ref: str = "main") -> None:
    """refs/REF (a branch or tag; `refs/pr/1` has folders) names `commit`, as huggingface_hub
    records a revision it downloaded by name."""
    path = repo_folder(cache, repo_id) / "refs" / ref
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != commit:
        path.write_text(commit)


def is_commit_hash(revision: str) -> bool:
    """A full commit id, which huggingface_hub looks up as snapshots/ID, not through refs/."""
    return re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def register_revision(cache: Path, repo_id: str, commit: str, revision: str) -> None:
    """Make `revision` of `repo_id` resolve to the snapshot `commit` offline: a branch, tag or
    short commit id through refs/REVISION, a full commit id as a snapshot folder of that name
    (a link to the snapshot's folder)."""
    if not is_commit_hash(revision):
        point_ref(cache, repo_id, commit, revision)
        return
    alias = repo_folder(cache, repo_id) / "snapshots" / revision
    if revision != commit and not alias.is_symlink() and not alias.exists():
        alias.symlink_to(commit, target_is_directory=True)


def loaded_snapshot(repo_id: str, revision: str | None = None) -> Path:
    """The snapshot folder `revision` (None: `main`) points at in huggingface_hub's cache: what
    transformers loaded a hub id from (offline, or just downloaded). LookupError, with the
    reason, when there is none. The scoring stage keys its score cache on it; the probe stage
    logs it."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as error:
        raise LookupError(" ".join(str(error).split())[:200]) from None
