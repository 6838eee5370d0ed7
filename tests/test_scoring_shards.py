"""Scatter/gather scoring: `score --shard I/N` then `score-gather` gives the unsharded tables,
byte for byte; the gather refuses incomplete, misordered or mixed shards."""

from __future__ import annotations

import dataclasses
import os

import pyarrow.parquet as pq
import pytest
from scoring_models import tiny_model_dir
from test_scoring_cli import ITEMS, write_items

from spudflow.cli import main
from spudflow.core.shards import Shard, parse_shard, shard_range
from spudflow.scoring.ngram import NgramModel
from spudflow.scoring.outputs import ITEM_SCORES_SCHEMA, TOKEN_SCORES_SCHEMA

TABLES = ("token_scores.parquet", "item_scores.parquet")
# Eight items: the four of the CLI tests, twice (ids made unique).
ITEMS8 = ITEMS + [dataclasses.replace(i, item_id=f"{i.item_id}-2") for i in ITEMS]


@pytest.mark.parametrize(("n_items", "block", "count"),
                         [(0, 3, 2), (1, 5, 3), (10, 3, 2), (10, 3, 4), (10, 1, 3), (7, 2, 7),
                          (2000, 500, 3)])
def test_shards_are_contiguous_whole_blocks_that_cover_every_item_once(n_items, block, count):
    ranges = [shard_range(n_items, Shard(i, count), block) for i in range(1, count + 1)]
    assert ranges[0][0] == 0 and ranges[-1][1] == n_items
    for (_, stop), (start, _) in zip(ranges, ranges[1:], strict=False):
        assert stop == start
    blocks = [-(-(stop - start) // block) for start, stop in ranges]
    assert all(start % block == 0 for start, _ in ranges)  # cut only between blocks
    assert max(blocks) - min(blocks) <= 1                   # and as evenly as blocks allow


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_bad_shard_exits_2(tmp_path, capsys, text):
    items = write_items(tmp_path / "items.parquet", ITEMS)
    assert main(["score", str(items), "--model", "unused", "--kind", "ngram", "--method", "kn",
                 "--out", str(tmp_path / "out"), f"--shard={text}"]) == 2
    assert capsys.readouterr().err.startswith("--shard: must be I/N with 1 <= I <= N")
    assert parse_shard(" 2 / 3 ") == Shard(2, 3)


def score(items, out, *extra):
    args = ["score", items, "--model", tiny_model_dir("masked", "bytebpe"), "--kind", "masked",
            "--method", "pppl,pppl_l2r_region,unmasked", "--name", "bert", "--batch-tokens",
            "120", "--threads", "1", "--out", out, *extra]
    assert main([*map(str, args)]) == 0


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    items = write_items(root / "items.parquet", ITEMS8)
    score(items, root / "whole", "--block-size", "2")
    return items, root / "whole"


# 4 blocks of 2 items: 2 shards of 2 blocks; 3 shards of 1, 1 and 2; 6 shards, two empty.
@pytest.mark.parametrize("count", [2, 3, 6])
def test_gathered_shards_equal_the_unsharded_run_byte_for_byte(unsharded, tmp_path, count):
    items, whole = unsharded
    shards = [tmp_path / f"{i}-of-{count}" for i in range(1, count + 1)]
    for i, out in enumerate(shards, 1):
        score(items, out, "--block-size", "2", "--shard", f"{i}/{count}")
        # A shard is itself a pair of valid tables with the documented columns.
        assert pq.read_schema(out / "token_scores.parquet").equals(TOKEN_SCORES_SCHEMA)
        assert pq.read_schema(out / "item_scores.parquet").equals(ITEM_SCORES_SCHEMA)
    sizes = [len(set(pq.read_table(s / "item_scores.parquet")["item_id"].to_pylist()))
             for s in shards]
    assert sum(sizes) == len(ITEMS8)
    if count == 6:
        assert sizes.count(0) == 2
    assert main(["score-gather", *map(str, shards), "--out", str(tmp_path / "gathered")]) == 0
    for name in TABLES:
        assert (tmp_path / "gathered" / name).read_bytes() == (whole / name).read_bytes()


@pytest.fixture(scope="module")
def two_shards(unsharded, tmp_path_factory):
    items, _ = unsharded
    root = tmp_path_factory.mktemp("two")
    for i in (1, 2):
        score(items, root / f"{i}", "--block-size", "2", "--shard", f"{i}/2")
    # Shard 2 of another job (other methods).
    main(["score", str(items), "--model", str(tiny_model_dir("masked", "bytebpe")), "--kind",
          "masked", "--method", "unmasked", "--name", "bert", "--threads", "1", "--block-size",
          "2", "--shard", "2/2", "--out", str(root / "other")])
    return root


@pytest.mark.parametrize(("dirs", "where", "message"), [
    (["2", "1"], "2", "is shard 2/2, but was given as shard 1 of 2"),
    (["1"], "1", "is shard 1/2, but was given as shard 1 of 1"),
    (["1", "other"], "1", "the shards come from different jobs"),
    (["1", "missing"], "missing/token_scores.parquet", "missing: not a finished"),
])
def test_gather_refuses_wrong_shards(two_shards, tmp_path, capsys, dirs, where, message):
    out = tmp_path / "out"
    assert main(["score-gather", *[str(two_shards / d) for d in dirs], "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"{two_shards / where}: {message}")
    assert not out.exists()


def test_gather_refuses_an_unsharded_output(unsharded, tmp_path, capsys):
    _, whole = unsharded
    assert main(["score-gather", str(whole), "--out", str(tmp_path / "out")]) == 2
    assert "no shard mark" in capsys.readouterr().err


def test_shard_tables_depend_only_on_contents(tmp_path):
    """Same items, model contents and options give the same shard bytes, even after the model
    file was rewritten (its time is in the resume key, not in the tables)."""
    items = write_items(tmp_path / "items.parquet", ITEMS8)
    model = tmp_path / "unigram.parquet"
    NgramModel.train([s.split() for s in ["The cat sat .", "a cat"]], order=1,
                     lang="en").save(model)
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert main(["score", str(items), "--model", str(model), "--kind", "ngram", "--method",
                     "kn", "--block-size", "3", "--shard", "2/2", "--out", str(out)]) == 0
        os.utime(model, ns=(1, 1))
    for name in TABLES:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    assert len(pq.read_table(outs[0] / "item_scores.parquet")) > 0
