"""The item-level score cache: a rerun scores only items whose scores it has never computed.

What is cached is the natural-log probability of every scored token of one item under one
method: the only expensive part. Tokens, offsets and the item-level figures (SLOR, NormLP, …) are
recomputed from the item and the model's tokenizer, so the unigram model need not be in the key.

Layout, one folder per model setting (the content fingerprint of the weights and tokenizer files
or the n-gram file, with kind, dtype and device class):

    DIR/<setting id>/model.json            what the setting is (for `spudflow cache stats`)
    DIR/<setting id>/seg-<uuid>.parquet    entries: key (32-byte SHA-256), logprob (list<f64>)

An entry's key hashes the method and the item's content: sentence, words with their character
offsets, regions. Nothing else (no item id, dataset, position, batch or shard): the scores do not
depend on those (tests/test_scoring_invariance.py).

Concurrency: a segment is written under a temporary name in the same folder and renamed into
place, so readers see whole segments or none; segments are never modified, only added (and
removed by `cache prune`). A job killed mid-write leaves a `.tmp-*` file that no reader opens.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spudflow.core.logs import get_logger
from spudflow.scoring.cache_setting import Setting
from spudflow.scoring.items import Item

log = get_logger(__name__)

SCHEMA = pa.schema([pa.field("key", pa.binary(32), nullable=False),
                    pa.field("logprob", pa.list_(pa.float64()), nullable=False)])
SETTING_FILE = "model.json"
SEGMENT_GLOB = "seg-*.parquet"


def item_key(method: str, item: Item) -> bytes:
    """SHA-256 of the method and everything of the item that can change its token scores."""
    content = [method, item.sentence, list(item.words), list(item.word_starts),
               list(item.word_ends), [[r.name, r.start, r.end] for r in item.regions]]
    return hashlib.sha256(json.dumps(content, ensure_ascii=False).encode()).digest()


class ScoreCache:
    def __init__(self, root: Path, setting: Setting):
        self.root = Path(root)
        self.setting = setting
        self.folder = self.root / setting.id()
        self.hits = 0
        self.computed = 0
        self._segments: dict[bytes, tuple[Path, int]] | None = None
        self._stored: dict[bytes, np.ndarray] = {}  # this job's new entries

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached scores of those keys that have an entry."""
        index = self._index()
        found: dict[bytes, np.ndarray] = {}
        wanted: dict[Path, list[tuple[bytes, int]]] = {}
        for key in set(keys):
            if key in self._stored:
                found[key] = self._stored[key]
            elif key in index:
                segment, row = index[key]
                wanted.setdefault(segment, []).append((key, row))
        for segment, rows in sorted(wanted.items()):
            values = self._read(segment, "logprob")
            if values is None:
                continue
            column = values.column("logprob").take([row for _, row in rows]).to_pylist()
            for (key, _), scores in zip(rows, column, strict=True):
                found[key] = np.asarray(scores, dtype=np.float64)
        return found

    def _index(self) -> dict[bytes, tuple[Path, int]]:
        """key -> (segment, row) of the segments present when the job first looked: read once
        (the key column only); segments other jobs add later are not seen (their items are
        scored again, which gives the same scores)."""
        if self._segments is None:
            self._segments = {}
            for segment in sorted(self.folder.glob(SEGMENT_GLOB)) if self.folder.is_dir() else []:
                keys = self._read(segment, "key")
                if keys is None:
                    continue
                for row, key in enumerate(keys.column("key").to_pylist()):
                    self._segments.setdefault(key, (segment, row))
        return self._segments

    def _read(self, segment: Path, column: str) -> pa.Table | None:
        try:
            return pq.read_table(segment, columns=[column], schema=SCHEMA)
        except FileNotFoundError:  # pruned meanwhile
            return None
        except (pa.ArrowInvalid, OSError) as error:
            log.warning("cache: unreadable segment %s left alone (%s)", segment, error)
            return None

    def store(self, entries: dict[bytes, np.ndarray]) -> None:
        """Add the entries as one new segment (atomic: whole or not at all)."""
        if not entries:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_setting()
        keys = sorted(entries)
        table = pa.table({"key": pa.array(keys, pa.binary(32)),
                          "logprob": pa.array([entries[k].tolist() for k in keys],
                                              pa.list_(pa.float64()))}, schema=SCHEMA)
        name = uuid.uuid4().hex
        tmp = self.folder / f".tmp-{name}.parquet"
        try:
            pq.write_table(table, tmp, compression="zstd")
            _fsync(tmp)
            os.replace(tmp, self.folder / f"seg-{name}.parquet")
        finally:
            tmp.unlink(missing_ok=True)
        self._stored.update(entries)

    def _write_setting(self) -> None:
        path = self.folder / SETTING_FILE
        if path.is_file():
            return
        tmp = self.folder / f".tmp-{uuid.uuid4().hex}.json"
        tmp.write_text(json.dumps(vars(self.setting), indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)


def _fsync(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def cache_stats(root: Path) -> list[dict]:
    """Per model setting: name, kind, dtype, device, id, entries, segments, bytes."""
    rows = []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        setting = _read_setting(folder)
        segments = sorted(folder.glob(SEGMENT_GLOB))
        entries = sum(pq.read_metadata(s).num_rows for s in segments)
        rows.append({"model": setting.get("name"), "kind": setting.get("kind"),
                     "dtype": setting.get("dtype"), "device": setting.get("device_class"),
                     "id": folder.name, "entries": entries, "segments": len(segments),
                     "bytes": sum(p.stat().st_size for p in folder.iterdir() if p.is_file())})
    return rows


# A temporary file older than this is a killed write's, not one in progress.
STALE_SECONDS = 3600


def prune_cache(root: Path, keep_models: Sequence[str]) -> list[str]:
    """Remove every setting whose model name (or id) is not in keep_models, and leftovers of
    killed writes; returns the removed setting ids."""
    import shutil
    import time

    removed = []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        name = _read_setting(folder).get("name")
        if name in keep_models or folder.name in keep_models:
            for leftover in folder.glob(".tmp-*"):
                if time.time() - leftover.stat().st_mtime > STALE_SECONDS:
                    leftover.unlink(missing_ok=True)
            continue
        shutil.rmtree(folder)
        removed.append(folder.name)
    return removed


def _read_setting(folder: Path) -> dict:
    try:
        return json.loads((folder / SETTING_FILE).read_text())
    except (OSError, ValueError):
        return {}
