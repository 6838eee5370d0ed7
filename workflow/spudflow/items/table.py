"""The items table every scorer reads: one row per sentence, same columns for every dataset.

Base columns (docs/items.md has the full card): dataset, item_id, group_id, sentence, words,
word_starts, word_ends, label, language, regions; then the dataset's own condition columns.
Raw-text datasets get their words from spaCy's rule-based tokenizer (`spacy.blank(lang)`);
treebank datasets pass their own words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import ITEMS
from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import ARTIFACT_KEY, Artifact, conform, write_artifact
from spudflow.core.dataset_families import ITEMS_ARTIFACTS
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress

# Base columns: core/artifacts.py (ITEMS); each family's condition columns: its registry entry
# (core/dataset_families.py).
BASE_SCHEMA = ITEMS.schema()
BASE_COLUMNS = tuple(BASE_SCHEMA.names)

log = get_logger(__name__)

Words = tuple[list[str], list[int], list[int]]


@dataclass(frozen=True)
class Region:
    name: str
    start: int
    end: int


@cache
def blank_pipeline(language: str):
    """spaCy's rule-based tokenizer for a language (no trained components)."""
    import spacy

    return spacy.blank(language)


def spacy_words(sentences: Sequence[str], language: str, batch_size: int = 1000) -> list[Words]:
    """Words and character offsets of each sentence; whitespace tokens are left out."""
    nlp = blank_pipeline(language)
    result = []
    docs = nlp.pipe(sentences, batch_size=batch_size)
    for doc in progress(docs, desc=f"tokenize ({language})", total=len(sentences),
                        unit="sent"):
        tokens = [t for t in doc if not t.is_space]
        result.append(([t.text for t in tokens], [t.idx for t in tokens],
                       [t.idx + len(t.text) for t in tokens]))
    return result


class ItemsBuilder:
    """Collects items row by row, then builds the Arrow table (tokenizing where needed)."""

    def __init__(self, dataset: str, language: str, artifact: Artifact):
        if artifact.columns[:len(BASE_COLUMNS)] != ITEMS.columns:
            raise ValueError(f"{artifact.name} does not start with the items base columns")
        self.dataset = dataset
        self.language = language
        self.artifact = artifact
        self.conditions = pa.schema([(c.name, c.type)
                                     for c in artifact.columns[len(BASE_COLUMNS):]])
        self._rows: dict[str, list] = {name: [] for name in BASE_COLUMNS + tuple(
            self.conditions.names)}
        self._given_words: list[Words | None] = []

    def __len__(self) -> int:
        return len(self._given_words)

    def add(self, item_id: str, group_id: str, sentence: str, label: int | None,
            regions: Iterable[Region] = (), words: Words | None = None, **conditions) -> None:
        missing = set(self.conditions.names) - set(conditions)
        extra = set(conditions) - set(self.conditions.names)
        if missing or extra:
            raise ValueError(f"condition columns missing {sorted(missing)}, unknown "
                             f"{sorted(extra)}")
        rows = self._rows
        rows["dataset"].append(self.dataset)
        rows["item_id"].append(item_id)
        rows["group_id"].append(group_id)
        rows["sentence"].append(sentence)
        rows["label"].append(label)
        rows["language"].append(self.language)
        rows["regions"].append([{"name": r.name, "start": r.start, "end": r.end}
                                for r in regions])
        for name, value in conditions.items():
            rows[name].append(value)
        self._given_words.append(words)

    def table(self) -> pa.Table:
        """The items table; sentences added without words are tokenized with spaCy."""
        rows = self._rows
        todo = [i for i, w in enumerate(self._given_words) if w is None]
        if todo:
            tokenized = spacy_words([rows["sentence"][i] for i in todo], self.language)
            words = list(self._given_words)
            for i, w in zip(todo, tokenized, strict=True):
                words[i] = w
        else:
            words = self._given_words
        rows["words"] = [w[0] for w in words]
        rows["word_starts"] = [w[1] for w in words]
        rows["word_ends"] = [w[2] for w in words]
        schema = pa.schema(list(BASE_SCHEMA) + list(self.conditions))
        table = pa.Table.from_pydict({name: rows[name] for name in schema.names}, schema=schema)
        check_items(table)
        return conform(table, self.artifact)


def check_items(table: pa.Table) -> None:
    """Invariants of every items table; a failure is a bug in the builder, not bad input."""
    ids = table.column("item_id").to_pylist()
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))
        raise ValueError(f"duplicate item_id {dup!r}")
    columns = [table.column(c).to_pylist() for c in
               ("sentence", "words", "word_starts", "word_ends", "regions", "item_id")]
    for sentence, words, starts, ends, regions, item_id in zip(*columns, strict=True):
        if not len(words) == len(starts) == len(ends):
            raise ValueError(f"{item_id}: words and offsets differ in length")
        for word, start, end in zip(words, starts, ends, strict=True):
            if sentence[start:end] != word:
                raise ValueError(f"{item_id}: word {word!r} is not at [{start}, {end})")
        for region in regions:
            if not 0 <= region["start"] <= region["end"] <= len(sentence):
                raise ValueError(f"{item_id}: region {region} outside the sentence")


def write_items(table: pa.Table, path: str | Path) -> None:
    """Write an ItemsBuilder's table, checked again against its family's definition."""
    artifact = (table.schema.metadata or {}).get(ARTIFACT_KEY, b"").decode()
    if artifact not in ITEMS_ARTIFACTS:
        raise ValueError(f"items table of unknown family {artifact!r}")
    with atomic_outputs() as out:
        write_artifact(table, out.path(path), ITEMS_ARTIFACTS[artifact])
    n_groups = len(set(table.column("group_id").to_pylist()))
    log.info("wrote %d items in %d groups to %s", table.num_rows, n_groups, path)
