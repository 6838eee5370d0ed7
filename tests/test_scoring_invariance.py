"""Batch invariance: an item's token scores do not depend on what else is in
its batch, the padding, the batch-token budget, the shard it falls into or the number of shards.
Every model kind and method, scored alone, in batches under different budgets and in shards,
agrees with one reference run: on CPU in fp32, with two threads, to the bit (the issue asks for
1e-5 per token; the score cache's byte-identical tables need the bits). Two things made that so
(scoring/batching.py, scoring/heads.py): rows are padded to their own length rounded up to 8,
never to a longer neighbour's, and the LM head never multiplies a single row."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scoring_models import EDGE_CASES, edge_case_items, tiny_model_dir
from test_scoring_cli import ITEMS, write_items

from spudflow.cli import main
from spudflow.scoring.ngram import NgramModel

THREADS = 2
# Items of many lengths, so that budgets cut batches differently and rows get padding.
MIXED = [*ITEMS, *edge_case_items(),
         *(dataclasses.replace(i, item_id=f"{i.item_id}-again") for i in ITEMS[:2])]
# A method may carry options of its own: pppl_l2r with the items' words as well as the default.
SCORERS = [("causal", "ppl"), ("masked", "pppl"), ("masked", "pppl_l2r"),
           ("masked", "pppl_l2r --l2r-words=items"), ("masked", "unmasked"),
           ("electra", "electra"), ("ngram", "kn"), ("ngram", "addk")]
KEY = ["item_id", "method", "token_index"]


@functools.cache
def model_path(kind: str, root: Path) -> Path:
    if kind != "ngram":
        return tiny_model_dir(kind, "bytebpe")
    path = root / "trigram.parquet"
    NgramModel.train([s.split() for s in ("The cat sat on the mat .", "a cat sat", "the mat")],
                     order=3, lang="en").save(path)
    return path


def score(items, out, kind, method, *extra):
    method, *options = method.split()
    code = main(["score", str(items), "--model", str(model_path(kind, items.parent)),
                 "--kind", kind, "--method", method, *options, "--out", str(out), "--name", "m",
                 "--device", "cpu", "--dtype", "float32", "--threads", str(THREADS),
                 *map(str, extra)])
    assert code == 0
    return pl.read_parquet(out / "token_scores.parquet").select(*KEY, "token", "logprob")


def assert_same_scores(reference: pl.DataFrame, other: pl.DataFrame, what: str):
    joined = reference.join(other, on=KEY, how="full", suffix="_other", coalesce=True)
    assert joined.height == reference.height == other.height, what
    assert (joined["token"] == joined["token_other"]).all(), what
    gap = np.abs(joined["logprob"].to_numpy() - joined["logprob_other"].to_numpy())
    assert gap.max() == 0, f"{what}: differences up to {gap.max():.2e}"


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    assert len({i.item_id for i in MIXED}) == len(MIXED) and len(EDGE_CASES) > 0
    return write_items(tmp_path_factory.mktemp("mixed") / "items.parquet", MIXED)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "method"), SCORERS)
def test_scores_do_not_depend_on_batch_budget_or_shard(tmp_path, items, kind, method):
    reference = score(items, tmp_path / "ref", kind, method, "--batch-tokens", 100000)
    assert reference.height > 0
    for budget in (64, 150, 700):
        other = score(items, tmp_path / f"budget{budget}", kind, method, "--batch-tokens", budget)
        assert_same_scores(reference, other, f"budget {budget}")
    for count in (2, 3):
        parts = [score(items, tmp_path / f"shards{count}" / str(i), kind, method,
                       "--block-size", 2, "--shard", f"{i}/{count}") for i in range(1, count + 1)]
        assert_same_scores(reference, pl.concat(parts), f"{count} shards")


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "method"), SCORERS)
def test_an_item_scored_alone_scores_as_in_a_batch(tmp_path, items, kind, method):
    reference = score(items, tmp_path / "ref", kind, method, "--batch-tokens", 100000)
    alone = []
    for item in MIXED:
        path = write_items(tmp_path / f"{item.item_id}.parquet", [item])
        alone.append(score(path, tmp_path / f"alone-{item.item_id}", kind, method))
    assert_same_scores(reference, pl.concat(alone), "alone")
