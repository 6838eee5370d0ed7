"""The seeded replacement: each target word takes the first acceptable candidate in a random
order keyed by (seed, sentence, word, candidate), so an edit is local: a word's result depends
only on its own candidate list, not on the other sentences, their order, or the other words and
lists of its sentence, and a candidate added to or removed from a list changes the word's pick
only when that candidate is (or was) the pick."""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Callable

import numpy as np
import polars as pl

from spudflow.core.artifacts import NONCE_REASONS
from spudflow.core.progress import progress
from spudflow.nonce.candidates import CandidateIndex
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.sentence import SentenceView, TokenColumns, without_stale
from spudflow.nonce.surface import (
    capitalise_first,
    case_style,
    match_case,
    rebuild_mwts,
    reference_case,
    sentence_text,
    words_text,
)

# A word's outcome: replaced, or why it kept its form (the statistics' columns, core/artifacts.py
# NONCE_REASONS, and docs/nonce.md).
REPLACED = "replaced"
NO_CANDIDATE, NO_FORM, RULE, PROTECTED = NONCE_REASONS

# --case: the original's positional capitals (MATCH) or the reference's (surface.py).
MATCH, REFERENCE = "match", "reference"
CASES = (MATCH, REFERENCE)
# --multiword-tokens: keep their surface, or split them into their words (surface.py).
KEEP, SPLIT = "keep", "split"
MWT_MODES = (KEEP, SPLIT)


def _hash64(text: str) -> int:
    # BLAKE2b, not hash(): the same value on every platform, Python version and process.
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def word_key(seed: int, sentence_key: str, word_index: int) -> int:
    """The word's own 64-bit stream: the seed, the sentence's id and the word's place in it."""
    return _hash64(f"{seed}\x1f{sentence_key}\x1f{word_index}")


def copy_keys(units: list[str]) -> np.ndarray:
    """A 64-bit identity per entry of a candidate list: its unit and which copy of the unit it is
    (a unit listed w times, its weight, has copies 0 .. w-1), so an entry keeps its identity
    whatever else the list holds."""
    copy = [0] * len(units)
    for i in range(1, len(units)):
        copy[i] = copy[i - 1] + 1 if units[i] == units[i - 1] else 0
    return np.array([_hash64(f"{unit}\x1f{k}") for unit, k in zip(units, copy, strict=True)],
                    dtype=np.uint64)


def _mix(keys: np.ndarray, word: int) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser of KEYS xor WORD: a pseudo-random rank of every entry for
    this word, the same rank for the same (word, entry) whatever the list's other entries."""
    x = keys ^ np.uint64(word)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


def draw(word: int, units: list[str], keys: np.ndarray, own_unit: str,
         accept: Callable[[int], bool] | None) -> tuple[int | None, str]:
    """Try the candidates in the order of their rank for WORD (word_key; KEYS from copy_keys);
    return (index, REPLACED) or (None, reason). The ranks are uniform, so the order is a uniform
    shuffle of the list and a unit listed several times (its weight, candidates.py) comes first
    as often, as in the reference's shuffled list."""
    ranks = _mix(keys, word)
    first = int(ranks.argmin())  # the common case: the first candidate is taken
    if accept is None and units[first] != own_unit:
        return first, REPLACED
    rejected: set[str] = set()  # a unit's copies share its form: one verdict for all
    other = False
    for pick in np.argsort(ranks, stable=True).tolist():
        if units[pick] == own_unit or units[pick] in rejected:
            continue
        other = True
        if accept is None or accept(pick):
            return pick, REPLACED
        rejected.add(units[pick])
    return None, RULE if other else NO_FORM


def _cased(form: str, case: tuple[str, bool, str] | None) -> str:
    """FORM with the original's positional capitals (match_case), or as it is (None)."""
    return form if case is None else match_case(form, *case)


