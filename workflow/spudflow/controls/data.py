"""Training data of a control model: token ids of each sentence and a seeded batch order."""

from __future__ import annotations

import numpy as np
import torch


def encode(tokenizer, texts: list[str], kind: str, max_length: int) -> list[list[int]]:
    """Token ids of each sentence as the scorer will see it (BERT/ELECTRA: [CLS] … [SEP];
    GPT-2: BOS … EOS), cut to max_length. Training may cut long sentences; scoring never does."""
    if kind == "causal":
        ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
        bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
        return [([bos, *row, eos])[:max_length] for row in ids]
    return tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]


def sample_sentences(texts: list[str], n: int | None, seed: int) -> list[str]:
    """A seeded uniform sample of n sentences in their original order (all when n is None)."""
    if n is None or n >= len(texts):
        return texts
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=n, replace=False))
    return [texts[i] for i in keep]


def epoch_batches(lengths: list[int], batch_size: int,
                  generator: torch.Generator) -> list[list[int]]:
    """One epoch's batches of sentence indices: a seeded shuffle, sentences of similar length
    grouped within windows of 50 batches (less padding), then the batches shuffled."""
    order = torch.randperm(len(lengths), generator=generator).tolist()
    window = batch_size * 50
    batches = []
    for start in range(0, len(order), window):
        part = sorted(order[start:start + window], key=lambda i: lengths[i])
        batches += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def pad(rows: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention_mask), right-padded to the longest row."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        attention[i, :len(row)] = 1
    return ids, attention


def mask_tokens(ids: torch.Tensor, attention: torch.Tensor, special_ids: list[int],
                mask_id: int, vocab_size: int, probability: float,
                generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: `probability` of the ordinary tokens are chosen (at least one per
    batch); of those 80% become [MASK], 10% a random ordinary token, 10% stay. Returns the
    corrupted ids and the chosen positions."""
    ordinary = attention.bool() & ~torch.isin(ids, torch.tensor(special_ids))
    chosen = (torch.rand(ids.shape, generator=generator) < probability) & ordinary
    if not chosen.any() and ordinary.any():
        chosen.view(-1)[ordinary.view(-1).nonzero()[0]] = True
    draw = torch.rand(ids.shape, generator=generator)
    random_ids = torch.randint(len(special_ids), vocab_size, ids.shape, generator=generator)
    corrupted = ids.clone()
    corrupted[chosen & (draw < 0.8)] = mask_id
    swap = chosen & (draw >= 0.8) & (draw < 0.9)
    corrupted[swap] = random_ids[swap]
    return corrupted, chosen
