"""docs/architecture.md, the newcomer's map, cannot drift from the code: its rule graph is the
one Snakemake plans now, its drawing is of that graph, its artifact table is rendered from the
definitions, every subpackage has a line and every file it names exists. The README links it
before any other page."""

from __future__ import annotations

import re

from workflow_helpers import REPO, copy_checkout

from spudflow.core import artifact_docs, rule_graph
from spudflow.core.artifacts import STAGE_ARTIFACTS

PAGE = REPO / "docs" / "architecture.md"
DOT = REPO / "docs" / "rulegraph.dot"
SVG = REPO / "docs" / "rulegraph.svg"


def test_the_committed_rule_graph_is_the_one_snakemake_plans_now(tmp_path):
    """Planned in a copy of the checkout (never its own results/ or .snakemake/); a rule added,
    removed or rewired without `make docs-graph` fails here."""
    copy = copy_checkout(tmp_path / "copy")
    assert rule_graph.rule_graph(copy / "Snakefile") == DOT.read_text(encoding="utf-8"), (
        "docs/rulegraph.dot is stale: run `make docs-graph`")


def test_the_drawing_is_of_the_committed_graph():
    marker = rule_graph.svg_marker(DOT.read_text(encoding="utf-8"))
    assert marker in SVG.read_text(encoding="utf-8"), (
        "docs/rulegraph.svg was not drawn from docs/rulegraph.dot: run `make docs-graph`")


def test_the_graph_is_the_same_text_whatever_order_snakemake_lists_it():
    first = ('\t0[label = "b", color = "0.1 0.6 0.85", style="rounded"];\n'
             '\t1[label = "a", color = "0.2 0.6 0.85", style="rounded"];\n'
             '\t2[label = "all", color = "0.3 0.6 0.85", style="rounded"];\n'
             "\t1 -> 0\n\t0 -> 2\n\t1 -> 2\n")
    second = ('\t5[label = "a", color = "0.2 0.6 0.85", style="rounded"];\n'
              '\t7[label = "all", color = "0.3 0.6 0.85", style="rounded"];\n'
              '\t6[label = "b", color = "0.1 0.6 0.85", style="rounded"];\n'
              "\t5 -> 7\n\t5 -> 6\n\t6 -> 7\n")
    dot = rule_graph.canonical_dot(first)
    assert dot == rule_graph.canonical_dot(second)
    assert '"a" -> "b";' in dot and '"all"' not in dot


def test_the_artifact_table_is_rendered_from_the_definitions():
    """`python -m spudflow.core.artifact_docs docs/architecture.md` rewrites it."""
    assert artifact_docs.summaries(PAGE.read_text(encoding="utf-8")) == [
        artifact_docs.render_summary(STAGE_ARTIFACTS)]


def test_every_subpackage_has_a_line_in_the_package_map():
    package = REPO / "workflow" / "spudflow"
    subpackages = {".".join(("spudflow", *init.parent.relative_to(package).parts))
                   for init in package.rglob("__init__.py") if init.parent != package}
    listed = set(re.findall(r"^\| `(spudflow\.[\w.]+)` \|", PAGE.read_text(encoding="utf-8"), re.M))
    assert listed == subpackages


def test_every_file_the_page_names_exists():
    names = re.findall(r"`((?:workflow|config|rules|tests|report)/[\w/.]+)`",
                       PAGE.read_text(encoding="utf-8"))
    assert len(names) > 20
    missing = [n for n in names if not (REPO / n).exists() and "NAME" not in n and "XX" not in n]
    assert not missing


def test_the_readme_links_the_map_before_any_other_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_link = re.search(r"\]\((docs/[^)#]+)", readme)
    assert first_link and first_link[1] == "docs/architecture.md"
    assert readme.index("docs/architecture.md") < readme.index("## Quick start")

