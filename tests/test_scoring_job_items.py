"""The items one score job scores (scoring/job_items.py): the model's languages, then a sample
of groups, then the job's shard of the sample, so the shards of a sampled job are one sample."""

from __future__ import annotations

from scoring_models import make_item
from test_scoring_cli import write_items

from spudflow.core.shards import Shard
from spudflow.scoring.items import sample_groups
from spudflow.scoring.job_items import ItemSelection, job_items

# 12 groups of two items (good, bad); groups g0-g7 English, g8-g11 German.
ITEMS = [make_item(f"g{g}-{side}", f"Sentence {g} {side}.", ["Sentence", str(g), side, "."],
                   language="en" if g < 8 else "de")
         for g in range(12) for side in ("good", "bad")]


def test_languages_then_a_sample_of_groups_then_the_shard(tmp_path):
    path = write_items(tmp_path / "items.parquet", ITEMS)
    english = job_items(path, "en", ItemSelection(languages=frozenset({"en"})))
    assert [i.item_id for i in english] == [i.item_id for i in ITEMS[:16]]

    sample = ItemSelection(languages=frozenset({"en"}), sample=3, sample_seed=0)
    sampled = job_items(path, "en", sample)
    assert sampled == sample_groups(english, path, 3, 0)
    assert len({i.item_id.split("-")[0] for i in sampled}) == 3

    shards = [job_items(path, "en", ItemSelection(
        frozenset({"en"}), 3, 0, Shard(index, 2), block_size=2)) for index in (1, 2)]
    assert shards[0] and shards[1]
    assert shards[0] + shards[1] == sampled  # the shards cut the one sample, in order


def test_no_selection_is_every_item(tmp_path):
    path = write_items(tmp_path / "items.parquet", ITEMS)
    assert job_items(path, "en", ItemSelection()) == ITEMS
