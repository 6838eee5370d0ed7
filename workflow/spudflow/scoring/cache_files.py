"""The files of one setting's score cache folder: segments, compacted stores, and the atomic
writes both use (no locks, no database: only renames of whole files or folders).

    seg-<seq>-<uuid>.parquet   entries a job added: key (32-byte SHA-256), logprob (list<f64>),
                               and in the file's metadata a SHA-256 of them (checked on every read)
    store-<seq>-<uuid>/        a compacted store: the entries of the segments and stores it names
                               in contents.json, sorted by key, one per key, as flat .npy arrays
                               that lookup binary-searches (read only in part), with check.npy:
                               per entry a hash of its key, seq and values, checked on every read

<seq> is the write time in nanoseconds: the newest copy of a key wins (the highest seq; among
equal seqs the later source in name order, stores before segments). Segments of the first layout
(`seg-<uuid>.parquet`) have seq 0. A segment or store named in the contents.json of any store is
contained: readers skip it (the store has its entries), and compaction removes it.

Bytes that do not match their checksum raise Corrupt (a miss for lookup, removed by `cache
verify`): a flipped bit on disk must never be served as a score. Segments and stores written
before the checksums existed have none and count as corrupt (their setting's id changed with
the code anyway, so they are not even looked at).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema([pa.field("key", pa.binary(32), nullable=False),
                    pa.field("logprob", pa.list_(pa.float64()), nullable=False)])
SEGMENT_GLOB = "seg-*.parquet"
STORE_GLOB = "store-*"
CONTENTS = "contents.json"
TMP_PREFIX = ".tmp-"
# Rows gathered at a time while compacting (bounds its index arrays, not the store's size).
GATHER_ROWS = 1 << 18
# One key prefix in this many is kept in memory by lookup (fences.npy): a 2 KB block is read.
FENCE = 256
# A segment's checksum, in its Parquet metadata: SHA-256 of its keys, offsets and values.
SEGMENT_SHA256 = b"spudflow.sha256"
# Rows checked at a time by `cache verify` (bounds the values it holds in memory).
CHECK_ROWS = 1 << 16


def new_name(prefix: str, suffix: str = "") -> str:
    return f"{prefix}-{time.time_ns():020d}-{uuid.uuid4().hex}{suffix}"


def sequence(name: str) -> int:
    """The write time in a segment's or store's name; 0 for a first-layout segment."""
    parts = name.removesuffix(".parquet").split("-")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0


def fsync_dir(folder: Path) -> None:
    """Make the renames in `folder` durable: a crash after this cannot lose them."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def write_atomically(path: Path, data: bytes, tmp_folder: Path) -> None:
    """Write `path` whole or not at all (the temporary file lies in `tmp_folder`, where prune
    finds it if the write is killed)."""
    tmp = tmp_folder / f"{TMP_PREFIX}{uuid.uuid4().hex}{path.suffix}"
    try:
        with tmp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def _write_table(table: pa.Table, path: Path) -> None:
    pq.write_table(table, path, compression="zstd")
    _fsync_file(path)


def write_segment(folder: Path, entries: dict[bytes, np.ndarray]) -> Path:
    keys = sorted(entries)
    values = [np.asarray(entries[k], dtype=np.float64) for k in keys]
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64)
    flat = np.concatenate(values) if values else np.empty(0, dtype=np.float64)
    digest = segment_digest(b"".join(keys), offsets, flat)
    table = pa.table({"key": pa.array(keys, pa.binary(32)),
                      "logprob": pa.array([v.tolist() for v in values],
                                          pa.list_(pa.float64()))},
                     schema=SCHEMA.with_metadata({SEGMENT_SHA256: digest.encode()}))
    tmp = folder / f"{TMP_PREFIX}{uuid.uuid4().hex}.parquet"
    final = folder / new_name("seg", ".parquet")
    try:
        _write_table(table, tmp)
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    fsync_dir(folder)
    return final


