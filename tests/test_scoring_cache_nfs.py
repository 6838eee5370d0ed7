"""The score cache on a file system shared by nodes (NFS): a store that another node's compaction
merges and removes is gone from under a job that has it open (reads fail with ESTALE, pages of a
memory map with SIGBUS). A lookup then lists the folder again and finds the entries in the store
that replaced it; a compaction that was merging it is left for later. Neither stops the job.
(A local file system keeps an open file readable, so these tests make the reads fail.)"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import numpy as np
from test_scoring_cache_upkeep import a_cache, entries

from spudflow.scoring.cache_files import list_folder
from spudflow.scoring.cache_upkeep import compact


def stale(monkeypatch, gone) -> None:
    """Positioned reads of the files of the store `gone` fail as on NFS after its removal."""
    real_pread = os.pread

    def pread(fd, size, offset):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(f"{gone}/"):
            raise OSError(errno.ESTALE, os.strerror(errno.ESTALE))
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", pread)


def compacted_cache(tmp_path):
    """(a cache of 4 entries compacted into one store, those entries, that store)."""
    cache = a_cache(tmp_path, compact_after=0)
    part = entries(4, 0)
    cache.store(part)
    assert compact(cache.folder)
    (store,) = list_folder(cache.folder).stores
    return cache, part, store


def test_a_lookup_whose_store_another_node_removed_lists_the_cache_again(tmp_path, monkeypatch):
    cache, part, old = compacted_cache(tmp_path)
    reader = a_cache(tmp_path)
    first = next(iter(part))
    assert np.array_equal(reader.lookup([first])[first], part[first])  # the store is open
    cache.store(entries(2, 1))
    assert compact(cache.folder)  # another node merges it into a new store and removes it
    assert not old.exists()
    stale(monkeypatch, old)
    found = reader.lookup(list(part))
    assert found.keys() == part.keys()
    assert all(np.array_equal(found[k], v) for k, v in part.items())


def test_a_compaction_whose_store_another_node_removed_is_left_for_later(tmp_path, monkeypatch):
    cache, part, store = compacted_cache(tmp_path)
    cache.store(entries(2, 1))
    before = sorted(p.name for p in cache.folder.iterdir())
    stale(monkeypatch, store)
    assert compact(cache.folder) is None
    assert sorted(p.name for p in cache.folder.iterdir()) == before  # nothing half-done
    monkeypatch.undo()
    found = a_cache(tmp_path).lookup(list(part))
    assert all(np.array_equal(found[k], v) for k, v in part.items())


COMPACT_WHILE_TRUNCATED = """
import sys
from pathlib import Path
from spudflow.scoring import cache_files
from spudflow.scoring.cache_upkeep import compact

store = Path(sys.argv[2])
gather = cache_files._gather

def vanishing(out, offsets, sources, source_of, row_of):
    # what another node's removal looks like to a reader with the file open: no data
    (store / "values.npy").open("r+b").truncate(0)
    gather(out, offsets, sources, source_of, row_of)

cache_files._gather = vanishing
print(compact(Path(sys.argv[1])))
"""


def test_a_compaction_reads_stores_without_a_memory_map(tmp_path):
    """A memory-mapped store whose file shrinks or goes away under the map kills the reader with
    SIGBUS, beyond any except: the compaction must read with plain reads."""
    cache = a_cache(tmp_path, compact_after=0)
    cache.store(entries(300, 0, length=40))
    assert compact(cache.folder)
    (store,) = list_folder(cache.folder).stores
    cache.store(entries(2, 1))
    result = subprocess.run([sys.executable, "-c", COMPACT_WHILE_TRUNCATED, str(cache.folder),
                             str(store)], capture_output=True, text=True)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.strip() == "None"

