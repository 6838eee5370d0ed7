"""Figures: PNG and SVG from each table, byte-identical on reruns, and a placeholder when empty."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import polars as pl
import pytest

from aggregate_inputs import (
    blimp_inputs,
    german_case_inputs,
    japanese_inputs,
    probe_metrics,
    spud_inputs,
)

FIGURES = (
    ("figure-spud-ratios", "spud_ratios", "table-spud-scores", spud_inputs),
    ("figure-german-roc", "german_case_roc", "table-german-case", german_case_inputs),
    ("figure-blimp-fields", "blimp_field", "table-blimp", blimp_inputs),
    ("figure-japanese-agreement", "japanese_agreement", "table-japanese", japanese_inputs),
    ("figure-probe-layers", "probe_layers", "table-probe", None),
)


@pytest.mark.parametrize(("figure", "table", "command", "inputs"), FIGURES)
def test_figure_files_are_deterministic(tmp_path, run_cli, figure, table, command, inputs):
    tables = tmp_path / "tables"
    if inputs is None:
        code, _, err = run_cli(command, probe_metrics(tmp_path), "--out-dir", tables)
    else:
        items, scores = inputs(tmp_path)
        code, _, err = run_cli(command, "--items", items, "--scores", *scores, "--out-dir", tables)
    assert code == 0, err
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
    pl.DataFrame(schema={"dataset": pl.String, "model": pl.String, "method": pl.String,
                         "field": pl.String, "accuracy": pl.Float64}).write_parquet(empty)
    code, _, err = run_cli("figure-blimp-fields", empty, "--out", tmp_path / "fig")
    assert code == 0, err
    assert b"no BLiMP results" in (tmp_path / "fig.svg").read_bytes()


def test_missing_table_is_bad_input(tmp_path, run_cli):
    code, _, err = run_cli("figure-german-roc", tmp_path / "nope.parquet", "--out", tmp_path / "f")
    assert code == 2
    assert err.strip() == f"{tmp_path / 'nope.parquet'}: no such file"
    assert not list(tmp_path.iterdir())
