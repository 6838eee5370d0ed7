"""The columns of the `*_comparison` tables (aggregate/comparison_tables.py): every pair of
scoring functions that scored the same items, compared on a family's headline figure."""

from __future__ import annotations

from collections.abc import Sequence

from spudflow.core.artifacts import F64, I64, STR, col

COMPARISON_SIDES = ("model_a", "method_a", "model_b", "method_b")


def comparison_columns(group: Sequence) -> tuple:
    """The columns of a comparison table whose rows are grouped by the `group` columns (core
    Column objects); core/outputs_registry.py gives them to each family's entry."""
    return (
        *group,
        col("model_a", STR, "first scoring function's model (a < b in sorted order)"),
        col("method_a", STR, "first scoring function's method"),
        col("model_b", STR, "second scoring function's model"),
        col("method_b", STR, "second scoring function's method"),
        col("statistic", STR, "the headline figure compared"),
        col("n_items", I64, "items both functions scored: the figures' sample"),
        col("n_only_a", I64, "items only a scored (left out of both figures)"),
        col("n_only_b", I64, "items only b scored (left out of both figures)"),
        col("value_a", F64, "a's figure on the n_items items (null when it has none)", True),
        col("value_b", F64, "b's figure on the n_items items", True),
        col("difference", F64, "value_a - value_b", True),
        col("difference_ci_low", F64, "lower end of the paired interval of the difference at "
            "aggregate.uncertainty.level (null: none, e.g. resamples 0)", True),
        col("difference_ci_high", F64, "upper end of that interval", True),
        col("interval_method", STR, "how the interval was made: bca, percentile (paired "
            "bootstrap over the units) or delong (null: none)", True),
        col("test", STR, "the test of the p-value: mcnemar_exact, delong, permutation or "
            "permutation_exact (every swap pattern enumerated)"),
        col("p_value", F64, "two-sided p of value_a = value_b (null: no test, e.g. a "
            "permutation with resamples 0)", True),
        col("p_holm", F64, "p_value adjusted by Holm's step-down method over the table's "
            "p-values", True),
    )


def comparison_key(group: Sequence[str]) -> tuple[str, ...]:
    return (*group, *COMPARISON_SIDES, "statistic")
