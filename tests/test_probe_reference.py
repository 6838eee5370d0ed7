"""Where the probe follows the DepProbe reference code (personads/depprobe, the code that made
the SPUD paper's probe tables): early stopping and its ties."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from spudflow.probe import train
from spudflow.probe.data import ProbeSet
from spudflow.probe.labels import UD_RELATIONS
from spudflow.probe.words import SentenceWords

LABELS = sorted(UD_RELATIONS)


def tiny_set(n_sentences: int = 6, width: int = 8, seed: int = 0) -> ProbeSet:
    """A ProbeSet of random features over chain trees (word k heads word k+1, the last is the
    root), enough for train_probe to run."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(4, 8, size=n_sentences)
    heads = [np.array([*range(2, n + 1), 0], dtype=np.int64) for n in lengths]
    deprels = [["nsubj"] * (n - 1) + ["root"] for n in lengths]
    words = SentenceWords(np.arange(n_sentences, dtype=np.int64),
                          [[f"w{k}" for k in range(n)] for n in lengths], heads, deprels,
                          [["NOUN"] * n for n in lengths], list(range(n_sentences)))
    values = torch.from_numpy(rng.normal(size=(int(lengths.sum()) + 1, width))
                              .astype(np.float16))
    values[-1] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return ProbeSet("tiny", words, values, values, offsets, lengths.astype(np.int64), 0, 0)


def scripted_losses(monkeypatch, losses: list[float]) -> None:
    """Selection losses of epoch 1, 2, ... as given (the last repeated)."""
    calls = iter(range(10_000))
    monkeypatch.setattr(train, "_mean_loss", lambda *a: losses[min(next(calls),
                                                                   len(losses) - 1)])


def test_a_tie_keeps_the_later_epoch_and_any_decrease_improves(monkeypatch):
    # Epoch 2 is 5e-5 (relative) below epoch 1, epoch 3 ties it. The reference keeps the
    # last epoch of the lowest loss (3) and stops `patience` epochs after its first (2 + 3).
    scripted_losses(monkeypatch, [1.0, 0.99995, 0.99995, 1.0])
    trained = train.train_probe(tiny_set(), tiny_set(seed=1),
                                train.TrainSettings(LABELS, rank=4, patience=3, max_epochs=30))
    assert trained.best_epoch == 3
    assert len(trained.history) == 5


def test_training_stops_patience_epochs_after_the_best(monkeypatch):
    scripted_losses(monkeypatch, [1.0, 0.5, 0.6, 0.7, 0.4, 0.45, 0.41, 0.42, 0.3])
    trained = train.train_probe(tiny_set(), tiny_set(seed=1),
                                train.TrainSettings(LABELS, rank=4, patience=3, max_epochs=30))
    assert trained.best_epoch == 5
    assert len(trained.history) == 8


class FixedScores(torch.nn.Module):
    """A stand-in probe: distances that make a chain, labels that favour `favoured` everywhere
    and `root` on each sentence's last word."""

    def __init__(self, favoured: str):
        super().__init__()
        self.favoured = LABELS.index(favoured)

    def forward(self, dist: torch.Tensor, label: torch.Tensor):
        b, n, _ = dist.shape
        positions = torch.arange(n, dtype=torch.float32)
        distances = (positions[:, None] - positions[None, :]).abs().expand(b, n, n)
        logits = torch.zeros(b, n, len(LABELS))
        logits[..., self.favoured] = 5.0
        return distances, logits


def acl_set() -> ProbeSet:
    """tiny_set with every non-root word's gold label `acl`, and a root the probe finds."""
    data = tiny_set()
    data.words.deprels = [["acl"] * (n - 1) + ["root"] for n in data.lengths]
    return data


def scores_of(data: ProbeSet, probe, quirk: bool) -> tuple[dict, list[list[str]]]:
    settings = train.TrainSettings(LABELS, acl_predicted_as_unk=quirk)
    predictions = train.predict(probe, data, settings)
    return train.evaluate(data, predictions, settings), predictions.labels


def root_on_last_word(monkeypatch):
    """decode's root: the last word of each sentence (the stand-in gives no root scores)."""
    real = train.decode

    def decode(distances, log_probs, root):
        log_probs = log_probs.copy()
        log_probs[-1, root] = 0.0
        return real(distances, log_probs, root)

    monkeypatch.setattr(train, "decode", decode)


