"""SPUD pairs: each original treebank sentence with its nonce versions, in one group.

Words are the treebank's surface tokens, i.e. the pieces that make up the sentence text: a
multiword token counts as one word (its surface form, not its syntactic parts), empty nodes are
left out, and every other word is its form. Their character offsets are found by walking the
sentence's `# text` (forms separated by whitespace or, with SpaceAfter=No, by nothing); a sentence
without text gets the text rebuilt from its forms and SpaceAfter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from spudflow.core.artifacts import ITEMS_SPUD, SPUD_ORIGINAL
from spudflow.core.errors import InputError
from spudflow.core.training_share import sentences_in_share
from spudflow.core.treebank import (
    SENTENCES_FILE,
    TOKENS_FILE,
    nonce_marker,
    read_nonce_treebank,
    read_original_treebank,
)
from spudflow.items.table import ItemsBuilder, Region, Words

NONCE_DIR = re.compile(r"^seed(\d+)$")


@dataclass(frozen=True)
class NonceVersion:
    method: str
    seed: int
    directory: Path


def nonce_version(directory: str | Path) -> NonceVersion:
    """Method and seed from the path layout `…/{method}/seed{seed}/` of the nonce stage."""
    directory = Path(directory)
    match = NONCE_DIR.match(directory.name)
    if not match or not directory.parent.name:
        raise InputError(directory, None, "not a nonce treebank directory: expected a path "
                         "ending in {method}/seed{N}")
    return NonceVersion(directory.parent.name, int(match.group(1)), directory)


@dataclass(frozen=True)
class Surface:
    """One surface token: its text, the syntactic word IDs it covers, SpaceAfter."""
    form: str
    first: int
    last: int
    space_after: bool


def _space_after(misc: str | None) -> bool:
    return "SpaceAfter=No" not in (misc or "").split("|")


def surface_tokens(rows: list[dict]) -> list[Surface]:
    """Surface tokens of one sentence's token rows (sorted by token_index)."""
    out: list[Surface] = []
    covered_until = 0
    for row in rows:
        token_type = row["token_type"]
        if token_type == "empty":
            continue
        if token_type == "mwt":
            out.append(Surface(row["form"], row["word_index"], row["mwt_end"],
                               _space_after(row["misc"])))
            covered_until = row["mwt_end"]
        elif row["word_index"] > covered_until:
            out.append(Surface(row["form"], row["word_index"], row["word_index"],
                               _space_after(row["misc"])))
    return out


def rebuilt_text(tokens: list[Surface]) -> str:
    return "".join(t.form + (" " if t.space_after else "") for t in tokens).rstrip(" ")


def align(text: str, tokens: list[Surface]) -> list[int] | None:
    """Start offset of every token in `text`, skipping whitespace between them; None when the
    forms do not spell the text."""
    starts = []
    position = 0
    for token in tokens:
        while position < len(text) and text[position].isspace():
            position += 1
        if not text.startswith(token.form, position):
            return None
        starts.append(position)
        position += len(token.form)
    return starts if not text[position:].strip() else None


def sentence_words(text: str | None, tokens: list[Surface]) -> tuple[str, Words, bool]:
    """(sentence, words, aligned): the sentence text and its surface words with offsets.

    aligned is False when the forms do not spell `# text` (or there is none); the sentence is then
    the text rebuilt from the forms and SpaceAfter."""
    starts = align(text, tokens) if text is not None else None
    aligned = starts is not None
    if not aligned:
        text = rebuilt_text(tokens)
        starts = align(text, tokens)
    forms = [t.form for t in tokens]
    return text, (forms, starts, [s + len(f) for s, f in zip(starts, forms, strict=True)]), aligned


def _sentence_rows(tokens: pl.DataFrame) -> dict[int, list[dict]]:
    columns = ["sent_index", "token_index", "token_type", "word_index", "mwt_end", "form", "misc"]
    extra = [c for c in ("replaced",) if c in tokens.columns]
    rows: dict[int, list[dict]] = {}
    for row in tokens.select(columns + extra).sort(["sent_index", "token_index"]).iter_rows(
            named=True):
        rows.setdefault(row["sent_index"], []).append(row)
    return rows


