"""The reference's "1 vs 6" (crochereau/Word-based-LM, src/1vs6_analyses.ipynb,
`aucs_per_grammatical_variant`; src/models_eval.ipynb cell 10): each grammatical sentence against
the six violations that give one of its NPs another case (the two other cases at each of the
three NPs), the NPs in the same order, of the same template. With one positive the ROC AUC
(sklearn's roc_auc_score) is the fraction of those violations the sentence outscores, ties counting
one half. The paper's word-order figure and animacy table group these
per-sentence AUCs: a group's value is their mean over the template's sentences in the group,
then the mean (and sample sd) over templates; with every sentence scored that is the notebook's
mean over its 36 grammatical variants of their mean over templates.
"""

from __future__ import annotations

import polars as pl

from spudflow.aggregate.german_case_groups import CASES, DATASET_SCORING, GRAMMATICAL_ORDERS

# Where the reference puts animacy (1vs6_analyses.ipynb cell 32): its templates' third NP (np3,
# the accusative of the template's own assignment) is the inanimate one, np1 and np2 animate;
# a case "sits on an inanimate NP" when np3 carries it. `flags` reads the templates' own
# per-NP flags instead (the items' `animacy`).
ANIMACY_SOURCES = ("positions", "flags")
POSITIONAL_ANIMACY = "aai"   # np1, np2, np3


def one_case_swaps(cases: str) -> list[str]:
    """The six assignments that give one NP of `cases` another case (the reference's
    get_one_letter_diff of a grammatical assignment)."""
    return [cases[:k] + other + cases[k + 1:] for k in range(len(cases))
            for other in CASES if other != cases[k]]


def sentence_aucs(scored: pl.DataFrame) -> pl.DataFrame:
    """One row per scoring function and scored grammatical sentence: its template, cases,
    case_order, np_animacy, the number of its six violations that are scored (`n_violations`)
    and its 1-vs-6 AUC (null when none is)."""
    keys = [*DATASET_SCORING, "template", "positions"]
    grammatical = scored.filter(pl.col("grammatical")).select(
        *keys, "item_id", "cases", "case_order", "np_animacy",
        pl.col("logprob_sum").alias("grammatical_logprob"))
    swaps = grammatical.with_columns(
        pl.col("cases").map_elements(one_case_swaps, return_dtype=pl.List(pl.String))
        .alias("violation_cases")).explode("violation_cases")
    violations = scored.filter(~pl.col("grammatical")).select(
        *keys, pl.col("cases").alias("violation_cases"),
        pl.col("logprob_sum").alias("violation_logprob"))
    pairs = swaps.join(violations, on=[*keys, "violation_cases"], how="left")
    below = (pl.col("violation_logprob") < pl.col("grammatical_logprob")).cast(pl.Float64)
    tied = (pl.col("violation_logprob") == pl.col("grammatical_logprob")).cast(pl.Float64)
    return pairs.group_by([*keys, "item_id", "cases", "case_order", "np_animacy"],
                          maintain_order=True).agg(
        pl.col("violation_logprob").count().cast(pl.Int64).alias("n_violations"),
        ((below + 0.5 * tied).sum() / pl.col("violation_logprob").count()).alias("auc"),
    ).with_columns(pl.when(pl.col("n_violations") > 0).then(pl.col("auc")).alias("auc"))


