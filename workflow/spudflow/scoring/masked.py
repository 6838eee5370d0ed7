"""Masked LMs: `pppl` (Salazar et al. 2020: each token masked once), `pppl_l2r` (Kauf & Ivanova
2023: also mask the tokens to its right within the same word) and `unmasked` (each token's
probability given the whole, unmasked sentence).

For the pseudo-log-likelihoods every masked copy of every sentence is one row; rows of all
sentences are batched together by length, and the LM head runs only at the masked position of
each copy (heads.outputs_at).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spudflow.core.errors import InputError
from spudflow.scoring.batching import Row
from spudflow.scoring.encoding import EncodedItem, encode_with_tokenizer
from spudflow.scoring.heads import lm_forward
from spudflow.scoring.items import Item
from spudflow.scoring.transformer import TransformerScorer


def l2r_masked_positions(sentence: EncodedItem, token: int) -> list[int]:
    """Positions masked when scoring `token` under pppl_l2r: itself and every later token of the
    same word (words by character offsets; a token outside every word masks only itself)."""
    word = sentence.word_index[token]
    later = [] if word is None else [
        j for j in range(token + 1, sentence.n_tokens) if sentence.word_index[j] == word]
    return [sentence.positions[j] for j in (token, *later)]


class MaskedScorer(TransformerScorer):
    kind = "masked"

    def __init__(self, tokenizer, model, device, batch_tokens):
        if tokenizer.mask_token_id is None:
            raise InputError(getattr(tokenizer, "name_or_path", "model"), None,
                             "the tokenizer has no mask token")
        super().__init__(tokenizer, model, device, batch_tokens)

    def forward(self):
        return lm_forward(self.model)

    def encode(self, items: Sequence[Item]) -> list[EncodedItem]:
        return encode_with_tokenizer(items, self.tokenizer, template=True,
                                     max_length=self.max_length)

    def score(self, encoded: Sequence[EncodedItem], method: str,
              targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
        rows = []
        for owner, (sentence, wanted) in enumerate(zip(encoded, targets, strict=True)):
            if not wanted:
                continue
            ids = sentence.input_ids
            if method == "unmasked":
                positions = [sentence.positions[t] for t in wanted]
                rows.append(Row(owner, ids, (), positions, [ids[p] for p in positions],
                                range(len(wanted))))
                continue
            for slot, token in enumerate(wanted):
                position = sentence.positions[token]
                masked = (l2r_masked_positions(sentence, token) if method == "pppl_l2r"
                          else [position])
                rows.append(Row(owner, ids, masked, [position], [ids[position]], [slot]))
        return self.run_rows(rows, [len(t) for t in targets], bar)
