"""Causal LMs (`ppl`): every token scored, the first one given a BOS token (EOS for models
without one, as lm-eval does), one pass per sentence, batched with right padding."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spudflow.core.errors import InputError
from spudflow.scoring.batching import Row
from spudflow.scoring.encoding import EncodedItem, encode_with_tokenizer
from spudflow.scoring.heads import lm_forward
from spudflow.scoring.items import Item
from spudflow.scoring.transformer import TransformerScorer


class CausalScorer(TransformerScorer):
    kind = "causal"

    def __init__(self, tokenizer, model, device, batch_tokens):
        super().__init__(tokenizer, model, device, batch_tokens)
        self.prefix_id = tokenizer.bos_token_id
        if self.prefix_id is None:
            self.prefix_id = tokenizer.eos_token_id
        if self.prefix_id is None:
            raise InputError(getattr(tokenizer, "name_or_path", "model"), None,
                             "the tokenizer has neither a BOS nor an EOS token to condition the "
                             "first token on")

    def forward(self):
        return lm_forward(self.model)

    def encode(self, items: Sequence[Item]) -> list[EncodedItem]:
        return encode_with_tokenizer(items, self.tokenizer, template=False,
                                     prefix=[self.prefix_id], max_length=self.max_length)

    def score(self, encoded: Sequence[EncodedItem], method: str,
              targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
        rows = []
        for owner, (sentence, wanted) in enumerate(zip(encoded, targets, strict=True)):
            if not wanted:
                continue
            positions = [sentence.positions[t] for t in wanted]
            # The output at position p predicts the token at p + 1; tokens after the last
            # wanted one are not needed (a region early in the sentence needs a short input).
            rows.append(Row(owner=owner, input_ids=sentence.input_ids[:max(positions) + 1],
                            masked=(), gather=[p - 1 for p in positions],
                            targets=[sentence.input_ids[p] for p in positions],
                            slots=range(len(wanted))))
        return self.run_rows(rows, [len(t) for t in targets], bar)
