"""Rescoring costs what changed: after a full run, five edited treebank sentences make
the scoring jobs compute only the items derived from them (the log's cache counts), and every
table and score file equals a cold run's."""

from __future__ import annotations

from pathlib import Path

import cache_scenario
import polars as pl
import pytest
import scoring_models
from cache_scenario import (
    DATASET,
    MODELS,
    N_EDITED,
    cache_counts,
    edit_sentences,
    scenario_workflow,
)
from workflow_helpers import finished_run, run_workflow

pytestmark = pytest.mark.slow


def scorable_items(workdir, model) -> pl.DataFrame:
    scores = pl.read_parquet(workdir / "results" / "scores" / DATASET / model /
                             "item_scores.parquet")
    items = pl.read_parquet(workdir / "results" / "items" / f"{DATASET}.parquet")
    ok = scores.filter(pl.col("skipped").is_null() & pl.col("region").is_null())
    return items.filter(pl.col("item_id").is_in(ok["item_id"].unique().implode()))


def test_five_edited_sentences_rescore_only_their_items(tmp_path):
    # the first run is built once (and kept across test runs) like the tiny runs
    workdir = finished_run(tmp_path / "run", "score_cache_scenario", scenario_workflow,
                           helpers=[Path(cache_scenario.__file__), Path(scoring_models.__file__)])
    for model, methods in MODELS.items():
        n = scorable_items(workdir, model).height
        assert n > 0
        assert cache_counts(workdir)[model] == (0, n * len(methods)), model

    edited = edit_sentences(workdir)
    assert len(edited) == N_EDITED
    run_workflow(workdir)
    counts = cache_counts(workdir)
    for model, methods in MODELS.items():
        items = scorable_items(workdir, model)
        derived = items.filter(pl.col("sent_id").is_in(edited)).height
        assert derived >= N_EDITED  # each edited original and its nonce versions
        assert counts[model] == ((items.height - derived) * len(methods),
                                 derived * len(methods)), model

    cold = scenario_workflow(tmp_path / "cold")
    assert edit_sentences(cold) == edited
    run_workflow(cold)
    results = workdir / "results"
    files = sorted(p.relative_to(results) for folder in ("tables", "scores")
                   for p in (results / folder).rglob("*") if p.is_file())
    assert any(str(f).startswith("tables/spud_ratio_summary") for f in files)
    for name in files:
        assert (results / name).read_bytes() == (cold / "results" / name).read_bytes(), name
