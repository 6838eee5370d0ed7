"""Word-level n-gram language models: counts, add-k (Laplace) and interpolated Kneser-Ney.

A sentence w1 … wm is predicted as w1 … wm </s>, each word given the n-1 words before it, the
history padded with <s>. Words seen fewer than `min_count` times in training, and unseen words
when scoring, are <unk>. The vocabulary V is the training words plus </s> and <unk>.

- add-k: P(w | h) = (c(h w) + k) / (c(h) + k |V|), with the order-n counts.
- Kneser-Ney, interpolated (Chen & Goodman 1998, one discount D per model):
  P_m(w | h) = max(c_m(h w) - D, 0) / c_m(h) + D T_m(h) / c_m(h) · P_{m-1}(w | h minus its first
  word), and P_{m-1}(w | …) alone where c_m(h) = 0, down to P_0(w) = 1 / |V|.
  c_n is the raw count; for lower orders c_m(g) is the number of distinct words seen before g
  (continuation count), except for n-grams that start with <s>, which cannot be extended to the
  left and keep their raw count (as KenLM does). c_m(h) = sum over w of c_m(h w);
  T_m(h) = number of words w with c_m(h w) > 0.

The model file is one Parquet table (columns `ngram` list<str>, `count` int64: raw counts of every
order, at every predicted position) with the settings as JSON in the schema metadata.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import NGRAM_MODEL
from spudflow.core.contract import read_artifact_table, write_artifact
from spudflow.core.errors import InputError

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
METADATA_KEY = b"spudflow.ngram"
# The settings stored in a model file's metadata (min_count may be absent from older files).
SETTINGS = ("order", "k", "discount", "lang", "min_count")


@dataclass
class NgramModel:
    order: int
    counts: dict[tuple[str, ...], int]   # raw counts of every order
    k: float = 1.0
    discount: float = 0.75
    lang: str | None = None
    min_count: int = 1
    _kn: list[dict] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.vocab = frozenset(g[-1] for g in self.counts if len(g) == 1) | {EOS, UNK}
        self._raw = [_Totals() for _ in range(self.order + 1)]
        for gram, count in self.counts.items():
            self._raw[len(gram)].add(gram, count)
        self._kn = self._kneser_ney_counts()

    # --- training and files -------------------------------------------------------------
    @classmethod
    def train(cls, sentences: Iterable[Sequence[str]], order: int, k: float = 1.0,
              discount: float = 0.75, min_count: int = 1, lang: str | None = None) -> NgramModel:
        sentences = [list(s) for s in sentences]
        frequency = Counter(w for s in sentences for w in s)
        counts: Counter[tuple[str, ...]] = Counter()
        for sentence in sentences:
            words = [w if frequency[w] >= min_count else UNK for w in sentence] + [EOS]
            padded = [BOS] * (order - 1) + words
            for i in range(order - 1, len(padded)):
                for m in range(1, order + 1):
                    counts[tuple(padded[i - m + 1:i + 1])] += 1
        return cls(order, dict(counts), k, discount, lang, min_count)

    def settings(self) -> dict:
        return {"order": self.order, "k": self.k, "discount": self.discount, "lang": self.lang,
                "min_count": self.min_count}

    def save(self, path: str | Path) -> None:
        grams = sorted(self.counts, key=lambda g: (len(g), g))
        table = pa.table({"ngram": pa.array([list(g) for g in grams], pa.list_(pa.string())),
                          "count": pa.array([self.counts[g] for g in grams], pa.int64())})
        table = table.replace_schema_metadata({METADATA_KEY: json.dumps(self.settings())})
        write_artifact(table, path, NGRAM_MODEL)

    @classmethod
    def load(cls, path: str | Path) -> NgramModel:
        table = read_artifact_table(path, NGRAM_MODEL)
        try:
            settings = json.loads((table.schema.metadata or {})[METADATA_KEY])
        except (KeyError, ValueError) as error:
            raise InputError(path, None, f"n-gram settings unreadable ({error}); the "
                             f"ngram-train command writes them") from None
        if not isinstance(settings, dict) or "order" not in settings \
                or not set(settings) <= set(SETTINGS):
            raise InputError(path, None, f"unknown model settings {settings!r}")
        counts = dict(zip(map(tuple, table.column("ngram").to_pylist()),
                          table.column("count").to_pylist(), strict=True))
        return cls(counts=counts, **settings)

    # --- probabilities ------------------------------------------------------------------
    def _kneser_ney_counts(self) -> list[_Totals]:
        levels = [_Totals() for _ in range(self.order + 1)]
        levels[self.order] = self._raw[self.order]
        for m in range(1, self.order):
            # Number of distinct words (<s> included) seen right before each m-gram.
            continuation = Counter(g[1:] for g in self._raw[m + 1].counts)
            for gram, count in self._raw[m].counts.items():
                levels[m].add(gram, count if gram[0] == BOS else continuation[gram])
        return levels

    def history(self, words: Sequence[str], i: int) -> tuple[str, ...]:
        """The n-1 symbols before word i of a sentence (padded with <s>)."""
        padded = [BOS] * (self.order - 1) + [self.symbol(w) for w in words[:i]]
        return tuple(padded[len(padded) - (self.order - 1):]) if self.order > 1 else ()

    def symbol(self, word: str) -> str:
        return word if word in self.vocab else UNK

    def logprob(self, method: str, history: tuple[str, ...], word: str) -> float:
        word = self.symbol(word)
        if method == "addk":
            return math.log(self._addk(history, word))
        if method == "kn":
            return math.log(self._kneser_ney(self.order, history, word))
        raise ValueError(method)

    def _addk(self, history: tuple[str, ...], word: str) -> float:
        raw = self._raw[self.order]
        return (raw.counts.get(history + (word,), 0) + self.k) / (
            raw.context.get(history, 0) + self.k * len(self.vocab))

    def _kneser_ney(self, m: int, history: tuple[str, ...], word: str) -> float:
        if m == 0:
            return 1.0 / len(self.vocab)
        lower = self._kneser_ney(m - 1, history[1:], word)
        level = self._kn[m]
        total = level.context.get(history, 0)
        if total == 0:
            return lower
        count = level.counts.get(history + (word,), 0)
        return (max(count - self.discount, 0.0) + self.discount * level.types[history] * lower) \
            / total

    def unigram_logprob(self, word: str) -> float:
        """Add-k unigram log probability (feeds SLOR, Word-LP Min-1 and NormLP)."""
        raw = self._raw[1]
        return math.log((raw.counts.get((self.symbol(word),), 0) + self.k)
                        / (raw.context.get((), 0) + self.k * len(self.vocab)))


class _Totals:
    """n-gram counts of one order, with per-history totals and numbers of distinct followers."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, ...], int] = {}
        self.context: dict[tuple[str, ...], int] = defaultdict(int)
        self.types: dict[tuple[str, ...], int] = defaultdict(int)

    def add(self, gram: tuple[str, ...], count: int) -> None:
        if count <= 0:
            return
        self.counts[gram] = count
        self.context[gram[:-1]] += count
        self.types[gram[:-1]] += 1


def unigram_lookup(paths: Sequence[Path]):
    """item language -> unigram log-probability function (None when there is none), from the
    n-gram model files `paths` (their unigram parts; one model per language, a model trained
    without a language applies to every item)."""
    by_lang = {}
    for path in paths:
        model = NgramModel.load(path)
        if model.lang in by_lang:
            raise InputError(path, None, f"a second unigram model for language {model.lang!r}")
        by_lang[model.lang] = model.unigram_logprob

    def unigram_for(language: str | None):
        if language in by_lang:
            return by_lang[language]
        if None in by_lang:
            return by_lang[None]
        if language is None and len(by_lang) == 1:
            return next(iter(by_lang.values()))
        return None

    return unigram_for
