"""Many texts through a tokenizer in one call (scoring and probe features).

`tokenize` returns what `tokenizer(texts, add_special_tokens=..., return_offsets_mapping=True,
return_special_tokens_mask=True, split_special_tokens=True)` returns: per text its ids, its
special-tokens mask and its tokens' character offsets; `tokenize_with_words` also each token's
word as the tokenizer's pre-tokenizer splits the text (the BatchEncoding's `word_ids()`, None
for special tokens; None for a slow tokenizer, which reports none). Where that call comes down
to the `tokenizers` backend alone (a tokenizer class that overrides no step of it, with no
truncation or padding set on the backend), the backend is called directly: transformers'
conversion of the backend's output into lists of dicts and back took a quarter of a block's host
time.

A slow tokenizer (one with no fast version, e.g. BertJapaneseTokenizer) reports no offsets: its
own call gives the ids and the special-tokens mask, and the offsets of its other tokens are found
by aligning them to the text (core/slow_offsets.py; UnalignedToken when one cannot be placed).
Special tokens get (0, 0), as a fast tokenizer gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

from spudflow.core.slow_offsets import align_tokens, spelled_tokens


def tokenize(tokenizer, texts: Sequence[str], add_special_tokens: bool
             ) -> tuple[list[list[int]], list[list[int]], list[list[tuple[int, int]]]]:
    """(ids, special-tokens masks, offsets) of each text; see the module docstring."""
    ids, specials, offsets, _ = _tokenize(tokenizer, texts, add_special_tokens, False)
    return ids, specials, offsets


def tokenize_with_words(tokenizer, texts: Sequence[str], add_special_tokens: bool
                        ) -> tuple[list[list[int]], list[list[int]],
                                   list[list[tuple[int, int]]], list[list[int | None]]]:
    """(ids, special-tokens masks, offsets, word ids) of each text; see the module docstring."""
    return _tokenize(tokenizer, texts, add_special_tokens, True)


def _tokenize(tokenizer, texts: Sequence[str], add_special_tokens: bool, words: bool):
    if not getattr(tokenizer, "is_fast", False):  # no words of its own (None): not guessed
        return (*_slow(tokenizer, texts, add_special_tokens), None)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not _plain_call(tokenizer, backend):
        batch = tokenizer(list(texts), add_special_tokens=add_special_tokens,
                          return_offsets_mapping=True, return_special_tokens_mask=True,
                          return_attention_mask=False, split_special_tokens=True)
        word_ids = [batch.word_ids(i) for i in range(len(texts))] if words else None
        return (batch["input_ids"], batch["special_tokens_mask"], batch["offset_mapping"],
                word_ids)
    before = backend.encode_special_tokens
    backend.encode_special_tokens = True  # split_special_tokens=True
    try:
        encodings = backend.encode_batch(list(texts), add_special_tokens=add_special_tokens)
    finally:
        backend.encode_special_tokens = before
    return ([e.ids for e in encodings], [e.special_tokens_mask for e in encodings],
            [e.offsets for e in encodings], [e.word_ids for e in encodings] if words else None)


def _plain_call(tokenizer, backend) -> bool:
    """Whether tokenizer(...) with the arguments above is the backend's encode_batch: the
    class keeps transformers' own __call__ and _encode_plus, has no input/target modes, and
    the backend truncates and pads nothing (transformers would switch both off first)."""
    try:
        from transformers import PreTrainedTokenizerFast
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase
    except ImportError:
        return False
    cls = type(tokenizer)
    return (isinstance(tokenizer, PreTrainedTokenizerFast)
            and cls.__call__ is PreTrainedTokenizerBase.__call__
            and getattr(cls, "_encode_plus", None) is getattr(PreTrainedTokenizerFast,
                                                              "_encode_plus", False)
            and not hasattr(tokenizer, "_switch_to_input_mode")
            and backend.truncation is None and backend.padding is None)


def _slow(tokenizer, texts: Sequence[str], add_special_tokens: bool
          ) -> tuple[list[list[int]], list[list[int]], list[list[tuple[int, int]]]]:
    """The slow tokenizer's own ids and special-tokens masks, offsets by alignment."""
    batch = tokenizer(list(texts), add_special_tokens=add_special_tokens,
                      return_special_tokens_mask=True, return_attention_mask=False,
                      return_token_type_ids=False, split_special_tokens=True)
    ids, specials = batch["input_ids"], batch["special_tokens_mask"]
    offsets = []
    for index, (text, text_ids, special) in enumerate(zip(texts, ids, specials, strict=True)):
        tokens = tokenizer.convert_ids_to_tokens([i for i, s in zip(text_ids, special,
                                                                    strict=True) if not s])
        spans = iter(align_tokens(text, spelled_tokens(tokenizer, text, tokens), index))
        offsets.append([(0, 0) if s else next(spans) for s in special])
    return ids, specials, offsets
