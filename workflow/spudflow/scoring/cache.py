"""The item-level score cache: a rerun scores only items whose scores it has never computed.

What is cached is the natural-log probability of every scored token of one item under one
method: the only expensive part. Tokens, offsets and the item-level figures (SLOR, NormLP, …) are
recomputed from the item and the model's tokenizer, so the unigram model need not be in the key.

Layout, one folder per model setting (the content fingerprint of the weights and tokenizer files
or the n-gram file, with kind, dtype and device class):

    DIR/<setting id>/model.json               what the setting is (for `spudflow cache stats`)
    DIR/<setting id>/names/<sha>.json         one marker per model name that used the setting
    DIR/<setting id>/seg-<seq>-<uuid>.parquet entries a job added (cache_files.py)
    DIR/<setting id>/store-<seq>-<uuid>/      compacted entries, read in part (cache_files.py)

An entry's key hashes the method and the item's content: sentence, words with their character
offsets, regions. Nothing else (no item id, dataset, position, batch or shard): the scores do not
depend on those (tests/test_scoring_invariance.py).

Concurrency: segments and stores are written under temporary names and renamed into place (and
the folder synced), so readers see whole files or none; they are never modified, only added, and
removed by compaction once a committed store contains them (cache_upkeep.py). A job killed
mid-write leaves a `.tmp-*` file that no reader opens.

Integrity: every segment carries a checksum of its contents and every store entry one of its
own (cache_files.py). A segment that fails its check is not read, an entry that fails its check
is not served: either is a miss (its items are scored again), with a warning, until `spudflow
cache verify` removes it. A store removed while a job reads it (on
NFS, by a compaction on another node, the open file goes too) makes the lookup list the folder
again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from spudflow.core.logs import get_logger
from spudflow.scoring.cache_files import (
    DAMAGED,
    TMP_PREFIX,
    BrokenStore,
    Corrupt,
    Entries,
    StoreReader,
    key_prefix,
    list_folder,
    read_segment,
    remove,
    still_live,
    write_atomically,
    write_segment,
)
from spudflow.scoring.cache_marker import setting_folders
from spudflow.scoring.cache_setting import Setting, build_setting
from spudflow.scoring.cache_upkeep import COMPACT_AFTER, compact, is_torn, verify
from spudflow.scoring.file_hashes import MEMO_FILE, FileHashes
from spudflow.scoring.items import Item

log = get_logger(__name__)

SETTING_FILE = "model.json"
NAMES_DIR = "names"
# Lookups of one block tried against a fresh listing when stores vanish while they are read.
READ_TRIES = 3


def item_key(method: str, item: Item) -> bytes:
    """SHA-256 of the method and everything of the item that can change its token scores."""
    content = [method, item.sentence, list(item.words), list(item.word_starts),
               list(item.word_ends), [[r.name, r.start, r.end] for r in item.regions]]
    return hashlib.sha256(json.dumps(content, ensure_ascii=False).encode()).digest()


def open_cache(cache_dir: Path, scorer, *, model: str, gguf_file: str | None, kind: str,
               name: str, trust_remote_code: bool, compact_after: int,
               sentence_end: bool = False, revision: str | None = None) -> ScoreCache | None:
    """The score cache of this model setting, or None (with a warning) when the model's files
    cannot be fingerprinted (a hub id missing from huggingface_hub's cache)."""
    hashes = FileHashes(Path(cache_dir) / MEMO_FILE)
    setting = build_setting(scorer, model=model, gguf_file=gguf_file, kind=kind, name=name,
                            trust_remote_code=trust_remote_code, hashes=hashes,
                            sentence_end=sentence_end, revision=revision)
    if setting is None:
        return None
    log.info("cache: setting %s (%s, %d files, %d hashed)", setting.id(), setting.source,
             len(setting.files), hashes.hashed)
    return ScoreCache(Path(cache_dir), setting, compact_after)


class ScoreCache:
    """One setting's entries: lookup reads the stores and segments present when the job first
    looked (segments other jobs add later are not seen: their items are scored again, which
    gives the same scores); store adds a segment per call, and compacts when there are more
    than `compact_after` live segments (0: never). A failed write is logged once and the job
    goes on without storing: the cache is an optimisation, never a reason to fail."""

    def __init__(self, root: Path, setting: Setting, compact_after: int = COMPACT_AFTER):
        self.root = Path(root)
        self.setting = setting
        self.folder = self.root / setting.id()
        self.compact_after = compact_after
        self.hits = 0
        self.computed = 0
        self._sources: list[Entries | StoreReader] | None = None
        self._stored: dict[bytes, np.ndarray] = {}  # this job's new entries
        self._writable = True
        self._registered = False

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached scores of those keys that have an entry (the newest copy of each)."""
        self._register()
        found = {key: self._stored[key] for key in set(keys) if key in self._stored}
        rest = sorted(set(keys) - found.keys())
        if not rest:
            return found
        for _ in range(READ_TRIES):
            try:
                return found | self._find(rest)
            except (OSError, BrokenStore) as error:
                # A store read in part was removed by another job's compaction: on NFS the open
                # file is gone from under this node (ESTALE). Its entries are in the store that
                # replaced it: list the folder again.
                log.info("cache: a store went away while read (%s); listing the cache again",
                         error)
                self._sources = None
        log.warning("cache: stores keep failing to read; scoring these items again")
        return found

    def _find(self, rest: list[bytes]) -> dict[bytes, np.ndarray]:
        wanted = np.frombuffer(b"".join(rest), dtype=np.uint8).reshape(-1, 32)
        prefix = key_prefix(wanted)
        best: list[tuple[int, np.ndarray] | None] = [None] * len(rest)
        for source in self._open_sources():  # in precedence order: the last of equal seqs wins
            rows = source.find(wanted, prefix)
            corrupt = 0
            for i in np.flatnonzero(rows >= 0):
                try:
                    seq, scores = source.entry(int(rows[i]), rest[i])
                except Corrupt:  # never served: another copy, or a miss
                    corrupt += 1
                    continue
                if best[i] is None or seq >= best[i][0]:
                    best[i] = (seq, scores)
            if corrupt:
                log.warning("cache: %d entries of %s do not match their checksums: scored "
                            "again; `spudflow cache verify` removes them", corrupt,
                            getattr(source, "store", source))
        return {key: hit[1] for key, hit in zip(rest, best, strict=True) if hit is not None}

    def _open_sources(self) -> list[Entries | StoreReader]:
        """The live stores (read in part) and segments (read whole: they are few and small),
        listed again when a compaction removed one between listing and opening it."""
        while self._sources is None:
            listing = list_folder(self.folder)
            for path in listing.broken:
                log.warning("cache: unreadable store %s left alone; `spudflow cache verify` "
                            "removes it", path)
            sources = []
            try:
                for path in listing.stores:
                    sources.append(self._open(StoreReader, path))
                for path in listing.segments:
                    sources.append(self._open(read_segment, path))
            except FileNotFoundError:
                continue
            self._sources = [s for s in sources if s is not None]
        return self._sources

    def _open(self, reader, path: Path) -> Entries | StoreReader | None:
        try:
            return reader(path)
        except FileNotFoundError as error:
            if not still_live(self.folder, path):
                raise  # removed by a compaction meanwhile: list again
            log.warning("cache: store %s lacks a file (%s): its entries are misses; `spudflow "
                        "cache verify` removes it", path, error.filename or error)
            return None
        except DAMAGED as error:  # torn, or not matching its checksum: a miss
            log.warning("cache: unreadable segment %s left alone (%s); `spudflow cache verify` "
                        "removes it", path, error)
            return None

    def store(self, entries: dict[bytes, np.ndarray]) -> None:
        """Add the entries as one new segment (atomic: whole or not at all)."""
        self._stored.update(entries)
        self._register()
        if not entries or not self._writable:
            return
        try:
            write_segment(self.folder, entries)
            if self.compact_after and len(list_folder(self.folder).segments) > self.compact_after:
                done = compact(self.folder, everything=False)
                if done:
                    log.info("cache: compacted %d segments and %d stores into %s (%d entries)",
                             done.segments, done.stores, done.store.name, done.entries)
        except OSError as error:
            self._failed(error)

    def _failed(self, error: OSError) -> None:
        self._writable = False
        log.warning("cache: cannot write to %s (%s); this job goes on without storing its "
                    "scores in the cache", self.folder, error)

    def _register(self) -> None:
        """Once per job, before its first lookup: the folder, model.json (what the setting
        is) and a marker for the job's model name, so that prune keeps the setting for every
        name that uses it (each job adds its own file: concurrent jobs lose none)."""
        if self._registered or not self._writable:
            return
        self._registered = True
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._write_setting()
        except OSError as error:
            self._failed(error)

    def _write_setting(self) -> None:
        path = self.folder / SETTING_FILE
        if not path.is_file():
            text = json.dumps(vars(self.setting), indent=1, sort_keys=True) + "\n"
            write_atomically(path, text.encode(), self.folder)
        marker = self.folder / NAMES_DIR / f"{_name_digest(self.setting.name)}.json"
        if not marker.is_file():
            marker.parent.mkdir(exist_ok=True)
            write_atomically(marker, json.dumps({"name": self.setting.name}).encode() + b"\n",
                             self.folder)


def _name_digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def setting_names(folder: Path) -> list[str]:
    """Every model name that used the setting: model.json's and the name markers'."""
    names = {_read_json(folder / SETTING_FILE).get("name")}
    names |= {_read_json(p).get("name") for p in (folder / NAMES_DIR).glob("*.json")}
    return sorted(n for n in names if isinstance(n, str))


STATS_COLUMNS = ["model", "kind", "dtype", "device", "id", "entries", "segments", "stores",
                 "torn", "bytes"]


def cache_stats(root: Path) -> list[dict]:
    """Per setting: its model names (comma-separated), kind, dtype, device, id, entries (of
    live stores and segments; a key stored twice counts twice until compaction), live segments
    and stores, torn segments (`cache verify` removes them) and bytes."""
    rows = []
    for folder in setting_folders(Path(root)):
        setting = _read_json(folder / SETTING_FILE)
        listing = list_folder(folder)
        torn = [s for s in listing.segments if is_torn(s)]
        whole = [s for s in listing.segments if s not in torn]
        entries = sum(_rows(s) for s in whole)
        entries += sum(int(listing.contents[s.name].get("entries", 0)) for s in listing.stores)
        rows.append({"model": ",".join(setting_names(folder)), "kind": setting.get("kind"),
                     "dtype": setting.get("dtype"), "device": setting.get("device_class"),
                     "id": folder.name, "entries": entries, "segments": len(whole),
                     "stores": len(listing.stores), "torn": len(torn) + len(listing.broken),
                     "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())})
    return rows


def _rows(segment: Path) -> int:
    try:
        return pq.read_metadata(segment).num_rows
    except OSError:  # removed meanwhile
        return 0


# A temporary file older than this is a killed write's, not one in progress.
STALE_SECONDS = 3600


def prune_cache(root: Path, keep_models: Sequence[str]) -> list[str]:
    """Remove every setting none of whose model names (nor its id) is in keep_models; in the
    kept ones, torn segments and leftovers of killed writes; the same for the dequantized GGUF
    weights (gguf_cache.py). Returns the removed setting ids and GGUF entry keys."""
    import shutil
    import time

    from spudflow.scoring.gguf_cache import prune_entries

    removed = []
    for folder in setting_folders(Path(root)):
        if folder.name in keep_models or set(setting_names(folder)) & set(keep_models):
            for leftover in folder.glob(f"{TMP_PREFIX}*"):
                stale = time.time() - leftover.lstat().st_mtime > STALE_SECONDS
                if stale and not leftover.is_symlink():
                    remove(leftover)
            verify(folder)
            continue
        shutil.rmtree(folder)
        removed.append(folder.name)
    return removed + prune_entries(root, keep_models, STALE_SECONDS)


def _read_json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
