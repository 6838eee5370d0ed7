"""Probe features in batches: the sentences tokenized and aligned all at once are what one
sentence at a time gives; a word's mean is index_add_'s sum bit for bit; the GPU's way of
batching (a prefetch thread, rows padded to a multiple of 8) gives the same features up to the
last bits of float16."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from probe_support import ewt_sentences, save_tiny_encoder

from spudflow.probe.encoder import load_encoder
from spudflow.probe.features import encode_sentence, encode_sentences, extract, word_means
from spudflow.probe.words import SentenceWords

ODD = [["a" * 40, "b"], ["x", "  ", "y"], ["[MASK]", "typed"], ["naïve", "café", "日本語"]]
# extract refuses a word of no token ("  "): the odd sentences every word of which has one
ODD_WITH_TOKENS = [s for s in ODD if all(w.strip() for w in s)]


def forms_of_ewt(count):
    import conllu

    return [[t["form"] for t in s if isinstance(t["id"], int)]
            for s in conllu.parse(ewt_sentences("dev", 0, count))]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return load_encoder(str(save_tiny_encoder(tmp_path_factory.mktemp("enc") / "encoder")),
                        [0, 1, 2], None, 0, None, "cpu")


def test_all_at_once_encoding_is_sentence_by_sentence(encoder):
    sentences = forms_of_ewt(60) + ODD
    assert encode_sentences(encoder.tokenizer, sentences) == [
        encode_sentence(encoder.tokenizer, forms) for forms in sentences]
    assert encode_sentences(encoder.tokenizer, []) == []


def test_word_means_are_index_add_bit_for_bit():
    generator = torch.Generator().manual_seed(3)
    states = torch.randn(3, 10, 16, generator=generator) * 100
    # words of 1 to 4 tokens, some tokens of no word, tokens in row-major order
    word_of = torch.tensor([-1, 0, 0, 1, 2, 2, 2, 2, -1, -1,
                            -1, 3, 4, 4, 5, -1, -1, -1, -1, -1,
                            -1, 6, 6, 6, 7, 8, 8, -1, -1, -1])
    keep = word_of >= 0
    words, local = torch.unique(word_of[keep], return_inverse=True)
    reference = torch.zeros(len(words), 16).index_add_(
        0, local, states.reshape(-1, 16)[keep])
    reference /= torch.zeros(len(words)).index_add_(0, local, torch.ones(len(local)))[:, None]
    width = 4
    table = torch.full((len(words), width), -1)
    for w in range(len(words)):
        tokens = torch.nonzero(word_of == w).reshape(-1)
        table[w, :len(tokens)] = tokens
    means = word_means([states, 2 * states], table)
    assert torch.equal(means[0], reference) and means.shape == (2, len(words), 16)


def test_the_gpu_way_of_batching_gives_the_same_features(encoder):
    sentences = forms_of_ewt(40) + ODD_WITH_TOKENS
    words = SentenceWords(np.arange(len(sentences)), sentences, None, None,
                          [["X"] * len(f) for f in sentences], list(range(len(sentences))))
    shapes = []
    hook = encoder.model.register_forward_hook(
        lambda module, args, kwargs, output: shapes.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True)
    try:
        plain = extract(encoder, words, range(len(sentences)), [0, 1, 2], 16, 400,
                        gpu_feed=False)
        plain_shapes, shapes[:] = list(shapes), []
        fed = extract(encoder, words, range(len(sentences)), [0, 1, 2], 16, 400, gpu_feed=True)
    finally:
        hook.remove()
    assert [rows for rows, _ in shapes] == [rows for rows, _ in plain_shapes]
    assert all(length % 8 == 0 for _, length in shapes)
    assert any(length % 8 for _, length in plain_shapes)
    assert (fed.word_offsets == plain.word_offsets).all() and fed.too_long == plain.too_long
    for layer in (0, 1, 2):
        assert np.abs(fed.layers[layer].astype(np.float32)
                      - plain.layers[layer].astype(np.float32)).max() < 1e-2
        assert (plain.layers[layer] != 0).any(axis=1).mean() > 0.99


def test_square_masks_give_the_same_features(encoder, monkeypatch):
    """On the GPU feed an SDPA encoder gets a padded batch's mask as SDPA's square one (an
    unpadded batch's as none), which transformers takes as given instead of syncing with the
    device to look for padding: the features are the (B, L) mask's to the bit."""
    import spudflow.probe.features as features
    from spudflow.probe.encoder import square_mask_direction

    assert square_mask_direction(encoder.model) is False  # a BERT with SDPA: bidirectional
    sentences = forms_of_ewt(40) + ODD_WITH_TOKENS
    words = SentenceWords(np.arange(len(sentences)), sentences, None, None,
                          [["X"] * len(f) for f in sentences], list(range(len(sentences))))
    masks = []
    hook = encoder.model.register_forward_hook(
        lambda module, args, kwargs, output: masks.append(
            None if kwargs["attention_mask"] is None else kwargs["attention_mask"].dim()),
        with_kwargs=True)
    try:
        squared = extract(encoder, words, range(len(sentences)), [0, 1, 2], 16, 400,
                          gpu_feed=True)
        seen, masks[:] = list(masks), []
        monkeypatch.setattr(features, "square_mask_direction", lambda model: None)
        plain = extract(encoder, words, range(len(sentences)), [0, 1, 2], 16, 400,
                        gpu_feed=True)
    finally:
        hook.remove()
    assert 4 in seen and set(masks) == {2}
    for layer in (0, 1, 2):
        assert np.array_equal(squared.layers[layer], plain.layers[layer])


def test_a_word_no_token_stands_for_is_bad_input_not_a_zero_vector(encoder):
    """A word made only of characters the tokenizer drops has no token to average: its feature
    would be made up (it was a zero vector), so the sentence is named and the job stops."""
    from spudflow.core.errors import InputError

    sentences = [["The", "cat"], ["a", "\u200b", "b"]]
    words = SentenceWords(np.arange(2), sentences, None, None,
                          [["X"] * len(f) for f in sentences], [1, 5])
    with pytest.raises(InputError, match=r"sentence 1 \(line 5\): word 2 '\\u200b' has no token"):
        extract(encoder, words, range(2), [0, 1], 16, 400)


def test_features_beyond_float16_are_refused_not_stored_as_infinity():
    from spudflow.probe.features import _check_float16_range

    fine = np.full((2, 3, 4), 65504.0, dtype=np.float32)
    _check_float16_range(fine, "m", [6, 7])
    fine[1, 2, 3] = -7e4
    with pytest.raises(ValueError, match="m: layer 7 has a word vector value of 7e\\+04"):
        _check_float16_range(fine, "m", [6, 7])


def test_an_encoder_saved_in_float16_extracts_in_float32(tmp_path):
    """transformers 5 loads a model in the dtype its config names; the reference's (4.x) loaded
    float32, and so does the probe, whatever the checkpoint's dtype."""
    path = save_tiny_encoder(tmp_path / "encoder")
    from transformers import AutoModel

    AutoModel.from_pretrained(path).to(torch.float16).save_pretrained(path)
    for baseline in (None, "MR", "MRC"):
        encoder = load_encoder(str(path), [0, 1], baseline, 0, None, "cpu")
        assert next(encoder.model.parameters()).dtype == torch.float32, baseline
