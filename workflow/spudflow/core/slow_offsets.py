"""Character offsets for a slow (pure Python) tokenizer, found by aligning its tokens to the text.

Slow tokenizers, such as transformers' BertJapaneseTokenizer (MeCab, Sudachi or basic word
splitting, then WordPiece or single characters; it has no fast version), report no offsets. The
ids are the tokenizer's own; each scored token's characters are found by walking the text:

- Both sides are compared *folded*: NFKC-compatible decomposition, case folding, combining marks
  removed, whitespace and control/format characters dropped. Folding the text as the tokenizer
  normalised it gives what folding the original gives (NFKC, lower-casing, accent stripping all
  fold away), so a token written `ガ` finds the text's half-width `ｶﾞ` and `Ｔｏｋｙｏ` finds
  `tokyo`. A folded character points at the original character it came from; a dropped
  combining mark belongs to the character before it.
- A WordPiece continuation's `##` is not text; every other token is matched as written, at the
  place the previous token ended (only dropped characters in between).
- The unknown token (`[UNK]`) spells nothing: a run of them covers the text up to where the
  next token matches such that every later token matches too and the text is used up (the
  shortest such gap). One unknown token takes the whole gap; a run of k takes a gap of k folded
  characters one each (a character tokenizer's unknown characters). A gap of only dropped
  characters (an unknown whitespace token) gives its tokens that gap, which the anchors then
  give to the next word (core/alignment.py).
- A token that cannot be placed by these rules raises UnalignedToken; callers name the model
  and the item (exit 2). Nothing is guessed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache


class UnalignedToken(ValueError):
    """Token `token` (position `position` among the text's scored tokens) of text `text_index`
    cannot be placed in the text."""

    def __init__(self, text_index: int, position: int, token: str):
        self.text_index, self.position, self.token = text_index, position, token
        super().__init__(f"token {position} {token!r} of the slow tokenizer cannot be placed "
                         f"in the text by its characters")


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """The text as compared: see the module docstring."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return "".join(ch for ch in decomposed if not _dropped(ch))


def _dropped(ch: str) -> bool:
    return ch.isspace() or ch == "\ufffd" or unicodedata.category(ch) in ("Mn", "Cc", "Cf")


def folded_text(text: str) -> tuple[str, list[int], list[int]]:
    """(folded text, per folded character the start and end of the original characters it
    came from)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, ch in enumerate(text):
        folded = fold(ch)
        if folded:
            out.append(folded)
            starts.extend([i] * len(folded))
            ends.extend([i + 1] * len(folded))
        elif ends and not ch.isspace():  # a mark or control character: the one before's
            last = ends[-1]
            for k in range(len(ends) - 1, -1, -1):
                if ends[k] != last:
                    break
                ends[k] = i + 1
    return "".join(out), starts, ends


def token_text(token: str) -> str:
    """What a token spells: a WordPiece continuation without its `##`."""
    return token[2:] if token.startswith("##") and len(token) > 2 else token


def spelled_tokens(tokenizer, text: str, tokens: list[str]) -> list[str | None]:
    """What each token spells (None: unknown). A tokenizer that splits words and then each
    word into WordPiece or character tokens (BertJapaneseTokenizer) is asked again, word by
    word, which text an unknown token stands for: the word WordPiece gave up on, or the
    character. Kept only where that walk gives the tokens of the ids exactly."""
    unk = tokenizer.unk_token
    spelled: list[str | None] = [None if t == unk else token_text(t) for t in tokens]
    if unk not in tokens:
        return spelled
    words, subwords = getattr(tokenizer, "word_tokenizer", None), \
        getattr(tokenizer, "subword_tokenizer", None)
    splitter = type(subwords).__name__
    if (words is None or splitter not in ("WordpieceTokenizer", "CharacterTokenizer")
            or not getattr(tokenizer, "do_word_tokenize", False)
            or not getattr(tokenizer, "do_subword_tokenize", False)):
        return spelled
    walked: list[str] = []
    surfaces: list[str] = []
    for word in words.tokenize(text, never_split=tokenizer.all_special_tokens):
        pieces = subwords.tokenize(word)
        if splitter == "CharacterTokenizer":
            chars = unicodedata.normalize("NFKC", word) if subwords.normalize_text else word
            surfaces += list(chars) if len(chars) == len(pieces) else pieces
        else:
            surfaces += [word] if pieces == [unk] else pieces
        walked += pieces
    if walked != tokens:
        return spelled
    return [token_text(t) if t != unk else s for t, s in zip(tokens, surfaces, strict=True)]


def align_tokens(text: str, spelled: Sequence[str | None],
                 text_index: int = 0) -> list[tuple[int, int]]:
    """Character (start, end) in `text` of each token, given what each spells (None:
    unknown); see the module docstring."""
    stream, starts, ends = folded_text(text)
    pieces = [None if t is None else fold(t) for t in spelled]
    # folded [first, last) of each token, rewritten along the path that succeeds
    first = [0] * len(pieces)
    last = [0] * len(pieces)
    failed: set[tuple[int, int]] = set()  # (token, position) from which the rest cannot fit

    def place(i: int, cursor: int) -> bool:
        while i < len(pieces) and pieces[i] is not None:  # known tokens: where they must be
            piece = pieces[i]
            if not stream.startswith(piece, cursor):
                return False
            first[i], cursor = cursor, cursor + len(piece)
            last[i] = cursor
            i += 1
        if i == len(pieces):
            return cursor == len(stream)
        run_end = i
        while run_end < len(pieces) and pieces[run_end] is None:
            run_end += 1
        k = run_end - i
        for gap_end in range(cursor, len(stream) + 1):  # the shortest gap that fits first
            gap = gap_end - cursor
            if (k > 1 and gap not in (0, k)) or (run_end, gap_end) in failed:
                continue
            if place(run_end, gap_end):
                for j in range(i, run_end):
                    if k > 1 and gap == k:
                        first[j], last[j] = cursor + j - i, cursor + j - i + 1
                    else:
                        first[j], last[j] = cursor, gap_end
                return True
            failed.add((run_end, gap_end))
        return False

    if not place(0, 0):
        raise UnalignedToken(text_index, *_first_unplaced(stream, pieces, spelled))
    return [_span(a, b, starts, ends, text) for a, b in zip(first, last, strict=True)]


def _span(first: int, last: int, starts: list[int], ends: list[int],
          text: str) -> tuple[int, int]:
    """Original characters of folded characters [first, last); an empty range: the dropped
    characters between the one before and the one after."""
    if last > first:
        return starts[first], ends[last - 1]
    before = ends[first - 1] if first > 0 else 0
    after = starts[first] if first < len(starts) else len(text)
    return before, after


def _first_unplaced(stream: str, pieces: list[str | None],
                    spelled: Sequence[str | None]) -> tuple[int, str]:
    """The first token a plain left-to-right walk cannot place (for the message)."""
    cursor = 0
    for i, piece in enumerate(pieces):
        if piece is None or not stream.startswith(piece, cursor):
            return i, spelled[i] or "[UNK]"
        cursor += len(piece)
    return max(len(pieces) - 1, 0), spelled[-1] or "[UNK]" if spelled else ""
