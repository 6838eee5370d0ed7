"""Which scoring methods each model kind can do (core/scoring_methods.py's list), the `_region`
variants, and the function that scores each."""

from __future__ import annotations

import importlib
from functools import cache

from spudflow.core.errors import InputError
from spudflow.core.scoring_methods import (
    BY_NAME,
    KINDS,
    REGION_SUFFIX,
    base_method,
    is_region_method,
    methods_of,
)

__all__ = ["KINDS", "L2R_WORDS", "base_method", "check_kind", "is_region_method",
           "parse_methods", "scoring_function"]

# What pppl_l2r counts as one word: the tokenizer's pre-tokenizer words (Kauf & Ivanova's code,
# minicons: the fast tokenizer's word_ids()) or the items' words (for SPUD, UD surface tokens).
L2R_WORDS = ("tokenizer", "items")


@cache
def scoring_function(method: str):
    """The function its entry names: `f(scorer, encoded, targets, bar) -> list[np.ndarray]`."""
    module, name = BY_NAME[base_method(method)].score.split(":")
    return getattr(importlib.import_module(module), name)


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise InputError("--kind", None, f"unknown model kind {kind!r} (one of {', '.join(KINDS)})")
    return kind


def parse_methods(kind: str, text: str) -> list[str]:
    """`--method M[,M…]` checked against the kind; order kept, duplicates dropped."""
    methods = list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    if not methods:
        raise InputError("--method", None, "no method given")
    for method in methods:
        base = base_method(method)
        if base not in BY_NAME:
            raise InputError("--method", None, f"unknown method {method!r} (methods: "
                             f"{', '.join(sorted(BY_NAME))}, each also as M{REGION_SUFFIX})")
        if BY_NAME[base].kind != kind:
            raise InputError("--method", None, f"a {kind} model cannot do {method!r} (it does "
                             f"{', '.join(methods_of(kind))}, each also as M{REGION_SUFFIX})")
    return methods