def segment_digest(keys: bytes, offsets: np.ndarray, values: np.ndarray) -> str:
    """SHA-256 of a segment's keys (in file order), offsets (from 0) and values, as little-endian
    int64 and float64."""
    digest = hashlib.sha256(keys)
    digest.update(np.ascontiguousarray(offsets, dtype="<i8").tobytes())
    digest.update(np.ascontiguousarray(values, dtype="<f8").tobytes())
    return digest.hexdigest()


def entry_check(key: bytes, seq: int, values: np.ndarray) -> int:
    """A store entry's checksum: the first 8 bytes of BLAKE2b over its key, seq (int64) and
    values (float64), little-endian; where it lies in the store is not hashed (compaction
    moves entries), what lookup reads of it is."""
    digest = hashlib.blake2b(key, digest_size=8)
    digest.update(int(seq).to_bytes(8, "little", signed=True))
    digest.update(np.ascontiguousarray(values, dtype="<f8").tobytes())
    return int.from_bytes(digest.digest(), "little")


def entry_checks(keys: np.ndarray, seq: np.ndarray, offsets: np.ndarray,
                 values: np.ndarray) -> np.ndarray:
    """entry_check of each row (uint64); values are those of offsets[0]:offsets[-1]."""
    key_bytes = np.ascontiguousarray(keys, dtype=np.uint8).tobytes()
    seq_bytes = np.ascontiguousarray(seq, dtype="<i8").tobytes()
    value_bytes = np.ascontiguousarray(values, dtype="<f8").tobytes()
    base = int(offsets[0]) if len(offsets) else 0
    out = np.empty(len(seq), dtype=np.uint64)
    blake2b = hashlib.blake2b
    bounds = (np.asarray(offsets, dtype=np.int64) - base) * 8
    for row in range(len(seq)):
        digest = blake2b(key_bytes[32 * row:32 * row + 32], digest_size=8)
        digest.update(seq_bytes[8 * row:8 * row + 8])
        digest.update(value_bytes[bounds[row]:bounds[row + 1]])
        out[row] = int.from_bytes(digest.digest(), "little")
    return out


