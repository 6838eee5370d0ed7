"""Training data overlap: no model may score sentences it was trained on.

When the workflow plans its jobs (rules/common.smk, check_training_overlap), every scoring job
(dataset, model) whose model the pipeline trains (an n-gram of `ngrams:`, a control of
`controls:`) is checked: the sentence texts of the model's training text and of the dataset's
sources, read from the files the config names (CoNLL-U `# text` lines, text files, CoLA TSVs,
BLiMP JSON lines) and compared with whitespace normalised. A treebank split not on disk yet (a
URL before its download) counts as overlapping any use of the same split. Datasets generated
from templates (German case, Japanese transitivity) have no sentence source to compare.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from spudflow.core.pairs_files import local_file
from spudflow.core.plan_items import blimp_paradigm_files
from spudflow.core.split_files import split_files
from spudflow.core.training_share import (
    part_name,
    sentence_key,
    text_entry,
    training_share_keys,
)

NGRAM_SOURCE = re.compile(r"^results/ngram/(?P<name>[^/]+)\.parquet$")
CONTROL_SOURCE = re.compile(r"^results/controls/(?P<name>[^/]+)/?$")
WORD_ID = re.compile(r"^[0-9]+$")
RANGE_ID = re.compile(r"^([0-9]+)-([0-9]+)$")
# Sources whose texts a process keeps (source_texts), by content: a plan reads a few dozen.
TEXTS_KEPT = 64
_TEXTS_READ: dict[tuple, frozenset[str]] = {}


@dataclass(frozen=True)
class Sentences:
    """Where sentences come from. form: conllu (a treebank split: part all, its training share
    `train`, or the `rest` without it), lines (one sentence per line), cola, blimp."""

    name: str                        # for messages: en_pud/test, en_pud/test@train, a path
    path: str | tuple[str, ...] | None   # the file (a split's files, in order); None when
                                         # not on disk at planning time
    form: str = "lines"
    split: str | None = None         # treebank/split of a conllu source
    part: str = "all"
    share: tuple[float, int] | None = None   # (share, seed) of the split's training share
    min_words: int = 0


@dataclass(frozen=True)
class ConllSentence:
    key: str
    text: str
    n_words: int


def normalise(text: str) -> str:
    return " ".join(text.split())


def _open_text(path: str):
    opener = gzip.open if path.endswith(".gz") else open
    return opener(path, "rt", encoding="utf-8-sig")


def conllu_sentences(path: str, first_index: int = 0) -> Iterator[ConllSentence]:
    """Key, text and syntactic word count of each sentence of a CoNLL-U file: `# text`, or the
    surface forms joined by spaces when the sentence has none (a light reader: the ingest stage
    validates the file). first_index: the position in its split of the file's first sentence
    (the key of a sentence without sent_id)."""
    sent_id = text = None
    forms: list[str] = []
    n_words, index = 0, first_index
    covered_until = 0
    with _open_text(path) as lines:
        for line in (*lines, "\n"):
            line = line.rstrip("\r\n")
            if not line.strip():
                if forms or text is not None:
                    yield ConllSentence(sentence_key(sent_id, index),
                                        normalise(text if text is not None else " ".join(forms)),
                                        n_words)
                    index += 1
                sent_id = text = None
                forms, n_words, covered_until = [], 0, 0
            elif line.startswith("#"):
                name, _, value = line[1:].partition("=")
                if name.strip() == "sent_id":
                    sent_id = value.strip()
                elif name.strip() == "text":
                    text = value.strip()
            else:
                fields = line.split("\t")
                if RANGE_ID.match(fields[0]):
                    covered_until = int(RANGE_ID.match(fields[0]).group(2))
                    forms.append(fields[1] if len(fields) > 1 else "")
                elif WORD_ID.match(fields[0]):
                    n_words += 1
                    if int(fields[0]) > covered_until:
                        forms.append(fields[1] if len(fields) > 1 else "")


def _conllu_texts(source: Sentences) -> set[str]:
    sentences: list[ConllSentence] = []
    for path in _files(source):  # a split's files are one split, in order
        sentences += conllu_sentences(path, len(sentences))
    if source.part != "all":
        share = training_share_keys([s.key for s in sentences], *source.share)
        sentences = [s for s in sentences if (s.key in share) == (source.part == "train")]
    return {s.text for s in sentences if s.n_words >= source.min_words}


def _file_texts(source: Sentences) -> set[str]:
    with _open_text(source.path) as lines:
        rows = [line.rstrip("\r\n") for line in lines if line.strip()]
    if source.form == "cola":  # source, label, mark, sentence
        return {normalise(row.split("\t")[3]) for row in rows if len(row.split("\t")) > 3}
    if source.form == "blimp":
        pairs = [json.loads(row) for row in rows]
        return {normalise(p[key]) for p in pairs for key in ("sentence_good", "sentence_bad")
                if key in p}
    return {normalise(row) for row in rows}


def _files(source: Sentences) -> tuple[str, ...]:
    return source.path if isinstance(source.path, tuple) else (source.path,)


def source_texts(source: Sentences) -> frozenset[str] | None:
    """The normalised sentence texts of a source; None when a file of it is not on disk.

    Read once per process for each content of its files: a process that plans many times (a
    test run, a rehearsal) would otherwise parse the same treebanks at every plan."""
    files = _files(source) if source.path is not None else ()
    if not files or not all(Path(p).is_file() for p in files):
        return None
    # The files' contents and how they are read (the suffix picks gzip), not their names.
    contents = tuple((Path(p).suffix, hashlib.blake2b(Path(p).read_bytes()).digest())
                     for p in files)
    key = (replace(source, name="", path=None), contents)
    if key not in _TEXTS_READ:
        while len(_TEXTS_READ) >= TEXTS_KEPT:
            del _TEXTS_READ[next(iter(_TEXTS_READ))]  # the oldest
        _TEXTS_READ[key] = frozenset(
            _conllu_texts(source) if source.form == "conllu" else _file_texts(source))
    return _TEXTS_READ[key]


def _same_sentences_possible(a: Sentences, b: Sentences) -> bool:
    """Without the texts: the same split (but not its training share against the rest), or the
    same file."""
    if a.split is not None:
        return a.split == b.split and {a.part, b.part} != {"train", "rest"}
    return a.path == b.path


def overlap_errors(jobs: Iterable[tuple[str, str]], training: dict[str, list[Sentences]],
                   scored: dict[str, list[Sentences]], allowed: Iterable[str] = ()) -> list[str]:
    """One `config key models.NAME: …` line per scoring job (dataset, model) whose model was
    trained on sentences the dataset holds. training: model -> its training text (only models
    the pipeline trains); scored: dataset -> its sentence sources; allowed: models whose
    config allows the overlap."""
    allowed, texts, errors = set(allowed), {}, []

    def read(source: Sentences) -> frozenset[str] | None:
        if source not in texts:
            texts[source] = source_texts(source)
        return texts[source]

    for dataset, model in jobs:
        if model in allowed or model not in training:
            continue
        found = []
        for trained in training[model]:
            shared, unknown = set(), False
            for source in scored.get(dataset, []):
                a, b = read(trained), read(source)
                if a is not None and b is not None:
                    shared |= a & b
                elif _same_sentences_possible(trained, source):
                    unknown = True
            if shared or unknown:
                count = (f"{len(shared)} shared sentences" if not unknown
                         else "the same split, not on disk yet to compare")
                found.append(f"{trained.name} ({count})")
        if found:
            errors.append(f"config key models.{model}: trained on {', '.join(found)}, which "
                          f"dataset {dataset} scores; set models.{model}.allow_training_overlap: "
                          "true to allow it")
    return errors


# --- from the config ---
def split_file(config: dict, treebank: str, split: str) -> str | tuple[str, ...] | None:
    """The local CoNLL-U file of a split (a tuple for a split of several files): its paths, or
    where its URLs are downloaded (None while one is not downloaded yet); the files the ingest
    rule reads (core/split_files.py)."""
    files = split_files(config, treebank, split)
    if not all(Path(f).is_file() for f in files if f.startswith("resources/downloads/")):
        return None
    return files[0] if len(files) == 1 else tuple(files)


def treebank_part(config: dict, name: str, part: str, min_words: int = 0) -> Sentences:
    """Sentences of `treebank/split`: all of them, its training share or the rest (the rest of
    a split without a training share is all of it)."""
    treebank, _, split = name.partition("/")
    share = (config.get("training_shares") or {}).get(name)
    share = (share["share"], share.get("seed", 0)) if share else None
    if share is None:
        part = "all"
    label = part_name(name, "train") if part == "train" else name
    return Sentences(label, split_file(config, treebank, split), "conllu", name, part, share,
                     min_words)


def text_entry_sources(config: dict, entries: Iterable[str]) -> list[Sentences]:
    """Training text entries: `treebank/split`, `treebank/split@train` (its training share) or
    a text file."""
    sources = []
    for entry in entries:
        named, name = text_entry(config["treebanks"], entry)
        if named == "file":
            sources.append(Sentences(entry, entry))
        else:
            sources.append(treebank_part(config, name, "train" if named == "share" else "all"))
    return sources


def model_training(config: dict, model: str) -> list[Sentences] | None:
    """Training text of a model the pipeline trains (None for the others)."""
    source = config["models"][model]["source"]
    if (match := NGRAM_SOURCE.match(source)) and match["name"] in (config.get("ngrams") or {}):
        return text_entry_sources(config, config["ngrams"][match["name"]]["text"])
    if (match := CONTROL_SOURCE.match(source)) and match["name"] in (config.get("controls") or {}):
        entries = config["controls"][match["name"]].get("text")
        if entries is None:  # every configured split
            entries = [f"{tb}/{split}" for tb, spec in config["treebanks"].items()
                       for split in spec["splits"]]
        return text_entry_sources(config, entries)
    return None


def dataset_sources(config: dict, dataset: str, spud_splits: dict[str, tuple[str, str]],
                    blimp_files: list[str]) -> list[Sentences]:
    """Where a dataset's sentences come from: a SPUD dataset's split without its training share
    (the original sentences, of at least pairs.spud.min_words words), CoLA and BLiMP files (also
    those of the acceptability set built from BLiMP)."""
    pairs = config.get("pairs") or {}
    if dataset in spud_splits:
        treebank, split = spud_splits[dataset]
        min_words = (pairs.get("spud") or {}).get("min_words", 4)
        return [treebank_part(config, f"{treebank}/{split}", "rest", min_words)]
    if dataset == "cola":  # the CoLA splits and the phenomenon sets: both are in its items
        cola = pairs.get("cola") or {}
        files = [*cola.get("files", []), *cola.get("phenomena", [])]
        return [Sentences(f, local_file("cola", f), "cola") for f in files]
    if dataset == "blimp":
        return [Sentences(f, f, "blimp") for f in blimp_files]
    if dataset == "blimp_acceptability":  # the sentences of BLiMP pairs, as `blimp`'s
        files = blimp_paradigm_files(pairs["blimp_acceptability"])
        return [Sentences(f, f, "blimp") for f in files]
    return []
