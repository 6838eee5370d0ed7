"""Progress bars for long loops. They go to stderr, which every Snakemake rule sends to its log."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(items: Iterable[T], desc: str, total: int | None = None,
             unit: str = "it") -> Iterator[T]:
    # `delay`: loops shorter than a second print nothing, so an early error stays the only line
    # on stderr; `mininterval` keeps the logs of long non-interactive runs short.
    return iter(tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, delay=1.0,
                     mininterval=2.0, dynamic_ncols=True))


def progress_bar(total: float, desc: str, unit: str = "it") -> tqdm:
    """A bar updated by hand (`bar.update(n)`), for work that is not one loop over items."""
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, mininterval=2.0,
                disable=None if sys.stderr.isatty() else False, dynamic_ncols=True)
