"""Word features from a frozen encoder: per syntactic word and layer, the mean of the vectors of
the word's subword tokens, aligned by character offsets (core/alignment.py).

Sentences are processed in blocks of consecutive sentences; inside a block they are sorted by
length and batched. Shard i of n is a contiguous range of whole blocks, so a sharded run computes
exactly the batches of the unsharded one and the gathered file is byte-identical to it.

The sentences are tokenized in one call and aligned all at once. On a GPU the host keeps ahead
of the device (core/gpu_feed.py): a thread builds the next batches into pinned memory, the word
means are taken on the device and come back once per block, rows are padded to a multiple of 8
(fewer shapes) and SDPA stays off cuDNN's per-shape plans. A word's mean is the same sum in the
same order on either side (its tokens added one by one, then divided), so on the CPU the
features are the bits they always were.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from itertools import chain

import numpy as np
import torch

from spudflow.core.alignment import anchor_span, anchor_spans, word_of_span, words_of_spans
from spudflow.core.batching import pad_rows
from spudflow.core.device_map import execution_device
from spudflow.core.errors import InputError
from spudflow.core.gpu_feed import attention_backends, paused_gc, prefetched, square_mask
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.slow_offsets import UnalignedToken
from spudflow.core.tokenize import tokenize
from spudflow.probe.encoder import Encoder, square_mask_direction
from spudflow.probe.feature_file import Features
from spudflow.probe.words import SentenceWords, sentence_text

log = get_logger(__name__)

# On a GPU: rows padded to a multiple of this many tokens, batches prepared ahead.
GPU_LENGTH_STEP = 8
GPU_PREFETCH = 2


def leading_space(tokenizer) -> bool:
    """Whether the words are given with a space before the first one: for a byte-level BPE
    tokenizer (GPT-2, RoBERTa, mGPT) whose pre-tokenizer adds none. The DepProbe reference
    loads every tokenizer with `add_prefix_space=True` and passes the words pre-split
    (`is_split_into_words=True`), so every word, the first included, gets its `Ġ`-marked
    tokens; joined by spaces alone, the first word would get the tokens of a word inside
    another. Other tokenizers (WordPiece: no such mark; Metaspace: adds its own) are
    unaffected."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    pre_tokenizer = None if backend is None else backend.pre_tokenizer
    return pre_tokenizer is not None and _byte_level_without_prefix(
        json.loads(pre_tokenizer.__getstate__()))


def _byte_level_without_prefix(node: dict) -> bool:
    if node.get("type") == "Sequence":
        return any(_byte_level_without_prefix(part) for part in node["pretokenizers"])
    return node.get("type") == "ByteLevel" and not node.get("add_prefix_space", False)


def encode_sentence(tokenizer, forms: list[str]) -> tuple[list[int], list[int]]:
    """Input ids (special tokens included) and, per id, the word it belongs to (-1: none)."""
    text, starts, ends = sentence_text(forms, leading_space(tokenizer))
    encoded = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True,
                        split_special_tokens=True)
    token_words = []
    for (s, e), special in zip(encoded["offset_mapping"], encoded["special_tokens_mask"],
                               strict=True):
        word = None if special else word_of_span(anchor_span(text, s, e), starts, ends)
        token_words.append(-1 if word is None else word)
    return list(encoded["input_ids"]), token_words


def encode_sentences(tokenizer, sentences: list[list[str]]) -> list[tuple[list[int], list[int]]]:
    """encode_sentence of every sentence, with one tokenizer call and the alignment of all
    tokens at once."""
    if not sentences:
        return []
    leading = leading_space(tokenizer)
    texts, word_starts, word_ends = zip(*(sentence_text(forms, leading) for forms in sentences),
                                        strict=True)
    ids, specials, offset_lists = tokenize(tokenizer, texts, add_special_tokens=True)
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    total = int(lengths.sum())
    special = np.fromiter(chain.from_iterable(specials), dtype=np.int64, count=total)
    offsets = np.fromiter(chain.from_iterable(chain.from_iterable(offset_lists)),
                          dtype=np.int64, count=2 * total).reshape(total, 2)
    text_of = np.repeat(np.arange(len(ids)), lengths)
    starts, ends = anchor_spans(texts, text_of, offsets[:, 0], offsets[:, 1])
    words = words_of_spans(starts, ends, text_of, word_starts, word_ends)
    words = np.where(special == 0, words, -1).tolist()
    cuts = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    return [(list(ids[i]), words[cuts[i]:cuts[i + 1]]) for i in range(len(ids))]


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