class Replacer:
    def __init__(self, tokens: pl.DataFrame, index: CandidateIndex, hooks: LanguageHooks,
                 seed: int, case: str = MATCH, multiword_tokens: str = KEEP) -> None:
        self.columns = TokenColumns.from_frame(tokens)
        self.sent_of_row = tokens.get_column("sent_index").to_list()
        self.index, self.hooks, self.seed = index, hooks, seed
        self.case, self.multiword_tokens = case, multiword_tokens
        self.outcome: list[str | None] = [None] * len(self.sent_of_row)
        self.new_text: dict[int, str] = {}
        self._keys: dict[int, np.ndarray] = {}  # group -> copy_keys of its list

    def _group_keys(self, group: int) -> np.ndarray:
        if group not in self._keys:
            self._keys[group] = copy_keys(self.index.groups[group][0])
        return self._keys[group]

    def _bounds(self, sent_index: int) -> tuple[int, int]:
        return (bisect.bisect_left(self.sent_of_row, sent_index),
                bisect.bisect_right(self.sent_of_row, sent_index))

    def run(self, sentence_keys: dict[int, str]) -> None:
        targets = self.index.targets.sort("row")
        rows = targets.get_column("row").to_list()
        by_sentence = itertools.groupby(
            zip(rows, targets.get_column("unit").to_list(), targets.get_column("group").to_list(),
                targets.get_column("context_units").to_list(),
                targets.get_column("protected").to_list(), strict=True),
            key=lambda target: self.sent_of_row[target[0]])
        n_sentences = len({self.sent_of_row[row] for row in rows})
        replaced = set()
        for sent_index, words in progress(by_sentence, desc="nonce", total=n_sentences,
                                          unit="sent"):
            if self._sentence(sent_index, sentence_keys[sent_index], list(words)):
                replaced.add(sent_index)
        # The reference's case and its split text touch every sentence, replaced or not.
        every = self.case == REFERENCE or self.multiword_tokens == SPLIT
        for sent_index in (sentence_keys if every else sorted(replaced)):
            self._finish(sent_index, sent_index in replaced)

    def _sentence(self, sent_index: int, key: str, words: list[tuple]) -> bool:
        """Replace the target WORDS of a sentence and fit its function words; True when a word
        was replaced."""
        columns, hooks = self.columns, self.hooks
        start, stop = self._bounds(sent_index)
        view = SentenceView(columns, start, stop)
        first_word = next((i for i in range(view.n) if view.upos(i) != "PUNCT"), 0)
        # The sentence's style only matters for capitalised words (see match_case).
        capitals = self.case == MATCH and any(
            columns.orig_form[word[0]][:1].isupper() for word in words)
        style = case_style([view.orig_form(i) for i in range(view.n)]) if capitals else "plain"
        replaced_any = False
        for row, unit, group, context_units, protected in words:
            if protected:
                self.outcome[row] = PROTECTED
                continue
            if (context_units or 0) <= 1:
                self.outcome[row] = NO_CANDIDATE
                continue
            if group is None:
                self.outcome[row] = NO_FORM
                continue
            units, forms, lemmas = self.index.groups[group]
            position = columns.word_index[row] - 1
            # The reference writes a replacement as the lexicon does (its case comes later).
            case = (columns.orig_form[row], position == first_word, style) \
                if self.case == MATCH else None
            accept = None
            if hooks.filters_candidates:
                accept = self._acceptor(view, position, forms, case)
            pick, outcome = draw(word_key(self.seed, key, columns.word_index[row]), units,
                                 self._group_keys(group), unit, accept)
            self.outcome[row] = outcome
            if pick is None:
                continue
            columns.form[row] = _cased(forms[pick], case)
            if columns.orig_lemma[row] not in (None, "_"):
                columns.lemma[row] = lemmas[pick]
            columns.replaced[row] = True
            replaced_any = True
        if replaced_any:
            hooks.adjust(view)
        return replaced_any

    def _finish(self, sent_index: int, replaced: bool) -> None:
        """Case (reference), multiword-token surfaces and the text of a finished sentence (one
        where a word was REPLACED, or any with the reference's case or split text)."""
        start, stop = self._bounds(sent_index)
        view = SentenceView(self.columns, start, stop)
        reference = self.case == REFERENCE
        if reference:
            reference_case(view, self.hooks.case_folded(view.n))
        if self.multiword_tokens == SPLIT:
            if reference:
                capitalise_first(view)
            self.new_text[sent_index] = words_text(view)
            return
        rebuild_mwts(view, self.hooks, case_changes=not reference)
        if reference:
            capitalise_first(view)
        columns = self.columns
        if replaced or any(columns.form[row] != columns.orig_form[row]
                           for row in range(start, stop)):
            self.new_text[sent_index] = sentence_text(view)

    def _acceptor(self, view: SentenceView, position: int, forms: list[str],
                  case: tuple[str, bool, str] | None) -> Callable[[int], bool]:
        hooks = self.hooks
        return lambda pick: hooks.accept(view, position, _cased(forms[pick], case))

    def tokens(self, tokens: pl.DataFrame) -> pl.DataFrame:
        c = self.columns
        for row, (form, orig_form) in enumerate(zip(c.form, c.orig_form, strict=True)):
            if form != orig_form or c.lemma[row] != c.orig_lemma[row]:
                c.misc[row] = without_stale(c.misc[row])
        return tokens.with_columns(
            form=pl.Series(c.form, dtype=pl.String), lemma=pl.Series(c.lemma, dtype=pl.String),
            misc=pl.Series(c.misc, dtype=pl.String),
            orig_form=pl.Series(c.orig_form, dtype=pl.String),
            orig_lemma=pl.Series(c.orig_lemma, dtype=pl.String),
            replaced=pl.Series(c.replaced, dtype=pl.Boolean),
        )

    def outcomes(self) -> pl.Series:
        return pl.Series("outcome", self.outcome, dtype=pl.String)

