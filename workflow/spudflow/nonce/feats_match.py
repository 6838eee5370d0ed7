"""How a replacement's form must match the FEATS of the word it replaces.

EXACT: the form has exactly the word's FEATS string (the lexicon's key).
REFERENCE: as the reference's `MorphDict.lookup` (src/morph_dict_tools/universal.py and the
udlex_*.py files): a form qualifies when its features include the word's (`all1in2`), after the
language's relaxations, and a candidate without such a form is tried again with the next, looser
level of the language (`LanguageHooks.feats_levels`). Among the forms of the first level at which a
candidate has any, the most frequent is written, as with EXACT.

The match is computed once per (UPOS, lexicon FEATS, word FEATS), so the lexicon ends up keyed by
the FEATS of the words to replace and the rest of the stage is the same for both modes.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

EXACT, REFERENCE = "exact", "reference"
FEATS_MATCHES = (EXACT, REFERENCE)

Feats = dict[str, str]
Level = Callable[[Feats], bool]


def parse_feats(feats: str) -> Feats:
    """The reference's featStringToDict: "_" and a string with a malformed pair -> {}."""
    if feats in ("_", ""):
        return {}
    pairs = [pair.split("=") for pair in feats.split("|")]
    if any(len(pair) != 2 for pair in pairs):
        return {}
    return dict(pairs)


def includes(wanted: Feats, candidate: Feats) -> bool:
    """The reference's all1in2: every feature of WANTED has its value in CANDIDATE."""
    return all(candidate.get(name) == value for name, value in wanted.items())


def matching_levels(lexicon_morphs: pl.DataFrame, word_morphs: pl.DataFrame,
                    levels: Callable[[str, Feats], list[Level]]) -> pl.DataFrame:
    """(upos, morph, target, level): the lexicon FEATS `morph` serves a word of FEATS `target`
    from its language's LEVEL on (the first level whose test the lexicon FEATS pass).
    LEXICON_MORPHS and WORD_MORPHS: distinct (upos, morph)."""
    by_upos: dict[str, list[str]] = {}
    for upos, morph in word_morphs.unique().sort("upos", "morph").iter_rows():
        by_upos.setdefault(upos, []).append(morph)
    rows: dict[str, list] = {"upos": [], "morph": [], "target": [], "level": []}
    for upos, morph in lexicon_morphs.unique().sort("upos", "morph").iter_rows():
        if upos not in by_upos:
            continue
        have = parse_feats(morph)
        for target in by_upos[upos]:
            for level, test in enumerate(levels(upos, parse_feats(target))):
                if test(have):
                    rows["upos"].append(upos)
                    rows["morph"].append(morph)
                    rows["target"].append(target)
                    rows["level"].append(level)
                    break
    return pl.DataFrame(rows, schema={"upos": pl.String, "morph": pl.String,
                                      "target": pl.String, "level": pl.Int32})
