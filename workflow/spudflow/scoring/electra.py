"""ELECTRA discriminators (`electra`): per-token log P(original) = log sigmoid(-logit), from one
pass over the unmasked sentence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spudflow.scoring.encoding import EncodedItem
from spudflow.scoring.heads import discriminator_forward
from spudflow.scoring.rows import Wanted
from spudflow.scoring.transformer import TransformerScorer


class ElectraScorer(TransformerScorer):
    kind = "electra"

    def forward(self):
        return discriminator_forward(self.model)


def score_electra(scorer: ElectraScorer, encoded: Sequence[EncodedItem],
                  targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    rows = Wanted.of(encoded, targets).one_row_each()
    return scorer.run_rows(rows, [len(t) for t in targets], bar)
