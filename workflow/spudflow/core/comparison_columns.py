"""The columns of the `*_comparison` tables (aggregate/comparison_tables.py): every pair of
scoring functions that scored the same items, compared on a family's headline figure."""

from __future__ import annotations

from collections.abc import Sequence

from spudflow.core.artifacts import F64, I64, STR, col

# what names a scoring function (each column twice: NAME_a and NAME_b)
SCORING_FUNCTION_SIDES = (col("model", STR, "model"), col("method", STR, "scoring method"))


def side_columns(sides: Sequence = SCORING_FUNCTION_SIDES) -> tuple:
    """NAME_a of each side column, then NAME_b (a before b in sorted order)."""
    return (*(col(f"{c.name}_a", c.type, f"first compared: {c.doc} (a < b in sorted order)")
              for c in sides),
            *(col(f"{c.name}_b", c.type, f"second compared: {c.doc}") for c in sides))


def comparison_columns(group: Sequence, sides: Sequence = SCORING_FUNCTION_SIDES) -> tuple:
    """The columns of a comparison table whose rows are grouped by the `group` columns and
    compare two of what the `sides` columns name (core Column objects: a scoring function's
    model and method by default); core/outputs_registry.py gives them to each family's
    entry."""
    return (
        *group,
        *side_columns(sides),
        col("statistic", STR, "the headline figure compared"),
        col("n_items", I64, "items both functions scored: the figures' sample"),
        col("n_only_a", I64, "items only a scored (left out of both figures)"),
        col("n_only_b", I64, "items only b scored (left out of both figures)"),
        col("value_a", F64, "a's figure on the n_items items (null when it has none)", True),
        col("value_b", F64, "b's figure on the n_items items", True),
        col("difference", F64, "value_a - value_b", True),
        col("difference_ci_low", F64, "lower end of the paired interval of the difference at "
            "aggregate.uncertainty.level (null: none: resamples 0, or fewer than 2 units "
            "resampled)", True),
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


def comparison_key(group: Sequence[str], sides: Sequence = SCORING_FUNCTION_SIDES
                   ) -> tuple[str, ...]:
    return (*group, *(c.name for c in side_columns(sides)), "statistic")