def key_prefix(keys: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each (n, 32) uint8 key as an integer: sorting by it sorts the keys."""
    return np.ascontiguousarray(keys[:, :8]).view(">u8").ravel().astype(np.uint64)


@dataclass
class Entries:
    """Entries sorted by key (one per key): keys (n, 32) uint8, their prefixes, offsets (n + 1)
    into the flat values, and each entry's seq. A store's values are read in part."""
    prefix: np.ndarray
    keys: np.ndarray
    offsets: np.ndarray
    values: np.ndarray | StoreValues
    seq: np.ndarray
    check: np.ndarray | None = None  # a store's entry_check per row; None: a segment's entries

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, wanted: np.ndarray, wanted_prefix: np.ndarray) -> np.ndarray:
        """The row of each wanted key, -1 where absent: two binary searches and one key read
        per candidate, so only a few pages of a memory-mapped store are touched."""
        lo = np.searchsorted(self.prefix, wanted_prefix, "left")
        hi = np.searchsorted(self.prefix, wanted_prefix, "right")
        rows = np.full(len(wanted), -1, dtype=np.int64)
        for i in np.flatnonzero(hi > lo):
            for row in range(lo[i], hi[i]):  # more than one only on a shared 8-byte prefix
                if np.array_equal(self.keys[row], wanted[i]):
                    rows[i] = row
                    break
        return rows

    def scores(self, row: int) -> np.ndarray:
        return np.array(self.values[self.offsets[row]:self.offsets[row + 1]], dtype=np.float64)

    def seq_of(self, row: int) -> int:
        return int(self.seq[row])

    def entry(self, row: int, key: bytes) -> tuple[int, np.ndarray]:
        """The row's seq and scores (a segment was checked whole when read)."""
        return self.seq_of(row), self.scores(row)


def open_npy(path: Path) -> tuple[int, int, tuple[int, ...], np.dtype]:
    """An open file descriptor of a .npy file, where its data start, its shape and dtype."""
    with path.open("rb") as handle:
        version = np.lib.format.read_magic(handle)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(handle)
        return os.open(path, os.O_RDONLY), handle.tell(), shape, dtype


class StoreGone(OSError):
    """A store's file went away while it was read: another job's compaction merged and removed
    it (a local file system keeps an open file readable; NFS does not, across nodes: ESTALE)."""


class StoreValues:
    """A store's values.npy as compaction reads it: positioned reads (pread) of the span it
    gathers. A memory map would do the same, but on NFS a page of a file removed by another
    node kills the process (SIGBUS) where a read raises StoreGone."""

    def __init__(self, path: Path):
        self.path = path
        self._fd, self._offset, shape, self.dtype = open_npy(path)
        self.n = shape[0]

    def __del__(self):
        if hasattr(self, "_fd"):
            os.close(self._fd)

    def __len__(self) -> int:
        return self.n

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The values at `positions` (as ndarray.take)."""
        if not len(positions):
            return np.empty(0, dtype=self.dtype)
        first, last = int(positions.min()), int(positions.max())
        size = self.dtype.itemsize
        try:
            data = os.pread(self._fd, size * (last + 1 - first), self._offset + size * first)
        except OSError as error:
            raise StoreGone(error.errno, f"{self.path}: {error.strerror}") from error
        if len(data) != size * (last + 1 - first):
            raise BrokenStore(f"{self.path}: shorter than its header says")
        return np.frombuffer(data, dtype=self.dtype)[positions - first]

    def span(self, begin: int, end: int) -> np.ndarray:
        """values[begin:end]."""
        return self.take(np.arange(begin, end)) if end > begin else np.empty(0, self.dtype)


class StoreReader:
    """A store as lookup reads it: only `fences` (every FENCE-th key prefix) in memory, then
    per wanted key a few positioned reads (pread) of its prefix block, key, seq, offsets and
    values; no memory map, whose readahead would make the whole store resident."""

    def __init__(self, store: Path):
        self.store = store
        self.n = 0
        self.fences = np.load(store / "fences.npy")
        self._files = {}
        if not (store / "check.npy").is_file() and (store / CONTENTS).is_file():
            raise Corrupt(f"{store}: no check.npy (written before stores had checksums)")
        for name in ("prefix", "keys", "offsets", "values", "seq", "check"):
            fd, offset, shape, dtype = open_npy(store / f"{name}.npy")
            self._files[name] = (fd, offset, dtype, int(np.prod(shape)))
            if name == "seq":
                self.n = shape[0]

    def __del__(self):
        for fd, *_ in getattr(self, "_files", {}).values():
            os.close(fd)

    def _read(self, name: str, start: int, count: int, width: int = 1) -> np.ndarray:
        fd, offset, dtype, elements = self._files[name]
        if start < 0 or count < 0 or (start + count) * width > elements:
            raise Corrupt(f"{self.store / name}.npy: a read outside it ({start}, {count})")
        size = dtype.itemsize * width
        data = os.pread(fd, size * count, offset + size * start)
        if len(data) != size * count:
            raise BrokenStore(f"{self.store / name}.npy: shorter than its header says")
        return np.frombuffer(data, dtype=dtype)

    def find(self, wanted: np.ndarray, wanted_prefix: np.ndarray) -> np.ndarray:
        first = np.maximum(np.searchsorted(self.fences, wanted_prefix, "left") - 1, 0)
        last = np.searchsorted(self.fences, wanted_prefix, "right")
        rows = np.full(len(wanted), -1, dtype=np.int64)
        for i, (lo_block, hi_block) in enumerate(zip(first, last, strict=True)):
            start = int(lo_block) * FENCE
            stop = min(int(hi_block) * FENCE, self.n)
            block = self._read("prefix", start, stop - start)
            lo = start + int(np.searchsorted(block, wanted_prefix[i], "left"))
            hi = start + int(np.searchsorted(block, wanted_prefix[i], "right"))
            for row in range(lo, hi):
                if self._read("keys", row, 1, 32).tobytes() == wanted[i].tobytes():
                    rows[i] = row
                    break
        return rows

    def seq_of(self, row: int) -> int:
        return int(self._read("seq", row, 1)[0])

    def scores(self, row: int) -> np.ndarray:
        begin, end = self._read("offsets", row, 2)
        return self._read("values", int(begin), int(end - begin)).astype(np.float64)

    def entry(self, row: int, key: bytes) -> tuple[int, np.ndarray]:
        """The row's seq and scores, checked against check.npy (the row's key matched `key`):
        Corrupt when they differ."""
        seq, scores = self.seq_of(row), self.scores(row)
        if entry_check(key, seq, scores) != int(self._read("check", row, 1)[0]):
            raise Corrupt(f"{self.store}: entry {row} does not match its checksum")
        return seq, scores


def sorted_entries(keys: np.ndarray, seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, prefix): the rows to keep in key order, one per key: the highest seq, and among
    equal seqs the later row."""
    words = np.ascontiguousarray(keys).view(">u8").astype(np.uint64)
    order = np.lexsort((seq, words[:, 3], words[:, 2], words[:, 1], words[:, 0]))
    ordered = words[order]
    last = np.append(np.any(ordered[1:] != ordered[:-1], axis=1), True)
    return order[last], ordered[last, 0]