def _read(directory: Path, nonce: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    for name in (TOKENS_FILE, SENTENCES_FILE):
        if not (directory / name).is_file():
            raise InputError(directory / name, None, "no such file (not an ingested treebank)")
    return read_nonce_treebank(directory) if nonce else read_original_treebank(directory)


def _check_marker(version: NonceVersion) -> None:
    """The path's method and seed are those the nonce stage made the treebank with: a folder
    copied to another seed's path would otherwise count as a second, independent draw."""
    marker = nonce_marker(version.directory)
    if marker is None:  # written before the marker: the path is all there is
        return
    made = (marker.get("method"), marker.get("seed"))
    if made != (version.method, version.seed):
        raise InputError(version.directory / TOKENS_FILE, None, f"made by spudflow nonce as "
                         f"{made[0]}/seed{made[1]}, but its path says "
                         f"{version.method}/seed{version.seed}: one nonce treebank given as "
                         "another seed's?")


def build_spud_items(orig_dir: Path, nonce_dirs: list[Path], dataset: str, language: str,
                     min_words: int = 4, leave_out_share: tuple[float, int] | None = None
                     ) -> tuple[pa.Table, dict[str, int]]:
    """Items of one treebank split: the original sentences and every nonce version of them.

    leave_out_share: (share, seed) of the split's training share (core.training_share), whose
    sentences the pipeline's own models train on and so are left out here.
    Returns the table and counts (sentences kept, left out as short or in the training share,
    rebuilt texts)."""
    versions = [nonce_version(d) for d in nonce_dirs]
    keys = [(v.method, v.seed) for v in versions]
    if len(set(keys)) != len(keys):
        raise InputError(nonce_dirs[0], None, "the same method and seed given twice")
    tokens, sentences = _read(Path(orig_dir), nonce=False)
    orig_rows = _sentence_rows(tokens)
    nonce_data = []
    for version in versions:
        n_tokens, n_sentences = _read(version.directory, nonce=True)
        _check_marker(version)
        if n_sentences.get_column("sent_index").to_list() != sentences.get_column(
                "sent_index").to_list() or n_sentences.get_column("sent_id").to_list() != \
                sentences.get_column("sent_id").to_list():
            raise InputError(version.directory / SENTENCES_FILE, None,
                             f"its sentences differ from those of {orig_dir}")
        texts = dict(zip(n_sentences.get_column("sent_index").to_list(),
                         n_sentences.get_column("text").to_list(), strict=True))
        nonce_data.append((version, _sentence_rows(n_tokens), texts))

    builder = ItemsBuilder(dataset, language, ITEMS_SPUD)
    counts = {"sentences": 0, "short": 0, "training_share": 0, "rebuilt_text": 0}
    in_share = (sentences_in_share(sentences, *leave_out_share).to_list() if leave_out_share
                else [False] * sentences.height)
    for sent, trained_on in zip(sentences.select("sent_index", "sent_id", "text", "n_words")
                                .iter_rows(named=True), in_share, strict=True):
        index, n_words = sent["sent_index"], sent["n_words"]
        if trained_on:
            counts["training_share"] += 1
            continue
        if n_words < min_words:
            counts["short"] += 1
            continue
        counts["sentences"] += 1
        key = sent["sent_id"] if sent["sent_id"] is not None else f"#{index}"
        group = f"{dataset}:{key}"
        common = {"sent_index": index, "sent_id": sent["sent_id"], "n_words": n_words}
        text, words, aligned = sentence_words(sent["text"], surface_tokens(orig_rows[index]))
        counts["rebuilt_text"] += not aligned
        builder.add(f"{group}:{SPUD_ORIGINAL}", group, text, 1, words=words, method=SPUD_ORIGINAL,
                    seed=None, n_replaced=None, **common)
        for version, rows_by_sentence, texts in nonce_data:
            rows = rows_by_sentence.get(index, [])
            surface = surface_tokens(rows)
            text, words, aligned = sentence_words(texts[index], surface)
            counts["rebuilt_text"] += not aligned
            replaced_words = {r["word_index"] for r in rows if r["token_type"] == "word"
                              and r["replaced"]}
            regions = [Region("replaced", start, end) for token, start, end in
                       zip(surface, words[1], words[2], strict=True)
                       if any(token.first <= w <= token.last for w in replaced_words)]
            # Nonce sentences are built to keep the syntax, but whether they stay grammatical
            # is what the experiments ask: no label is claimed.
            builder.add(f"{group}:{version.method}:seed{version.seed}", group, text, None,
                        regions=regions, words=words, method=version.method,
                        seed=version.seed, n_replaced=len(replaced_words), **common)
    if not counts["sentences"]:  # an items file of nothing would score to empty tables
        raise InputError(orig_dir, None, f"no items: of its {sentences.height} sentences, "
                         f"{counts['short']} have fewer than {min_words} words (--min-words) "
                         f"and {counts['training_share']} are in the training share")
    return builder.table(), counts
