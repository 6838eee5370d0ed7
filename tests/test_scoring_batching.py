"""Token-budget batches: longest first, bounded padding, CUDA out-of-memory halving; rows built as
arrays (the masked copies of PPPL and PPPL-l2r, the causal inputs) and the host thread that
prepares batches ahead."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest
import torch
from scoring_models import edge_case_items, make_item, tiny_model_dir
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from spudflow.core.gpu_feed import prefetched
from spudflow.scoring.batching import LENGTH_STEP, BatchPolicy, BatchRunner, padded_length
from spudflow.scoring.causal import CausalScorer
from spudflow.scoring.encoding import encode_with_tokenizer
from spudflow.scoring.masked import MaskedScorer, l2r_masked, l2r_masked_positions
from spudflow.scoring.rows import Ragged, Rows


def rows_of(lengths):
    # Row i is the ids 100 i, 100 i + 1, ...; it gathers its first and last position.
    tokens = np.concatenate([np.arange(100 * i, 100 * i + n) for i, n in enumerate(lengths)])
    lengths = np.array(lengths)
    gather = np.stack([np.zeros_like(lengths), lengths - 1], axis=1).reshape(-1)
    return Rows(tokens=tokens, starts=np.cumsum(lengths) - lengths, lengths=lengths,
                owner=np.arange(len(lengths)),
                masked=Ragged(np.empty(0, dtype=np.int64), np.zeros(len(lengths) + 1, int)),
                gather=Ragged(gather, np.arange(0, 2 * len(lengths) + 1, 2)),
                targets=np.zeros(len(gather), dtype=np.int64),
                slots=np.tile([0, 1], len(lengths)))


class RecordingForward:
    """Returns the input id at each gathered position; fails like a full GPU above a size."""

    def __init__(self, fail_above_rows=None):
        self.fail_above_rows = fail_above_rows
        self.shapes = []
        self.inputs = []

    def __call__(self, input_ids, attention_mask, flat_positions, targets):
        if self.fail_above_rows is not None and input_ids.shape[0] > self.fail_above_rows:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        self.shapes.append(tuple(input_ids.shape))
        self.inputs.append((input_ids.clone(), attention_mask.clone(), flat_positions.clone()))
        return input_ids.reshape(-1)[flat_positions].float()


class CountingBar:
    def __init__(self):
        self.n = 0

    def update(self, n):
        self.n += n


def run(lengths, budget, forward, **policy):
    runner = BatchRunner(forward, pad_id=-1, mask_id=None, device=torch.device("cpu"),
                         batch_tokens=budget, policy=BatchPolicy(**policy))
    bar = CountingBar()
    results = runner.run(rows_of(lengths), [2] * len(lengths), bar)
    assert bar.n == len(lengths)  # the progress bar counts every sentence, halved or not
    for i, (n, result) in enumerate(zip(lengths, results, strict=True)):
        assert list(result) == [100 * i, 100 * i + n - 1]
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
    ids, attention, _ = forward.inputs[-1]
    assert (ids[attention == 0] == -1).all() and attention.sum() == 5 + 6 + 5 + 5 + 7


@pytest.mark.parametrize("prefetch", [0, 2])
def test_same_shape_fills_the_last_batch_of_a_length(prefetch):
    lengths = [5, 30, 7, 30, 29, 6, 5, 12, 31, 5, 17]
    forward = RecordingForward()
    runner = run(lengths, budget=64, forward=forward, same_shape=True, prefetch=prefetch)
    # one shape per padded length: a lone row of 16 is batched with 3 copies of itself
    assert forward.shapes == [(2, 32), (2, 32), (2, 24), (4, 16), (8, 8)]
    assert runner.stats.rows == len(lengths)
    ids, _, positions = forward.inputs[3]
    assert (ids == ids[0]).all() and len(positions) == 2  # copies gather nothing


def test_prefetching_gives_the_same_batches():
    lengths = list(range(1, 60, 3))
    plain, ahead = RecordingForward(), RecordingForward()
    run(lengths, budget=100, forward=plain)
    run(lengths, budget=100, forward=ahead, prefetch=3)
    assert plain.shapes == ahead.shapes
    for a, b in zip(plain.inputs, ahead.inputs, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("prefetch", [0, 2])
def test_out_of_memory_halves_the_batch_and_the_budget(prefetch):
    lengths = [8] * 16
    forward = RecordingForward(fail_above_rows=3)
    runner = run(lengths, budget=8 * 16, forward=forward, prefetch=prefetch, same_shape=True)
    assert runner.stats.halvings >= 2
    assert runner.batch_tokens <= 8 * 4
    assert max(rows for rows, _ in forward.shapes) <= 3


def test_out_of_memory_on_a_single_row_is_raised():
    with pytest.raises(torch.cuda.OutOfMemoryError):
        run([8, 8], budget=16, forward=RecordingForward(fail_above_rows=0))


def test_prefetched_raises_in_place_and_stops_when_closed():
    def items():
        yield 1
        yield 2
        raise ValueError("broken")

    got = []
    with pytest.raises(ValueError, match="broken"):
        for item in prefetched(items(), 2):
            got.append(item)
    assert got == [1, 2]
    produced = []

    def endless():
        while True:
            produced.append(len(produced))
            yield produced[-1]

    before = threading.active_count()
    with contextlib.closing(prefetched(endless(), 2)) as ahead:
        assert next(ahead) == 0
    assert threading.active_count() == before and len(produced) <= 4


@pytest.fixture(scope="module")
def wordpiece():
    return AutoTokenizer.from_pretrained(tiny_model_dir("masked", "wordpiece"))


def items():
    return [*edge_case_items(), make_item("words", "Supercalifragilistic unbelievable postmen",
                                          ["Supercalifragilistic", "unbelievable", "postmen"])]


@pytest.mark.parametrize("method", ["pppl", "pppl_l2r", "unmasked"])
def test_masked_rows_are_the_sentence_copies_of_their_definition(wordpiece, method):
    """Each row the model gets is its sentence with exactly the positions of the method's
    definition masked (one per copy for PPPL; with the later tokens of the word for l2r; none
    for unmasked), and the value of each wanted token comes from its own copy."""
    forward = RecordingForward()
    model = AutoModelForMaskedLM.from_pretrained(tiny_model_dir("masked", "wordpiece"))
    scorer = MaskedScorer(wordpiece, model, torch.device("cpu"), 64)
    scorer.runner.forward = forward
    encoded = [e for e in scorer.encode(items()) if e.skipped is None]
    targets = [list(range(e.n_tokens)) if i % 3 else list(range(0, e.n_tokens, 2))
               for i, e in enumerate(encoded)]
    scores = scorer.score(encoded, method, targets)
    # every (input, gathered position) pair the model saw, with the value it returned
    seen = {}
    for ids, attention, positions in forward.inputs:
        for flat in positions.tolist():
            row, column = divmod(flat, ids.shape[1])
            length = int(attention[row].sum())
            seen[(tuple(ids[row, :length].tolist()), column)] = ids.reshape(-1)[flat].item()
    for sentence, wanted, values in zip(encoded, targets, scores, strict=True):
        for token, value in zip(wanted, values, strict=True):
            ids = list(sentence.input_ids)
            masked = {"pppl": [sentence.positions[token]], "unmasked": [],
                      "pppl_l2r": l2r_masked_positions(sentence, token)}[method]
            for p in masked:
                ids[p] = wordpiece.mask_token_id
            assert seen[(tuple(ids), sentence.positions[token])] == value


def test_l2r_masks_the_later_tokens_of_the_same_word(wordpiece):
    encoded = encode_with_tokenizer(items(), wordpiece, template=True, max_length=None)
    targets = [list(range(e.n_tokens))[::-1] for e in encoded]  # any order of wanted tokens
    ragged = l2r_masked(encoded, targets)
    flat = [(s, t) for s, wanted in zip(encoded, targets, strict=True) for t in wanted]
    assert len(ragged.offsets) == len(flat) + 1
    assert any(ragged.offsets[i + 1] - ragged.offsets[i] > 1 for i in range(len(flat)))
    for i, (sentence, token) in enumerate(flat):
        got = ragged.values[ragged.offsets[i]:ragged.offsets[i + 1]].tolist()
        assert got == l2r_masked_positions(sentence, token)


def test_causal_rows_end_at_the_last_wanted_token():
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("causal", "bytebpe"))
    forward = RecordingForward()
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir("causal", "bytebpe"))
    scorer = CausalScorer(tokenizer, model, torch.device("cpu"), 4096)
    scorer.runner.forward = forward
    encoded = [e for e in scorer.encode(items()) if e.skipped is None]
    targets = [[1, 2] if e.n_tokens > 3 else list(range(e.n_tokens)) for e in encoded]
    scores = scorer.score(encoded, "ppl", targets)
    lengths = sorted(int(a.sum()) for _, mask, _ in forward.inputs for a in mask)
    assert lengths == sorted(max(e.positions[t] for t in w) + 1
                             for e, w in zip(encoded, targets, strict=True))
    for sentence, wanted, values in zip(encoded, targets, scores, strict=True):
        # the value for token t is read at the position before it (the input id there)
        assert values.tolist() == [sentence.input_ids[sentence.positions[t] - 1] for t in wanted]


def test_policy_defaults_by_device():
    assert BatchPolicy.for_device(torch.device("cpu")) == BatchPolicy()
    gpu = BatchPolicy.for_device(torch.device("cuda"))
    assert gpu.prefetch and gpu.pinned and gpu.attention == "flash" and not gpu.same_shape
    assert gpu.square_mask and not BatchPolicy.for_device(torch.device("cuda"), sdpa=False
                                                          ).square_mask


def test_square_mask_is_the_mask_transformers_builds():
    """gpu_feed.square_mask gives SDPA what transformers builds from a padded (B, L) mask:
    True where a query may attend a key (every real key; causal: up to the query itself)."""
    from spudflow.core.gpu_feed import square_mask

    padding = torch.tensor([[1, 1, 1], [1, 1, 0]])
    both = square_mask(padding, causal=False)
    assert both.shape == (2, 1, 3, 3) and both.dtype == torch.bool
    assert both[1, 0].tolist() == [[True, True, False]] * 3 and both[0].all()
    causal = square_mask(padding, causal=True)
    assert causal[0, 0].tolist() == [[True, False, False], [True, True, False],
                                     [True, True, True]]
    assert causal[1, 0].tolist() == [[True, False, False], [True, True, False],
                                     [True, True, False]]


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_square_masks_score_alike(wordpiece, kind):
    """With BatchPolicy.square_mask (on for SDPA models on a GPU: transformers takes a square
    mask as given, with no sync to look for padding) the scores are the (B, L) mask's, to the
    bit: padded batches get the mask transformers would build, unpadded ones none, as it would
    decide."""
    auto = {"masked": AutoModelForMaskedLM, "causal": AutoModelForCausalLM}[kind]
    scorer_class = {"masked": MaskedScorer, "causal": CausalScorer}[kind]
    tokenizer = wordpiece if kind == "masked" else AutoTokenizer.from_pretrained(
        tiny_model_dir("causal", "bytebpe"))
    model = auto.from_pretrained(tiny_model_dir(kind, "wordpiece" if kind == "masked"
                                                else "bytebpe"), attn_implementation="sdpa")
    scorer = scorer_class(tokenizer, model, torch.device("cpu"), 64)
    method = "pppl" if kind == "masked" else "ppl"
    encoded = scorer.encode(items())
    targets = [list(range(e.n_tokens)) for e in encoded]
    plain = scorer.score(encoded, method, targets)
    seen = []
    forward = scorer.runner.forward

    def recording(input_ids, attention_mask, *rest):
        seen.append(None if attention_mask is None else attention_mask.dim())
        return forward(input_ids, attention_mask, *rest)

    scorer.runner.forward = recording
    scorer.runner.policy = BatchPolicy(square_mask=True)
    squared = scorer.score(encoded, method, targets)
    assert all(np.array_equal(a, b) for a, b in zip(plain, squared, strict=True))
    assert 4 in seen and 2 not in seen


def test_an_unpadded_batch_gets_no_square_mask():
    """With square masks a batch whose rows all fill its padded length has no mask at all, as
    transformers decides for an all-ones (B, L) mask; a padded batch gets the square one."""
    seen = []

    def forward(input_ids, attention_mask, flat_positions, targets):
        seen.append((input_ids.shape[1], None if attention_mask is None
                     else tuple(attention_mask.shape)))
        return input_ids.reshape(-1)[flat_positions].float()

    run([2 * LENGTH_STEP, 2 * LENGTH_STEP, 3], 1000, forward, square_mask=True)
    assert seen == [(2 * LENGTH_STEP, None),
                    (LENGTH_STEP, (1, 1, LENGTH_STEP, LENGTH_STEP))]


@pytest.mark.slow
def test_compiled_base_model_scores_alike(wordpiece, monkeypatch):
    """BatchPolicy.compile compiles the base model's forward only: the hook that gathers the
    scored positions, a new closure every call, stays outside (dynamo's eager backend here, so
    the test needs no compiler and the values are the eager ones)."""
    import functools

    model = AutoModelForMaskedLM.from_pretrained(tiny_model_dir("masked", "wordpiece"))
    encoded = encode_with_tokenizer(items(), wordpiece, template=True, max_length=None)
    targets = [list(range(e.n_tokens)) for e in encoded]
    plain = MaskedScorer(wordpiece, model, torch.device("cpu"), 256).score(encoded, "pppl",
                                                                          targets)
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="eager"))
    scorer = MaskedScorer(wordpiece, model, torch.device("cpu"), 256)
    scorer.runner.policy = BatchPolicy(compile=True)
    for _ in range(2):  # the second call runs the compiled code again, with a new hook
        compiled = scorer.score(encoded, "pppl", targets)
        assert all(np.array_equal(a, b) for a, b in zip(plain, compiled, strict=True))
    assert scorer._compiled
