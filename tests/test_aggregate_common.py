"""What every aggregate command shares: reading inputs, bad input, collected tables, help."""

from __future__ import annotations

import polars as pl
from artifact_files import rewrite, tamper

from spudflow.core.artifacts import ITEM_SCORES

from aggregate_inputs import blimp_inputs


def test_scores_of_an_unknown_item_are_bad_input(tmp_path, run_cli):
    items, scores = blimp_inputs(tmp_path, n_pairs=2)
    rewrite(scores[0], lambda f: f.with_columns(
        pl.when(pl.int_range(pl.len()) == 3).then(pl.lit("ghost"))
        .otherwise(pl.col("item_id")).alias("item_id")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 2
    assert err.strip() == f"{scores[0]}: item 'ghost' of dataset 'blimp' is in no items file"
    assert not out.exists()


def test_missing_column_and_file_are_bad_input(tmp_path, run_cli):
    items, scores = blimp_inputs(tmp_path, n_pairs=2)
    tamper(scores[0], lambda f: f.drop("logprob_sum"))
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir",
                           tmp_path / "t")
    assert code == 2
    assert err.strip() == (f"{scores[0]}: column 'logprob_sum' missing; the score stage writes "
                           f"it (item_scores v{ITEM_SCORES.version})")
    code, _, err = run_cli("table-blimp", "--items", tmp_path / "none.parquet", "--scores",
                           *scores, "--out-dir", tmp_path / "t")
    assert (code, err.strip()) == (2, f"{tmp_path / 'none.parquet'}: no such file")


def test_duplicate_score_rows_are_bad_input(tmp_path, run_cli):
    items, scores = blimp_inputs(tmp_path, n_pairs=2)
    n_rows = pl.read_parquet(scores[0]).height
    tamper(scores[0], lambda f: pl.concat([f, f.head(1)]))  # the contract refuses to write it
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir",
                           tmp_path / "t")
    assert code == 2
    assert err.strip() == (f"{scores[0]}: rows 1 and {n_rows + 1} are one row twice (item_id "
                           "'anaphor_gender_agreement-0-good', model 'lm', method 'ppl', region "
                           "None): item_scores files have one row per item_id, model, method, "
                           "region")


def test_undeclared_score_column_is_bad_input(tmp_path, run_cli):
    items, scores = blimp_inputs(tmp_path, n_pairs=2)
    tamper(scores[0], lambda f: f.with_columns(pl.lit("blimp").alias("dataset")))
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir",
                           tmp_path / "tables")
    assert (code, err.strip()) == (2, f"{scores[0]}: undeclared column(s) dataset; the score "
                                   f"stage writes it (item_scores v{ITEM_SCORES.version})")


def _nonce_stats(path, rows):
    from spudflow.core.artifacts import NONCE_STATS
    from spudflow.core.contract import write_artifact

    counts = {c.name: 10 for c in NONCE_STATS.columns if str(c.type) == "int64"}
    frame = pl.DataFrame([{"split": "test", "language": "xx", "upos": "ALL", **counts,
                           "type_token_ratio_orig": 0.5, "type_token_ratio_nonce": 0.5, **row}
                          for row in rows])
    write_artifact(frame, path, NONCE_STATS)
    return path


def test_table_collect_concatenates_and_sorts(tmp_path, run_cli):
    a = _nonce_stats(tmp_path / "a.parquet", [
        {"treebank": "ru_pud", "method": "spud", "seed": 1, "replacement_ratio": 0.4}])
    b = _nonce_stats(tmp_path / "b.parquet", [
        {"treebank": "en_pud", "method": "spud", "seed": 1, "replacement_ratio": 0.5},
        {"treebank": "en_pud", "method": "pos", "seed": 1, "replacement_ratio": 0.6}])
    code, _, err = run_cli("table-collect", a, b, "--out", tmp_path / "nonce_replacements",
                           "--caption", "Replacement ratios.")
    assert code == 0, err
    table = pl.read_parquet(tmp_path / "nonce_replacements.parquet")
    assert table.select("treebank", "method", "seed", "replacement_ratio").rows() == [
        ("en_pud", "pos", 1, 0.6), ("en_pud", "spud", 1, 0.5), ("ru_pud", "spud", 1, 0.4)]
    for ext in ("csv", "md", "tex"):
        assert (tmp_path / f"nonce_replacements.{ext}").is_file()
    assert "Replacement ratios." in (tmp_path / "nonce_replacements.tex").read_text()