def read_segment(path: Path) -> Entries:
    """A segment's entries; FileNotFoundError when it is gone, ArrowInvalid/OSError when torn,
    Corrupt when its bytes do not match its checksum (or it has none)."""
    with pq.ParquetFile(path) as handle:
        table = handle.read()
    expected = (table.schema.metadata or {}).get(SEGMENT_SHA256)
    if expected is None:
        raise Corrupt(f"{path}: no checksum (written before segments had one)")
    if not table.schema.equals(SCHEMA):
        raise Corrupt(f"{path}: not a segment's columns")
    keys = table.column("key").combine_chunks()
    logprob = table.column("logprob").combine_chunks()
    if keys.null_count or logprob.null_count:
        raise Corrupt(f"{path}: null entries")
    key_bytes = np.frombuffer(keys.buffers()[1], dtype=np.uint8)
    key_bytes = key_bytes[keys.offset * 32:(keys.offset + len(keys)) * 32].reshape(-1, 32)
    offsets = logprob.offsets.to_numpy().astype(np.int64)
    values = logprob.values.to_numpy(zero_copy_only=False)
    values, offsets = values[offsets[0]:offsets[-1]], offsets - offsets[0]
    if segment_digest(key_bytes.tobytes(), offsets, values) != expected.decode(errors="replace"):
        raise Corrupt(f"{path}: does not match its checksum")
    seq = np.full(len(keys), sequence(path.name), dtype=np.int64)
    order, prefix = sorted_entries(key_bytes, seq)
    starts, lengths = offsets[order], offsets[order + 1] - offsets[order]
    new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    index = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return Entries(prefix, key_bytes[order], new_offsets, values[index], seq[order])


class BrokenStore(ValueError):
    pass


class Corrupt(BrokenStore):
    """Bytes of a segment or store that do not match their checksum."""


# What reading a damaged segment or store can raise: a flipped bit in a Parquet footer or a .npy
# header can ask for absurd sizes (OverflowError, MemoryError) before any checksum is looked at.
DAMAGED = (pa.ArrowException, ValueError, OverflowError, MemoryError, OSError)


def read_contents(store: Path) -> dict:
    """A store's contents.json: FileNotFoundError when it is gone, BrokenStore when unreadable."""
    try:
        contents = json.loads((store / CONTENTS).read_text())
    except ValueError as error:
        raise BrokenStore(f"{store / CONTENTS}: {error}") from None
    if not isinstance(contents, dict) or not isinstance(contents.get("segments"), list):
        raise BrokenStore(f"{store / CONTENTS}: not a store's contents")
    return contents


