"""The DepProbe loss: per sentence, mean over all word pairs of |tree distance − predicted
distance| (sum / N²), averaged over sentences; plus the cross-entropy of the labels."""

from __future__ import annotations

import torch
from torch.nn import functional

IGNORE = -100  # label of padding positions


def distance_loss(predicted: torch.Tensor, gold: torch.Tensor, lengths: torch.Tensor):
    """predicted, gold: (batch, words, words); padding pairs are masked out."""
    width = predicted.shape[1]
    valid = torch.arange(width, device=predicted.device)[None, :] < lengths[:, None]
    pairs = valid[:, :, None] & valid[:, None, :]
    per_sentence = ((predicted - gold).abs() * pairs).sum(dim=(1, 2)) / lengths.float().pow(2)
    return per_sentence.mean()


def label_loss(logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    return functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1),
                                    ignore_index=IGNORE)


def probe_loss(distances, logits, gold_distances, gold_labels, lengths):
    """(total, distance part, label part)."""
    d = distance_loss(distances, gold_distances, lengths)
    c = label_loss(logits, gold_labels)
    return d + c, d, c
