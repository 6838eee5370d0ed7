"""What one job's cache lookup costs as the cache grows: 2,000 random keys (half present) looked
up in a setting with 10^5, 10^6 and 10^7 entries of ~20 float64 log-probabilities each, by the
first implementation (every key read into a dict, whole `logprob` columns read per lookup; kept
below as OldScoreCache) on segments, and by the current one on the same entries compacted into
a store (`spudflow cache compact`).

    python bench/bench_score_cache_lookup.py [--sizes 100000,1000000,10000000] [--floats 20]
                                             [--workdir DIR]

Each measurement runs in a fresh process: lookup seconds (opening the cache included) and extra
resident memory (peak RSS minus RSS before the cache was opened). The entries are synthetic
(random keys, normal values, 10 to 30 per entry), written as segments of 100,000 entries; the
folder needs about 2 x 8 x floats x entries bytes of disk while it is compacted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "workflow")]

from spudflow.scoring.cache_files import (  # noqa: E402
    SCHEMA,
    SEGMENT_SHA256,
    new_name,
    segment_digest,
)

SEGMENT_ENTRIES = 100_000
N_QUERIES = 2000


class OldScoreCache:
    """The first implementation's lookup (every key read into a dict, whole `logprob` columns
    read per lookup), verbatim."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._segments = None

    def lookup(self, keys):
        index = self._index()
        found, wanted = {}, {}
        for key in set(keys):
            if key in index:
                segment, row = index[key]
                wanted.setdefault(segment, []).append((key, row))
        for segment, rows in sorted(wanted.items()):
            values = pq.read_table(segment, columns=["logprob"], schema=SCHEMA)
            column = values.column("logprob").take([row for _, row in rows]).to_pylist()
            for (key, _), scores in zip(rows, column, strict=True):
                found[key] = np.asarray(scores, dtype=np.float64)
        return found

    def _index(self):
        if self._segments is None:
            self._segments = {}
            for segment in sorted(self.folder.glob("seg-*.parquet")):
                keys = pq.read_table(segment, columns=["key"], schema=SCHEMA)
                for row, key in enumerate(keys.column("key").to_pylist()):
                    self._segments.setdefault(key, (segment, row))
        return self._segments


@dataclass(frozen=True)
class BenchSetting:
    name: str
    folder_name: str

    def id(self) -> str:
        return self.folder_name


def build(folder: Path, n: int, floats: int, seed: int = 0) -> np.ndarray:
    """Write n synthetic entries as segments; returns the queries (half present, half not)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    present = []
    for start in range(0, n, SEGMENT_ENTRIES):
        size = min(SEGMENT_ENTRIES, n - start)
        keys = rng.bytes(32 * size)
        lengths = rng.integers(floats // 2, floats * 3 // 2 + 1, size)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        values = rng.normal(-5, 2, int(offsets[-1]))
        table = pa.table({"key": pa.FixedSizeBinaryArray.from_buffers(
                              pa.binary(32), size, [None, pa.py_buffer(keys)]),
                          "logprob": pa.ListArray.from_arrays(offsets, values)},
                         schema=SCHEMA.with_metadata(
                             {SEGMENT_SHA256: segment_digest(keys, offsets, values).encode()}))
        pq.write_table(table, folder / new_name("seg", ".parquet"), compression="zstd")
        picks = rng.choice(size, N_QUERIES // 2 * size // n + 1, replace=False)
        present += [keys[32 * i:32 * i + 32] for i in picks]
    present = rng.choice(np.array(present, dtype="S32"), N_QUERIES // 2, replace=False)
    absent = np.array([rng.bytes(32) for _ in range(N_QUERIES - len(present))], dtype="S32")
    return np.concatenate([present, absent])


def rss_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def measure(which: str, folder: Path, queries: Path) -> None:
    """In a fresh process: print {seconds, extra_mb, found} as JSON."""
    from spudflow.scoring.cache import ScoreCache

    keys = [bytes(k).ljust(32, b"\0") for k in np.load(queries)]
    before = rss_mb("VmRSS")
    started = time.perf_counter()
    if which == "old":
        found = OldScoreCache(folder).lookup(keys)
    else:
        cache = ScoreCache(folder.parent, BenchSetting("bench", folder.name), compact_after=0)
        cache._registered = True  # a lookup-only run: no name marker written
        found = cache.lookup(keys)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "extra_mb": rss_mb("VmHWM") - before,
                      "found": len(found)}))


def run_measure(which: str, folder: Path, queries: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", which, str(folder),
                          str(queries)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000")
    parser.add_argument("--floats", type=int, default=20)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--measure", nargs=3, metavar=("WHICH", "FOLDER", "QUERIES"))
    args = parser.parse_args()
    if args.measure:
        measure(args.measure[0], Path(args.measure[1]), Path(args.measure[2]))
        return
    from spudflow.scoring.cache_upkeep import compact

    root = args.workdir or Path(tempfile.mkdtemp(prefix="cache-lookup-bench-"))
    print("entries\timpl\tlookup_s\textra_rss_mb\tfound\tnote")
    for n in map(int, args.sizes.split(",")):
        folder = root / f"setting-{n}"
        started = time.perf_counter()
        queries = build(folder, n, args.floats)
        built = time.perf_counter() - started
        np.save(root / "queries.npy", queries)
        old = run_measure("old", folder, root / "queries.npy")
        print(f"{n}\told\t{old['seconds']:.3f}\t{old['extra_mb']:.0f}\t{old['found']}\t"
              f"{n // SEGMENT_ENTRIES or 1} segments, built in {built:.0f} s", flush=True)
        started = time.perf_counter()
        done = compact(folder)
        compacted = time.perf_counter() - started
        new = run_measure("new", folder, root / "queries.npy")
        print(f"{n}\tnew\t{new['seconds']:.3f}\t{new['extra_mb']:.0f}\t{new['found']}\t"
              f"1 store of {done.entries} entries, compacted in {compacted:.0f} s", flush=True)
        shutil.rmtree(folder)
    if not args.workdir:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
