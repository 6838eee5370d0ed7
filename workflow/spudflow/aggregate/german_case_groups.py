"""German case violations: AUC of one subset of a template's sentences against another, per
template, summarised over templates.

Every AUC is sklearn.metrics.roc_auc_score of logprob_sum, the first subset as positives. Word order
beside the reference's 1-vs-6 (german_case_one_vs_six.py, the word-order figure): one case order
against the other five (`order_vs_other_orders`, a reading of the word-order figure's prose, "higher
log probability scores to the canonical order compared to others") and against the violations; all
grammatical sentences against the violations by where the doubled case sits and by the violation's
case order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from spudflow.core.logs import get_logger

log = get_logger(__name__)

DATASET_SCORING = ["dataset", "model", "method"]
CASES = "NAD"
# The cases in sentence order of the six grammatical sentences of each assignment.
GRAMMATICAL_ORDERS = ("NAD", "NDA", "AND", "ADN", "DNA", "DAN")
# Where the doubled case of a violation sits: 1-based sentence positions of its two NPs.
DOUBLED_POSITIONS = ("12", "13", "23")


def auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    """roc_auc_score, or None when only one class is present or a score is NaN (no order).
    sklearn refuses an infinite score (a log-probability of -inf: a token of probability 0);
    the AUC depends on the scores' order alone, so there it is taken of their ranks (ties
    kept), the same AUC."""
    # Imported here: the figures need only the constants above, and sklearn takes seconds to load.
    from scipy.stats import rankdata
    from sklearn.metrics import roc_auc_score

    if len(set(labels.tolist())) < 2:
        return None
    scores = np.asarray(scores, dtype=float)
    if np.isnan(scores).any():
        log.warning("an AUC of %d sentences left null: a log-probability is NaN", len(scores))
        return None
    if not np.isfinite(scores).all():
        scores = rankdata(scores)
    return float(roc_auc_score(labels, scores))


def mean_sd(frame: pl.DataFrame, keys: list[str], sums: tuple[str, ...] = ()) -> pl.DataFrame:
    """AUC mean and sample sd (ddof=1) over the templates with an AUC; `sums` are summed over
    those templates."""
    return frame.filter(pl.col("auc").is_not_null()).group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("n_templates"),
        *[pl.col(c).sum().cast(pl.Int64) for c in sums],
        pl.col("auc").mean().alias("auc_mean"),
        pl.col("auc").std(ddof=1).alias("auc_sd"),
    ).sort(keys)


@dataclass(frozen=True)
class Comparison:
    comparison: str
    subset: str
    positives: pl.Expr
    negatives: pl.Expr


def in_subset(frame: pl.DataFrame, subset: pl.Expr) -> np.ndarray:
    """A row-wise condition's boolean mask over `frame`, null as False."""
    return frame.select(subset.fill_null(False)).to_series().to_numpy()


def template_comparisons(scored: pl.DataFrame, comparisons: list[Comparison]) -> pl.DataFrame:
    """One row per scoring function, template and comparison: the subsets' sizes and the AUC
    (null unless both subsets have sentences)."""
    keys = [*DATASET_SCORING, "template"]
    # Every comparison's two subsets as boolean masks, evaluated once over all sentences (a null,
    # as where no case is doubled, is outside the subset, as a filter has it); a template's
    # subsets are then its rows of these masks, not two filters per template and comparison.
    masks = [(in_subset(scored, c.positives), in_subset(scored, c.negatives))
             for c in comparisons]
    values = scored["logprob_sum"].to_numpy()
    templates = scored.with_row_index("_row").group_by(keys, maintain_order=True).agg("_row")
    rows = []
    for *key, index in sorted(templates.iter_rows(), key=lambda row: row[:-1]):
        index = np.asarray(index, dtype=np.int64)  # the template's rows, in the table's order
        template_values = values[index]
        for c, (positive, negative) in zip(comparisons, masks, strict=True):
            positives = template_values[positive[index]]
            negatives = template_values[negative[index]]
            labels = np.concatenate([np.ones(len(positives)), np.zeros(len(negatives))])
            rows.append({**dict(zip(keys, key, strict=True)),
                         "comparison": c.comparison, "subset": c.subset,
                         "n_positive": len(positives), "n_negative": len(negatives),
                         "auc": auc(labels, np.concatenate([positives, negatives]))})
    schema = {**{k: pl.String for k in [*keys, "comparison", "subset"]},
              "n_positive": pl.Int64, "n_negative": pl.Int64, "auc": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def doubled_positions(case_order: str) -> str | None:
    """The sentence positions (1-based) of the doubled case, e.g. `NAN` -> `13`; None when no case
    is doubled."""
    for case in CASES:
        if case_order.count(case) == 2:
            return "".join(str(i + 1) for i, c in enumerate(case_order) if c == case)
    return None


def order_comparisons(violation_orders: list[str]) -> list[Comparison]:
    grammatical, violation = pl.col("grammatical"), ~pl.col("grammatical")
    order = pl.col("case_order")
    comparisons = []
    for o in GRAMMATICAL_ORDERS:
        comparisons.append(Comparison("order_vs_other_orders", o, grammatical & (order == o),
                                      grammatical & (order != o)))
        comparisons.append(Comparison("order_vs_violations", o, grammatical & (order == o),
                                      violation))
    for positions in DOUBLED_POSITIONS:
        comparisons.append(Comparison("violation_position", positions, grammatical,
                                      violation & (pl.col("doubled_positions") == positions)))
    for o in violation_orders:
        comparisons.append(Comparison("violation_order", o, grammatical,
                                      violation & (order == o)))
    return comparisons


def order_comparison_aucs(scored: pl.DataFrame) -> pl.DataFrame:
    """AUC of one case order against the others and against the violations, and by the position
    of the violation; mean and sd over templates."""
    scored = scored.with_columns(pl.col("case_order").map_elements(
        doubled_positions, return_dtype=pl.String).alias("doubled_positions"))
    violation_orders = sorted(scored.filter(~pl.col("grammatical"))["case_order"].unique())
    per_template = template_comparisons(scored, order_comparisons(violation_orders))
    return mean_sd(per_template, [*DATASET_SCORING, "comparison", "subset"],
                   sums=("n_positive", "n_negative"))


# The reference's 1-vs-6 first (the figure's), then the other readings.
COMPARISON_ORDER = ("one_vs_six", "one_vs_six_first_case", "order_vs_other_orders",
                    "order_vs_violations", "violation_position", "violation_order")
