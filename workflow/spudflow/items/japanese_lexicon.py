"""Japanese transitive/intransitive verb pairs with their corpus frequencies.

The lexicon is a TSV (config/lexicons/japanese_verb_pairs.tsv) with columns transitive,
intransitive, transitive_count, intransitive_count. The thesis (§4.4.1) drops a pair when either
alternant never occurs (`min_count` 1) and ranks the rest by "the number of occurrences of its
less common alternant" (`rank_by` min); ties by the sum of both counts, then the verbs' code
points, so the ranking depends on the file's content only, not on its row order. `rank_by` sum
(both counts added) is the older reading, kept as an option.
Counts are VERB tokens whose LEMMA is the verb, exactly as spelled: in CoNLL-U treebanks
(`count_verb_lemmas`, the default lexicon's counts) or in a raw-text corpus (japanese_counts).
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
from spudflow.items.tsv import read_tsv

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
    def rarer_count(self) -> int:
        """The count of the less common alternant: the thesis's measure of how common a pair is."""
        return min(self.transitive_count, self.intransitive_count)

    def rank_count(self, rank_by: str) -> int:
        return self.rarer_count if rank_by == "min" else self.count

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


RANK_BY = ("min", "sum")


def ranked(pairs: Iterable[VerbPair], rank_by: str = "min") -> list[VerbPair]:
    """Most common first by `rank_by` (min: the rarer alternant's count; sum: both counts); ties
    by the sum, then code point order of the transitive, then the intransitive verb."""
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by {rank_by!r} is not one of {RANK_BY}")
    return sorted(pairs, key=lambda p: (-p.rank_count(rank_by), -p.count, p.transitive,
                                        p.intransitive))


def seen_pairs(pairs: Iterable[VerbPair], min_count: int = 1) -> list[VerbPair]:
    """The pairs whose rarer alternant occurs at least `min_count` times (thesis §4.4.1, with 1:
    a pair is dropped when either alternant never occurs)."""
    return [p for p in pairs if p.rarer_count >= min_count]


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
