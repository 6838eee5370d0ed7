"""The Japanese thesis's agreement graph (§5.6, Figures 1, 2 and 7): scoring modes as nodes,
their agreement (japanese_agreement) as edge weights, pruned.

Apart from japanese.py so that the figure loads networkx only, not the tables' sklearn, scipy and
numba.
"""

from __future__ import annotations

import networkx as nx
import polars as pl


def agreement_graph(panel: pl.DataFrame, threshold: float | None = None):
    """(graph, threshold used) of one dataset's agreement: modes as nodes, agreement as edge
    weights (missing agreements are no edge). With a threshold, edges below it are dropped;
    without, the thesis's rule (§5.6): starting with the lowest weight, edges are removed until
    the next removal would disconnect the graph."""
    graph = nx.Graph()
    graph.add_nodes_from(sorted(set(panel["mode_a"]) | set(panel["mode_b"])))
    edges = panel.filter((pl.col("mode_a") < pl.col("mode_b")) & pl.col("agreement").is_not_null())
    graph.add_weighted_edges_from(edges.select("mode_a", "mode_b", "agreement").iter_rows())
    ascending = sorted(graph.edges(data="weight"), key=lambda e: (e[2], e[0], e[1]))
    if threshold is not None:
        graph.remove_edges_from([(a, b) for a, b, w in ascending if w < threshold])
        return graph, threshold
    # "Disconnect": more components than before (a graph with missing agreements may start with
    # several).
    components = nx.number_connected_components(graph)
    for a, b, weight in ascending:
        graph.remove_edge(a, b)
        if nx.number_connected_components(graph) > components:
            graph.add_edge(a, b, weight=weight)
            break
    weights = [w for _, _, w in graph.edges(data="weight")]
    return graph, min(weights) if weights else None
