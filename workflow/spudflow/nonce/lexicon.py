"""Morphological lexicon: (unit, UPOS, morph, form class) -> the form and lemma to write.

Built from word tables of every treebank of the language; the most frequent form wins, ties go to
the smaller (form, lemma) in code-point order. External TSV lexicons (form, lemma, UPOS, FEATS)
only fill keys the treebanks lack.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.input_files import require_file
from spudflow.core.logs import get_logger
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.words import WordMode

log = get_logger(__name__)

KEY = ["unit", "upos", "morph", "form_class"]
COLUMNS = [*KEY, "lex_form", "lex_lemma"]
TSV_COLUMNS = ("form", "lemma", "upos", "feats")


def read_lexicon_tsv(path: Path, hooks: LanguageHooks, mode: WordMode) -> pl.DataFrame:
    """A TSV lexicon (form, lemma, UPOS, FEATS; `#` lines are comments) as lexicon rows."""
    rows: dict[str, list[str]] = {name: [] for name in TSV_COLUMNS}
    try:
        text = require_file(path, "a TSV lexicon").read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(path, None, f"not UTF-8 text ({error.reason} at byte {error.start}): "
                         "a TSV lexicon expected") from None
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != len(TSV_COLUMNS) or not all(f.strip() for f in fields):
            raise InputError(path, number, "expected 4 non-empty tab-separated fields: form, "
                             f"lemma, UPOS, FEATS (got {len(fields)})")
        for name, value in zip(TSV_COLUMNS, fields, strict=True):
            rows[name].append(value)
    if not rows["form"]:
        raise InputError(path, None, "no entries (an empty lexicon)")
    frame = pl.DataFrame(rows, schema=dict.fromkeys(TSV_COLUMNS, pl.String))
    form, lemma = hooks.normalise(pl.col("form")), hooks.normalise(pl.col("lemma"))
    form_class = hooks.form_class()
    return frame.select(
        unit=lemma if mode.unit == "lemma" else form,
        upos=pl.col("upos"),
        morph=pl.col("feats"),
        form_class=pl.lit("") if form_class is None else form_class.fill_null(""),
        lex_form=form,
        lex_lemma=lemma,
    )


def _matched(rows: pl.DataFrame, match: pl.DataFrame) -> pl.DataFrame:
    """ROWS re-keyed by the FEATS of the words they serve (feats_match.matching_levels): a
    unit's rows of its first level with any form for that word, their counts summed per form."""
    entry = ["unit", "upos", "target"]
    return (rows.join(match, on=["upos", "morph"])
            .filter(pl.col("level") == pl.col("level").min().over(entry))
            .group_by("unit", "upos", "target", "form_class", "lex_form", "lex_lemma")
            .agg(pl.col("count").sum().cast(pl.UInt32), pl.col("source").min())
            .rename({"target": "morph"})
            .select(*COLUMNS, "count", "source"))


def build_lexicon(word_frames: list[pl.DataFrame], upos: list[str],
                  external: list[pl.DataFrame] = (), class_fallback: bool = False,
                  match: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per key of COLUMNS; only words of the replaced UPOS matter.

    CLASS_FALLBACK (LanguageHooks.form_class_fallback): the form class is a preference. The row
    of class "" of a (unit, UPOS, morph) is then its most frequent form of any class, and every
    class another word asks for is filled from that row where the unit has no form of its own
    of the class (the reference's German adjectives: the same ending where there is one).

    MATCH (feats_match.matching_levels; None: a form serves words of exactly its FEATS): which
    lexicon FEATS serve which FEATS of the words to replace; `morph` is then the latter."""
    counted = (pl.concat([f.select(COLUMNS) for f in word_frames])
               .filter(pl.col("upos").is_in(upos))
               .group_by(COLUMNS).len("count")
               .with_columns(source=pl.lit(0, pl.Int8)))
    frames = [counted]
    for frame in external:
        frames.append(frame.filter(pl.col("upos").is_in(upos)).unique()
                      .with_columns(count=pl.lit(0, pl.UInt32), source=pl.lit(1, pl.Int8)))
    rows = pl.concat(frames)
    if match is not None:
        rows = _matched(rows, match)
    ranked = rows.sort(
        [*KEY, "source", "count", "lex_form", "lex_lemma"],
        descending=[False] * len(KEY) + [False, True, False, False])
    lexicon = ranked.unique(subset=KEY, keep="first", maintain_order=True).select(COLUMNS)
    if not class_fallback:
        return lexicon
    # The same ranking, across classes: the first row of each (unit, UPOS, morph).
    entry = [k for k in KEY if k != "form_class"]
    any_class = (ranked.sort([*entry, "source", "count", "lex_form", "lex_lemma"],
                             descending=[False] * len(entry) + [False, True, False, False])
                 .unique(subset=entry, keep="first", maintain_order=True)
                 .with_columns(form_class=pl.lit("")).select(COLUMNS))
    classed = lexicon.filter(pl.col("form_class") != "")
    classes = classed.select("form_class").unique()
    filled = (any_class.join(classed.select("upos").unique(), on="upos", how="semi")
              .drop("form_class").join(classes, how="cross")
              .join(classed, on=KEY, how="anti").select(COLUMNS))
    return pl.concat([any_class, classed, filled]).sort(KEY)


def check_external(mode: WordMode, paths: list[Path]) -> list[Path]:
    """External lexicons carry FEATS; with a treebank matched on XPOS they cannot be used."""
    if paths and mode.morph != "feats":
        log.warning("ignoring %d external lexicon(s): the treebank has no FEATS to match",
                    len(paths))
        return []
    return paths