def test_a_predicted_acl_is_right_by_default_and_never_as_the_reference_scores(monkeypatch):
    root_on_last_word(monkeypatch)
    data = acl_set()
    n_words, n_sentences = int(data.lengths.sum()), len(data)
    plain, labels = scores_of(data, FixedScores("acl"), quirk=False)
    assert plain["relacc"] == plain["las"] == plain["uas"] == 1.0
    assert {label for sentence in labels for label in sentence} == {"acl", "root"}
    reference, labels = scores_of(data, FixedScores("acl"), quirk=True)
    # The reference's predict.py writes `acl` as UNK: only the roots' labels are right.
    assert {label for sentence in labels for label in sentence} == {"UNK", "root"}
    assert reference["uas"] == 1.0
    assert reference["relacc"] == reference["las"] == n_sentences / n_words
    assert reference["root_acc"] == plain["root_acc"] == 1.0


def test_the_quirk_touches_no_other_label(monkeypatch):
    root_on_last_word(monkeypatch)
    data = tiny_set()  # gold nsubj
    plain, plain_labels = scores_of(data, FixedScores("nsubj"), quirk=False)
    reference, labels = scores_of(data, FixedScores("nsubj"), quirk=True)
    assert reference == plain and labels == plain_labels
    assert plain["relacc"] == 1.0


# the file a set was loaded from: only messages name it
FEATURES = Path("tiny.safetensors")


def test_a_cap_keeps_a_seeded_sample_and_the_filter_counts(caplog):
    from spudflow.probe.seed_runs import cap

    data = tiny_set(n_sentences=12)
    data.n_short, data.n_too_long = 3, 1
    with caplog.at_level("INFO", logger="spudflow.probe"):
        kept = cap(data, 5, 42, FEATURES)
    assert "tiny: 5 of 12 sentences kept (at most 5, seed 42)" in caplog.text
    assert len(kept) == 5 and (kept.n_short, kept.n_too_long) == (3, 1)
    picks = kept.words.sent_index.tolist()
    assert picks == sorted(picks) and len(set(picks)) == 5
    assert cap(data, 5, 42, FEATURES).words.sent_index.tolist() == picks
    assert any(cap(data, 5, s, FEATURES).words.sent_index.tolist() != picks for s in range(5))
    # each kept sentence keeps its own features
    first = picks[0]
    assert torch.equal(kept.dist[:kept.lengths[0]],
                       data.dist[data.offsets[first]:data.offsets[first + 1]])
    assert cap(data, None, 42, FEATURES) is data and cap(data, 12, 42, FEATURES) is data


def _reference_tokenizer(tokenizer):
    """The reference's way: the same tokenizer with `add_prefix_space=True` (its ByteLevel
    pre-tokenizer's), to be called with `is_split_into_words=True`."""
    import copy

    from tokenizers import pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = copy.deepcopy(tokenizer.backend_tokenizer)
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    return PreTrainedTokenizerFast(tokenizer_object=backend)


SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."],
             ["She", "does", "n't", "think", "so", "!"],
             ["Colourless", "green", "ideas", "sleep", "furiously", "."]]


def test_byte_level_words_all_start_with_the_prefix_as_the_reference_tokenizes():
    from scoring_models import hf_tokenizer

    from spudflow.probe.features import encode_sentence, encode_sentences, leading_space

    tokenizer = hf_tokenizer("bytebpe")
    assert leading_space(tokenizer)
    reference = _reference_tokenizer(tokenizer)
    encoded = encode_sentences(tokenizer, SENTENCES)
    for forms, (ids, words) in zip(SENTENCES, encoded, strict=True):
        assert ids == reference(forms, is_split_into_words=True)["input_ids"]
        tokens = tokenizer.convert_ids_to_tokens(ids)
        first = [t for t, w in zip(tokens, words, strict=True) if w == 0]
        assert first[0].startswith("Ġ")  # the first word too: "ĠThe", not "The"
        # every word's first token is a word start, and the words keep their order
        starts = [t for k, (t, w) in enumerate(zip(tokens, words, strict=True))
                  if w >= 0 and (k == 0 or words[k - 1] != w)]
        assert len(starts) == len(forms) and all(t.startswith("Ġ") for t in starts)
        assert [w for w in words if w >= 0] == sorted(w for w in words if w >= 0)
        assert encode_sentence(tokenizer, forms) == (ids, words)


