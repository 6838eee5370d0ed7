"""The sentences to score: an items Parquet file (the items stage's ITEMS artifact) or a plain text
file with one sentence per line, whose words come from the language's blank spaCy tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spudflow.core.artifacts import ITEMS
from spudflow.core.contract import read_artifact
from spudflow.core.errors import InputError
from spudflow.core.regular_files import check_regular_file
from spudflow.core.sampling import sample_indices
from spudflow.core.text_lines import nonblank_lines
from spudflow.core.training_text import blank_pipeline

# Columns of the ITEMS artifact that scoring reads; the others are carried by the items stage only.
REQUIRED_COLUMNS = ("item_id", "sentence", "words", "word_starts", "word_ends", "regions",
                    "language")


@dataclass(frozen=True)
class Region:
    name: str
    start: int  # character offsets into the sentence, end exclusive
    end: int


@dataclass(frozen=True)
class Item:
    """One sentence to score, with its words and named regions as character spans."""

    item_id: str
    sentence: str
    words: tuple[str, ...]
    word_starts: tuple[int, ...]
    word_ends: tuple[int, ...]
    regions: tuple[Region, ...]
    language: str | None


def load_items(path: Path, lang: str) -> list[Item]:
    """Items of an items Parquet file (`.parquet`) or of a text file (anything else)."""
    check_regular_file(path)
    if path.suffix == ".parquet":
        return _parquet_items(path)
    return _text_items(path, lang)


def sample_groups(items: list[Item], path: Path, n: int, seed: int) -> list[Item]:
    """The items of a seeded uniform sample of n groups (core/sampling.py), in their order.
    Groups are the `group_id` column of an items file, in order of first appearance; so the
    sample depends only on the groups, n and seed, and every model given the same n and seed
    scores the same sentences. Items without a group are their own group."""
    groups = {item.item_id: item.item_id for item in items}
    if path.suffix == ".parquet":
        table = read_artifact(path, ITEMS, ("item_id", "group_id"))
        for item_id, group in zip(table.get_column("item_id").to_list(),
                                  table.get_column("group_id").to_list(), strict=True):
            if item_id in groups:
                groups[item_id] = group
    order = list(dict.fromkeys(groups[item.item_id] for item in items))
    if n >= len(order):
        return items
    picked = sample_indices(len(order), n, seed)
    wanted = {order[i] for i in picked}
    return [item for item in items if groups[item.item_id] in wanted]


def _parquet_items(path: Path) -> list[Item]:
    df = read_artifact(path, ITEMS, REQUIRED_COLUMNS)
    items, seen = [], set()
    rows = zip(*(df.get_column(c).to_list() for c in REQUIRED_COLUMNS), strict=True)
    for row_number, (item_id, sentence, words, starts, ends, spans, language) in enumerate(rows, 1):
        item = Item(
            item_id=str(item_id), sentence=sentence, words=tuple(words),
            word_starts=tuple(starts), word_ends=tuple(ends),
            regions=tuple(Region(r["name"], r["start"], r["end"]) for r in spans),
            language=language)
        problem = _item_problem(item)
        if item.item_id in seen:
            problem = "duplicate item_id"
        if problem:
            raise InputError(path, row_number, f"item {item.item_id!r}: {problem}")
        seen.add(item.item_id)
        items.append(item)
    return items


def _item_problem(item: Item) -> str | None:
    """What is wrong with an item's words and regions, or None."""
    n = len(item.words)
    if not len(item.word_starts) == len(item.word_ends) == n:
        return "words, word_starts and word_ends differ in length"
    previous_end = 0
    for i, (word, start, end) in enumerate(zip(item.words, item.word_starts, item.word_ends,
                                               strict=True)):
        if not previous_end <= start < end <= len(item.sentence):
            return f"word {i} has offsets [{start}, {end}) out of order or outside the sentence"
        if item.sentence[start:end] != word:
            return f"word {i} is {word!r} but its offsets cover {item.sentence[start:end]!r}"
        previous_end = end
    for region in item.regions:
        if not 0 <= region.start < region.end <= len(item.sentence):
            return f"region {region.name!r} has offsets [{region.start}, {region.end}) outside " \
                   "the sentence"
    return None


def _text_items(path: Path, lang: str) -> list[Item]:
    """One item per non-blank line (the line exactly, without its line end); item_id is the
    1-based line number."""
    nlp = blank_pipeline(lang)
    items = []
    for line_number, line in nonblank_lines(path):
        words = [t for t in nlp.make_doc(line) if not t.is_space]
        items.append(Item(
            item_id=str(line_number), sentence=line, words=tuple(t.text for t in words),
            word_starts=tuple(t.idx for t in words),
            word_ends=tuple(t.idx + len(t.text) for t in words), regions=(), language=lang))
    if not items:
        raise InputError(path, None, "no sentences (empty input)")
    return items