def open_store(store: Path) -> Entries:
    """A store as compaction and `cache verify` read it: its keys, prefixes, offsets and seqs
    whole (compaction reads them all), its values in part (StoreValues); no memory map."""
    if not (store / "check.npy").is_file() and (store / CONTENTS).is_file():
        raise Corrupt(f"{store}: no check.npy (written before stores had checksums)")
    arrays = {name: np.load(store / f"{name}.npy")
              for name in ("prefix", "keys", "offsets", "seq", "check")}
    np.load(store / "fences.npy")
    entries = Entries(**arrays, values=StoreValues(store / "values.npy"))
    n = len(entries.keys)
    if (entries.keys.shape != (n, 32) or len(entries.prefix) != n or len(entries.seq) != n
            or len(entries.check) != n or len(entries.offsets) != n + 1
            or entries.offsets[-1] != len(entries.values)):
        raise BrokenStore(f"{store}: arrays of different lengths")
    return entries


def store_faults(store: Path, entries: Entries) -> tuple[np.ndarray, bool]:
    """(rows whose entry does not match its checksum, whether the index is damaged: prefix or
    fences.npy not those of the keys, keys out of order, offsets decreasing), reading the whole
    store CHECK_ROWS entries at a time."""
    bad = []
    offsets = np.asarray(entries.offsets)
    for start in range(0, len(entries), CHECK_ROWS):
        stop = min(start + CHECK_ROWS, len(entries))
        span = offsets[start:stop + 1]
        if np.any(np.diff(span) < 0) or span[0] < 0:
            return np.arange(len(entries)), True
        values = entries.values.span(int(span[0]), int(span[-1]))
        checks = entry_checks(entries.keys[start:stop], entries.seq[start:stop], span, values)
        bad.append(start + np.flatnonzero(checks != entries.check[start:stop]))
    prefix = key_prefix(entries.keys) if len(entries) else np.empty(0, np.uint64)
    index_ok = (np.array_equal(prefix, entries.prefix)
                and np.array_equal(np.load(store / "fences.npy"), prefix[::FENCE])
                and bool(np.all(prefix[1:] >= prefix[:-1])))
    return np.concatenate(bad) if bad else np.empty(0, np.int64), not index_ok


@dataclass
class Listing:
    """What a setting's folder holds now: live stores and segments (to read), and contained
    ones (left behind by a compaction that was killed before removing them)."""
    stores: list[Path]
    segments: list[Path]
    contained: list[Path]
    broken: list[Path]
    contents: dict[str, dict]


def list_folder(folder: Path) -> Listing:
    stores, contents, broken = [], {}, []
    for store in sorted(folder.glob(STORE_GLOB)) if folder.is_dir() else []:
        try:
            contents[store.name] = read_contents(store)
            stores.append(store)
        except FileNotFoundError:  # removed by a compaction meanwhile
            continue
        except (BrokenStore, OSError):
            broken.append(store)
    inner_stores = {name for c in contents.values() for name in c.get("stores", [])}
    inner_segments = {name for c in contents.values() for name in c["segments"]}
    segments = sorted(folder.glob(SEGMENT_GLOB)) if folder.is_dir() else []
    return Listing(stores=[s for s in stores if s.name not in inner_stores],
                   segments=[s for s in segments if s.name not in inner_segments],
                   contained=[s for s in stores if s.name in inner_stores]
                   + [s for s in segments if s.name in inner_segments],
                   broken=broken, contents=contents)


def still_live(folder: Path, source: Path) -> bool:
    """Whether SOURCE, a store or segment of FOLDER that a reader found a file of missing, is
    still live in a fresh listing. A compaction puts the store that contains what it merged in
    place before it removes them, so a source it removed is gone or contained (list again); a
    live one that lacks a file (values.npy deleted) is damaged, and listing again would find
    it again for ever."""
    listing = list_folder(folder)
    return source in listing.stores or source in listing.segments


