"""After `make run` on the default config: the front page and the report exist, every registered
table (core/outputs_registry.py) was made and has rows, unless its registry entry says why it may
be empty, and the second `make run`, whose log is given, had nothing to do. Exit 1 with one line
per failure; a table's rows whose `status` is not ok are listed (a logged row, not a failure)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl
from snakemake.common import NOTHING_TO_BE_DONE_MSG

from spudflow.core import outputs_registry

REPO = Path(__file__).resolve().parents[1]
PAGES = ("results/index.html", "results/report.html")
# Tables made only from what the default config cannot have: filled human-evaluation sheets.
NOT_IN_DEFAULT_RUN = (outputs_registry.HUMAN_EVAL,)


def table_failures(tables: Path) -> list[str]:
    failures = []
    for output in outputs_registry.TABLE_OUTPUTS.values():
        if output.feed in NOT_IN_DEFAULT_RUN:
            continue
        path = tables / f"{output.name}.parquet"
        if not path.is_file():
            failures.append(f"{path}: not made")
            continue
        table = pl.read_parquet(path)
        if table.height == 0 and not output.empty_when:
            failures.append(f"{path}: no rows")
        elif table.height == 0:
            print(f"{path}: no rows ({output.empty_when})")
        if "status" in table.columns:
            for row in table.filter(pl.col("status") != "ok").iter_rows(named=True):
                print(f"{path}: {row['status']} row: {row.get('reason')}")
        print(f"{path}: {table.height} rows")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--second-run-log", type=Path, required=True)
    args = parser.parse_args(argv)
    failures = [f"{page}: missing or empty" for page in PAGES
                if not (REPO / page).is_file() or (REPO / page).stat().st_size == 0]
    failures += table_failures(REPO / "results" / "tables")
    if NOTHING_TO_BE_DONE_MSG not in args.second_run_log.read_text(encoding="utf-8"):
        failures.append(f"{args.second_run_log}: the second `make run` had jobs to do")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"check_run: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