def test_a_tokenizer_that_adds_its_own_prefix_or_none_is_given_the_plain_text():
    from scoring_models import hf_tokenizer

    from spudflow.probe.features import encode_sentences, leading_space

    for tokenizer in (hf_tokenizer("wordpiece"), hf_tokenizer("metaspace"),
                      _reference_tokenizer(hf_tokenizer("bytebpe"))):
        assert not leading_space(tokenizer)
        for forms, (ids, _) in zip(SENTENCES, encode_sentences(tokenizer, SENTENCES),
                                   strict=True):
            assert ids == tokenizer(" ".join(forms))["input_ids"]


def test_the_feature_file_records_the_leading_space(tmp_path):
    import json

    from probe_support import ewt_sentences, feature_file, save_tiny_encoder
    from safetensors import safe_open
    from scoring_models import tiny_model_dir

    from spudflow.cli import main

    (tmp_path / "s.conllu").write_text(ewt_sentences("dev", 0, 6), encoding="utf-8")
    assert main(["ingest", str(tmp_path / "s.conllu"), "--out", str(tmp_path / "s")]) == 0

    def metadata(model, name):
        out = tmp_path / f"{name}.safetensors"
        assert feature_file(tmp_path / "s", model, "0,1", out) == 0
        with safe_open(str(out), framework="numpy") as handle:
            return json.loads(handle.metadata()["spudflow"])

    assert metadata(tiny_model_dir("causal", "bytebpe"), "gpt2")["leading_space"] == "true"
    assert "leading_space" not in metadata(save_tiny_encoder(tmp_path / "bert"), "bert")


def test_reference_batches_are_a_seeded_permutation_cut_in_order():
    # The reference's DepSpaceDataset draws each batch uniformly without replacement from the
    # sentences left: a random permutation cut into batches, blind to length.
    lengths = np.arange(4, 4 + 70)  # sorted, so length buckets would be runs of neighbours
    drawn = train._batches(lengths, 32, torch.Generator().manual_seed(7), "reference")
    permutation = torch.randperm(70, generator=torch.Generator().manual_seed(7)).numpy()
    assert [len(b) for b in drawn] == [32, 32, 6]
    assert np.array_equal(np.concatenate(drawn), permutation)
    buckets = train._batches(lengths, 32, torch.Generator().manual_seed(7), "buckets")
    assert sorted(len(b) for b in buckets) == [6, 32, 32]
    assert all(np.array_equal(np.sort(b), np.arange(b.min(), b.max() + 1)) for b in buckets)
    assert not all(np.array_equal(np.sort(b), np.arange(b.min(), b.max() + 1)) for b in drawn)


def batch_loss(probe, data, picks, index) -> float:
    from spudflow.probe.data import make_batch
    from spudflow.probe.loss import probe_loss

    batch = make_batch(data, picks, index, False)
    with torch.no_grad():
        return float(probe_loss(*probe(batch.dist, batch.label), batch.gold_distances,
                                batch.gold_labels, batch.lengths)[0])


def test_reference_selection_loss_is_the_mean_of_uniform_batches_losses():
    # The reference's train.py selects on np.mean of the epoch's batch losses over batches its
    # DepSpaceDataset draws uniformly; buckets select on the mean per sentence, in order.
    data = tiny_set(n_sentences=5)
    index = {label: i for i, label in enumerate(LABELS)}
    probe = FixedScores("nsubj")
    reference = train.TrainSettings(LABELS, batch_size=2, batches="reference")
    got = train._mean_loss(probe, data, reference, index, torch.Generator().manual_seed(3))
    order = torch.randperm(5, generator=torch.Generator().manual_seed(3)).numpy()
    batches = [order[0:2], order[2:4], order[4:5]]
    assert got == pytest.approx(np.mean([batch_loss(probe, data, b, index) for b in batches]))
    buckets = train.TrainSettings(LABELS, batch_size=2)
    in_order = [np.arange(0, 2), np.arange(2, 4), np.arange(4, 5)]
    per_sentence = sum(batch_loss(probe, data, b, index) * len(b) for b in in_order) / 5
    assert train._mean_loss(probe, data, buckets, index) == pytest.approx(per_sentence)
    assert got != pytest.approx(per_sentence)


def test_a_reference_batched_probe_trains_to_the_byte_per_seed():
    settings = train.TrainSettings(LABELS, rank=4, max_epochs=3, batch_size=2,
                                   batches="reference")
    runs = [train.train_probe(tiny_set(), tiny_set(seed=1), settings) for _ in range(2)]
    assert runs[0].history == runs[1].history
    buckets = train.train_probe(tiny_set(), tiny_set(seed=1),
                                train.TrainSettings(LABELS, rank=4, max_epochs=3, batch_size=2))
    assert buckets.history != runs[0].history
