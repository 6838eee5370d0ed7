"""Surface text after replacement: capitalisation, multiword-token surfaces, sentence text.

Two ways to case a replacement (`--case`):
- `match`: the replacement takes the capitals the original word had from its position (first
  word, headline, shouted sentence; `match_case`).
- `reference`: as the reference implementation (TaniaBladier/spud, src/replacement.py,
  `Replacer.replace_tokens_in_sentence` and the `postprocess` of `EnglishReplacer` and
  `FrenchReplacer`): the replacement is written as the lexicon writes it, the sentence's first
  token gets a capital, and in English and French every word (English: but the last) is
  lowercased after its first letter (`initial_case_fold`), so a shouted `SHE KNOWS` becomes
  `She solicits`.

Two ways to write multiword tokens (`--multiword-tokens`): `keep` their surface (rebuilt from
the parts where a part changed), or `split` them as the reference's preprocessed treebanks did
(README: the multiword-token lines removed with grep before anything else): the nonce treebank
has no multiword-token lines and every sentence's text is its words (`words_text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from spudflow.nonce.sentence import SentenceView, has_space_after, spaces_after

if TYPE_CHECKING:
    from spudflow.nonce.languages.base import LanguageHooks


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


def initial_case_fold(form: str) -> str:
    """FORM in lower case after its first letter, which keeps its case (`SHE` -> `She`, `iPhone`
    -> `iphone`): what the reference's English and French `postprocess` write back for every
    word it looks at (it lowercases each form to compare it with a/an, le/la/de)."""
    if not form:
        return form
    lower = form.lower()
    return lower[0].upper() + lower[1:] if form[0].isupper() else lower


def capitalise_first(sentence: SentenceView) -> None:
    """The reference's `force first token to be uppercase`: the first token's first character,
    when it is lower case, capitalised (punctuation first: nothing). A multiword token at the
    start is the first token (its first part follows it)."""
    if not sentence.n:
        return
    columns = sentence.columns
    mwt = sentence.mwt(0)
    rows = [sentence.rows[0]] if mwt is None else [mwt[0], sentence.rows[0]]
    for row in rows:
        form = columns.form[row]
        if form[:1].islower():
            columns.form[row] = form[0].capitalize() + form[1:]


def reference_case(sentence: SentenceView, folded: range) -> None:
    """The reference's case on a sentence whose replacements and hooks are done: the words in
    FOLDED (from the language hooks, `LanguageHooks.case_folded`) folded by `initial_case_fold`,
    and a multiword token all of whose words are folded likewise. The first token is
    capitalised afterwards (`capitalise_first`), once the multiword tokens are rebuilt."""
    for i in folded:
        sentence.set_form(i, initial_case_fold(sentence.form(i)))
    columns = sentence.columns
    for row, first, last in sentence.mwts:
        if first in folded and last in folded:
            columns.form[row] = initial_case_fold(columns.form[row])


def rebuild_mwts(sentence: SentenceView, hooks: LanguageHooks, case_changes: bool = True) -> None:
    """A multiword token keeps its surface unless a part changed; then the parts are joined as
    the language writes them. Without CASE_CHANGES a part whose form changed only in case does
    not count (the reference's case folding changes the surface itself, `reference_case`)."""
    columns = sentence.columns
    for row, first, last in sentence.mwts:
        parts = range(first, last + 1)
        if case_changes:
            changed = any(sentence.changed(i) for i in parts)
        else:
            changed = any(sentence.form(i).lower() != sentence.orig_form(i).lower()
                          for i in parts)
        if not changed:
            continue
        surface = hooks.join_mwt([sentence.form(i) for i in parts],
                                 [sentence.orig_form(i) for i in parts], columns.orig_form[row])
        columns.form[row] = match_case(surface, columns.orig_form[row], initial=True)


def words_text(sentence: SentenceView) -> str:
    """The text of the syntactic words as the reference writes it (`adapt_text_in_metadata`):
    each word followed by one space unless its own MISC has SpaceAfter=No (a multiword token's
    SpaceAfter=No went with its line: `don't,` -> `do n't ,`), stripped."""
    columns = sentence.columns
    pieces = []
    for row in sentence.rows:
        pieces.append(columns.form[row])
        if has_space_after(columns.misc[row]):
            pieces.append(" ")
    return "".join(pieces).strip()


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
