"""FEATS helpers: the column stays the UD string; these make it easy to filter on."""

from __future__ import annotations

import polars as pl


def parse_feats(feats: str | None) -> dict[str, str]:
    """`Case=Nom|Number=Sing` -> {"Case": "Nom", "Number": "Sing"}; `_` or null -> {}."""
    if not feats or feats == "_":
        return {}
    return dict(item.split("=", 1) for item in feats.split("|"))


def feature(name: str, column: str = "feats") -> pl.Expr:
    """Polars expression for one feature's value (null when absent).

    `tokens.filter(feature("Case") == "Nom")` or `tokens.with_columns(case=feature("Case"))`.
    """
    return pl.col(column).str.extract(rf"(?:^|\|){name}=([^|]+)", 1).alias(name)
