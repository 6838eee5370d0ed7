"""Training text of the models the pipeline trains (n-gram models, control LMs): ingested
treebank splits or plain text files, as word sequences or as sentence strings."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.core.artifacts import TREEBANK_SENTENCES, TREEBANK_TOKENS
from spudflow.core.contract import read_artifact
from spudflow.core.errors import InputError
from spudflow.core.regular_files import check_regular_file
from spudflow.core.text_lines import nonblank_lines, read_lines
from spudflow.core.treebank import SENTENCES_FILE, TOKENS_FILE


def treebank_sentences(directory: Path) -> list[list[str]]:
    """The surface tokens of each sentence of an ingested split: multiword tokens as written
    (`du`, not `de le`), the same units as the sentence text; empty nodes left out."""
    path = directory / TOKENS_FILE
    tokens = read_artifact(path, TREEBANK_TOKENS, ["sent_index", "token_index", "token_type",
                                                   "word_index", "mwt_end", "form"])
    ranges = tokens.filter(pl.col("token_type") == "mwt").select(
        "sent_index", first=pl.col("word_index"), last=pl.col("mwt_end"))
    inside = (tokens.filter(pl.col("token_type") == "word")
              .join(ranges, on="sent_index")
              .filter(pl.col("word_index").is_between(pl.col("first"), pl.col("last")))
              .select("sent_index", "word_index"))
    surface = (tokens.filter(pl.col("token_type").is_in(["word", "mwt"]))
               .join(inside.with_columns(inside=pl.lit(True)), on=["sent_index", "word_index"],
                     how="left")
               .filter(pl.col("inside").is_null() | (pl.col("token_type") == "mwt"))
               .sort("sent_index", "token_index"))
    grouped = surface.group_by("sent_index", maintain_order=True).agg("form")
    return grouped.get_column("form").to_list()


def blank_pipeline(lang: str):
    """spaCy's rule-based tokenizer for LANG (no trained pipeline needed)."""
    import spacy

    try:
        return spacy.blank(lang)
    except Exception as error:  # noqa: BLE001 - unknown language or a missing tokenizer backend
        raise InputError("--lang", None, f"spaCy has no tokenizer for {lang!r}: {error}") from None


def ascii_split(line: str) -> list[str]:
    """The words of a line split at ASCII white space only, as Python 2's str.split() splits
    bytes (a no-break space or an ideographic space stays inside a word)."""
    return [word.decode("utf-8") for word in line.encode("utf-8").split()]


def text_sentences(path: Path, lang: str, words: str = "spacy",
                   lau: bool = False) -> list[list[str]]:
    """One sentence per non-blank line, split into words by spaCy's blank LANG tokenizer or at
    whitespace (`words`). `lau` reads the file as Lau et al.'s n-gram code does: every line is a
    sentence, a blank one an empty sentence (it still counts `<s> </s>`), and `whitespace`
    splits at ASCII white space only (their scripts split bytes)."""
    lines = read_lines(path) if lau else nonblank_lines(path)
    if words == "whitespace":
        split = ascii_split if lau else str.split
        return [split(line) for _, line in lines]
    nlp = blank_pipeline(lang)
    return [[t.text for t in nlp.make_doc(line) if not t.is_space] for _, line in lines]


def training_sentences(source: Path, lang: str, words: str = "spacy",
                       lau: bool = False) -> list[list[str]]:
    """Word sequences of an ingested split or a text file (`words`: how its lines are split,
    `lau`: as Lau et al.'s n-gram code reads them, text_sentences); one without any is bad
    input."""
    if source.is_dir():
        sentences = treebank_sentences(source)
    elif source.is_file():
        sentences = text_sentences(source, lang, words, lau)
    elif not source.exists():
        raise InputError(source, None, "no such file or directory")
    else:
        check_regular_file(source)  # a FIFO or a device: says so
    if not any(sentences):
        raise InputError(source, None, "no sentences (empty input)")
    return sentences


def treebank_texts(directory: Path) -> list[str]:
    """Each sentence of an ingested split as written (`# text`, what the items datasets score;
    spacing and scripts without spaces kept), or its surface tokens joined by spaces when the
    sentence has no text."""
    path = directory / SENTENCES_FILE
    texts = read_artifact(path, TREEBANK_SENTENCES, ["text"]).get_column("text").to_list()
    if any(text is None for text in texts):
        words = treebank_sentences(directory)
        texts = [" ".join(w) if text is None else text
                 for text, w in zip(texts, words, strict=True)]
    return texts


def training_texts(source: Path) -> list[str]:
    """Sentence strings of an ingested split (a directory) or a text file (one per line); one
    without any is bad input."""
    if source.is_dir():
        texts = treebank_texts(source)
    elif source.is_file():
        texts = [line for _, line in nonblank_lines(source)]
    elif not source.exists():
        raise InputError(source, None, "no such file or directory")
    else:
        check_regular_file(source)  # a FIFO or a device: says so
    if not any(text.strip() for text in texts):
        raise InputError(source, None, "no sentences (empty input)")
    return texts
