"""Word features from a frozen encoder: per syntactic word and layer, the mean of the vectors of
the word's subword tokens, aligned by character offsets (core/alignment.py).

Sentences are processed in blocks of consecutive sentences; inside a block they are sorted by
length and batched. Shard i of n is a contiguous range of whole blocks, so a sharded run computes
exactly the batches of the unsharded one and the gathered file is byte-identical to it.
"""

from __future__ import annotations

import numpy as np
import torch

from spudflow.core.alignment import anchor_span, word_of_span
from spudflow.core.batching import pad_rows
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.probe.encoder import Encoder
from spudflow.probe.feature_file import Features
from spudflow.probe.words import SentenceWords, sentence_text

log = get_logger(__name__)


def encode_sentence(tokenizer, forms: list[str]) -> tuple[list[int], list[int]]:
    """Input ids (special tokens included) and, per id, the word it belongs to (-1: none)."""
    text, starts, ends = sentence_text(forms)
    encoded = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True,
                        split_special_tokens=True)
    token_words = []
    for (s, e), special in zip(encoded["offset_mapping"], encoded["special_tokens_mask"],
                               strict=True):
        word = None if special else word_of_span(anchor_span(text, s, e), starts, ends)
        token_words.append(-1 if word is None else word)
    return list(encoded["input_ids"]), token_words


def _batches(order: list[int], lengths: list[int], batch_tokens: int, max_batch: int):
    batch: list[int] = []
    for i in order:
        longest = max([lengths[j] for j in batch] + [lengths[i]])
        if batch and (longest * (len(batch) + 1) > batch_tokens or len(batch) >= max_batch):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


@torch.inference_mode()
def extract(encoder: Encoder, words: SentenceWords, positions: range, layers: list[int],
            block_size: int, batch_tokens: int, max_batch: int = 256) -> Features:
    """Features of the sentences at `positions` (see the module docstring)."""
    tokenizer, model = encoder.tokenizer, encoder.model
    device = next(model.parameters()).device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    encoded = {i: encode_sentence(tokenizer, words.forms[i]) for i in positions}
    too_long = [i for i in positions if len(encoded[i][0]) > encoder.max_length]
    for i in too_long:
        log.warning("sentence %d (line %d): %d tokens > %d, left out", words.sent_index[i],
                    words.lines[i], len(encoded[i][0]), encoder.max_length)
    kept = [i for i in positions if len(encoded[i][0]) <= encoder.max_length]
    n_words = [len(words.forms[i]) for i in kept]
    offsets = np.concatenate([[0], np.cumsum(n_words)]).astype(np.int64)
    row_of = {i: int(offsets[k]) for k, i in enumerate(kept)}
    hidden = model.config.hidden_size
    # The float16 result, filled batch by batch: a batch's words are averaged in float32 in a
    # buffer of their own, so the job holds 2 bytes per word, hidden unit and layer (float32 sums
    # of the whole split took 3x that: 25 GB for German HDT's training set with a base model).
    values = {layer: np.zeros((int(offsets[-1]), hidden), dtype=np.float16) for layer in layers}
    lengths = {i: len(encoded[i][0]) for i in kept}
    blocks: dict[int, list[int]] = {}  # numbered by global position, as shards are cut
    for i in kept:
        blocks.setdefault(i // block_size, []).append(i)
    for block in progress(list(blocks.values()), "feature blocks", unit="block"):
        order = sorted(block, key=lambda i: (lengths[i], i))
        for batch in _batches(order, lengths, batch_tokens, max_batch):
            ids, mask = pad_rows([encoded[i][0] for i in batch], pad_id)
            rows, _ = pad_rows([[row_of[i] + w if w >= 0 else -1 for w in encoded[i][1]]
                                for i in batch], -1)
            output = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                           output_hidden_states=True)
            keep = rows >= 0
            words_of_batch, local = torch.unique(rows[keep], return_inverse=True)
            counts = torch.zeros(len(words_of_batch)).index_add_(0, local,
                                                                 torch.ones(len(local)))
            denominator = counts.unsqueeze(1)  # a word without tokens keeps its zero vector
            for layer in layers:
                states = output.hidden_states[layer].float().cpu()
                sums = torch.zeros(len(words_of_batch), hidden).index_add_(0, local, states[keep])
                values[layer][words_of_batch.numpy()] = (sums / denominator).numpy().astype(
                    np.float16)
    return Features(values, words.sent_index[kept], offsets,
                    [int(words.sent_index[i]) for i in too_long])