def _over_templates(per_sentence: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """Per template the mean AUC of its sentences in each group, then mean and sample sd over
    templates; the sentences and their scored violations summed."""
    # maintain_order: the rows of a group reach mean and sd in one order, so that their float
    # sums, and the table's bytes, are the same in every run (polars' threads vary it otherwise)
    per_template = per_sentence.filter(pl.col("auc").is_not_null()).group_by(
        [*DATASET_SCORING, *group, "template"], maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_positive"),
        pl.col("n_violations").sum().cast(pl.Int64).alias("n_negative"),
        pl.col("auc").mean())
    return per_template.group_by([*DATASET_SCORING, *group]).agg(
        pl.len().cast(pl.Int64).alias("n_templates"),
        pl.col("n_positive").sum(), pl.col("n_negative").sum(),
        pl.col("auc").mean().alias("auc_mean"),
        pl.col("auc").std(ddof=1).alias("auc_sd"),
    )


def one_vs_six_orders(per_sentence: pl.DataFrame) -> pl.DataFrame:
    """The reference notebook's reading of the word-order figure (docs/aggregate.md: the paper's
    prose fits other readings better): the 1-vs-6 AUC by the cases' order in the sentence
    (`one_vs_six`, subset e.g. `NAD`) and by the case of the first NP (`one_vs_six_first_case`,
    subset `N`, `A` or `D`: 1vs6_analyses.ipynb cell 31)."""
    by_order = _over_templates(per_sentence.with_columns(
        pl.col("case_order").alias("subset")), ["subset"])
    by_first = _over_templates(per_sentence.with_columns(
        pl.col("case_order").str.slice(0, 1).alias("subset")), ["subset"])
    columns = [*DATASET_SCORING, "comparison", "subset", "n_templates", "n_positive",
               "n_negative", "auc_mean", "auc_sd"]
    rank = {name: i for i, name in enumerate((*GRAMMATICAL_ORDERS, *CASES))}
    return pl.concat([
        by_order.with_columns(pl.lit("one_vs_six").alias("comparison")).select(columns),
        by_first.with_columns(pl.lit("one_vs_six_first_case").alias("comparison"))
        .select(columns),
    ]).sort([*DATASET_SCORING, "comparison", pl.col("subset").replace_strict(rank)])


def animacy_aucs(per_sentence: pl.DataFrame, source: str = "positions") -> pl.DataFrame:
    """The animacy table as the reference computes it (1vs6_analyses.ipynb cell 32): per case, the
    mean 1-vs-6 AUC of the grammatical sentences whose NP in that case is animate, the same where it
    is
    inanimate, and animate minus inanimate (the paper's figure: around 0, negative when the case
    is preferred on the inanimate NP). Per template, then mean and sd over the templates that
    have sentences of both."""
    if source not in ANIMACY_SOURCES:
        raise ValueError(f"animacy source {source!r} (known: {', '.join(ANIMACY_SOURCES)})")
    frame = per_sentence.filter(pl.col("auc").is_not_null())
    if source == "positions":
        frame = frame.with_columns(pl.lit(POSITIONAL_ANIMACY).alias("np_animacy"))
    else:
        frame = frame.filter(pl.col("np_animacy").is_not_null())
    parts = []
    for case in CASES:
        np_index = pl.col("cases").str.find(case)
        flag = pl.col("np_animacy").str.slice(np_index, 1)
        parts.append(frame.with_columns(pl.lit(case).alias("case"),
                                        (flag == "a").alias("animate")))
    frame = pl.concat(parts)
    keys = [*DATASET_SCORING, "case", "template"]
    animate = pl.col("animate")
    per_template = frame.group_by(keys, maintain_order=True).agg(  # byte-identical sums
        animate.sum().cast(pl.Int64).alias("n_animate"),
        (~animate).sum().cast(pl.Int64).alias("n_inanimate"),
        pl.col("auc").filter(animate).mean().alias("auc_animate"),
        pl.col("auc").filter(~animate).mean().alias("auc_inanimate"),
    ).filter(pl.col("n_animate") > 0, pl.col("n_inanimate") > 0).with_columns(
        (pl.col("auc_animate") - pl.col("auc_inanimate")).alias("difference"))
    summary = per_template.group_by([*DATASET_SCORING, "case"]).agg(
        pl.len().cast(pl.Int64).alias("n_templates"),
        pl.col("n_animate").sum(), pl.col("n_inanimate").sum(),
        pl.col("auc_animate").mean(), pl.col("auc_inanimate").mean(),
        pl.col("difference").mean().alias("difference_mean"),
        pl.col("difference").std(ddof=1).alias("difference_sd"),
    ).with_columns(pl.lit(source).alias("animacy_from"))
    rank = {c: i for i, c in enumerate(CASES)}
    return summary.select(
        *DATASET_SCORING, "case", "animacy_from", "n_templates", "n_animate", "n_inanimate",
        "auc_animate", "auc_inanimate", "difference_mean", "difference_sd",
    ).sort([*DATASET_SCORING, pl.col("case").replace_strict(rank)])
