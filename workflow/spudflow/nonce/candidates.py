"""Candidate index: for each context, the units seen in it in the pool, with the form each would
take for a given morph and form class (from the lexicon).

Everything is joined in Polars; the replacement loop only draws from ready lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

GROUP_KEY = ["context", "morph", "form_class"]

# --candidate-weights. FORMS (the reference): a unit stands in its context's list once per
# distinct (form, lemma) it was seen with there, as the reference's SyntacticPatterns keeps each
# distinct (form, lemma, context) once and shuffles that list; a form seen again adds nothing.
# UNIFORM: every unit once.
FORMS, UNIFORM = "forms", "uniform"
WEIGHTS = (FORMS, UNIFORM)


@dataclass
class CandidateIndex:
    # groups[g] = (units, forms, lemmas), sorted by unit: the candidates of one GROUP_KEY, a
    # unit repeated as often as its weight (adjacent copies).
    groups: list[tuple[list[str], list[str], list[str]]]
    # The target words with `group` (index into groups, null when no candidate has a form) and
    # `context_units` (distinct units seen in the word's context in the pool).
    targets: pl.DataFrame


def unit_weights(pool: list[pl.DataFrame], weights: str = FORMS) -> pl.DataFrame:
    """(context, upos, unit, weight): each unit seen in a context of POOL and its weight there."""
    seen = pl.concat([f.select("context", "upos", "unit", "seen_form", "lex_lemma")
                      for f in pool])
    if weights == UNIFORM:
        return (seen.select("context", "upos", "unit").unique()
                .with_columns(weight=pl.lit(1, pl.UInt32)))
    return (seen.unique()
            .group_by("context", "upos", "unit").len("weight")
            .with_columns(pl.col("weight").cast(pl.UInt32)))


def build_index(targets: pl.DataFrame, pool: list[pl.DataFrame],
                lexicon: pl.DataFrame, weights: str = FORMS) -> CandidateIndex:
    """TARGETS and POOL are word tables with `context` (the targets are one of the pool)."""
    seen = unit_weights(pool, weights)
    context_units = seen.group_by("context").len("context_units")
    wanted = targets.select(GROUP_KEY).unique()
    options = (seen.join(wanted.select("context").unique(), on="context", how="semi")
               .join(lexicon, on=["unit", "upos"])
               .join(wanted, on=GROUP_KEY, how="semi")
               .sort([*GROUP_KEY, "unit"])
               .with_columns(copy=pl.int_ranges("weight"))
               .explode("copy")
               .group_by(GROUP_KEY, maintain_order=True)
               .agg("unit", "lex_form", "lex_lemma")
               .with_row_index("group"))
    groups = list(zip(options.get_column("unit").to_list(),
                      options.get_column("lex_form").to_list(),
                      options.get_column("lex_lemma").to_list(), strict=True))
    targets = (targets
               .join(options.select(*GROUP_KEY, "group"), on=GROUP_KEY, how="left",
                     maintain_order="left")
               .join(context_units, on="context", how="left", maintain_order="left"))
    return CandidateIndex(groups=groups, targets=targets)
