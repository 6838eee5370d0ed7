"""Check one sentence: IDs in sequence, HEADs integers inside the sentence, one root, no cycle."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.ingest.reader import EMPTY_ID, HEAD, MWT_ID, WORD_ID, Sentence


@dataclass(frozen=True)
class Token:
    line: int
    token_type: str  # word | mwt | empty
    word_index: int
    mwt_end: int | None
    empty_minor: int | None
    head: int | None
    fields: list[str]


def parse_tokens(path: Path, sentence: Sentence) -> list[Token]:
    tokens: list[Token] = []
    n_words = 0
    mwt_until = 0  # last word ID covered by the current MWT range
    last_empty = (0, 0)
    for line, fields in sentence.rows:
        ident = fields[0]
        if WORD_ID.fullmatch(ident):
            index = int(ident)
            if index != n_words + 1:
                raise InputError(path, line, f"word ID {ident} out of sequence (expected "
                                 f"{n_words + 1})")
            if not HEAD.fullmatch(fields[6]):
                raise InputError(path, line, f"HEAD {fields[6]!r} is not a non-negative integer")
            n_words = index
            tokens.append(Token(line, "word", index, None, None, int(fields[6]), fields))
        elif match := MWT_ID.fullmatch(ident):
            start, end = int(match[1]), int(match[2])
            if start != n_words + 1 or end <= start:
                raise InputError(path, line, f"multiword token range {ident} is malformed or out "
                                 f"of sequence (expected it to start at {n_words + 1})")
            if start <= mwt_until:
                raise InputError(path, line, f"multiword token range {ident} overlaps another")
            mwt_until = end
            tokens.append(Token(line, "mwt", start, end, None, _empty_head(path, line, fields),
                                fields))
        elif match := EMPTY_ID.fullmatch(ident):
            major, minor = int(match[1]), int(match[2])
            expected_minor = last_empty[1] + 1 if last_empty[0] == major else 1
            if major != n_words or minor != expected_minor:
                raise InputError(path, line, f"empty node ID {ident} out of sequence")
            last_empty = (major, minor)
            tokens.append(Token(line, "empty", major, None, minor, _empty_head(path, line, fields),
                                fields))
        else:
            raise InputError(path, line, f"malformed ID {ident!r}")
    if mwt_until > n_words:
        raise InputError(path, sentence.rows[-1][0], f"multiword token range ends at {mwt_until} "
                         f"but the sentence has {n_words} words")
    _check_tree(path, [t for t in tokens if t.token_type == "word"], sentence)
    return tokens


def _empty_head(path: Path, line: int, fields: list[str]) -> None:
    if fields[6] != "_":
        raise InputError(path, line, f"HEAD of a multiword token or empty node must be '_', "
                         f"found {fields[6]!r}")
    return None


def _check_tree(path: Path, words: list[Token], sentence: Sentence) -> None:
    if not words:
        raise InputError(path, sentence.line, "sentence has no words")
    n = len(words)
    roots = [w for w in words if w.head == 0]
    for word in words:
        if word.head > n:
            raise InputError(path, word.line, f"HEAD {word.head} points outside the sentence "
                             f"({n} words)")
        if word.head == word.word_index:
            raise InputError(path, word.line, f"word {word.word_index} is its own head")
    if not roots:
        raise InputError(path, sentence.line, "sentence has no root (no word with HEAD 0)")
    if len(roots) > 1:
        raise InputError(path, roots[1].line, f"sentence has {len(roots)} roots (words "
                         f"{', '.join(str(r.word_index) for r in roots)} have HEAD 0)")
    heads = [0] + [w.head for w in words]
    reaches_root = [False] * (n + 1)
    reaches_root[0] = True
    for start in range(1, n + 1):
        path_nodes: list[int] = []
        seen: set[int] = set()
        node = start
        while not reaches_root[node]:
            if node in seen:
                raise InputError(path, words[start - 1].line, "cycle in the dependency tree: "
                                 + " -> ".join(str(x) for x in [*path_nodes, node]))
            path_nodes.append(node)
            seen.add(node)
            node = heads[node]
        for visited in path_nodes:
            reaches_root[visited] = True
