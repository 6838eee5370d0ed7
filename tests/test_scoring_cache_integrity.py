"""Flipped bits in the score cache are never served as scores: every segment carries a checksum
of its contents and every store entry one of its own; a mismatch is a miss (the item is scored
again) with a warning, `cache verify` removes what fails (a store keeps its good entries), and
compaction never copies a bad entry into a fresh checksum. Old code served 5 of 31 single-bit
flips of a segment and 16 flipped bytes of a store's values.npy as wrong scores, exit 0."""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from spudflow.scoring.cache import ScoreCache
from spudflow.scoring.cache_files import (
    SEGMENT_GLOB,
    STORE_GLOB,
    Corrupt,
    list_folder,
    read_segment,
    write_segment,
)
from spudflow.scoring.cache_marker import mark
from spudflow.scoring.cache_upkeep import compact, verify


@dataclass(frozen=True)
class StubSetting:
    name: str = "m"
    kind: str = "causal"

    def id(self) -> str:
        return "0123456789abcdef01234567"


def entries(n: int, seed: int) -> dict[bytes, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {rng.bytes(32): rng.normal(-5, 2, int(rng.integers(3, 9))) for _ in range(n)}


def lookup(root, keys) -> dict[bytes, np.ndarray]:
    return ScoreCache(root, StubSetting(), compact_after=0).lookup(keys)


def served_only_truth(found: dict, truth: dict) -> bool:
    return all(key in truth and np.array_equal(found[key], truth[key]) for key in found)


def flip(path, byte: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[byte] ^= 1 << bit
    path.write_bytes(bytes(data))


def test_no_single_bit_flip_of_a_segment_is_served(tmp_path, caplog):
    truth = entries(12, seed=1)
    clean = tmp_path / "clean"
    folder = clean / StubSetting().id()
    folder.mkdir(parents=True)
    (segment,) = [write_segment(folder, truth)]
    assert served_only_truth(lookup(clean, list(truth)), truth)
    size = segment.stat().st_size
    missed = 0
    for byte in range(0, size, 3):
        root = tmp_path / "flipped"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(clean, root)
        flipped = root / folder.name / segment.name
        flip(flipped, byte, bit=byte % 8)
        found = lookup(root, list(truth))
        assert served_only_truth(found, truth), f"byte {byte}: a wrong score served"
        try:
            read_segment(flipped)
        except Exception:  # noqa: BLE001 — whatever a damaged file raises, verify removes it
            assert verify(root / folder.name) == [flipped] and not flipped.exists()
            missed += len(found) < len(truth)
        else:  # bytes no reader looks at (statistics, padding): still the same entries
            assert len(found) == len(truth)
    assert missed > size // 6  # most flips hit what is read: each was a miss, not a wrong score
    assert "do not match" in caplog.text or "checksum" in caplog.text


@pytest.fixture
def store_cache(tmp_path):
    truth = entries(600, seed=2)
    root = tmp_path / "cache"
    folder = root / StubSetting().id()
    folder.mkdir(parents=True)
    items = list(truth.items())
    for start in range(0, len(items), 200):
        write_segment(folder, dict(items[start:start + 200]))
    assert compact(folder) is not None
    (store,) = folder.glob(STORE_GLOB)
    return root, folder, store, truth


def test_flipped_bytes_of_a_store_are_misses_then_verified_away(store_cache, caplog):
    root, folder, store, truth = store_cache
    rng = np.random.default_rng(3)
    values = store / "values.npy"
    header = values.stat().st_size - 8 * sum(len(v) for v in truth.values())
    for byte in rng.choice(values.stat().st_size - header, 16, replace=False):
        flip(values, header + int(byte), bit=int(byte) % 8)
    flip(store / "seq.npy", store.joinpath("seq.npy").stat().st_size - 3)
    found = lookup(root, list(truth))
    assert served_only_truth(found, truth)
    lost = len(truth) - len(found)
    assert 1 <= lost <= 17
    assert "do not match their checksums: scored again" in caplog.text
    # verify keeps the store's good entries in a new store and removes the old one
    assert verify(folder) == [store]
    (new_store,) = list_folder(folder).stores
    assert new_store != store and not store.exists()
    assert served_only_truth(lookup(root, list(truth)), truth)
    assert len(lookup(root, list(truth))) == len(found)
    assert verify(folder) == []


@pytest.mark.parametrize("name", ["keys", "offsets", "check", "prefix", "fences"])
def test_any_file_of_a_store_damaged_never_serves_a_wrong_score(store_cache, name):
    root, folder, store, truth = store_cache
    path = store / f"{name}.npy"
    flip(path, path.stat().st_size - 20, bit=5)
    assert served_only_truth(lookup(root, list(truth)), truth)
    assert verify(folder) == [store]
    assert served_only_truth(lookup(root, list(truth)), truth)
    assert verify(folder) == []


def test_compaction_does_not_copy_a_corrupt_store(store_cache, caplog):
    root, folder, store, truth = store_cache
    values = store / "values.npy"
    flip(values, values.stat().st_size - 1, bit=3)  # the last entry's last value
    write_segment(folder, entries(5, seed=9))
    assert compact(folder) is None
    assert "does not match its checksums: not compacted" in caplog.text
    assert store.exists() and len(list(folder.glob(SEGMENT_GLOB))) == 1
    assert verify(folder) == [store]
    assert compact(folder) is not None
    assert served_only_truth(lookup(root, list(truth)), truth)


def test_a_segment_without_a_checksum_is_a_miss(tmp_path):
    """A segment written before checksums existed is not trusted (never read as scores)."""
    truth = entries(4, seed=5)
    folder = tmp_path / "cache" / StubSetting().id()
    folder.mkdir(parents=True)
    segment = write_segment(folder, truth)
    table = pq.read_table(segment)
    pq.write_table(table.replace_schema_metadata(None), segment)
    with pytest.raises(Corrupt):
        read_segment(segment)
    assert lookup(tmp_path / "cache", list(truth)) == {}
    assert verify(folder) == [segment]


def test_cache_verify_prints_a_corrupt_segment(tmp_path, run_cli):
    root = tmp_path / "cache"
    mark(root)
    folder = root / StubSetting().id()
    folder.mkdir()
    truth = entries(8, seed=6)
    good = write_segment(folder, truth)
    bad = write_segment(folder, entries(8, seed=7))
    table = pq.read_table(bad)
    values = table.column("logprob").combine_chunks()
    # a value changed, the file otherwise whole and readable: only the checksum tells
    changed = pq.read_table(bad).set_column(
        1, "logprob", [values.from_arrays(values.offsets,
                                          np.where(np.arange(len(values.values)) == 0, 1.0,
                                                   values.values.to_numpy()))])
    pq.write_table(changed, bad)
    status, out, _ = run_cli("cache", "verify", root)
    assert status == 0 and out.splitlines() == [str(bad)]
    assert sorted(folder.glob(SEGMENT_GLOB)) == [good]


@pytest.mark.parametrize("name", ["values", "keys", "seq", "fences", "check"])
def test_a_store_that_lacks_a_file_is_a_miss_not_an_endless_listing(store_cache, name):
    """A store folder that lost one of its files (not removed by a compaction: the store is
    still live) is damaged: its entries are misses with a warning, and `cache verify` removes
    it. A missing file used to mean only "removed by a compaction, list again", so a lookup
    listed the folder for ever (run in a child process with a timeout: the old code hangs)."""
    root, folder, store, truth = store_cache
    (store / f"{name}.npy").unlink()
    extra = entries(3, seed=11)
    write_segment(folder, extra)  # a live segment is still served
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_scoring_cache_integrity import lookup
        import pickle
        keys = pickle.loads({pickle.dumps(list(truth) + list(extra))!r})
        print(len(lookup({str(root)!r}, keys)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(extra))]
    assert str(store) in done.stderr and "`spudflow cache verify` removes it" in done.stderr
    assert verify(folder) == [store] and not store.exists()
    assert len(lookup(root, list(extra))) == len(extra)
    assert verify(folder) == []
