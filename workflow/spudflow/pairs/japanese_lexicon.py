"""Japanese transitive/intransitive verb pairs with their corpus frequencies.

The lexicon is a TSV (config/lexicons/japanese_verb_pairs.tsv) with columns transitive,
intransitive, transitive_count, intransitive_count. A pair's frequency is the sum of its two
counts; pairs are ranked by frequency, most frequent first, ties by the transitive verb's code
points, so the ranking depends on the file's content only, not on its row order.
Counts are VERB tokens whose LEMMA is the verb, exactly as spelled (`count_verb_lemmas`).
"""

from __future__ import annotations

import gzip
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import conllu

from spudflow.core.errors import InputError
from spudflow.pairs.tsv import read_tsv

LEXICON_COLUMNS = ("transitive", "intransitive", "transitive_count", "intransitive_count")


@dataclass(frozen=True)
class VerbPair:
    transitive: str
    intransitive: str
    transitive_count: int
    intransitive_count: int
    line: int

    @property
    def count(self) -> int:
        return self.transitive_count + self.intransitive_count

    @property
    def id(self) -> str:
        return f"{self.transitive}/{self.intransitive}"


def is_kanji(char: str) -> bool:
    return unicodedata.name(char, "").startswith("CJK UNIFIED IDEOGRAPH")


def read_lexicon(path: str | Path) -> list[VerbPair]:
    """Verb pairs in file order; each must share its first character, a kanji."""
    pairs = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in read_tsv(path, LEXICON_COLUMNS):
        transitive, intransitive = row["transitive"], row["intransitive"]
        if not transitive or not intransitive or transitive == intransitive:
            raise InputError(path, line, "malformed verb pair: two different verbs needed")
        if not (is_kanji(transitive[0]) and transitive[0] == intransitive[0]):
            raise InputError(path, line, f"{transitive}/{intransitive} do not share a kanji stem")
        counts = []
        for column in ("transitive_count", "intransitive_count"):
            if not row[column].isdigit():
                raise InputError(path, line, f"{column} {row[column]!r} is not a count")
            counts.append(int(row[column]))
        if (transitive, intransitive) in seen:
            raise InputError(path, line, f"pair {transitive}/{intransitive} repeats line "
                             f"{seen[transitive, intransitive]}")
        seen[transitive, intransitive] = line
        pairs.append(VerbPair(transitive, intransitive, *counts, line))
    return pairs


def ranked(pairs: Iterable[VerbPair]) -> list[VerbPair]:
    """Most frequent first; ties in code point order of the transitive, then intransitive verb."""
    return sorted(pairs, key=lambda p: (-p.count, p.transitive, p.intransitive))


def count_verb_lemmas(conllu_paths: Iterable[str | Path], lemmas: Iterable[str]) -> Counter:
    """How often each lemma occurs as a VERB token (syntactic words; MWT lines and empty nodes
    have no UPOS and are not counted) in the CoNLL-U files (.conllu or .conllu.gz)."""
    wanted = set(lemmas)
    counts: Counter = Counter({lemma: 0 for lemma in wanted})
    for path in conllu_paths:
        path = Path(path)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            for sentence in conllu.parse_incr(handle):
                for token in sentence:
                    if token["upos"] == "VERB" and token["lemma"] in wanted:
                        counts[token["lemma"]] += 1
    return counts
