"""core/tokenize.py: many texts through a fast tokenizer at once, by its backend where that is
what the tokenizer's own call does, else by that call; either way its ids, special-tokens masks
and offsets."""

from __future__ import annotations

import pytest
from scoring_models import CORPUS, EDGE_CASES, TOKENIZER_KINDS, tiny_model_dir
from transformers import AutoTokenizer

from spudflow.core.tokenize import _plain_call, tokenize

TEXTS = [*CORPUS, *(sentence for _, sentence, _ in EDGE_CASES), "", "Type [MASK] and [CLS]."]


def by_call(tokenizer, add_special_tokens):
    batch = tokenizer(TEXTS, add_special_tokens=add_special_tokens, return_offsets_mapping=True,
                      return_special_tokens_mask=True, split_special_tokens=True)
    return (batch["input_ids"], batch["special_tokens_mask"],
            [[tuple(o) for o in offsets] for offsets in batch["offset_mapping"]])


@pytest.mark.parametrize("tokenizer_kind", TOKENIZER_KINDS)
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_the_backend_gives_what_the_tokenizer_call_gives(tokenizer_kind, add_special_tokens):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("masked", tokenizer_kind))
    backend = tokenizer.backend_tokenizer
    assert _plain_call(tokenizer, backend)  # the fast path is the one tested
    before = backend.encode_special_tokens
    ids, special, offsets = tokenize(tokenizer, TEXTS, add_special_tokens)
    assert backend.encode_special_tokens == before
    assert (ids, special, [[tuple(o) for o in x] for x in offsets]) == by_call(
        tokenizer, add_special_tokens)


def test_a_tokenizer_that_truncates_takes_its_own_call():
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir("masked", "wordpiece"))
    tokenizer.backend_tokenizer.enable_truncation(max_length=4)
    assert not _plain_call(tokenizer, tokenizer.backend_tokenizer)
    ids, _, _ = tokenize(tokenizer, TEXTS, True)
    assert max(map(len, ids)) > 4  # the call switches truncation off, as before
