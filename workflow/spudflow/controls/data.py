"""Training data of a control model: token ids of each sentence, a seeded sample of sentences and
BERT's masking (batching and padding: core/batching.py)."""

from __future__ import annotations

import torch

from spudflow.core.sampling import sample_indices


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
    return [texts[i] for i in sample_indices(len(texts), n, seed)]


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
