"""Word-level n-gram language models: counts, add-k (Laplace) and interpolated Kneser-Ney.

A sentence w1 … wm is predicted as w1 … wm </s>, each word given the n-1 words before it, the
history padded with <s>. Words are lowercased first where the model says so (`lowercase`).
Words seen fewer than `min_count` times in training, and unseen words when scoring, are the
model's unknown symbol: <unk>, or (`unknown: signature`) the word's signature, Lau et al.'s
Berkeley-style `UNK[-TC][-DASH][-NUM][-suffix]` (the preprocessing of their clean_dataset.sh,
replace_low_freq_tokens.py). The vocabulary V is the training symbols plus </s> (and <unk>
with `unknown: unk`).

- add-k: P(w | h) = (c(h w) + k) / (c(h) + k |V|), with the order-n counts.
- Kneser-Ney, interpolated (Chen & Goodman 1998, one discount D per model):
  P_m(w | h) = max(c_m(h w) - D, 0) / c_m(h) + D T_m(h) / c_m(h) · P_{m-1}(w | h minus its first
  word), and P_{m-1}(w | …) alone where c_m(h) = 0. c_n is the raw count; for lower orders
  c_m(g) is the number of distinct words seen before g (continuation count). c_m(h) = sum over w
  of c_m(h w); T_m(h) = number of words w with c_m(h w) > 0. Two variants (`kneser_ney`):
  - `interpolated` (KenLM's reading): n-grams that start with <s>, which cannot be extended to
    the left, keep their raw count; the unigram level is discounted too and interpolated with
    P_0(w) = 1 / |V|.
  - `lau` (Lau et al.'s bncpylib/ngrams.py, KneserNeySmoothingModel.raw_ngram_prob): every
    lower order, <s>-initial n-grams included, has continuation counts, and the unigram level is
    the continuation distribution itself, P_1(w) = c_1(w) / c_1(·), undiscounted. A symbol
    training never produced (an unseen signature; <unk> when no training word was rare) has
    c_1 = 0, where Lau's code gives log 0 = -inf; it gets 1 / c_1(·), the probability of a
    symbol seen once.
    `lau` also reads words as their preprocessing (replace_low_freq_tokens.py, Python 2 on bytes)
    does: lowercasing (`lowercase`) changes ASCII letters only, the signature looks at the UTF-8
    bytes (`istitle`, the length), and a literal `</s>` word of a sentence is an unknown word
    (their lexicon does not hold it), never the sentence end. `interpolated` lowercases every
    letter (str.lower) and takes a literal `</s>` for the sentence end.

The model file is one Parquet table (columns `ngram` list<str>, `count` int64: raw counts of every
order, at every predicted position) with the settings as JSON in the schema metadata.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from spudflow.core.artifacts import NGRAM_MODEL
from spudflow.core.contract import read_artifact_table, write_artifact
from spudflow.core.errors import InputError
from spudflow.scoring.ngram_settings import KNESER_NEY, UNKNOWN

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
METADATA_KEY = b"spudflow.ngram"
# The settings stored in a model file's metadata; older files lack the later ones, which then
# take their defaults.
SETTINGS = ("order", "k", "discount", "lang", "min_count", "lowercase", "unknown", "kneser_ney")

# Lau et al.'s signature suffixes, tried in this order on words of 5 characters or more (a word
# of 3 or more ending in `s` is `-s` first).
SIGNATURE_SUFFIXES = ("ed", "ing", "ion", "er", "est", "ly", "ity", "y", "al")
# Their script reads bytes, where `\d` is an ASCII digit.
DIGIT = re.compile(r"[0-9]")
# Every signature; a training word of this form is taken for one (a lowercased model has none).
SIGNATURE = re.compile(r"UNK(-TC)?(-DASH)?(-NUM)?(-s|-" + "|-".join(SIGNATURE_SUFFIXES) + ")?")


# bytes.lower() of Python 2's str, which Lau et al.'s preprocessing lowercases: A-Z only.
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(word: str) -> str:
    return word.translate(ASCII_LOWER)


def signature(word: str, as_bytes: bool = False) -> str:
    """Lau et al.'s unknown-word signature of a word (replace_token_with_signature); `as_bytes`
    reads the word as their script does, as UTF-8 bytes (title case of ASCII letters only,
    the length in bytes)."""
    return _signature(word.encode("utf-8") if as_bytes else word, word)


def _signature(word: str | bytes, text: str) -> str:
    symbol = "UNK"
    if word.istitle():
        symbol += "-TC"
    if "-" in text:
        symbol += "-DASH"
    if DIGIT.search(text):
        symbol += "-NUM"
    if text.endswith("s") and len(word) >= 3:
        symbol += "-s"
    elif len(word) >= 5:
        suffix = next((s for s in SIGNATURE_SUFFIXES if text.endswith(s)), None)
        if suffix:
            symbol += f"-{suffix}"
    return symbol


@dataclass
class NgramModel:
    order: int
    counts: dict[tuple[str, ...], int]   # raw counts of every order
    k: float = 1.0
    discount: float = 0.75
    lang: str | None = None
    min_count: int = 1
    lowercase: bool = False
    unknown: str = "unk"
    kneser_ney: str = "interpolated"
    _kn: list[dict] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.unknown not in UNKNOWN:
            raise ValueError(f"unknown-word handling {self.unknown!r} (one of {UNKNOWN})")
        if self.kneser_ney not in KNESER_NEY:
            raise ValueError(f"Kneser-Ney variant {self.kneser_ney!r} (one of {KNESER_NEY})")
        symbols = frozenset(g[-1] for g in self.counts if len(g) == 1)
        # The words the model knows (training words seen at least min_count times), apart
        # from the symbols that stand for the others.
        self.words = frozenset(w for w in symbols - {EOS, UNK}
                               if self.unknown != "signature" or not SIGNATURE.fullmatch(w))
        self.vocab = symbols | ({EOS, UNK} if self.unknown == "unk" else {EOS})
        self._raw = [_Totals() for _ in range(self.order + 1)]
        for gram, count in self.counts.items():
            self._raw[len(gram)].add(gram, count)
        self._kn = self._kneser_ney_counts()

    # --- training and files -------------------------------------------------------------
    @classmethod
    def train(cls, sentences: Iterable[Sequence[str]], order: int, k: float = 1.0,
              discount: float = 0.75, min_count: int = 1, lang: str | None = None,
              lowercase: bool = False, unknown: str = "unk",
              kneser_ney: str = "interpolated") -> NgramModel:
        lau = kneser_ney == "lau"
        lower = ascii_lower if lau else str.lower
        sentences = [[lower(w) for w in s] if lowercase else list(s) for s in sentences]
        frequency = Counter(w for s in sentences for w in s)
        unknown_symbol = ((lambda w: signature(w, as_bytes=lau)) if unknown == "signature"
                          else (lambda _: UNK))
        counts: Counter[tuple[str, ...]] = Counter()
        for sentence in sentences:
            # With `lau` a literal </s> is a word their lexicon never holds: an unknown one.
            words = [w if frequency[w] >= min_count and not (lau and w == EOS)
                     else unknown_symbol(w) for w in sentence] + [EOS]
            padded = [BOS] * (order - 1) + words
            for i in range(order - 1, len(padded)):
                for m in range(1, order + 1):
                    counts[tuple(padded[i - m + 1:i + 1])] += 1
        return cls(order, dict(counts), k, discount, lang, min_count, lowercase, unknown,
                   kneser_ney)

    def settings(self) -> dict:
        return {"order": self.order, "k": self.k, "discount": self.discount, "lang": self.lang,
                "min_count": self.min_count, "lowercase": self.lowercase,
                "unknown": self.unknown, "kneser_ney": self.kneser_ney}

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
                or not set(settings) <= set(SETTINGS) \
                or settings.get("unknown", "unk") not in UNKNOWN \
                or settings.get("kneser_ney", "interpolated") not in KNESER_NEY:
            raise InputError(path, None, f"unknown model settings {settings!r}")
        _check_counts(path, table, settings["order"])
        counts = dict(zip(map(tuple, table.column("ngram").to_pylist()),
                          table.column("count").to_pylist(), strict=True))
        return cls(counts=counts, **settings)

    # --- probabilities ------------------------------------------------------------------
    def _kneser_ney_counts(self) -> list[_Totals]:
        levels = [_Totals() for _ in range(self.order + 1)]
        levels[self.order] = self._raw[self.order]
        keep_raw = self.kneser_ney == "interpolated"
        for m in range(1, self.order):
            # Number of distinct words (<s> included) seen right before each m-gram.
            continuation = Counter(g[1:] for g in self._raw[m + 1].counts)
            for gram, count in self._raw[m].counts.items():
                levels[m].add(gram, count if keep_raw and gram[0] == BOS else continuation[gram])
        return levels

    def history(self, words: Sequence[str], i: int) -> tuple[str, ...]:
        """The n-1 symbols before word i of a sentence (padded with <s>)."""
        padded = [BOS] * (self.order - 1) + [self.symbol(w, end=False) for w in words[:i]]
        return tuple(padded[len(padded) - (self.order - 1):]) if self.order > 1 else ()

    def normalised(self, word: str) -> str:
        if not self.lowercase:
            return word
        return ascii_lower(word) if self.kneser_ney == "lau" else word.lower()

    def known(self, word: str) -> bool:
        """Whether training gave the word its own symbol (seen at least min_count times);
        otherwise it is scored as <unk> or its signature."""
        return self.normalised(word) in self.words

    def symbol(self, word: str, end: bool | None = None) -> str:
        """The model's symbol of a word, or of the sentence end (`end`). With `end` None a
        `</s>` is the end; with `end` False it is a word of the sentence, which `lau` takes
        for an unknown word and `interpolated` for the end."""
        if end or (word == EOS and (end is None or self.kneser_ney != "lau")):
            return EOS
        word = self.normalised(word)
        if word in self.words:
            return word
        if self.unknown == "signature":
            return signature(word, as_bytes=self.kneser_ney == "lau")
        return UNK

    def logprob(self, method: str, history: tuple[str, ...], word: str,
                end: bool | None = None) -> float:
        word = self.symbol(word, end)
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
        if m == 1 and self.kneser_ney == "lau":
            level = self._kn[1]
            return max(level.counts.get((word,), 0), 1) / level.context[()]
        lower = self._kneser_ney(m - 1, history[1:], word)
        level = self._kn[m]
        total = level.context.get(history, 0)
        if total == 0:
            return lower
        count = level.counts.get(history + (word,), 0)
        return (max(count - self.discount, 0.0) + self.discount * level.types[history] * lower) \
            / total

    def order1_logprob(self, method: str, word: str, end: bool | None = None) -> float:
        """log P_1(word) of the method's own order-1 distribution (Lau et al.'s unigram term,
        `tokens_logprob(tokens, 1)`): Kneser-Ney's unigram level (with `lau`, the continuation
        distribution), or the add-k unigram (our extension: their Laplace model cannot be trained,
        so it is no reference)."""
        if method == "kn":
            return math.log(self._kneser_ney(1, (), self.symbol(word, end)))
        if method == "addk":
            return self.unigram_logprob(word, end)
        raise ValueError(method)

    def unigram_logprob(self, word: str, end: bool | None = None) -> float:
        """Add-k unigram log probability (feeds SLOR, Word-LP Min-1 and NormLP)."""
        raw = self._raw[1]
        return math.log((raw.counts.get((self.symbol(word, end),), 0) + self.k)
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


def _check_counts(path: str | Path, table: pa.Table, order: object) -> None:
    """Bad input unless every count is positive and every n-gram has 1 to ORDER words: a zero or
    negative count (a file edited or written by another tool) would give probabilities of zero,
    negative or above one, scored without a word of warning."""
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise InputError(path, None, f"n-gram order {order!r}: a positive integer")
    counts = table.column("count")
    lengths = pc.list_value_length(table.column("ngram"))
    bad = pc.or_(pc.less_equal(counts, 0),
                 pc.or_(pc.less(lengths, 1), pc.greater(lengths, order)))
    if not pc.any(bad).as_py():
        return
    row = pc.index(bad, True).as_py()
    gram, count = table.column("ngram")[row].as_py(), counts[row].as_py()
    what = (f"count {count}: n-gram counts are positive" if count <= 0 else
            f"{len(gram)} words in a model of order {order}")
    raise InputError(path, None, f"row {row + 1}: n-gram {' '.join(gram)!r} has {what}; the "
                     "ngram-train command writes these files")


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
