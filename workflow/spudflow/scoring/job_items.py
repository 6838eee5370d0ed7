"""The items one `score` job scores (docs/scoring.md): the dataset's items in the model's
languages, a seeded sample of their groups, and the job's shard of what is left, in that order,
so that every shard of a sample is cut from the same list."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.shards import Shard, shard_range
from spudflow.scoring.items import Item, load_items, sample_groups


@dataclass(frozen=True)
class ItemSelection:
    """How a job narrows its dataset: languages (None: all), a sample of n groups (None: all)
    and a shard in blocks of `block_size` items (None: the whole list)."""

    languages: frozenset[str] | None = None
    sample: int | None = None
    sample_seed: int = 0
    shard: Shard | None = None
    block_size: int = 1


def job_items(path: Path, lang: str, selection: ItemSelection) -> list[Item]:
    """The items of `path` (an items Parquet file or a text file in `lang`) that this job
    scores; what each step leaves out is logged."""
    log = get_logger("spudflow.scoring")
    items = load_items(path, lang)
    if not items:  # (a job's selection may leave none; a file of none is a broken dataset)
        raise InputError(path, None, "holds no items to score")
    if selection.languages is not None:
        kept = [i for i in items if i.language is None or i.language in selection.languages]
        if len(kept) < len(items):
            log.info("left out %d of %d items not in languages %s", len(items) - len(kept),
                     len(items), ",".join(sorted(selection.languages)))
        items = kept
    if selection.sample is not None:
        if selection.sample < 1:
            raise InputError("--sample", None, f"must be at least 1, not {selection.sample}")
        kept = sample_groups(items, path, selection.sample, selection.sample_seed)
        log.info("scoring a sample of %d groups: %d of %d items", selection.sample, len(kept),
                 len(items))
        items = kept
    if selection.shard is not None:
        start, stop = shard_range(len(items), selection.shard, selection.block_size)
        log.info("shard %s: %d of the %d items, from item %d on", selection.shard, stop - start,
                 len(items), start + 1)
        items = items[start:stop]
    return items
