"""Which folders are score caches: `DIR/spudflow-score-cache.json`, written when `score --cache`
first uses DIR, marks one. The cache commands remove and add files in every subfolder of DIR,
so they refuse a folder without the marker: pointed at results/ by mistake, `cache prune` would
delete it. `score --cache` refuses a folder that holds anything else, lest its subfolders be
taken for model settings later.

Caches made before the marker existed are recognised by their layout, strictly: nothing in DIR
but setting folders (24 hex digits, holding only model.json, names/, segments, stores and
temporary files), the file-hash memo and temporary files. `score` adds the marker to such a
cache the next time it uses it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.scoring.cache_files import TMP_PREFIX, write_atomically
from spudflow.scoring.file_hashes import MEMO_FILE

MARKER = "spudflow-score-cache.json"
FORMAT = "spudflow-score-cache"
SETTING_ID = re.compile(r"^[0-9a-f]{24}$")
# What a setting folder holds (cache.py, cache_files.py).
SETTING_ENTRY = re.compile(r"^(model\.json|names|seg-[0-9a-f-]+\.parquet|store-[0-9a-f-]+|"
                           rf"{re.escape(TMP_PREFIX)}.*)$")


def has_marker(root: Path) -> bool:
    try:
        return json.loads((root / MARKER).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _setting_folder(path: Path) -> bool:
    return (SETTING_ID.match(path.name) is not None and path.is_dir() and not path.is_symlink()
            and all(SETTING_ENTRY.match(entry.name) for entry in path.iterdir()))


def setting_folders(root: Path) -> list[Path]:
    """The setting folders of the cache ROOT: what the cache commands look into and prune.
    Anything else there (a user's folder, a link, even one to a setting folder elsewhere) is
    not the cache's and is left alone."""
    return sorted(entry for entry in root.iterdir()
                  if SETTING_ID.match(entry.name) and entry.is_dir() and not entry.is_symlink())


def has_old_layout(root: Path) -> bool:
    """A cache written before the marker: only setting folders, the memo and temporary files."""
    entries = list(root.iterdir())
    return bool(entries) and all(
        (entry.name == MEMO_FILE or entry.name.startswith(TMP_PREFIX)) and entry.is_file()
        or _setting_folder(entry) for entry in entries)


def _not_a_cache(root: Path) -> InputError:
    return InputError(root, None, f"not a score cache (no {MARKER}, which `score --cache` "
                      "writes, and other files than a cache's): nothing done")


def require_score_cache(root: Path) -> Path:
    """ROOT, which must be a score cache (the cache commands' check)."""
    from spudflow.core.input_files import require_directory

    root = require_directory(root, "a score cache folder")
    if not (has_marker(root) or has_old_layout(root)):
        raise _not_a_cache(root)
    return root


def check_usable(root: Path) -> None:
    """`score --cache ROOT`: a new or empty folder, or a score cache (checked before the model
    loads)."""
    if not root.exists():
        return
    if not root.is_dir():
        raise InputError(root, None, "is a file, not a directory (a score cache folder expected)")
    if any(root.iterdir()) and not (has_marker(root) or has_old_layout(root)):
        raise _not_a_cache(root)


def mark(root: Path) -> None:
    """Create ROOT when missing and write the marker when it has none (before the job writes
    anything else there, so that a job starting beside it finds a marked or an empty folder)."""
    check_usable(root)
    if has_marker(root):
        return
    root.mkdir(parents=True, exist_ok=True)
    write_atomically(root / MARKER, json.dumps({"format": FORMAT, "version": 1}).encode() + b"\n",
                     root)
