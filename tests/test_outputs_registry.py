"""The registry of tables and figures (core/outputs_registry.py) against everything that names an
output: the table contracts, the report's captions, the rules' output files, the figure commands,
the front page and the docs. An output without its entry, or an entry without its output, fails
here; so does a table rule fed by datasets of another family."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow_helpers import REPO, copy_checkout, copy_workflow, in_copy, plan, update_config

from spudflow.aggregate import cli as aggregate_cli
from spudflow.aggregate import figures
from spudflow.aggregate.front_page import SECTIONS
from spudflow.core import outputs_registry
from spudflow.core.contract import write_artifact
from spudflow.core.dataset_families import DATASET_FAMILIES
from spudflow.core.outputs_registry import (
    FIGURE,
    FIGURE_OUTPUTS,
    OUTPUTS,
    TABLE,
    TABLE_OUTPUTS,
)
from spudflow.core.table_artifacts import TABLES

OUTPUT_FILE = re.compile(r"^results/(tables|figures)/(\w+)\.(\w+)$")


def test_every_table_contract_has_an_entry_and_every_entry_a_contract():
    assert set(TABLE_OUTPUTS) == set(TABLES)
    for figure in FIGURE_OUTPUTS.values():
        assert figure.table in TABLES, figure.name


def test_every_caption_has_an_entry_and_every_entry_a_caption():
    """Each figure's caption is a file under report/; each table's is its entry's caption
    (written with it as NAME.caption.rst), but for the human evaluation's tables, whose captions
    are files under report/."""
    captions = {f"report/{p.name}" for p in (REPO / "report").glob("*.rst")} - {
        "report/workflow.rst"}
    named = [o.report_caption for o in OUTPUTS if o.report_caption]
    assert len(named) == len(set(named)), "two entries share a caption"
    assert {c for c in named if c.startswith("report/")} == captions
    tables = [o for o in OUTPUTS if o.output_type == TABLE]
    assert {o.name for o in tables if not o.caption} == {"human_eval_grammaticality",
                                                          "human_eval_preference"}


def test_names_are_unique_within_tables_and_within_figures():
    for type_of in (lambda o: o.output_type != FIGURE, lambda o: o.output_type == FIGURE):
        names = [o.name for o in OUTPUTS if type_of(o)]
        assert len(names) == len(set(names))


def test_every_feed_is_a_dataset_family_or_a_stage_input():
    special = {outputs_registry.TREEBANKS, outputs_registry.NONCE, outputs_registry.HUMAN_EVAL,
               outputs_registry.PROBE}
    for o in OUTPUTS:
        assert o.feed in set(DATASET_FAMILIES) | special, o.name
    # every dataset family feeds at least one table: its own, or another family's (`feeds`,
    # whose items are that family's artifact)
    assert {f.tables for f in DATASET_FAMILIES.values()} <= {o.feed for o in OUTPUTS}
    for family in DATASET_FAMILIES.values():
        if family.feeds:
            assert family.feeds in DATASET_FAMILIES and family.feeds != family.name
            assert family.artifact is DATASET_FAMILIES[family.feeds].artifact, family.name


def test_dataset_families_are_the_config_pairs_sections():
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text(encoding="utf-8"))
    assert set(DATASET_FAMILIES) == set(schema["properties"]["pairs"]["properties"])


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory) -> Path:
    """The tiny workflow: its config enables every rule that writes a table or figure."""
    return copy_workflow(tmp_path_factory.mktemp("registry") / "workflow", "every_table.yaml")


def _rule_output_files(workdir: Path) -> dict[tuple[str, str], str]:
    """(tables|figures, name) -> the rule that writes it, from the parsed workflow."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, Quietness, ResourceSettings

    written = {}
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow = api.workflow(resource_settings=ResourceSettings(cores=1),
                                snakefile=workdir / "Snakefile", workdir=workdir)._workflow
        for rule in workflow.rules:
            for path in rule.output:
                match = OUTPUT_FILE.match(str(path))
                if match:
                    assert written.setdefault(match.group(1, 2), rule.name) == rule.name, path
    return written


