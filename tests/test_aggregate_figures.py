"""Figures: PNG and SVG from each table, byte-identical on reruns, and a placeholder when empty."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
from artifact_files import rewrite

from spudflow.core.contract import write_artifact
from spudflow.core.outputs_registry import FIGURE_OUTPUTS, PROBE, TABLE_OUTPUTS
from spudflow.core.table_artifacts import TABLES

from aggregate_inputs import (
    blimp_inputs,
    german_case_inputs,
    japanese_inputs,
    probe_metrics,
    run_command,
    spud_inputs,
)

# The hand-made inputs of each feed's table command (tests/aggregate_inputs.py); the probe's
# command reads metrics files instead (None).
FEED_INPUTS = {"spud": spud_inputs, "german_case": german_case_inputs, "blimp": blimp_inputs,
               "japanese_transitivity": japanese_inputs, PROBE: None}
# Every figure of the registry: its command, the table it draws and the command that makes it.
FIGURES = [(figure.command, figure.table, TABLE_OUTPUTS[figure.table].command,
            FEED_INPUTS[figure.feed]) for figure in FIGURE_OUTPUTS.values()]


@pytest.fixture(scope="module")
def tables_of(tmp_path_factory):
    """The tables folder of a table command on its feed's hand-made inputs, made once per
    command for the figures that draw its tables (the Japanese table fits regressions)."""
    made: dict[str, Path] = {}

    def tables(command: str, inputs) -> Path:
        if command not in made:
            root = tmp_path_factory.mktemp(command)
            if inputs is None:
                given = [probe_metrics(root)]
            else:
                items, scores = inputs(root)
                given = ["--items", items, "--scores", *scores]
            assert run_command(command, *given, "--out-dir", root / "tables") == 0
            made[command] = root / "tables"
        return made[command]
    return tables


@pytest.mark.slow
@pytest.mark.parametrize(("figure", "table", "command", "inputs"), FIGURES,
                         ids=[f[0] for f in FIGURES])
def test_figure_files_are_deterministic(tmp_path, run_cli, tables_of, figure, table, command,
                                        inputs):
    tables = tables_of(command, inputs)
    stem = tmp_path / "figures" / table
    first = {}
    for run in range(2):
        code, _, err = run_cli(figure, tables / f"{table}.parquet", "--out", stem)
        assert code == 0, err
        png = stem.with_name(f"{table}.png").read_bytes()
        svg = stem.with_name(f"{table}.svg").read_bytes()
        if run == 0:
            first = {"png": png, "svg": svg}
    assert png.startswith(b"\x89PNG") and png == first["png"]
    assert svg == first["svg"]
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert b"<dc:date>" not in svg


def test_empty_table_gives_a_placeholder(tmp_path, run_cli):
    empty = tmp_path / "blimp_field.parquet"
    write_artifact(pl.DataFrame(schema=TABLES["blimp_field"].polars_schema()), empty,
                   TABLES["blimp_field"])
    code, _, err = run_cli("figure-blimp-field", empty, "--out", tmp_path / "fig")
    assert code == 0, err
    assert b"no BLiMP results" in (tmp_path / "fig.svg").read_bytes()


def test_missing_table_is_bad_input(tmp_path, run_cli):
    code, _, err = run_cli("figure-german-case-roc", tmp_path / "nope.parquet", "--out",
                           tmp_path / "f")
    assert code == 2
    assert err.strip() == f"{tmp_path / 'nope.parquet'}: no such file"
    assert not list(tmp_path.iterdir())


def _svg_texts(svg: bytes) -> list[str]:
    """The texts drawn in a matplotlib SVG (each glyph run is preceded by a comment with it)."""
    return [t.strip() for t in re.findall(r"<!-- (.*?) -->", svg.decode("utf-8"))]


@pytest.mark.slow
def test_agreement_heat_map_shows_missing_cells_as_missing(tmp_path, run_cli):
    """Two scoring modes that share no pair have no agreement: the cell says n/a, not 0.00."""
    items, scores = japanese_inputs(tmp_path)
    groups = pl.read_parquet(items)["group_id"].unique().sort().to_list()
    half = {g for i, g in enumerate(groups) if i % 2}
    for path, keep in zip(scores, (half, set(groups) - half), strict=True):  # bert, gpt
        rewrite(path, lambda f, keep=keep: f.filter(
            pl.col("item_id").str.replace(r"-(in)?transitive$", "").is_in(keep)))
    tables = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores,
                           "--out-dir", tables)
    assert code == 0, err
    agreement = pl.read_parquet(tables / "japanese_agreement.parquet")
    missing = agreement.filter(pl.col("agreement").is_null())
    assert missing.height == 4  # bert (whole, verb) x gpt, both ways
    assert (missing["n_pairs"] == 0).all()
    stem = tmp_path / "figures" / "japanese_agreement"
    code, _, err = run_cli("figure-japanese-agreement", tables / "japanese_agreement.parquet",
                           "--out", stem)
    assert code == 0, err
    texts = _svg_texts(stem.with_name("japanese_agreement.svg").read_bytes())
    assert texts.count("n/a") == missing.height
    shown = [f"{v:.2f}" for v in agreement["agreement"].drop_nulls()]
    cells = [t for t in texts if re.fullmatch(r"\d\.\d\d", t)]
    assert sorted(cells) == sorted(shown)


def test_blimp_bars_show_a_field_without_accuracy_as_missing(tmp_path, run_cli):
    """A field whose pairs were all skipped has no accuracy: no bar of height 0, but n/a."""
    items, scores = blimp_inputs(tmp_path)
    syntax = pl.read_parquet(items).filter(pl.col("field") == "syntax")["item_id"]
    rewrite(scores[0], lambda f: f.with_columns(
        pl.when(pl.col("item_id").is_in(syntax)).then(None).otherwise(pl.col("logprob_sum"))
        .alias("logprob_sum"),
        pl.when(pl.col("item_id").is_in(syntax)).then(pl.lit("too_long")).alias("skipped"),
    ))
    tables = tmp_path / "tables"
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores,
                           "--out-dir", tables)
    assert code == 0, err
    field = pl.read_parquet(tables / "blimp_field.parquet")
    row = field.filter(pl.col("field") == "syntax").row(0, named=True)
    assert row["accuracy"] is None and row["n_pairs"] == 0 and row["n_skipped"] == 12
    stem = tmp_path / "figures" / "blimp_field"
    code, _, err = run_cli("figure-blimp-field", tables / "blimp_field.parquet", "--out", stem)
    assert code == 0, err
    svg = stem.with_name("blimp_field.svg").read_bytes()
    assert _svg_texts(svg).count("n/a") == 1
    # one bar (the morphology field): bars are the axes' patches with the scoring function's colour
    assert svg.count(b"fill: #1f77b4") == 2  # the bar and its legend patch


def test_a_saved_figure_is_cropped_as_matplotlib_crops_it_tight(tmp_path):
    """save() lays a figure out once and crops both formats to one box: the box matplotlib's own
    savefig(bbox_inches="tight") finds, a legend outside the axes included (within a pixel of
    its size at 150 dpi)."""
    from matplotlib.image import imread

    from spudflow.aggregate.figures import _panels, save, styled

    @styled
    def draw(stem):
        fig, (ax,) = _panels(1)
        ax.plot([1, 2, 3], [2, 1, 3], label="a long label outside the axes")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        ax.set_title("title")
        save(fig, stem)
        fig.set_layout_engine("constrained")
        fig.savefig(tmp_path / "tight.png", format="png", dpi=150, bbox_inches="tight")

    draw(tmp_path / "saved")
    saved, tight = imread(tmp_path / "saved.png"), imread(tmp_path / "tight.png")
    assert abs(saved.shape[0] - tight.shape[0]) <= 1 and abs(saved.shape[1] - tight.shape[1]) <= 1
    width = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', (tmp_path / "saved.svg")
                            .read_text()).group(1))
    assert width == pytest.approx(tight.shape[1] / 150 * 72, abs=1.0)
