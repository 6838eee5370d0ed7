"""Token-budget batches: longest first, bounded padding, CUDA out-of-memory halving."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from spudflow.scoring.batching import MAX_PADDING, BatchRunner, Row


def rows_of(lengths):
    # Each row's value at a gathered position: its input id there (checked below).
    return [Row(owner=i, input_ids=list(range(100 * i, 100 * i + n)), masked=(),
                gather=[0, n - 1], targets=[0, 0], slots=[0, 1])
            for i, n in enumerate(lengths)]


class RecordingForward:
    """Returns the input id at each gathered position; fails like a full GPU above a size."""

    def __init__(self, fail_above_rows=None):
        self.fail_above_rows = fail_above_rows
        self.shapes = []

    def __call__(self, input_ids, attention_mask, flat_positions, targets):
        if self.fail_above_rows is not None and input_ids.shape[0] > self.fail_above_rows:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        self.shapes.append(tuple(input_ids.shape))
        return input_ids.reshape(-1)[flat_positions].float()


def run(lengths, budget, forward):
    runner = BatchRunner(forward, pad_id=-1, mask_id=None, device=torch.device("cpu"),
                         batch_tokens=budget)
    rows = rows_of(lengths)
    results = [np.full(2, np.nan) for _ in rows]
    runner.run(rows, results)
    for row, result in zip(rows, results, strict=True):
        assert list(result) == [row.input_ids[0], row.input_ids[-1]]
    return runner


def test_batches_are_longest_first_within_budget_with_little_padding():
    lengths = [5, 30, 7, 30, 29, 6, 5, 12, 31, 5]
    forward = RecordingForward()
    runner = run(lengths, budget=64, forward=forward)
    assert forward.shapes[0][1] == 31
    assert [shape[1] for shape in forward.shapes] == sorted(
        (shape[1] for shape in forward.shapes), reverse=True)
    for rows, longest in forward.shapes:
        assert rows * longest <= 64 or rows == 1
    assert runner.stats.rows == len(lengths)
    assert 1 - runner.stats.real_tokens / runner.stats.padded_tokens <= MAX_PADDING


def test_out_of_memory_halves_the_batch_and_the_budget():
    lengths = [8] * 16
    forward = RecordingForward(fail_above_rows=3)
    runner = run(lengths, budget=8 * 16, forward=forward)
    assert runner.stats.halvings >= 2
    assert runner.batch_tokens <= 8 * 4
    assert max(rows for rows, _ in forward.shapes) <= 3


def test_out_of_memory_on_a_single_row_is_raised():
    with pytest.raises(torch.cuda.OutOfMemoryError):
        run([8, 8], budget=16, forward=RecordingForward(fail_above_rows=0))
