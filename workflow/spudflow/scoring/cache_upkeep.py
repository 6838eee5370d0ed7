"""Upkeep of a setting's score cache folder: compaction (segments and stores merged into one
store) and verification (torn segments and entries that fail their checksums removed). Both
are safe while jobs read and write: a merged input is removed only after the store that
contains it was renamed into place, and a reader that finds a file gone lists the folder again
(cache_files.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from spudflow.core.logs import get_logger
from spudflow.scoring.cache_files import (
    DAMAGED,
    BrokenStore,
    CorruptSources,
    Entries,
    StoreGone,
    list_folder,
    open_store,
    read_contents,
    read_segment,
    remove,
    still_live,
    store_faults,
    write_store,
)

log = get_logger(__name__)

# Automatic compaction starts when a setting has more live segments than this.
COMPACT_AFTER = 64


@dataclass
class Compaction:
    store: Path
    entries: int
    segments: int   # segments merged
    stores: int     # stores merged


def compact(folder: Path, everything: bool = True) -> Compaction | None:
    """Merge the folder's live segments, and its live stores (`everything`) or only the stores
    no larger than what is merged so far (automatic compaction: a large store is not rewritten
    for a few new segments, so stores grow in size tiers), into one new store; then remove what
    it contains. None when there is nothing to merge."""
    listing = list_folder(folder)
    segments: list[tuple[Path, Entries]] = []
    for path in listing.segments:
        try:
            segments.append((path, read_segment(path)))
        except FileNotFoundError:   # contained by another compaction meanwhile
            continue
        except DAMAGED as error:  # torn or corrupt: left to `cache verify`
            log.warning("cache: unreadable segment %s not compacted (%s)", path, error)
    stores: list[tuple[Path, Entries]] = []
    for path in listing.stores:
        try:
            stores.append((path, open_store(path)))
        except FileNotFoundError:
            continue
        except DAMAGED as error:
            log.warning("cache: unreadable store %s not compacted (%s)", path, error)
    if not everything:
        stores = _tiers(stores, sum(len(entries) for _, entries in segments))
    # The command turns even one segment into a store (read in part); a job merges two or more.
    worth_it = (segments or len(stores) > 1) if everything else len(segments) + len(stores) > 1
    if not worth_it and not listing.contained:
        return None
    merged = stores + segments  # precedence order among equal seqs: stores, then segments
    if merged:
        contents = {"segments": [p.name for p, _ in segments],
                    "stores": [p.name for p, _ in stores]}
        try:
            store = write_store(folder, [entries for _, entries in merged], contents)
        except CorruptSources as error:  # never copy a flipped bit into a fresh checksum
            for i in error.indexes:
                log.warning("cache: store %s does not match its checksums: not compacted; "
                            "`spudflow cache verify` removes its bad entries", merged[i][0])
            return None
        except (StoreGone, BrokenStore) as error:  # removed by another node's compaction (NFS)
            log.info("cache: compaction left for later, a store went away: %s", error)
            return None
    else:
        store = None
    # What the merged stores contained first, then the merged inputs: whatever a crash leaves
    # is still contained by a committed store, hence skipped by readers.
    for path, _ in stores:
        inner = listing.contents.get(path.name, {})
        for name in inner.get("segments", []) + inner.get("stores", []):
            remove(folder / name)
    for path in listing.contained:
        remove(path)
    for path, _ in merged:
        remove(path)
    if store is None:
        return None
    return Compaction(store, read_contents(store)["entries"], len(segments), len(stores))


def _tiers(stores: list[tuple[Path, Entries]], merging: int) -> list[tuple[Path, Entries]]:
    chosen = []
    for path, entries in sorted(stores, key=lambda s: len(s[1])):
        if len(entries) > merging:
            break
        chosen.append((path, entries))
        merging += len(entries)
    return sorted(chosen)


def verify(folder: Path) -> list[Path]:
    """Remove the folder's torn segments and unreadable stores, segments that do not match their
    checksum, and stores' entries that do not match theirs (the store's good entries are written
    to a new store that contains it); returns the segments and stores removed or rewritten."""
    listing = list_folder(folder)
    torn = list(listing.broken)
    for path in listing.segments:
        try:
            read_segment(path)
        except FileNotFoundError:
            continue
        except DAMAGED as error:
            log.warning("cache: %s", error)
            torn.append(path)
    for path in listing.stores:
        try:
            entries = open_store(path)
            bad, index_damaged = store_faults(path, entries)
        except FileNotFoundError as error:
            if still_live(folder, path):  # not a compaction's: a store that lacks a file
                log.warning("cache: %s lacks %s", path, error.filename or "a file")
                torn.append(path)
            continue
        except DAMAGED as error:
            log.warning("cache: %s", error)
            torn.append(path)
            continue
        if len(bad) or index_damaged:
            _rewrite_without(folder, path, entries, bad, index_damaged)
            torn.append(path)
    torn = [path for path in torn if not path.is_symlink()]  # never a link, nor where it leads
    for path in torn:
        remove(path)
    return torn


def _rewrite_without(folder: Path, path: Path, entries: Entries, bad: np.ndarray,
                     index_damaged: bool) -> None:
    """Write the store's good entries to a new store that contains it (so readers skip it
    from then on); the caller removes it."""
    log.warning("cache: %s: %d of %d entries do not match their checksums%s; removed", path,
                len(bad), len(entries), " and its index is damaged" if index_damaged else "")
    good = np.setdiff1d(np.arange(len(entries)), bad)
    if len(good):
        write_store(folder, [entries], {"segments": [], "stores": [path.name]}, rows=[good])


def is_torn(segment: Path) -> bool:
    """A segment whose Parquet footer cannot be read (a truncated file): cheap, for stats."""
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(segment)
    except FileNotFoundError:
        return False
    except (pa.ArrowInvalid, OSError):
        return True
    return False