def test_every_rule_output_has_its_entry_and_every_entry_its_rule(workflow_copy):
    written = _rule_output_files(workflow_copy)
    registered = {("figures" if o.output_type == FIGURE else "tables", o.name): o.rule
                  for o in OUTPUTS}
    assert written == registered


def test_figure_commands_are_the_registry_figures():
    subparsers = argparse.ArgumentParser().add_subparsers()
    aggregate_cli.register(subparsers)
    commands = {name for name in subparsers.choices if name.startswith("figure-")}
    assert commands == {o.command for o in FIGURE_OUTPUTS.values()}
    for figure in FIGURE_OUTPUTS.values():
        assert callable(getattr(figures, figure.function)), figure.function
        parsed = subparsers.choices[figure.command].parse_args(["t.parquet", "--out", "x"])
        assert parsed.artifact == figure.table


def test_front_page_reads_the_registry():
    shown = {f for s in SECTIONS for f in s.figures}
    assert shown == {o.name for o in FIGURE_OUTPUTS.values() if o.front_page}
    for section in SECTIONS:
        assert TABLE_OUTPUTS[section.table].output_type == "table"


@pytest.mark.parametrize(("block", "render"), [
    (outputs_registry.BLOCK, outputs_registry.render),
    (outputs_registry.FIGURES_BLOCK, outputs_registry.render_figures)], ids=["outputs", "figures"])
def test_docs_lists_are_rendered_from_the_registry(block, render):
    page = (REPO / "docs" / "aggregate.md").read_text(encoding="utf-8")
    found = block.search(page)
    assert found, f"docs/aggregate.md has no {block.pattern[:20]} block"
    assert found.group("body") == render(), (
        "stale: python -m spudflow.core.outputs_registry docs/aggregate.md")


# A figure added as docs/aggregate.md says: its registry entry, its function, its caption.
NEW_ENTRY = """    _figure("blimp_paradigms", "blimp_paradigm", "BLiMP accuracy per paradigm",
            "BLiMP", "BLiMP, accuracy per paradigm", "blimp", shows="accuracy per paradigm"),
"""
NEW_FUNCTION = """

def blimp_paradigms(paradigms, stem):
    return _empty(stem, "BLiMP paradigms")
"""
NEW_CAPTION = "BLiMP accuracy per paradigm; items datasets {{ snakemake.params.datasets }}.\n"


# The report entry of the new figure's SVG as the parsed workflow has it: caption and category.
REPORT_ENTRY = """import sys
from pathlib import Path
sys.path.insert(0, "{tests}")
from snakemake.api import SnakemakeApi
from snakemake.settings.types import OutputSettings, Quietness, ResourceSettings
copy = Path("{copy}")
with SnakemakeApi(OutputSettings(quiet={{Quietness.ALL}})) as api:
    workflow = api.workflow(resource_settings=ResourceSettings(cores=1),
                            snakefile=copy / "Snakefile", workdir=copy)._workflow
    rule = workflow.get_rule("figure_blimp_paradigms")
    report = rule.output[0].flags["report"]
    print((Path(rule.snakefile).parent / str(report.caption)).resolve(), report.category)
"""


def _add_a_figure(copy: Path) -> None:
    code = copy / "workflow" / "spudflow"
    registry = code / "core" / "outputs_registry.py"
    text = registry.read_text(encoding="utf-8")
    start = text.index("OUTPUTS: tuple[Output, ...] = (\n")
    end = text.index("\n)\n", start) + 1  # the tuple's closing line
    registry.write_text(text[:end] + NEW_ENTRY + text[end:], encoding="utf-8")
    with (code / "aggregate" / "figures.py").open("a", encoding="utf-8") as figures_file:
        figures_file.write(NEW_FUNCTION)
    (copy / "report" / "blimp_paradigms_figure.rst").write_text(NEW_CAPTION, encoding="utf-8")


