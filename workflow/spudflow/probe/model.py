"""DepProbe: two linear maps on frozen word features, no bias.

B (d x rank) maps words into a syntactic subspace, where the predicted distance between two words
is the L2 distance of their projections (the paper, App. F.1 Eq. 5) or its square (the reference
code). L (d x labels) scores each word's relation to its head.
"""

from __future__ import annotations

import torch
from torch import nn


class DepProbe(nn.Module):
    def __init__(self, dist_dim: int, label_dim: int, n_labels: int, rank: int = 128,
                 squared: bool = True):
        super().__init__()
        self.structural = nn.Linear(dist_dim, rank, bias=False)
        self.labels = nn.Linear(label_dim, n_labels, bias=False)
        self.squared = squared

    def distances(self, dist_features: torch.Tensor) -> torch.Tensor:
        """(batch, words, d) -> (batch, words, words) predicted distances."""
        projected = self.structural(dist_features)
        if not self.squared:
            return torch.cdist(projected, projected)
        # |a - b|² = |a|² + |b|² - 2 a·b: matrix products, much faster to differentiate than
        # cdist; clamped at 0 against rounding.
        norms = projected.pow(2).sum(-1)
        gram = projected @ projected.transpose(1, 2)
        return (norms[:, :, None] + norms[:, None, :] - 2 * gram).clamp(min=0)

    def forward(self, dist_features: torch.Tensor, label_features: torch.Tensor):
        return self.distances(dist_features), self.labels(label_features)
