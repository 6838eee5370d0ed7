"""Token-budget batches: longest first, bounded padding, CUDA out-of-memory halving."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from spudflow.scoring.batching import LENGTH_STEP, BatchRunner, Row, padded_length


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


def test_batches_are_longest_first_within_budget_one_padded_length_each():
    lengths = [5, 30, 7, 30, 29, 6, 5, 12, 31, 5, 17]
    forward = RecordingForward()
    runner = run(lengths, budget=64, forward=forward)
    # each row padded to its own length rounded up to LENGTH_STEP, whatever else is batched
    assert LENGTH_STEP == 8
    assert forward.shapes == [(2, 32), (2, 32), (1, 24), (1, 16), (5, 8)]
    for rows, length in forward.shapes:
        assert rows * length <= 64 or rows == 1
    assert runner.stats.rows == len(lengths)
    assert runner.stats.padded_tokens == sum(padded_length(n) for n in lengths)


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