@pytest.mark.slow
def test_a_new_figure_is_its_entry_its_function_and_its_caption(tmp_path):
    """In a copy of the workflow on the default config, a figure added in those three places
    only is planned by rule all with its rule, its log and its report entry, and its command
    draws it."""
    copy = copy_checkout(tmp_path / "workflow")
    _add_a_figure(copy)
    planned = in_copy(copy, "-m", "snakemake", "-n", "--forceall", "--cores", "1")
    assert planned.returncode == 0, planned.stderr
    assert re.search(r"^figure_blimp_paradigms\s+1$", planned.stdout, re.M), planned.stdout
    assert ("spudflow figure-blimp-paradigms results/tables/blimp_paradigm.parquet --out "
            "results/figures/blimp_paradigms  2> results/logs/figure_blimp_paradigms.log"
            ) in planned.stdout
    reported = in_copy(copy, "-c", REPORT_ENTRY.format(tests=REPO / "tests", copy=copy))
    assert reported.returncode == 0, reported.stderr
    assert reported.stdout.split() == [str(copy / "report" / "blimp_paradigms_figure.rst"),
                                       "BLiMP"]
    empty = copy / "blimp_paradigm.parquet"
    write_artifact(pl.DataFrame(schema=TABLES["blimp_paradigm"].polars_schema()), empty,
                   TABLES["blimp_paradigm"])
    drawn = in_copy(copy, "-m", "spudflow", "figure-blimp-paradigms", str(empty), "--out",
                     str(tmp_path / "drawn"))
    assert drawn.returncode == 0, drawn.stderr
    assert b"no BLiMP paradigms" in (tmp_path / "drawn.svg").read_bytes()


# A table added to the BLiMP family as core/outputs_registry.py says: its registry entry (with
# its caption and its artifact's columns) and its function; this test is the third file.
NEW_TABLE_IMPORT = "from spudflow.core.artifacts import I64, STR, col\n"
NEW_TABLE_ENTRY = """    *_tables("aggregate", "table_blimp", "table-blimp", "BLiMP", "blimp",
             _table("blimp_pair_count", "BLiMP, pairs per field",
                    "BLiMP pairs per items dataset and field (a table added by a test).",
                    function="blimp.pair_counts", rows="per items dataset and field",
                    columns=(col("dataset", STR, "items dataset"),
                             col("field", STR, "BLiMP field"),
                             col("n_pairs", I64, "pairs of the field")),
                    key=("dataset", "field"))),
"""
NEW_TABLE_FUNCTION = """

def pair_counts(items: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    return items.filter(pl.col("label") == 1).group_by("dataset", "field").agg(
        pl.len().cast(pl.Int64).alias("n_pairs")).sort("dataset", "field")
"""
NEW_TABLE = "results/tables/blimp_pair_count"


def _add_a_table(copy: Path) -> None:
    code = copy / "workflow" / "spudflow"
    registry = code / "core" / "outputs_registry.py"
    text = registry.read_text(encoding="utf-8")
    end = text.index("\n)\n", text.index("OUTPUTS: tuple[Output, ...] = (\n")) + 1
    imports = text.index("from dataclasses import dataclass\n")
    text = text[:end] + NEW_TABLE_ENTRY + text[end:]
    registry.write_text(text[:imports] + NEW_TABLE_IMPORT + text[imports:], encoding="utf-8")
    with (code / "aggregate" / "blimp.py").open("a", encoding="utf-8") as family:
        family.write(NEW_TABLE_FUNCTION)