def test_table_collect_writes_the_registry_table_into_out_dir_and_reads_the_old_out(
        tmp_path, run_cli, caplog):
    """--out-dir DIR, as every table command: DIR/nonce_replacements.* (the registry's table of
    nonce_stats files) with the registry's caption in the LaTeX file and the report caption
    beside it. The old --out STEM writes the same files at STEM, with a deprecation line."""
    from spudflow.core.outputs_registry import TABLE_OUTPUTS

    a = _nonce_stats(tmp_path / "a.parquet", [
        {"treebank": "ru_pud", "method": "spud", "seed": 1, "replacement_ratio": 0.4}])
    code, _, err = run_cli("table-collect", a, "--out-dir", tmp_path / "tables")
    assert code == 0, err
    caption = TABLE_OUTPUTS["nonce_replacements"].caption
    written = tmp_path / "tables" / "nonce_replacements"
    assert caption in written.with_suffix(".tex").read_text(encoding="utf-8")
    assert caption in written.with_suffix(".caption.rst").read_text(encoding="utf-8")
    assert "deprecated" not in caplog.text
    code, _, err = run_cli("table-collect", a, "--out", tmp_path / "old" / "stem")
    assert code == 0, err
    assert ("--out STEM is deprecated: use --out-dir DIR (writes DIR/nonce_replacements.*)"
            in caplog.text)
    for suffix in (".parquet", ".csv", ".md", ".tex", ".caption.rst"):
        assert (tmp_path / "old" / "stem").with_suffix(suffix).read_bytes() == \
            written.with_suffix(suffix).read_bytes(), suffix


def test_table_collect_never_fills_a_missing_column(tmp_path, run_cli):
    a = _nonce_stats(tmp_path / "a.parquet", [
        {"treebank": "ru_pud", "method": "spud", "seed": 1, "replacement_ratio": 0.4}])
    b = tamper(_nonce_stats(tmp_path / "b.parquet", [
        {"treebank": "en_pud", "method": "spud", "seed": 1, "replacement_ratio": 0.5}]),
        lambda f: f.drop("replacement_ratio"))
    code, _, err = run_cli("table-collect", a, b, "--out", tmp_path / "t", "--caption", "x")
    assert (code, err.strip()) == (2, f"{b}: column 'replacement_ratio' missing; the nonce "
                                   "stage writes it (nonce_stats v1)")
    assert not (tmp_path / "t.parquet").exists()


def test_every_aggregate_command_has_help():
    from spudflow.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    names = {"table-treebank-stats", "table-collect", "table-spud-scores", "table-german-case",
             "table-cola", "table-blimp", "table-japanese-transitivity", "table-japanese",
             "table-probe", "figure-spud-log-ratios",
             "figure-german-case-roc", "figure-probe-layers", "figure-blimp-field",
             "figure-japanese-agreement"}
    assert names <= set(commands)
    for name in names:
        assert commands[name].description and commands[name].format_help()


# The SPUD paper's tables that the captions of the treebank tables may cite (paper App. A and D:
# Table 6 the treebanks, Table 7 the replacement ratio per POS, Table 8 the type-token ratio).
PAPER_TABLES_CITED = {
    "nonce_replacements": {"7"},
    "nonce_replacement_ratio": {"7"},
    "nonce_type_token_ratio": {"8"},
    "treebank_stats": {"6"},
}


def test_report_captions_cite_the_right_paper_tables():
    """A table's report caption (its registry caption and what it reproduces) names the paper
    tables it reproduces."""
    import re

    from spudflow.core.outputs_registry import TABLE_OUTPUTS, report_caption_text

    from aggregate_inputs import REPO

    for name, tables in PAPER_TABLES_CITED.items():
        entry = TABLE_OUTPUTS[name]
        caption = report_caption_text(entry, entry.caption_text(unit="word forms", tokenized=""))
        assert set(re.findall(r"Tables? (\d+)", caption)) == tables, name
    docs = (REPO / "docs" / "aggregate.md").read_text(encoding="utf-8")
    assert "nonce_replacements.{parquet,csv,md,tex}` — Table 7" in docs
