"""The score cache's storage, failures and upkeep: a failed cache write never fails
the job; prune keeps a setting any of whose names is kept; torn segments are counted, verified
away and then no longer warned about; compaction (by command, by a job, racing another) keeps
every entry, the newest copy of a key wins; renames are made durable by syncing the folder."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

import numpy as np
import pytest
from scoring_models import tiny_model_dir
from test_scoring_cache import MIXED, _score_command, _spudflow, n_scorable, same_tables, score
from test_scoring_cli import write_items

from spudflow.scoring import cache_files, cache_upkeep
from spudflow.scoring.cache import ScoreCache, cache_stats
from spudflow.scoring.cache_files import (
    SEGMENT_GLOB,
    STORE_GLOB,
    list_folder,
    read_segment,
    write_segment,
    write_store,
)
from spudflow.scoring.cache_upkeep import compact


@pytest.fixture
def items(tmp_path):
    return write_items(tmp_path / "items.parquet", MIXED)


def score_args(items, out, cache, *extra, name="m"):
    return ["score", items, "--model", tiny_model_dir("causal", "bytebpe"), "--kind", "causal",
            "--method", "ppl", "--out", out, "--name", name, "--device", "cpu", "--threads",
            "1", "--cache", cache, *extra]


@dataclass(frozen=True)
class StubSetting:
    """What the cache uses of a model setting (scoring/cache.py's Setting): name, id, fields."""
    name: str
    kind: str = "causal"

    def id(self) -> str:
        return "5e771e6000000000000000ab"  # a setting id's shape: 24 hex digits


def setting_folder(cache):
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    return folder


# 5. A failed cache write: one warning, the job's tables, exit 0, no further attempts.

@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_failed_cache_write_warns_once_and_the_job_succeeds(tmp_path, items, run_cli, caplog,
                                                              monkeypatch, code):
    caplog.set_level("INFO")
    score(items, tmp_path / "cold", None)
    attempts = []

    def failing_write(*args, **kwargs):
        attempts.append(args)
        raise OSError(code, os.strerror(code))

    # disk full while writing a segment; a read-only file system at the first write (model.json)
    from spudflow.scoring import cache as cache_module

    if code == errno.ENOSPC:
        monkeypatch.setattr(cache_files, "_write_table", failing_write)
    else:
        monkeypatch.setattr(cache_module, "write_atomically", failing_write)
    cache = tmp_path / "cache"
    status, _, err = run_cli(*score_args(items, tmp_path / "out", cache, "--block-size", 3))
    assert status == 0, err
    assert same_tables(tmp_path / "cold", tmp_path / "out")
    warnings = [r.getMessage() for r in caplog.records if "cannot write" in r.getMessage()]
    assert len(warnings) == 1 and os.strerror(code) in warnings[0]
    assert str(cache) in warnings[0]
    assert len(attempts) == 1  # 4 blocks, one attempt
    assert "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_cache_folder_is_used_for_reading_only(tmp_path, items, run_cli, caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    score(items, tmp_path / "first", cache)
    for path in [cache, *cache.rglob("*")]:
        if path.is_dir():
            path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        status, _, err = run_cli(*score_args(items, tmp_path / "second", cache, "--method",
                                             "ppl,ppl_region"))
    finally:
        for path in [cache, *cache.rglob("*")]:
            if path.is_dir():
                path.chmod(stat.S_IRWXU)
    assert status == 0, err
    assert sum("cannot write" in r.getMessage() for r in caplog.records) == 1


# 6. Prune by setting: every name that used it counts.

def test_prune_keeps_a_setting_shared_by_two_names(tmp_path, items, run_cli):
    cache = tmp_path / "cache"
    for name in ("A", "B"):
        assert run_cli(*score_args(items, tmp_path / name, cache, "--method", "ppl_region",
                                   name=name))[0] == 0
    folder = setting_folder(cache)
    assert [r["model"] for r in cache_stats(cache)] == ["A,B"]
    status, _, _ = run_cli("cache", "prune", cache, "--keep-models", "B")
    assert status == 0 and folder.is_dir()
    assert run_cli("cache", "prune", cache, "--keep-models", "C")[0] == 0
    assert not folder.exists()


def test_concurrent_names_are_all_recorded(tmp_path):
    caches = [ScoreCache(tmp_path, StubSetting(n)) for n in ("x", "y", "z")]
    for k, cache in enumerate(caches):  # each adds its marker; none rewrites another's
        cache.store({bytes([k]) * 32: np.array([-1.0])})
    assert [r["model"] for r in cache_stats(tmp_path)] == ["x,y,z"]


# 7. Torn segments: counted by stats, removed by verify (and prune), then never warned about.

def test_torn_segments_are_counted_verified_away_and_then_quiet(tmp_path, items, run_cli,
                                                                caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    assert run_cli(*score_args(items, tmp_path / "first", cache, "--block-size", 6))[0] == 0
    folder = setting_folder(cache)
    torn, whole = sorted(folder.glob(SEGMENT_GLOB))
    torn.write_bytes(torn.read_bytes()[:100])
    status, out, err = run_cli("cache", "stats", cache)
    assert status == 0, err
    header, row = out.splitlines()
    stats = dict(zip(header.split("\t"), row.split("\t"), strict=True))
    assert (stats["segments"], stats["torn"]) == ("1", "1")
    status, out, _ = run_cli("cache", "verify", cache)
    assert status == 0 and out.splitlines() == [str(torn)]
    assert sorted(folder.glob(SEGMENT_GLOB)) == [whole]
    caplog.clear()
    assert run_cli(*score_args(items, tmp_path / "second", cache))[0] == 0
    assert "unreadable" not in caplog.text
    assert same_tables(tmp_path / "first", tmp_path / "second")


def test_prune_removes_torn_segments_of_kept_settings(tmp_path, items, run_cli):
    cache = tmp_path / "cache"
    assert run_cli(*score_args(items, tmp_path / "first", cache))[0] == 0
    (segment,) = setting_folder(cache).glob(SEGMENT_GLOB)
    segment.write_bytes(segment.read_bytes()[:50])
    assert run_cli("cache", "prune", cache, "--keep-models", "m")[0] == 0
    assert not segment.exists() and setting_folder(cache).is_dir()


# 8. Compaction and the partly read index.

def entries(n, seed, length=3):
    rng = np.random.default_rng(seed)
    return {rng.bytes(32): rng.normal(size=length) for _ in range(n)}


def a_cache(root, **kwargs):
    return ScoreCache(root, StubSetting("m"), **kwargs)


def test_the_newest_copy_of_a_key_wins_before_and_after_compaction(tmp_path):
    key = b"k" * 32
    writer = a_cache(tmp_path, compact_after=0)
    writer.store({key: np.array([-1.0, -2.0]), **entries(5, 0)})
    writer.store({key: np.array([-1.0, -2.0, -3.0])})  # rescored: a new length
    # a first-layout segment (no write time: the oldest) with a third copy
    write_segment(writer.folder, {key: np.array([-9.0])}).rename(writer.folder / "seg-old.parquet")
    assert list(a_cache(tmp_path).lookup([key])[key]) == [-1.0, -2.0, -3.0]
    done = compact(writer.folder)
    assert (done.segments, done.stores, done.entries) == (3, 0, 6)
    assert sorted(p.name for p in writer.folder.iterdir()) == [
        "model.json", "names", done.store.name]
    assert list(a_cache(tmp_path).lookup([key])[key]) == [-1.0, -2.0, -3.0]


def test_compact_command_gives_one_store_and_the_same_tables(tmp_path, items, run_cli, caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    assert run_cli(*score_args(items, tmp_path / "first", cache, "--block-size", 3, "--method",
                               "ppl,ppl_region"))[0] == 0
    folder = setting_folder(cache)
    assert len(list(folder.glob(SEGMENT_GLOB))) == 8
    assert run_cli("cache", "compact", cache)[0] == 0
    assert not list(folder.glob(SEGMENT_GLOB)) and len(list(folder.glob(STORE_GLOB))) == 1
    n = n_scorable(tmp_path / "first")
    assert score(items, tmp_path / "second", cache, "--block-size", 3, method="ppl,ppl_region",
                 caplog=caplog) == (2 * n, 0)
    assert same_tables(tmp_path / "first", tmp_path / "second")


def test_a_job_compacts_past_the_segment_limit(tmp_path, items, caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    score(items, tmp_path / "first", cache, "--block-size", 2, "--cache-compact-after", 2,
          method="ppl,ppl_region")
    listing = list_folder(setting_folder(cache))
    assert listing.stores and len(listing.segments) <= 2 and not listing.contained
    assert "compacted" in caplog.text
    n = n_scorable(tmp_path / "first")
    assert score(items, tmp_path / "second", cache, method="ppl,ppl_region",
                 caplog=caplog) == (2 * n, 0)


def test_racing_compactions_lose_no_entry(tmp_path):
    cache = a_cache(tmp_path, compact_after=0)
    parts = [entries(4, seed) for seed in range(3)]
    for part in parts[:2]:
        cache.store(part)
    first_two = list_folder(cache.folder).segments
    cache.store(parts[2])
    everything = list_folder(cache.folder).segments
    # compaction A saw two segments and was killed before removing them; B saw all three
    write_store(cache.folder, [read_segment(p) for p in first_two],
                {"segments": [p.name for p in first_two], "stores": []})
    write_store(cache.folder, [read_segment(p) for p in everything],
                {"segments": [p.name for p in everything], "stores": []})
    for path in everything:  # B removes what it contains
        path.unlink()
    wanted = {k: v for part in parts for k, v in part.items()}
    for _ in range(2):  # two stores, neither containing the other; then merged into one
        found = a_cache(tmp_path).lookup(list(wanted))
        assert found.keys() == wanted.keys()
        assert all(np.array_equal(found[k], v) for k, v in wanted.items())
        compact(cache.folder)
    assert len(list_folder(cache.folder).stores) == 1


def test_a_reader_lists_again_when_a_compaction_removes_what_it_listed(tmp_path, monkeypatch):
    cache = a_cache(tmp_path, compact_after=0)
    part = entries(3, 0)
    cache.store(dict(list(part.items())[:1]))
    cache.store(dict(list(part.items())[1:]))
    real_listing = cache_files.list_folder(cache.folder)
    assert compact(cache.folder)  # ... between the reader's listing and its opening
    calls = []

    def stale_then_fresh(folder):
        calls.append(folder)
        return real_listing if len(calls) == 1 else cache_files.list_folder(folder)

    from spudflow.scoring import cache as cache_module

    monkeypatch.setattr(cache_module, "list_folder", stale_then_fresh)
    assert a_cache(tmp_path).lookup(list(part)).keys() == part.keys()
    assert len(calls) == 2


@pytest.mark.slow
def test_concurrent_jobs_that_compact_share_the_cache_safely(tmp_path, caplog,
                                                            preloaded_test_jobs):
    caplog.set_level("INFO")
    import dataclasses

    many = write_items(tmp_path / "many.parquet", [
        dataclasses.replace(i, item_id=f"{k}-{i.item_id}", sentence=f"{i.sentence}{' ' * k}")
        for k in range(3) for i in MIXED])
    cold = tmp_path / "cold"
    score(many, cold, None, "--block-size", 4, method="ppl,ppl_region")
    cache = tmp_path / "cache"
    jobs = [_spudflow(*_score_command(many, tmp_path / f"job{k}", cache,
                                      "--cache-compact-after", "2"), client=preloaded_test_jobs)
            for k in range(3)]
    for job in jobs:
        _, err = job.communicate(timeout=600)
        assert job.returncode == 0, err[-2000:]
    for k in range(3):
        assert same_tables(cold, tmp_path / f"job{k}"), k
    hits, computed = score(many, tmp_path / "after", cache, "--block-size", 4,
                           method="ppl,ppl_region", caplog=caplog)
    assert computed == 0 and hits == 2 * n_scorable(cold)


# 10. The folder is synced after each rename.

def test_the_folder_is_synced_after_a_segment_or_store_is_renamed_into_place(tmp_path,
                                                                              monkeypatch):
    cache = a_cache(tmp_path, compact_after=0)
    synced = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode) and info.st_ino == cache.folder.stat().st_ino:
            synced.append(sorted(p.name for p in cache.folder.iterdir()
                                 if p.name.startswith(("seg-", "store-"))))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    cache.store(entries(2, 0))
    (segment,) = cache.folder.glob(SEGMENT_GLOB)
    assert synced[-1] == [segment.name]  # synced with the segment in place
    cache.store(entries(2, 1))
    done = cache_upkeep.compact(cache.folder)
    assert any(done.store.name in names for names in synced)  # synced with the store in place


def test_a_store_finds_keys_that_share_a_prefix_across_fence_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_files, "FENCE", 2)
    rng = np.random.default_rng(3)
    shared = b"samepref"  # eight keys with one 8-byte prefix span several fence blocks
    stored = {(shared if k < 8 else rng.bytes(8)) + rng.bytes(24): rng.normal(size=k % 4 + 1)
              for k in range(20)}
    cache = a_cache(tmp_path, compact_after=0)
    cache.store(stored)
    assert compact(cache.folder)
    absent = [shared + rng.bytes(24), rng.bytes(32)]
    found = a_cache(tmp_path).lookup([*stored, *absent])
    assert found.keys() == stored.keys()
    assert all(np.array_equal(found[k], v) for k, v in stored.items())


# 11. Upkeep beside broken files and racing upkeep.

def _break_store(store):
    """A store whose arrays disagree in length (its contents.json still reads)."""
    keys = np.load(store / "keys.npy")
    np.save(store / "keys.npy", keys[:-1])


def test_compaction_leaves_a_torn_segment_and_a_broken_store_to_verify(tmp_path, caplog):
    cache = a_cache(tmp_path, compact_after=0)
    kept = entries(3, 0)
    cache.store(entries(2, 1))
    assert compact(cache.folder)
    (broken,) = list_folder(cache.folder).stores
    _break_store(broken)
    cache.store(entries(2, 2))
    (torn,) = cache.folder.glob(SEGMENT_GLOB)
    torn.write_bytes(torn.read_bytes()[:60])
    cache.store(kept)
    done = compact(cache.folder)
    # only the whole segment is merged; the others are warned about and left alone
    assert (done.segments, done.stores, done.entries) == (1, 0, 3)
    assert f"unreadable segment {torn}" in caplog.text
    assert f"unreadable store {broken}" in caplog.text
    assert torn.exists() and broken.exists()
    assert cache_upkeep.is_torn(torn)
    assert sorted(cache_upkeep.verify(cache.folder)) == sorted([torn, broken])
    assert not torn.exists() and not broken.exists()
    assert list_folder(cache.folder).stores == [done.store]
    found = a_cache(tmp_path).lookup(list(kept))
    assert all(np.array_equal(found[k], v) for k, v in kept.items())


def test_an_automatic_compaction_removes_what_a_killed_one_left(tmp_path):
    """A compaction killed after its store was renamed into place, before it removed the
    segments merged: the next job's compaction (a large store is not rewritten for nothing)
    removes them and writes nothing."""
    cache = a_cache(tmp_path, compact_after=0)
    for seed in range(2):
        cache.store(entries(2, seed))
    segments = list_folder(cache.folder).segments
    store = write_store(cache.folder, [read_segment(p) for p in segments],
                        {"segments": [p.name for p in segments], "stores": []})
    assert sorted(list_folder(cache.folder).contained) == segments
    assert compact(cache.folder, everything=False) is None
    assert not any(p.exists() for p in segments)
    assert list_folder(cache.folder).stores == [store] and not list_folder(cache.folder).contained


def test_upkeep_skips_what_another_compaction_removed_after_the_listing(tmp_path, monkeypatch):
    cache = a_cache(tmp_path, compact_after=0)
    part = entries(4, 0)
    cache.store(part)
    assert compact(cache.folder)
    cache.store(entries(2, 1))
    stale = list_folder(cache.folder)
    (segment,) = stale.segments
    assert compact(cache.folder)  # the other compaction, between our listing and our reads
    monkeypatch.setattr(cache_upkeep, "list_folder", lambda folder: stale)
    assert cache_upkeep.verify(cache.folder) == []
    assert compact(cache.folder) is None
    assert not cache_upkeep.is_torn(segment)  # gone is not torn
    found = a_cache(tmp_path).lookup(list(part))
    assert all(np.array_equal(found[k], v) for k, v in part.items())