@pytest.mark.slow
def test_a_new_table_is_its_entry_its_function_and_its_test(tmp_path):
    """In a copy of the tiny workflow, a table added to the BLiMP family by its registry entry
    and its function only is planned as an output of the family's rule, whose command is
    unchanged, and a run of that rule writes it: its rows, its caption in the LaTeX file and in
    its report caption, its artifact in the Parquet file."""
    copy = copy_workflow(tmp_path / "workflow")
    # BLiMP scored by the n-gram model alone: no control model to train first
    update_config(copy, lambda config: config["models"].pop("tiny_bert"))
    before = in_copy(copy, "-m", "snakemake", "-n", "--forceall", "--cores", "1", "-p",
                      "results/tables/blimp_overall.parquet")
    _add_a_table(copy)
    planned = in_copy(copy, "-m", "snakemake", "-n", "--forceall", "--cores", "1", "-p",
                       f"{NEW_TABLE}.parquet")
    assert planned.returncode == 0, planned.stderr
    assert re.search(r"^table_blimp\s+1$", planned.stdout, re.M), planned.stdout
    command = re.compile(r"spudflow table-blimp [^\n]*")
    assert command.findall(planned.stdout) == command.findall(before.stdout) != []
    ran = in_copy(copy, "-m", "snakemake", "--cores", "2", f"{NEW_TABLE}.parquet")
    assert ran.returncode == 0, ran.stderr
    table = pl.read_parquet(copy / f"{NEW_TABLE}.parquet")
    items = pl.read_parquet(copy / "results" / "items" / "blimp.parquet")
    assert table.rows() == sorted(items.filter(pl.col("label") == 1).group_by(
        "dataset", "field").len().rows())
    caption = "BLiMP pairs per items dataset and field (a table added by a test)."
    assert caption in (copy / f"{NEW_TABLE}.tex").read_text(encoding="utf-8")
    report = (copy / f"{NEW_TABLE}.caption.rst").read_text(encoding="utf-8")
    assert caption in report and "Data: items datasets" in report
    checked = in_copy(copy, "-c", "from spudflow.core.contract import read_artifact; "
                       "from spudflow.core.table_artifacts import TABLES; "
                       f"print(read_artifact('{NEW_TABLE}.parquet', "
                       "TABLES['blimp_pair_count']).columns)")
    assert checked.stdout.strip() == "['dataset', 'field', 'n_pairs']", checked.stderr


def test_the_docs_command_checks_then_rewrites_a_stale_list(tmp_path, capsys):
    """`python -m spudflow.core.outputs_registry [--check] PAGES`: --check names the stale page
    and exits 1 leaving it alone; without it the block is rewritten (the text around it kept),
    and a fresh page passes --check."""
    page = tmp_path / "page.md"
    stale = "intro\n<!-- outputs -->\n| old |\n<!-- /outputs -->\nafter\n"
    page.write_text(stale, encoding="utf-8")
    assert outputs_registry.main(["--check", str(page)]) == 1
    assert f"stale outputs list: {page}" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == stale
    assert outputs_registry.main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == (
        "intro\n<!-- outputs -->\n" + outputs_registry.render() + "<!-- /outputs -->\nafter\n")
    assert outputs_registry.main(["--check", str(page)]) == 0
    assert capsys.readouterr().err == ""

def _table_inputs(workdir: Path) -> dict[str, set[str]]:
    """Table rule -> the items datasets whose files its job reads."""
    planned = plan(workdir, forceall=True)
    return {rule: {Path(f).stem for f in planned.inputs[job] if f.startswith("results/items/")}
            for job in planned.jobs for rule in [job[0]] if rule.startswith("table_")}


def test_each_table_rule_reads_the_datasets_of_its_family(workflow_copy):
    """A dataset's family is its config section, whatever its name: the Japanese tables read the
    japanese_transitivity datasets and nothing else, and so on."""
    inputs = _table_inputs(workflow_copy)
    assert inputs["table_spud_scores"] == {"spud_tiny_en_test", "spud_tiny_de_test"}
    assert inputs["table_german_case"] == {"german_case"}
    assert inputs["table_japanese_transitivity"] == {"japanese_transitivity_base",
                                        "japanese_transitivity_relative"}
    assert inputs["table_cola"] == {"cola"}
    assert inputs["table_blimp"] == {"blimp"}



def test_a_table_that_may_have_no_rows_says_when_and_only_tables_do():
    """`empty_when` is what a check of a finished run reads (every other table must have rows):
    a reason for each table allowed no rows, none for a figure."""
    allowed = {o.name: o.empty_when for o in OUTPUTS if o.empty_when is not None}
    assert allowed and all(len(reason) > 20 for reason in allowed.values())
    assert all(TABLE_OUTPUTS[name].output_type != FIGURE for name in allowed)
    assert "spud_outliers" in allowed and "japanese_regression" not in allowed
