"""A table command derives what its tables share once: the items joined with their scores (and
the text check), CoLA's cross-validated thresholds. Its tables, comparisons, examples and
per-item data read the same frames."""

from __future__ import annotations

import polars as pl
import pytest

from spudflow.aggregate import inputs
from spudflow.aggregate.derived_once import command_scope, derived_once

from aggregate_inputs import blimp_inputs, cola_inputs, german_case_inputs, spud_inputs


def test_within_a_scope_the_same_arguments_are_derived_once():
    calls = []

    @derived_once
    def joined(frame: pl.DataFrame, k: int = 1) -> pl.DataFrame:
        calls.append(k)
        return frame.with_columns(pl.col("x") * k)

    frame = pl.DataFrame({"x": [1, 2]})
    assert joined(frame) is not joined(frame)  # outside a scope: every call computes
    assert len(calls) == 2
    with command_scope():
        first = joined(frame)
        assert joined(frame, k=1) is first and joined(frame, 1) is first
        assert joined(frame, 2) is not first  # another value: computed
        equal = pl.DataFrame({"x": [1, 2]})
        assert joined(equal) is not first  # another frame (equal or not): computed
        assert len(calls) == 5
    assert joined(frame) is not first  # the scope ended: nothing kept
    assert len(calls) == 6


def test_arguments_that_change_in_place_are_refused():
    @derived_once
    def total(values) -> int:
        return sum(values)

    with command_scope():
        assert total((1, 2)) == 3 and total((1, 2)) == 3
        with pytest.raises(TypeError, match="list argument"):
            total([1, 2])


def test_a_failure_is_not_kept():
    calls = []

    @derived_once
    def failing(frame):
        calls.append(1)
        raise ValueError("bad input")

    frame = pl.DataFrame({"x": [1]})
    with command_scope():
        for _ in range(2):
            with pytest.raises(ValueError):
                failing(frame)
    assert len(calls) == 2


@pytest.mark.parametrize(("command", "make_inputs"), [
    ("table-blimp", blimp_inputs), ("table-cola", cola_inputs),
    ("table-spud-scores", spud_inputs), ("table-german-case", german_case_inputs)])
def test_a_table_command_joins_its_items_and_scores_once(tmp_path, run_cli, monkeypatch,
                                                         command, make_inputs):
    """Each of the command's tables (the writer's, the comparison, the examples and the per-item
    data) starts from the joined items and scores: one join, one hash of the items' text."""
    items, scores = make_inputs(tmp_path)
    hashed = []
    real = inputs.with_text_hash

    def counted(frame):
        hashed.append(frame.height)
        return real(frame)

    monkeypatch.setattr(inputs, "with_text_hash", counted)
    code, _, err = run_cli(command, "--items", items, "--scores", *scores, "--resamples", "200",
                           "--out-dir", tmp_path / "tables")
    assert code == 0, err
    assert len(hashed) == 1


def test_cola_fits_its_thresholds_once(tmp_path, run_cli, monkeypatch):
    """The thresholds, the comparison, the examples and the per-item data read one
    cross-validation per split, normalisation and scoring function."""
    from spudflow.aggregate import cola

    items, scores = cola_inputs(tmp_path)
    fitted = []
    real = cola.cross_validated

    def counted(*args):
        fitted.append(len(args[0]))
        return real(*args)

    monkeypatch.setattr(cola, "cross_validated", counted)
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--resamples",
                           "200", "--out-dir", tmp_path / "tables")
    assert code == 0, err
    splits = pl.read_parquet(tmp_path / "tables" / "cola_thresholds.parquet").filter(
        pl.col("status") == "ok")
    phenomena = pl.read_parquet(tmp_path / "tables" / "cola_phenomena.parquet").filter(
        pl.col("status") == "ok")
    assert len(fitted) == splits.height + phenomena.height > 0
