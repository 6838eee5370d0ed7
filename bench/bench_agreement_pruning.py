"""The Japanese agreement graph's pruning (thesis §5.6) per dataset of japanese_agreement tables.

    python bench/bench_agreement_pruning.py TABLES_DIR [TABLES_DIR ...]

Why: `aggregate.japanese_agreement_modes` (--agreement-mode) narrows the agreement
table, and so the graph and its pruning, to the thesis's 15 modes (App. A.1). For each
`spudflow table-japanese` output folder (e.g. one run with every mode, one with the preset's 15)
this prints, per dataset, the modes, the edges with an agreement, the edges the pruning keeps
(aggregate/agreement_graph.py: lowest edges removed until the next would disconnect
the graph) and the cut-off, the lowest agreement kept.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from spudflow.aggregate.agreement_graph import agreement_graph


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", type=Path, nargs="+", help="table-japanese --out-dir folders")
    args = parser.parse_args()
    print("| tables | dataset | modes | edges | kept | cut-off | lowest agreement |")
    print("|---|---|---|---|---|---|---|")
    for folder in args.tables:
        table = pl.read_parquet(folder / "japanese_agreement.parquet")
        for dataset in sorted(table["dataset"].unique()):
            panel = table.filter(pl.col("dataset") == dataset)
            edges = panel.filter((pl.col("mode_a") < pl.col("mode_b"))
                                 & pl.col("agreement").is_not_null())
            graph, cut_off = agreement_graph(panel)
            shown = "n/a" if cut_off is None else f"{cut_off:.4f}"
            print(f"| {folder.name} | {dataset} | {graph.number_of_nodes()} | {edges.height} | "
                  f"{graph.number_of_edges()} | {shown} | {edges['agreement'].min():.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