class CorruptSources(BrokenStore):
    """Sources whose entries did not match their checksums while they were merged."""

    def __init__(self, indexes: list[int]):
        super().__init__(f"sources {indexes} do not match their checksums")
        self.indexes = indexes


def write_store(folder: Path, sources: list[Entries], contents: dict,
                rows: list[np.ndarray] | None = None) -> Path:
    """Merge the sources (in precedence order; only their `rows` when given) into a new store,
    committed by renaming its folder into place; returns it. Each entry's checksum is computed
    from what was written; CorruptSources (nothing committed) when one taken from a store does
    not match the store's."""
    rows = rows if rows is not None else [np.arange(len(s), dtype=np.int64) for s in sources]
    keys = np.concatenate([np.asarray(s.keys)[r] for s, r in zip(sources, rows, strict=True)])
    seq = np.concatenate([np.asarray(s.seq)[r] for s, r in zip(sources, rows, strict=True)])
    source_of = np.concatenate([np.full(len(r), i, dtype=np.int32) for i, r in enumerate(rows)])
    row_of = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows])
    lengths = np.concatenate([np.diff(np.asarray(s.offsets))[r]
                              for s, r in zip(sources, rows, strict=True)])
    order, prefix = sorted_entries(keys, seq)
    keys, seq, source_of, row_of = keys[order], seq[order], source_of[order], row_of[order]
    lengths = lengths[order]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    tmp = folder / f"{TMP_PREFIX}{uuid.uuid4().hex}"
    final = folder / new_name("store")
    tmp.mkdir()
    try:
        for name, array in (("prefix", prefix), ("keys", keys), ("offsets", offsets),
                            ("seq", seq)):
            np.save(tmp / f"{name}.npy", array)
        np.save(tmp / "fences.npy", prefix[::FENCE])
        values = np.lib.format.open_memmap(tmp / "values.npy", mode="w+", dtype=np.float64,
                                           shape=(int(offsets[-1]),))
        _gather(values, offsets, sources, source_of, row_of)
        values.flush()
        check = entry_checks(keys, seq, offsets, values)
        del values
        _compare_checks(check, sources, source_of, row_of)
        np.save(tmp / "check.npy", check)
        contents = {**contents, "entries": len(order)}
        (tmp / CONTENTS).write_text(json.dumps(contents, indent=1, sort_keys=True) + "\n")
        for path in tmp.iterdir():
            _fsync_file(path)
        fsync_dir(tmp)
        os.rename(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fsync_dir(folder)
    return final


def _compare_checks(check: np.ndarray, sources: list[Entries], source_of: np.ndarray,
                    row_of: np.ndarray) -> None:
    """Raise CorruptSources when an entry copied from a store differs from what its store's
    check.npy says it was."""
    bad = []
    for i, source in enumerate(sources):
        if source.check is None:
            continue
        pick = source_of == i
        if np.any(check[pick] != np.asarray(source.check)[row_of[pick]]):
            bad.append(i)
    if bad:
        raise CorruptSources(bad)


def _gather(out: np.ndarray, offsets: np.ndarray, sources: list[Entries],
            source_of: np.ndarray, row_of: np.ndarray) -> None:
    """Copy each output row's values from its source, GATHER_ROWS rows at a time."""
    for start in range(0, len(row_of), GATHER_ROWS):
        stop = min(start + GATHER_ROWS, len(row_of))
        for i in np.unique(source_of[start:stop]):
            pick = start + np.flatnonzero(source_of[start:stop] == i)
            source = sources[i]
            begins = np.asarray(source.offsets[row_of[pick]])
            lengths = np.asarray(source.offsets[row_of[pick] + 1]) - begins
            within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            out[np.repeat(offsets[pick], lengths) + within] = \
                source.values.take(np.repeat(begins, lengths) + within)


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
