"""Surface text after replacement: capitalisation, multiword-token surfaces, sentence text."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from spudflow.nonce.sentence import SentenceView, spaces_after

if TYPE_CHECKING:
    from spudflow.nonce.languages.base import LanguageRules


def _cased(form: str) -> bool:
    return sum(c.isalpha() for c in form) > 1 and form.lower() != form.upper()


def case_style(forms: list[str]) -> str:
    """"upper" for a shouted sentence (most cased words in capitals), "title" for a headline
    (most capitalised), else "plain"."""
    cased = [f for f in forms if _cased(f)]
    if len(cased) < 2:
        return "plain"
    if sum(f.isupper() for f in cased) * 2 > len(cased):
        return "upper"
    if sum(f[:1].isupper() for f in cased) * 4 > len(cased) * 3:
        return "title"
    return "plain"


def match_case(form: str, like: str, initial: bool = False, style: str = "plain") -> str:
    """Give FORM the capitals of LIKE that come from position or style rather than from the
    word: the first letter at the start of a sentence or in a headline, all capitals in a
    shouted sentence. A capital inside a plain sentence belongs to the word (X-ray, MBA), so
    the replacement is written as the lexicon writes it."""
    if style == "upper" and like.isupper() and _cased(like):
        return form.upper()
    if like[:1].isupper() and (initial or style != "plain"):
        return form[:1].upper() + form[1:]
    return form


def rebuild_mwts(sentence: SentenceView, rules: LanguageRules) -> None:
    """A multiword token keeps its surface unless a part changed; then the parts are joined as
    the language writes them."""
    columns = sentence.columns
    for row, first, last in sentence.mwts:
        parts = range(first, last + 1)
        if not any(sentence.changed(i) for i in parts):
            continue
        surface = rules.join_mwt([sentence.form(i) for i in parts],
                                 [sentence.orig_form(i) for i in parts], columns.orig_form[row])
        columns.form[row] = match_case(surface, columns.orig_form[row], initial=True)


def sentence_text(sentence: SentenceView) -> str:
    """The text from the surface tokens (multiword tokens, words outside them) and SpaceAfter."""
    columns = sentence.columns
    pieces: list[str] = []
    i = 0
    while i < sentence.n:
        mwt = sentence.mwt(i)
        row = mwt[0] if mwt else sentence.rows[i]
        pieces.append(columns.form[row])
        pieces.append(spaces_after(columns.misc[row]))
        i = mwt[2] + 1 if mwt else i + 1
    return "".join(pieces).strip()


TEXT_PREFIX = "# text ="
ORIG_TEXT_PREFIX = "# orig_text ="
SHORT_SENTENCE = 4  # sentences with fewer words are flagged `short` (the paper drops them)


def _comments(comments: list[str], text: str | None, orig_text: str | None) -> list[str]:
    """`# text = NEW` in place of the old line, `# orig_text = OLD` right after it."""
    out: list[str] = []
    placed = False
    for line in comments:
        if line.startswith(ORIG_TEXT_PREFIX):
            continue  # a nonce treebank made from a nonce treebank keeps one orig_text
        if line.startswith(TEXT_PREFIX) and not placed:
            out.append(f"# text = {text}")
            if orig_text is not None:
                out.append(f"# orig_text = {orig_text}")
            placed = True
        else:
            out.append(line)
    if not placed and text is not None:
        out.append(f"# text = {text}")
    return out


def with_texts(sentences: pl.DataFrame, new_text: dict[int, str]) -> pl.DataFrame:
    """Sentences with rebuilt `text` where NEW_TEXT has one (others keep theirs), the comments to
    match, and the columns orig_text and short."""
    texts, comments = [], []
    for sent_index, text, lines in zip(sentences.get_column("sent_index").to_list(),
                                       sentences.get_column("text").to_list(),
                                       sentences.get_column("comments").to_list(), strict=True):
        new = new_text.get(sent_index, text)
        texts.append(new)
        comments.append(_comments(lines or [], new, text))
    return sentences.with_columns(
        text=pl.Series(texts, dtype=pl.String),
        comments=pl.Series(comments, dtype=pl.List(pl.String)),
        orig_text=pl.col("text"),
        short=pl.col("n_words") < SHORT_SENTENCE,
    )
