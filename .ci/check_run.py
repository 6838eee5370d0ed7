"""After `make run` on the default config: the front page and the report exist, every table the
run's DAG makes (`snakemake --summary`) has its registry entry (core/outputs_registry.py) and
rows, unless the entry says when it may have none, and the second `make run`, whose log is
given, had nothing to do. Exit 1 with one line per failure. Rows whose `status` is not ok are
listed (a logged row, not a failure), and so are the registered tables this config does not make.
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from pathlib import Path

import polars as pl
from snakemake.common import NOTHING_TO_BE_DONE_MSG

from spudflow.core import outputs_registry

REPO = Path(__file__).resolve().parents[1]
PAGES = ("results/index.html", "results/report.html")


def planned_tables() -> set[str]:
    """The tables (results/tables/NAME.parquet) of the default run's DAG, by name."""
    summary = subprocess.run(
        [str(REPO / ".venv" / "bin" / "snakemake"), "--profile", "profiles/default", "--summary"],
        cwd=REPO, capture_output=True, text=True, check=True).stdout
    rows = csv.DictReader(io.StringIO(summary), delimiter="\t")
    return {Path(row["output_file"]).stem for row in rows
            if row["output_file"].startswith("results/tables/")
            and row["output_file"].endswith(".parquet")}


def table_failures(tables: Path, planned: set[str]) -> list[str]:
    failures = [f"{tables / name}.parquet: made by the run but not in the registry"
                for name in sorted(planned - set(outputs_registry.TABLE_OUTPUTS))]
    for output in outputs_registry.TABLE_OUTPUTS.values():
        path = tables / f"{output.name}.parquet"
        if output.name not in planned:
            print(f"{path}: not made by this config")
            continue
        if not path.is_file():
            failures.append(f"{path}: not made")
            continue
        table = pl.read_parquet(path)
        print(f"{path}: {table.height} rows")
        if table.height == 0 and not output.empty_when:
            failures.append(f"{path}: no rows")
        elif table.height == 0:
            print(f"{path}: no rows, as it may have when {output.empty_when}")
        if "status" in table.columns:
            for row in table.filter(pl.col("status") != "ok").iter_rows(named=True):
                print(f"{path}: a {row['status']} row: {row.get('reason')}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--second-run-log", type=Path, required=True)
    args = parser.parse_args(argv)
    failures = [f"{page}: missing or empty" for page in PAGES
                if not (REPO / page).is_file() or (REPO / page).stat().st_size == 0]
    failures += table_failures(REPO / "results" / "tables", planned_tables())
    if NOTHING_TO_BE_DONE_MSG not in args.second_run_log.read_text(encoding="utf-8"):
        failures.append(f"{args.second_run_log}: the second `make run` had jobs to do")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"check_run: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