@dataclass
class HostBatch:
    tensors: tuple[torch.Tensor, ...]  # input_ids, attention_mask, (words, tokens) token index
    rows: np.ndarray                   # the words' rows in the result arrays
    padded: bool                       # some row has pad tokens


def _host_batch(batch: list[int], encoded: dict, row_of: dict, pad_id: int, length_step: int,
                pinned: bool) -> HostBatch:
    """A batch's padded input and, per word with tokens (in row order), the flat indices of its
    tokens in the (rows x length) output, -1 beyond its last."""
    longest = max(len(encoded[i][0]) for i in batch)
    ids, mask = pad_rows([encoded[i][0] for i in batch], pad_id,
                         -(-longest // length_step) * length_step)
    words, _ = pad_rows([[row_of[i] + w if w >= 0 else -1 for w in encoded[i][1]]
                         for i in batch], -1, ids.shape[1])
    words = words.numpy().reshape(-1)
    tokens = np.flatnonzero(words >= 0)  # row-major: each word's tokens in order
    rows, counts = np.unique(words[tokens], return_counts=True)
    by_word = tokens[np.argsort(words[tokens], stable=True)]
    starts = np.cumsum(counts) - counts
    table = np.full((len(rows), int(counts.max(initial=0))), -1, dtype=np.int64)
    table[np.repeat(np.arange(len(rows)), counts),
          np.arange(len(by_word)) - np.repeat(starts, counts)] = by_word
    padded = not bool(mask.all())
    tensors = (ids, mask, torch.from_numpy(table))
    if pinned:
        tensors = tuple(t.pin_memory() for t in tensors)
    return HostBatch(tensors, rows, padded)


def word_means(states: list[torch.Tensor], table: torch.Tensor) -> torch.Tensor:
    """(layers, words, hidden) float32 means of the token vectors `table` points at, in each of
    the (rows, length, hidden) `states`: the tokens added one at a time in order, as index_add_
    on the CPU does, then divided by their number. All layers at once: a kernel launch per
    token rank, not per rank and layer."""
    flat = torch.stack(states).flatten(1, 2)  # (layers, rows x length, hidden)
    sums = torch.zeros(flat.shape[0], table.shape[0], flat.shape[2], device=flat.device)
    for k in range(table.shape[1]):
        index = table[:, k]
        present = (index >= 0)[:, None]
        sums = torch.where(present, sums + flat[:, index.clamp(min=0)].float(), sums)
    counts = (table >= 0).sum(1, dtype=torch.float32)
    return sums / counts[:, None]


FLOAT16_MAX = float(np.finfo(np.float16).max)


def _check_float16_range(block_means: np.ndarray, model: str, layers: list[int]) -> None:
    """Features are stored as float16: a mean beyond its range would be stored as infinity."""
    largest = np.abs(block_means).max(axis=(1, 2), initial=0.0)
    for k, value in enumerate(largest):
        if not value <= FLOAT16_MAX:
            raise ValueError(f"{model}: layer {layers[k]} has a word vector value of {value:.4g}, "
                             f"beyond float16's {FLOAT16_MAX:.0f}: the feature file cannot hold it")


def encoded_sentences(encoder: Encoder, words: SentenceWords, positions
                      ) -> list[tuple[list[int], list[int]]]:
    """encode_sentences of the sentences at `positions`; a token that cannot be placed is bad
    input naming its sentence."""
    try:
        with paused_gc():
            return encode_sentences(encoder.tokenizer, [words.forms[i] for i in positions])
    except UnalignedToken as error:  # a slow tokenizer's token its sentence cannot place
        sentence = positions[error.text_index]
        raise InputError(encoder.model.name_or_path, None,
                         f"sentence {words.sent_index[sentence]} (line "
                         f"{words.lines[sentence]}): {error}") from None


@torch.inference_mode()
def extract(encoder: Encoder, words: SentenceWords, positions: range, layers: list[int],
            block_size: int, batch_tokens: int, max_batch: int = 256,
            gpu_feed: bool | None = None) -> Features:
    """Features of the sentences at `positions` (see the module docstring). `gpu_feed`: the
    GPU's way of batching (default: on a GPU)."""
    tokenizer, model = encoder.tokenizer, encoder.model
    device = execution_device(model, next(model.parameters()).device)
    gpu = device.type == "cuda" if gpu_feed is None else gpu_feed
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    # on the GPU feed, the padding mask as SDPA's square one where the model takes it
    causal = square_mask_direction(model) if gpu else None
    encoded = dict(zip(positions, encoded_sentences(encoder, words, positions), strict=True))
    for i in positions:  # a word no token stands for would get a made-up vector
        missing = set(range(len(words.forms[i]))) - set(encoded[i][1])
        if missing:
            word = min(missing)
            raise InputError(model.name_or_path, None,
                             f"sentence {words.sent_index[i]} (line {words.lines[i]}): word "
                             f"{word + 1} {words.forms[i][word]!r} has no token under this "
                             "tokenizer (characters it drops), so it would have no vector")
    too_long = [i for i in positions if len(encoded[i][0]) > encoder.max_length]
    for i in too_long:
        log.warning("sentence %d (line %d): %d tokens > %d, left out", words.sent_index[i],
                    words.lines[i], len(encoded[i][0]), encoder.max_length)
    kept = [i for i in positions if len(encoded[i][0]) <= encoder.max_length]
    n_words = [len(words.forms[i]) for i in kept]
    offsets = np.concatenate([[0], np.cumsum(n_words)]).astype(np.int64)
    row_of = {i: int(offsets[k]) for k, i in enumerate(kept)}
    hidden = model.config.hidden_size
    # The float16 result: 2 bytes per word, hidden unit and layer (float32 sums of the whole
    # split took 3x that: 25 GB for German HDT's training set with a base model).
    values = {layer: np.zeros((int(offsets[-1]), hidden), dtype=np.float16) for layer in layers}
    lengths = {i: len(encoded[i][0]) for i in kept}
    blocks: dict[int, list[int]] = {}  # numbered by global position, as shards are cut
    for i in kept:
        blocks.setdefault(i // block_size, []).append(i)
    plans = [list(_batches(sorted(block, key=lambda i: (lengths[i], i)), lengths, batch_tokens,
                           max_batch)) for block in blocks.values()]
    batches = prefetched((_host_batch(batch, encoded, row_of, pad_id,
                                      GPU_LENGTH_STEP if gpu else 1, device.type == "cuda")
                          for plan in plans for batch in plan), GPU_PREFETCH if gpu else 0)
    with contextlib.closing(batches), attention_backends("flash" if gpu else "auto", device):
        for plan in progress(plans, "feature blocks", unit="block"):
            means, rows = [], []
            for _ in plan:
                batch = next(batches)
                ids, mask, table = (t.to(device, non_blocking=True) for t in batch.tensors)
                if causal is not None:  # as transformers would, without a sync per batch
                    mask = square_mask(mask, causal) if batch.padded else None
                output = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
                # .to: a model split across GPUs leaves its layers' states on theirs
                means.append(word_means([output.hidden_states[layer].to(device)
                                         for layer in layers], table))
                rows.append(batch.rows)
            if rows:  # the block's words come back in one copy
                block_means = torch.cat(means, dim=1).cpu().numpy()
                rows_of_block = np.concatenate(rows)
                _check_float16_range(block_means, model.name_or_path, layers)
                for k, layer in enumerate(layers):
                    values[layer][rows_of_block] = block_means[k].astype(np.float16)
    return Features(values, words.sent_index[kept], offsets,
                    [int(words.sent_index[i]) for i in too_long])
