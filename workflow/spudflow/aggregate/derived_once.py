"""What the tables of one command derive from the same loaded inputs, derived once.

A dataset family's table command writes several tables from its items and scores: the writer's,
the comparisons', the examples' and the per-item data. Each starts from the same work: the items
joined with their scores (and the text check), BLiMP's pair outcomes, SPUD's ratios, CoLA's
cross-validated thresholds. While a command runs (`command_scope`), a function marked
`@derived_once` returns what it returned before for the same arguments (the same objects, or
equal numbers and strings) instead of computing it again; outside a scope (tests, library use)
every call computes. Frames are never changed in place here, so sharing them is safe: a
caller must not change a result it gets (or a frame it passed) in place either."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

F = TypeVar("F", bound=Callable)

# the open scope's results: key -> (result, the arguments, kept so that their ids stay theirs)
_results: dict | None = None


@contextmanager
def command_scope() -> Iterator[None]:
    """The command's run: results kept until it ends."""
    global _results
    outer, _results = _results, {}
    try:
        yield
    finally:
        _results = outer


def in_command_scope(handler: F) -> F:
    """A command handler run inside its own command_scope."""
    @functools.wraps(handler)
    def run(*args, **kwargs):
        with command_scope():
            return handler(*args, **kwargs)
    return run  # type: ignore[return-value]


def derived_once(function: F) -> F:
    """`function` computed once per command scope and arguments: a frame (any object) by
    identity, a number, string, bool or None by value."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def once(*args, **kwargs):
        if _results is None:
            return function(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (function.__module__, function.__qualname__,
               tuple((name, _identity(value)) for name, value in bound.arguments.items()))
        if key not in _results:
            _results[key] = (function(*args, **kwargs), bound.arguments)
        return _results[key][0]
    return once  # type: ignore[return-value]


def _identity(value) -> tuple:
    if isinstance(value, float):
        return ("float", value.hex())  # -0.0 is not 0.0
    if value is None or isinstance(value, (bool, int, str)):
        return (type(value).__name__, value)
    if isinstance(value, (list, dict, set, bytearray, np.ndarray)):
        # changed in place, such a value would hit the old result; a new one never would
        raise TypeError(f"derived_once: a {type(value).__name__} argument has no identity to "
                        "key on (pass a frame, a tuple of values or a number)")
    if isinstance(value, tuple):
        return ("tuple", *map(_identity, value))
    return ("object", id(value))
