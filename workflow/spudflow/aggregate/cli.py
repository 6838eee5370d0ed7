"""Commands of the aggregation stage."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "table-treebank-stats", help="collect per-split statistics into one table",
        description="Concatenate the one-row statistics files of `spudflow stats` into "
        "STEM.parquet, STEM.csv, STEM.md and STEM.tex, sorted by treebank and split.")
    p.add_argument("inputs", nargs="+", type=Path, help="statistics .parquet files")
    p.add_argument("--out", type=Path, required=True, help="output path without extension")
    p.set_defaults(handler=run_treebank_stats)


def run_treebank_stats(args: argparse.Namespace) -> None:
    import polars as pl

    from spudflow.core.tables import write_table

    table = pl.concat([pl.read_parquet(p) for p in args.inputs]).sort(["treebank", "split"])
    write_table(table, args.out, caption="Treebank statistics per split: sentences, words, "
                "surface tokens, multiword tokens, empty nodes, UPOS counts and type-token ratio "
                "of word forms.")
