"""Causal LMs (`ppl`): every token scored, the first one given a BOS token (EOS for models
without one, as lm-eval does), one pass per sentence, batched with right padding."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spudflow.core.errors import InputError
from spudflow.scoring.encoding import EncodedItem
from spudflow.scoring.heads import lm_forward
from spudflow.scoring.rows import Wanted
from spudflow.scoring.transformer import TransformerScorer


class CausalScorer(TransformerScorer):
    kind = "causal"
    template = False

    def __init__(self, tokenizer, model, device, batch_tokens):
        super().__init__(tokenizer, model, device, batch_tokens)
        prefix_id = tokenizer.bos_token_id
        if prefix_id is None:
            prefix_id = tokenizer.eos_token_id
        if prefix_id is None:
            raise InputError(getattr(tokenizer, "name_or_path", "model"), None,
                             "the tokenizer has neither a BOS nor an EOS token to condition the "
                             "first token on")
        self.prefix = (prefix_id,)

    def forward(self):
        return lm_forward(self.model)


def score_ppl(scorer: CausalScorer, encoded: Sequence[EncodedItem],
              targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
    wanted = Wanted.of(encoded, targets)
    # The output at position p predicts the token at p + 1; tokens after the last wanted one are
    # not needed (a region early in the sentence needs a short input).
    _, first = np.unique(wanted.owner, return_index=True)
    lengths = (np.maximum.reduceat(wanted.position, first) + 1 if len(first)
               else np.empty(0, dtype=np.int64))
    rows = wanted.one_row_each(lengths, shift=1)
    return scorer.run_rows(rows, [len(t) for t in targets], bar)
