"""One group that cannot be computed never stops a table job: a fit, fold, split or paradigm
whose numbers cannot be had becomes a row with a `status` and a `reason` (and a warning in the
log), and every other row and table is still written.

`skipped`: the group cannot give the numbers by its nature (one class, too few items), said
before computing; `failed`: computing them stopped with an error, its message the reason and its
traceback in the log. Bad input (InputError) still stops the command with exit 2: it is not one
group's trouble but the run's."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import CancelledError
from typing import TypeVar

import polars as pl

from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.table_artifacts import STATUS_FAILED, STATUS_OK, STATUS_SKIPPED, TABLES

log = get_logger(__name__)

T = TypeVar("T")


class Skipped(Exception):
    """The group cannot give the numbers (the message says why): its row is `skipped`."""


def computed(what: str, compute: Callable[[], T]) -> tuple[T | None, dict[str, str | None]]:
    """(compute()'s value, {"status": "ok", "reason": None}), or (None, a `skipped` / `failed`
    status with its reason) where compute raises Skipped / any other error. `what` names the
    group in the log."""
    try:
        return compute(), {"status": STATUS_OK, "reason": None}
    except (InputError, MemoryError, CancelledError):  # the job's end, not the group's
        raise
    except Skipped as skipped:
        log.warning("%s: skipped: %s", what, skipped)
        return None, {"status": STATUS_SKIPPED, "reason": str(skipped)}
    except Exception as error:  # noqa: BLE001 - one group's failure is its row, not the job's
        reason = f"{type(error).__name__}: {error}"
        log.warning("%s: failed: %s", what, reason, exc_info=True)
        return None, {"status": STATUS_FAILED, "reason": reason}


def unscored_rows(table: str, unusable: pl.DataFrame, each: list[dict] | None = None,
                  **fixed) -> pl.DataFrame:
    """Rows of TABLE (its defined columns) for the scoring functions of `unusable` (inputs.py
    unusable_functions: dataset, model, method, [region,] reason): `skipped` with the reason,
    `fixed` values (and, per function, one row per dict of `each`: {"dataset": ..., more
    values}), every other column null."""
    schema = TABLES[table].polars_schema()
    rows = []
    for function in unusable.iter_rows(named=True):
        log.warning("%s, %s/%s: %s; its rows of %s say so", function["dataset"],
                    function["model"], function["method"], function["reason"], table)
        variants = [v for v in each or [{}] if v.get("dataset", function["dataset"])
                    == function["dataset"]]
        for variant in variants:
            row = dict.fromkeys(schema.names())
            row.update(fixed)
            row.update(variant)
            row.update(function)  # dataset, model, method (region), reason
            row["status"] = STATUS_SKIPPED
            rows.append(row)
    return pl.DataFrame(rows, schema=schema)
