"""The hash of an item's text that the scores carry (item_scores `text_hash`), so that a reader
joining scores with items by id can tell when the items were regenerated with other sentences
under the same ids (old scores of new text would otherwise be mixed in silently)."""

from __future__ import annotations

import hashlib

TEXT_HASH_HEX = 16  # 64 bits: a collision between an item's old and new text is not a concern


def text_hash(sentence: str) -> str:
    """The first 16 hex digits of the SHA-256 of the sentence's UTF-8 bytes."""
    return hashlib.sha256(sentence.encode("utf-8")).hexdigest()[:TEXT_HASH_HEX]
