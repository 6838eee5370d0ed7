"""CoNLL-U files -> token and sentence tables (core.treebank columns)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.treebank import SENTENCE_SCHEMA, TOKEN_SCHEMA
from spudflow.ingest.reader import split_sentences
from spudflow.ingest.validate import parse_tokens

log = get_logger(__name__)

_SENT_ID = "# sent_id ="
_TEXT = "# text ="


def _marker(comments: list[str], name: str) -> str | None:
    """`# newdoc id = X` -> "X"; a bare `# newdoc` -> ""; absent -> None."""
    for comment in comments:
        body = comment[1:].strip()
        if body == name:
            return ""
        if body.startswith(name + " ") or body.startswith(name + "\t"):
            rest = body[len(name):].strip()
            return rest.split("=", 1)[1].strip() if "=" in rest else rest
    return None


def _value(comments: list[str], prefix: str) -> str | None:
    for comment in comments:
        if comment.startswith(prefix):
            return comment[len(prefix):].strip()
    return None


def _sentences(paths: list[Path]):
    """(file, sentence) of every file in order: the files of a split read as one."""
    for path in paths:
        for sentence in progress(split_sentences(path), desc=f"ingest {path.name}", unit="sent"):
            yield path, sentence


def read_conllu(paths: str | Path | Sequence[str | Path], lenient: bool = False
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Validate and convert a CoNLL-U file, or several read as one split in their order (a
    sent_id is unique across all of them; `line` is the line in the sentence's own file). With
    `lenient`, bad sentences are skipped and counted; file-level problems (encoding, gzip, empty
    file) always fail."""
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    tok = {f.name: [] for f in TOKEN_SCHEMA}
    sen = {f.name: [] for f in SENTENCE_SCHEMA}
    seen_ids: dict[str, tuple[Path, int]] = {}
    skipped = 0
    for path, sentence in _sentences(paths):
        sent_id = _value(sentence.comments, _SENT_ID)
        try:
            if sent_id is not None and sent_id in seen_ids:
                first_path, first_line = seen_ids[sent_id]
                where = "" if first_path == path else f"{first_path}:"
                raise InputError(path, sentence.line, f"duplicate sent_id {sent_id!r} (first at "
                                 f"{where or 'line '}{first_line})")
            tokens = parse_tokens(path, sentence)
        except InputError as error:
            if not lenient:
                raise
            skipped += 1
            log.warning("skipped sentence: %s", error.format())
            continue
        if sent_id is not None:
            seen_ids[sent_id] = (path, sentence.line)
        index = len(sen["sent_index"])
        n_words = n_surface = 0
        covered_until = 0
        for position, token in enumerate(tokens):
            f = token.fields
            tok["sent_index"].append(index)
            tok["sent_id"].append(sent_id)
            tok["token_index"].append(position)
            tok["line"].append(token.line)
            tok["token_type"].append(token.token_type)
            tok["id"].append(f[0])
            tok["word_index"].append(token.word_index)
            tok["mwt_end"].append(token.mwt_end)
            tok["empty_minor"].append(token.empty_minor)
            for name, value in zip(("form", "lemma", "upos", "xpos", "feats"), f[1:6], strict=True):
                tok[name].append(value)
            tok["head"].append(token.head)
            tok["deprel"].append(f[7])
            tok["deps"].append(f[8])
            tok["misc"].append(f[9])
            if token.token_type == "word":
                n_words += 1
                n_surface += token.word_index > covered_until
            elif token.token_type == "mwt":
                n_surface += 1
                covered_until = token.mwt_end
        sen["sent_index"].append(index)
        sen["sent_id"].append(sent_id)
        sen["text"].append(_value(sentence.comments, _TEXT))
        sen["comments"].append(sentence.comments)
        sen["newdoc"].append(_marker(sentence.comments, "newdoc"))
        sen["newpar"].append(_marker(sentence.comments, "newpar"))
        sen["line"].append(sentence.line)
        sen["n_words"].append(n_words)
        sen["n_tokens"].append(n_surface)
    if skipped:
        log.warning("%s: skipped %d bad sentence(s) (--lenient)",
                    ", ".join(map(str, paths)), skipped)
    if not sen["sent_index"]:
        raise InputError(paths[0], 1, "no valid sentence in the file" + "s" * (len(paths) > 1))
    return (pl.DataFrame(tok, schema=pl.from_arrow(TOKEN_SCHEMA.empty_table()).schema),
            pl.DataFrame(sen, schema=pl.from_arrow(SENTENCE_SCHEMA.empty_table()).schema))
