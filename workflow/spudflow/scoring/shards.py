"""Scatter/gather of one scoring job over several processes (cluster jobs).

`score --shard I/N` scores a contiguous range of the items and marks both tables it writes with
the shard and the job they belong to; `score-gather` checks that it got shards 1 … N of one job,
in order, and concatenates them into the two tables an unsharded job writes.

Shards are cut at multiples of `--block-size`, the resumable unit of a job (run.py): each of those
item blocks is then scored exactly as in the unsharded job, with the same batches, so the
gathered tables are byte-identical to the unsharded ones (a batch's padding and shape can move
float results in the last bits, so cutting anywhere else would not be).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spudflow.core.artifacts import ITEM_SCORES, TOKEN_SCORES
from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import check_schema, parquet_schema, write_artifact
from spudflow.core.errors import InputError
from spudflow.core.shards import Shard
from spudflow.scoring.outputs import (
    ITEM_SCORES_FILE,
    TOKEN_SCORES_FILE,
)

# Schema metadata of a shard's tables: {"shard": I, "shards": N, "job": key of the whole job}.
SHARD_METADATA_KEY = b"spudflow.shard"


def shard_metadata(shard: Shard, job_key: str) -> dict[bytes, bytes]:
    """The mark of a shard's tables: which shard of which whole job they are."""
    state = {"shard": shard.index, "shards": shard.count, "job": job_key}
    return {SHARD_METADATA_KEY: json.dumps(state, sort_keys=True).encode()}


def _read_shard(path: Path, artifact) -> tuple[pa.Table, dict]:
    if not path.is_file():
        raise InputError(path, None, "missing: not a finished `spudflow score --shard` output")
    schema = parquet_schema(path, f"{artifact.name} Parquet file")
    raw = (schema.metadata or {}).get(SHARD_METADATA_KEY)
    if raw is None:
        raise InputError(path, None, "not written by `spudflow score --shard` (no shard mark)")
    check_schema(path, schema, artifact)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise InputError(path, None, f"not a readable Parquet file ({error})") from error
    return table.replace_schema_metadata(None), json.loads(raw)


def gather(shard_dirs: Sequence[Path], out_dir: Path) -> int:
    """Write OUT/token_scores.parquet and OUT/item_scores.parquet from the shards' tables, in
    the order given, after checking they are shards 1 … N of one job. Returns the item count."""
    tables: dict[str, list[pa.Table]] = {TOKEN_SCORES_FILE: [], ITEM_SCORES_FILE: []}
    jobs = set()
    for position, directory in enumerate(shard_dirs, 1):
        marks = []
        for name, artifact in ((TOKEN_SCORES_FILE, TOKEN_SCORES), (ITEM_SCORES_FILE, ITEM_SCORES)):
            table, mark = _read_shard(Path(directory) / name, artifact)
            tables[name].append(table)
            marks.append(mark)
        mark = marks[0]
        if marks[1] != mark:
            raise InputError(directory, None, "its two tables come from different shards or jobs")
        if (mark["shard"], mark["shards"]) != (position, len(shard_dirs)):
            raise InputError(directory, None, f"is shard {mark['shard']}/{mark['shards']}, but "
                             f"was given as shard {position} of {len(shard_dirs)}")
        jobs.add(mark["job"])
    if len(jobs) > 1:
        raise InputError(shard_dirs[0], None, "the shards come from different jobs (input, "
                         "model, methods or settings differ): rerun them with the same ones")
    with atomic_outputs() as out:
        for name, artifact in ((TOKEN_SCORES_FILE, TOKEN_SCORES), (ITEM_SCORES_FILE, ITEM_SCORES)):
            write_artifact(pa.concat_tables(tables[name]), out.path(Path(out_dir) / name),
                           artifact)
    items = pa.concat_tables(tables[ITEM_SCORES_FILE]).column("item_id")
    return len(set(items.to_pylist()))
