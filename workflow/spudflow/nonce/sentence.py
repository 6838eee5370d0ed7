"""A mutable view of one sentence's words, over the token columns of the whole treebank.

The replacement loop and the language hooks read tags and change forms and spacing through it;
the changes land in the shared column lists, which become the output table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from spudflow.core.feats import parse_feats

SPACE_AFTER_NO = "SpaceAfter=No"


def has_space_after(misc: str | None) -> bool:
    return SPACE_AFTER_NO not in (misc or "_").split("|")


_ESCAPES = {"\\s": " ", "\\t": "\t", "\\n": " ", "\\p": "|", "\\\\": "\\"}


def spaces_after(misc: str | None) -> str:
    """What follows a surface token in the text: "" for SpaceAfter=No, the decoded value of
    SpacesAfter (`\\u00A0`, `\\s\\s`; a line break becomes a space in `# text`), else " "."""
    for item in (misc or "_").split("|"):
        if item == SPACE_AFTER_NO:
            return ""
        if item.startswith("SpacesAfter="):
            value = item.removeprefix("SpacesAfter=")
            for escape, char in _ESCAPES.items():
                value = value.replace(escape, char)
            return re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m[1], 16)), value)
    return " "


def with_space_after(misc: str | None, space: bool) -> str:
    """MISC with `SpaceAfter=No` (and any SpacesAfter) removed for a plain space, or
    `SpaceAfter=No` added; other items untouched."""
    items = [item for item in (misc or "_").split("|")
             if item not in ("_", SPACE_AFTER_NO) and not item.startswith("SpacesAfter=")]
    if not space:
        items.append(SPACE_AFTER_NO)
    return "|".join(items) or "_"


# MISC attributes that describe the original form or lemma; a changed word drops them.
STALE_MISC = frozenset({"wordform", "Translit", "LTranslit", "LId", "Gloss", "LGloss", "Vform",
                        "CorrectForm", "Lang"})


def without_stale(misc: str | None) -> str:
    items = [item for item in (misc or "_").split("|")
             if item != "_" and item.split("=", 1)[0] not in STALE_MISC]
    return "|".join(items) or "_"


@dataclass
class TokenColumns:
    """The token table as Python lists (row order: sent_index, token_index)."""

    token_type: list[str]
    word_index: list[int]
    mwt_end: list[int | None]
    form: list[str]
    lemma: list[str]
    upos: list[str]
    feats: list[str]
    head: list[int | None]
    deprel: list[str]
    misc: list[str]
    orig_form: list[str]
    orig_lemma: list[str]
    replaced: list[bool]

    @classmethod
    def from_frame(cls, tokens: pl.DataFrame) -> TokenColumns:
        get = tokens.get_column
        form = get("form").to_list()
        lemma = get("lemma").to_list()
        return cls(
            token_type=get("token_type").to_list(), word_index=get("word_index").to_list(),
            mwt_end=get("mwt_end").to_list(), form=form, lemma=lemma,
            upos=get("upos").to_list(), feats=get("feats").to_list(),
            head=get("head").to_list(), deprel=get("deprel").to_list(),
            misc=get("misc").to_list(), orig_form=list(form), orig_lemma=list(lemma),
            replaced=[False] * len(form),
        )


class SentenceView:
    """Words 0..n-1 of one sentence (word ID - 1) and its multiword tokens."""

    def __init__(self, columns: TokenColumns, start: int, stop: int) -> None:
        self.columns = columns
        self.rows: list[int] = []             # token row of each word
        self.mwts: list[tuple[int, int, int]] = []  # (token row, first word, last word), 0-based
        self._mwt_of: dict[int, int] = {}     # word -> position in self.mwts
        for row in range(start, stop):
            token_type = columns.token_type[row]
            if token_type == "word":
                self.rows.append(row)
            elif token_type == "mwt":
                first, last = columns.word_index[row] - 1, columns.mwt_end[row] - 1
                for word in range(first, last + 1):
                    self._mwt_of[word] = len(self.mwts)
                self.mwts.append((row, first, last))
        self.n = len(self.rows)
        self._feats: dict[int, dict[str, str]] = {}

    # --- reading -------------------------------------------------------------------------
    def form(self, i: int) -> str:
        return self.columns.form[self.rows[i]]

    def orig_form(self, i: int) -> str:
        return self.columns.orig_form[self.rows[i]]

    def lemma(self, i: int) -> str:
        return self.columns.lemma[self.rows[i]]

    def upos(self, i: int) -> str:
        return self.columns.upos[self.rows[i]]

    def deprel(self, i: int) -> str:
        return self.columns.deprel[self.rows[i]]

    def feature(self, i: int, name: str) -> str | None:
        if i not in self._feats:
            self._feats[i] = parse_feats(self.columns.feats[self.rows[i]])
        return self._feats[i].get(name)

    def head(self, i: int) -> int | None:
        """0-based index of the head word, None for the root."""
        head = self.columns.head[self.rows[i]]
        return head - 1 if head else None

    def replaced(self, i: int) -> bool:
        return self.columns.replaced[self.rows[i]]

    def changed(self, i: int) -> bool:
        return self.form(i) != self.orig_form(i)

    def mwt(self, i: int) -> tuple[int, int, int] | None:
        position = self._mwt_of.get(i)
        return None if position is None else self.mwts[position]

    def space_after(self, i: int) -> bool:
        """Is word i followed by a space? Inside a multiword token: never."""
        mwt = self.mwt(i)
        if mwt is None:
            return has_space_after(self.columns.misc[self.rows[i]])
        row, _, last = mwt
        return i == last and has_space_after(self.columns.misc[row])

    # --- changing ------------------------------------------------------------------------
    def set_form(self, i: int, form: str) -> None:
        self.columns.form[self.rows[i]] = form

    def set_space_after(self, i: int, space: bool) -> None:
        """Set the spacing after word i; inside a multiword token the join rule decides, so only
        the token's last word passes the change on to the token."""
        mwt = self.mwt(i)
        if mwt is None:
            row = self.rows[i]
        elif i == mwt[2]:
            row = mwt[0]
        else:
            return
        self.columns.misc[row] = with_space_after(self.columns.misc[row], space)
