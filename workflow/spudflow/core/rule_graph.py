"""The stage diagram of docs/architecture.md: Snakemake's rule graph on the default config.

`snakemake --rulegraph` numbers its nodes and lists its edges in the order of sets, which changes
from run to run; the DOT written here names each node by its rule and sorts nodes and edges, so
the same workflow always gives the same file and a test can tell when the committed one is stale.
The rule `all` is left out: it only collects every target, and its edges would hide the stages.
The graph is planned in an empty working directory, so a run's results/ never change it.

    python -m spudflow.core.rule_graph SNAKEFILE DOT [SVG]

writes the DOT and, given SVG, renders it with graphviz's `dot` (apt-get install graphviz). The
SVG records the sha256 of the DOT it was drawn from, so a stale drawing shows too.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

NODE = re.compile(r'^\s*(\d+)\[label = "([^"]+)", color = "([^"]+)"')
EDGE = re.compile(r"^\s*(\d+) -> (\d+)\s*$")
LEFT_OUT = {"all"}
HEADER = """\
digraph spudflow_rules {
    graph[bgcolor=white, margin=0, rankdir=LR];
    node[shape=box, style=rounded, fontname=sans, fontsize=10, penwidth=2];
    edge[penwidth=2, color=grey];
"""


def canonical_dot(rulegraph: str) -> str:
    """Snakemake's rule graph DOT as one fixed text: nodes named by their rule, sorted."""
    labels, colors, edges = {}, {}, set()
    for line in rulegraph.splitlines():
        if node := NODE.match(line):
            labels[node[1]] = node[2]
            colors[node[2]] = node[3]
        elif edge := EDGE.match(line):
            edges.add((edge[1], edge[2]))
    if not labels:
        raise ValueError("no rule graph in snakemake's output")
    named = sorted((labels[a], labels[b]) for a, b in edges
                   if not {labels[a], labels[b]} & LEFT_OUT)
    nodes = [f'    "{rule}"[color="{colors[rule]}"];' for rule in sorted(colors)
             if rule not in LEFT_OUT]
    lines = [f'    "{a}" -> "{b}";' for a, b in named]
    return HEADER + "\n".join(nodes + lines) + "\n}\n"


def rule_graph(snakefile: Path) -> str:
    """The canonical rule graph of `snakefile` on its default config, planned in an empty
    directory (nothing a run wrote there can change it)."""
    with tempfile.TemporaryDirectory(prefix="spudflow-rulegraph-") as workdir:
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile),
             "--directory", workdir, "--rulegraph", "--cores", "1", "--quiet", "all"],
            capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"snakemake --rulegraph failed:\n{done.stderr}")
    return canonical_dot(done.stdout)


def dot_digest(dot: str) -> str:
    return hashlib.sha256(dot.encode("utf-8")).hexdigest()


def svg_marker(dot: str) -> str:
    """The comment an SVG drawn from `dot` carries (its DOT's sha256)."""
    return f"<!-- drawn from rulegraph.dot sha256 {dot_digest(dot)} -->"


def render_svg(dot: str) -> str:
    """`dot` drawn by graphviz, with svg_marker() after the XML declaration."""
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True,
                         check=True).stdout
    declaration, rest = svg.split("\n", 1)
    return f"{declaration}\n{svg_marker(dot)}\n{rest}"


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m spudflow.core.rule_graph SNAKEFILE DOT [SVG]", file=sys.stderr)
        return 2
    dot = rule_graph(Path(argv[0]))
    Path(argv[1]).write_text(dot, encoding="utf-8")
    if len(argv) == 3:
        Path(argv[2]).write_text(render_svg(dot), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
