"""German case violations (seed 000): does a model's sentence log-probability separate
grammatical case assignments from violations (a case doubled)?

Per template, ROC AUC of logprob_sum with the grammatical sentences as positives
(sklearn.metrics.roc_auc_score); mean and sd over templates, the paper's metric ("the average AUC
over templates"); the same by violation type (the per-violation AUC table) and restricted to the
original case assignment among the grammatical ones (the plausible-sentences table). Beside each
mean, the AUC of all templates' sentences in one ROC, as the reference notebook
src/analyse_results.ipynb computes it. By case order and animacy (the word-order figure, the animacy
table): the reference's 1-vs-6 (german_case_one_vs_six.py) and other readings
(german_case_groups.py).

Intervals of german_case_auc and german_case_auc_violation (config aggregate.uncertainty): for
the mean over templates, a bootstrap over templates (the paper's unit: a template is one set of
lexical choices, its 144 sentences are not independent draws); for the pooled AUC, DeLong's
(delong.py), which treats the sentences as independent, as the pooled ROC itself does.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from sklearn.metrics import roc_auc_score, roc_curve

from spudflow.aggregate.coverage import tied_pairs, unseen_fraction
from spudflow.aggregate.delong import delong_auc
from spudflow.aggregate.derived_once import derived_once
from spudflow.aggregate.german_case_groups import (
    COMPARISON_ORDER,
    DATASET_SCORING,
    auc,
    mean_sd,
    order_comparison_aucs,
)
from spudflow.aggregate.german_case_one_vs_six import (
    animacy_aucs,
    one_vs_six_orders,
    sentence_aucs,
)
from spudflow.aggregate.group_status import unscored_rows
from spudflow.aggregate.inputs import scored_items, unusable_functions
from spudflow.aggregate.outputs import Table
from spudflow.aggregate.uncertainty import Uncertainty, bootstrap_interval
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.table_artifacts import STATUS_OK, TABLES

log = get_logger(__name__)

# The template's own assignment: np1 nominative, np2 dative, np3 accusative.
ORIGINAL_CASES = "NDA"
VIOLATIONS = ("N", "A", "D")


def _flags(animacy) -> list[str] | None:
    """Animacy as written ("110", [1, 1, 0] or [True, True, False]) -> ["a", "a", "i"]."""
    if animacy is None:
        return None
    return ["a" if f in (True, 1, "1") else "i" for f in animacy]


@derived_once
def with_derived(items: pl.DataFrame) -> pl.DataFrame:
    """Adds case_order (the cases in sentence order, e.g. "DNA") and np_animacy (the animacy
    flags of np1, np2, np3, whatever their order in the sentence; null without flags)."""
    case_orders, np_animacy = [], []
    for source, item_id, positions, cases, animacy in items.select(
            "source_file", "item_id", "positions", "cases", "animacy").iter_rows():
        order = [int(p) - 1 for p in str(positions) if p.isdigit()]
        if sorted(order) != [0, 1, 2] or len(str(cases)) != 3:
            raise InputError(source, None, f"item {item_id!r}: positions {positions!r} and "
                             f"cases {cases!r} are not three NPs in some order with three cases")
        case_orders.append("".join(str(cases)[i] for i in order))
        flags = _flags(animacy)
        if flags is None or len(flags) != 3:
            np_animacy.append(None)
            continue
        by_np = ["i"] * 3
        for flag, np_index in zip(flags, order, strict=True):
            by_np[np_index] = flag
        np_animacy.append("".join(by_np))
    return items.with_columns(
        pl.col("grammatical").cast(pl.Boolean),
        pl.col("template").cast(pl.String),
        pl.Series("case_order", case_orders, dtype=pl.String),
        pl.Series("np_animacy", np_animacy, dtype=pl.String),
    )


def analyses(group: pl.DataFrame) -> tuple[tuple[str, pl.DataFrame], ...]:
    """`all` sentences, and `restricted`: the grammatical ones only in the template's own case
    assignment (the plausible-sentences table's "non-permuted sentences"), every violation kept."""
    restricted = group.filter(~pl.col("grammatical") | (pl.col("cases") == ORIGINAL_CASES))
    return ("all", group), ("restricted", restricted)


def pooled_aucs(scored: pl.DataFrame, level: float) -> pl.DataFrame:
    """One ROC AUC over all templates' sentences per scoring function, analysis and violation
    type (null: every violation), as src/analyse_results.ipynb computes them (`get_results`,
    `get_semantically_plausible_results`), with DeLong's interval at `level` and standard error
    (null without two sentences of each class or with a NaN score, where auc_pooled is null or
    has no variance)."""
    rows = []
    groups = scored.partition_by(DATASET_SCORING, as_dict=True, maintain_order=True)
    for key in sorted(groups):
        for analysis, sentences in analyses(groups[key]):
            for violation in (None, *VIOLATIONS):
                frame = sentences if violation is None else sentences.filter(
                    pl.col("grammatical") | (pl.col("violation") == violation))
                labels = frame["grammatical"].cast(pl.Int8).to_numpy()
                scores = frame["logprob_sum"].to_numpy()
                pooled = auc(labels, scores)
                low = high = stderr = None
                if pooled is not None:  # both classes, no NaN
                    estimate = delong_auc(labels, scores, level)
                    if np.isfinite(estimate.stderr):
                        low, high, stderr = estimate.ci_low, estimate.ci_high, estimate.stderr
                rows.append((*key, analysis, violation, pooled, low, high, stderr))
    return pl.DataFrame(rows, orient="row", schema=POOLED_SCHEMA)


POOLED_SCHEMA = {**{k: pl.String for k in DATASET_SCORING}, "analysis": pl.String,
                 "violation": pl.String, "auc_pooled": pl.Float64,
                 "auc_pooled_ci_low": pl.Float64, "auc_pooled_ci_high": pl.Float64,
                 "auc_pooled_stderr": pl.Float64}


def with_pooled(summary: pl.DataFrame, pooled: pl.DataFrame, by_violation: bool) -> pl.DataFrame:
    """`summary` with the pooled AUC and its interval (pooled_aucs) of its rows: those of one
    violation type (by_violation) or of every violation."""
    keys = [*DATASET_SCORING, "analysis", *(["violation"] if by_violation else [])]
    pooled = (pooled.filter(pl.col("violation").is_not_null()) if by_violation
              else pooled.filter(pl.col("violation").is_null()).drop("violation"))
    return summary.join(pooled, on=keys, how="left", maintain_order="left")


def template_aucs(scored: pl.DataFrame) -> pl.DataFrame:
    """AUC per scoring function and template: all sentences, and restricted to the original case
    assignment among the grammatical sentences (all violations kept)."""
    rows = []
    groups = scored.partition_by([*DATASET_SCORING, "template"], as_dict=True, maintain_order=True)
    for key in sorted(groups):
        for analysis, frame in analyses(groups[key]):
            labels = frame["grammatical"].cast(pl.Int8).to_numpy()
            rows.append({**dict(zip([*DATASET_SCORING, "template"], key, strict=True)),
                         "analysis": analysis, "n_grammatical": int(labels.sum()),
                         "n_violation": int(len(labels) - labels.sum()),
                         "auc": auc(labels, frame["logprob_sum"].to_numpy())})
    return pl.DataFrame(rows, schema=TEMPLATE_AUC_SCHEMA)


TEMPLATE_AUC_SCHEMA = TABLES["german_case_auc_templates"].polars_schema()


def analysis_coverage(scored: pl.DataFrame) -> pl.DataFrame:
    """Per scoring function and analysis (as template_aucs): tie_fraction, the pairs of a
    grammatical sentence and a violation of one template with equal log-probabilities, of all
    such pairs; unseen_fraction, the words of the analysis's sentences the model never saw in
    training (coverage.py)."""
    rows = []
    groups = scored.partition_by(DATASET_SCORING, as_dict=True, maintain_order=True)
    for key in sorted(groups):
        for analysis, frame in analyses(groups[key]):
            pairs = tied = 0
            for template in frame.partition_by("template"):
                n, t = tied_pairs(template["grammatical"].to_numpy(),
                                  template["logprob_sum"].to_numpy())
                pairs, tied = pairs + n, tied + t
            unseen = frame.select(unseen_fraction()).item()
            rows.append({**dict(zip(DATASET_SCORING, key, strict=True)), "analysis": analysis,
                         "tie_fraction": tied / pairs if pairs else None,
                         "unseen_fraction": unseen})
    return pl.DataFrame(rows, schema={**{k: pl.String for k in DATASET_SCORING},
                                      "analysis": pl.String, "tie_fraction": pl.Float64,
                                      "unseen_fraction": pl.Float64})


def violation_aucs(scored: pl.DataFrame, settings: Uncertainty | None = None,
                   pooled: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per template, the grammatical sentences (all: the per-violation AUC table; restricted to the
    original case assignment: the plausible-sentences table) against the violations that double one
    case. `pooled`: pooled_aucs(scored, settings.level), computed here if not given."""
    settings = settings or Uncertainty()
    rows = []
    groups = scored.partition_by([*DATASET_SCORING, "template"], as_dict=True, maintain_order=True)
    for key in sorted(groups):
        for analysis, sentences in analyses(groups[key]):
            for violation in VIOLATIONS:
                frame = sentences.filter(pl.col("grammatical")
                                         | (pl.col("violation") == violation))
                labels = frame["grammatical"].cast(pl.Int8).to_numpy()
                rows.append({**dict(zip([*DATASET_SCORING, "template"], key, strict=True)),
                             "analysis": analysis, "violation": violation,
                             "auc": auc(labels, frame["logprob_sum"].to_numpy())})
    frame = pl.DataFrame(rows, schema={**{k: pl.String for k in [*DATASET_SCORING, "template"]},
                                       "analysis": pl.String, "violation": pl.String,
                                       "auc": pl.Float64})
    rank = {v: i for i, v in enumerate(VIOLATIONS)}
    summary = mean_sd(frame, [*DATASET_SCORING, "analysis", "violation"])
    if pooled is None:
        pooled = pooled_aucs(scored, settings.level)
    summary = with_auc_intervals(with_pooled(summary, pooled, by_violation=True), frame,
                                 settings, by_violation=True)
    return summary.sort([*DATASET_SCORING, "analysis", pl.col("violation").replace_strict(rank)])


def order_aucs(per_sentence: pl.DataFrame, scored: pl.DataFrame) -> pl.DataFrame:
    """The word-order figure: the reference's 1-vs-6 by case order and first case, then the other
    readings; mean and sd over templates."""
    rank = {name: i for i, name in enumerate(COMPARISON_ORDER)}
    return pl.concat([one_vs_six_orders(per_sentence), order_comparison_aucs(scored)]).sort(
        [*DATASET_SCORING, pl.col("comparison").replace_strict(rank), "subset"])


def order_means(scored: pl.DataFrame) -> pl.DataFrame:
    """Mean sentence log-probability per order of the cases in the sentence."""
    keys = [*DATASET_SCORING, "grammatical", "case_order"]
    return scored.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("n_items"),
        pl.col("logprob_sum").mean().alias("logprob_mean"),
        pl.col("logprob_sum").std(ddof=1).alias("logprob_sd"),
    ).sort(keys, descending=[False, False, False, True, False])


def roc_points(scored: pl.DataFrame) -> pl.DataFrame:
    """sklearn.metrics.roc_curve over all templates pooled, per scoring function."""
    frames = []
    groups = scored.partition_by(DATASET_SCORING, as_dict=True, maintain_order=True)
    for key in sorted(groups):
        group = groups[key]
        labels = group["grammatical"].cast(pl.Int8).to_numpy()
        scores = group["logprob_sum"].to_numpy()
        if len(set(labels.tolist())) < 2:
            continue
        if not np.isfinite(scores).all():
            log.warning("%s: no ROC curve: a log-probability is not finite", "/".join(key))
            continue
        fpr, tpr, thresholds = roc_curve(labels, scores)
        frames.append(pl.DataFrame({
            **{k: [v] * len(fpr) for k, v in zip(DATASET_SCORING, key, strict=True)},
            "fpr": fpr, "tpr": tpr, "threshold": thresholds,
            "auc": [float(roc_auc_score(labels, scores))] * len(fpr),
        }))
    return (pl.concat(frames) if frames
            else pl.DataFrame(schema=TABLES["german_case_roc"].polars_schema()))


def _mean(aucs: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(aucs, axis=axis)


def mean_auc_intervals(per_template: pl.DataFrame, settings: Uncertainty,
                       keys: tuple[str, ...] = ("analysis",)) -> pl.DataFrame:
    """Per scoring function and `keys`: the bootstrap interval of the mean template AUC, the
    templates with an AUC resampled (none with fewer than two or resamples 0)."""
    keys = [*DATASET_SCORING, *keys]
    rows = []
    aucs = per_template.filter(pl.col("auc").is_not_null()).sort([*keys, "template"])
    for key, group in aucs.group_by(keys, maintain_order=True):
        low, high, method = bootstrap_interval([group["auc"].to_numpy()], _mean, settings)
        rows.append((*key, low, high, method))
    return pl.DataFrame(rows, orient="row", schema={
        **{k: pl.String for k in keys}, "auc_mean_ci_low": pl.Float64,
        "auc_mean_ci_high": pl.Float64, "auc_mean_interval": pl.String})


def with_auc_intervals(summary: pl.DataFrame, per_template: pl.DataFrame,
                       settings: Uncertainty, by_violation: bool = False) -> pl.DataFrame:
    """german_case_auc's (or, by_violation, german_case_auc_violation's) figures, the pooled AUC's
    interval already joined (with_pooled), with the mean AUC's interval, in the table's column
    order."""
    extra = ("analysis", "violation") if by_violation else ("analysis",)
    keys = [*DATASET_SCORING, *extra]
    joined = summary.join(mean_auc_intervals(per_template, settings, extra), on=keys,
                          how="left", maintain_order="left")
    name = "german_case_auc_violation" if by_violation else "german_case_auc"
    return joined.select([c for c in TABLES[name].polars_schema() if c in joined.columns])


def german_case_tables(items: pl.DataFrame, scores: pl.DataFrame,
                       animacy: str = "positions", settings: Uncertainty | None = None
                       ) -> list[Table]:
    settings = settings or Uncertainty()
    items = with_derived(items)
    unusable = unusable_functions(scores)
    scored = scored_items(items, scores)
    scored = scored.filter(pl.col("logprob_sum").is_not_null())
    if scored.is_empty():
        if unusable.is_empty():
            raise InputError("--scores", None, "no scored German case item")
        return unscored_tables(unusable)
    per_template = template_aucs(scored)
    per_sentence = sentence_aucs(scored)
    pooled = pooled_aucs(scored, settings.level)  # both tables' pooled AUCs, in one pass
    return [
        Table("german_case_auc_templates", per_template),
        Table("german_case_auc", with_unscored(with_auc_intervals(with_pooled(
            mean_sd(per_template, [*DATASET_SCORING, "analysis"]), pooled,
            by_violation=False).join(
            analysis_coverage(scored), on=[*DATASET_SCORING, "analysis"], how="left"),
            per_template, settings), unusable),
              dict(intervals=auc_interval_caption(settings))),
    *_detail_tables(scored, per_template, per_sentence, animacy, settings, pooled)]


def auc_interval_caption(settings: Uncertainty) -> str:
    return (f" Intervals at {settings.level:g}: of auc_mean, a bootstrap over templates of "
            f"{settings.resamples} resamples (seed {settings.seed}; auc_mean_interval: bca or "
            "percentile" + ("" if settings.resamples else "; none with 0 resamples")
            + "); of auc_pooled, DeLong's over sentences (auc_pooled_stderr its standard error).")


AUC_ANALYSES = ("all", "restricted")


def with_unscored(auc: pl.DataFrame, unusable: pl.DataFrame) -> pl.DataFrame:
    """german_case_auc's rows, status `ok`, and those of the scoring functions without a usable
    score (`skipped`, per analysis)."""
    order = [c for c in auc.columns if c not in DATASET_SCORING]
    auc = auc.with_columns(pl.lit(STATUS_OK).alias("status"),
                           pl.lit(None, pl.String).alias("reason"))
    auc = auc.select(*DATASET_SCORING, "status", "reason", *order)
    if unusable.is_empty():
        return auc
    unscored = unscored_rows("german_case_auc", unusable,
                             [{"analysis": a} for a in AUC_ANALYSES], n_templates=0)
    return pl.concat([auc, unscored], how="vertical_relaxed").sort(
        [*DATASET_SCORING, "analysis"])


def unscored_tables(unusable: pl.DataFrame) -> list[Table]:
    """The tables when no scoring function has a usable score: german_case_auc's rows say why,
    the others are empty."""
    empty = pl.DataFrame(schema=TABLES["german_case_auc"].polars_schema())
    tables = [Table("german_case_auc", with_unscored(empty.drop("status", "reason"), unusable),
                    dict(intervals=""))]
    for name in GERMAN_DETAIL_TABLES:
        tables.append(Table(name, pl.DataFrame(schema=TABLES[name].polars_schema()), caption=(
            "No scoring function has a usable score (german_case_auc says why).")))
    return tables


GERMAN_DETAIL_TABLES = ("german_case_auc_templates", "german_case_auc_violation",
                        "german_case_animacy", "german_case_order", "german_case_order_auc",
                        "german_case_roc")


def _detail_tables(scored: pl.DataFrame, per_template: pl.DataFrame,
                   per_sentence: pl.DataFrame, animacy: str,
                   settings: Uncertainty | None = None,
                   pooled: pl.DataFrame | None = None) -> list[Table]:
    settings = settings or Uncertainty()
    return [  # the captions are the registry's
        Table("german_case_auc_violation", violation_aucs(scored, settings, pooled),
              dict(intervals=auc_interval_caption(settings))),
        Table("german_case_animacy", animacy_aucs(per_sentence, animacy)),
        Table("german_case_order", order_means(scored)),
        Table("german_case_order_auc", order_aucs(per_sentence, scored)),
        Table("german_case_roc", roc_points(scored)),
    ]
