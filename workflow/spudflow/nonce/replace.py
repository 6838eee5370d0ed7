"""The seeded replacement: each target word takes the first acceptable candidate in a random
order drawn from a generator seeded by (seed, sentence), so a sentence's result does not depend
on which other sentences are processed or in which order."""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable

import polars as pl

from spudflow.core.artifacts import NONCE_REASONS
from spudflow.core.progress import progress
from spudflow.nonce.candidates import CandidateIndex
from spudflow.nonce.languages.base import LanguageRules
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


def sentence_rng(seed: int, sentence_key: str) -> random.Random:
    # A str seed is hashed with SHA-512: the same stream on every platform and Python 3 version.
    return random.Random(f"{seed}\x1f{sentence_key}")


def draw(rng: random.Random, units: list[str], own_unit: str,
         accept: Callable[[int], bool] | None) -> tuple[int | None, str]:
    """Try the candidates in a random order (a lazy Fisher-Yates shuffle, so a word costs only
    the tries it needs); return (index, REPLACED) or (None, reason). A unit listed several times
    (its weight, candidates.py) comes first as often, as in the reference's shuffled list."""
    n = len(units)
    moved: dict[int, int] = {}
    rejected: set[str] = set()  # a unit's copies share its form: one verdict for all
    other = False
    for t in range(n):
        j = rng.randrange(t, n)
        pick = moved.get(j, j)
        moved[j] = moved.get(t, t)
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
    def __init__(self, tokens: pl.DataFrame, index: CandidateIndex, rules: LanguageRules,
                 seed: int, case: str = MATCH, multiword_tokens: str = KEEP) -> None:
        self.columns = TokenColumns.from_frame(tokens)
        self.sent_of_row = tokens.get_column("sent_index").to_list()
        self.index, self.rules, self.seed = index, rules, seed
        self.case, self.multiword_tokens = case, multiword_tokens
        self.outcome: list[str | None] = [None] * len(self.sent_of_row)
        self.new_text: dict[int, str] = {}

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
        columns, rules = self.columns, self.rules
        rng = sentence_rng(self.seed, key)
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
            if rules.filters_candidates:
                accept = self._acceptor(view, position, forms, case)
            pick, outcome = draw(rng, units, unit, accept)
            self.outcome[row] = outcome
            if pick is None:
                continue
            columns.form[row] = _cased(forms[pick], case)
            if columns.orig_lemma[row] not in (None, "_"):
                columns.lemma[row] = lemmas[pick]
            columns.replaced[row] = True
            replaced_any = True
        if replaced_any:
            rules.adjust(view)
        return replaced_any

    def _finish(self, sent_index: int, replaced: bool) -> None:
        """Case (reference), multiword-token surfaces and the text of a finished sentence (one
        where a word was REPLACED, or any with the reference's case or split text)."""
        start, stop = self._bounds(sent_index)
        view = SentenceView(self.columns, start, stop)
        reference = self.case == REFERENCE
        if reference:
            reference_case(view, self.rules.case_folded(view.n))
        if self.multiword_tokens == SPLIT:
            if reference:
                capitalise_first(view)
            self.new_text[sent_index] = words_text(view)
            return
        rebuild_mwts(view, self.rules, case_changes=not reference)
        if reference:
            capitalise_first(view)
        columns = self.columns
        if replaced or any(columns.form[row] != columns.orig_form[row]
                           for row in range(start, stop)):
            self.new_text[sent_index] = sentence_text(view)

    def _acceptor(self, view: SentenceView, position: int, forms: list[str],
                  case: tuple[str, bool, str] | None) -> Callable[[int], bool]:
        rules = self.rules
        return lambda pick: rules.accept(view, position, _cased(forms[pick], case))

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

