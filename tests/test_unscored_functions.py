"""A scoring function none of whose scores is usable (every figure NaN, as a float16 overflow
leaves them in item_scores) does not stop a table command: its rows carry the reason (status
`skipped`), the command exits 0, and the front page shows a red line for it. Bad input (a file
that breaks its contract) still exits 2."""

from __future__ import annotations

import polars as pl
import pytest
from artifact_files import rewrite, tamper
from test_front_page import read_page

from aggregate_inputs import (
    blimp_inputs,
    cola_inputs,
    german_case_inputs,
    japanese_inputs,
    spud_inputs,
)

FIGURES = ["logprob_sum", "ppl", "mean_logprob", "slor", "word_lp_min1", "normlp"]


def _nan(path, model: str | None = None, method: str | None = None):
    """The score file with every figure NaN (of one scoring function, or all)."""
    def change(frame: pl.DataFrame) -> pl.DataFrame:
        this = pl.lit(True)
        if model:
            this = this & (pl.col("model") == model)
        if method:
            this = this & (pl.col("method") == method)
        return frame.with_columns(
            [pl.when(this).then(float("nan")).otherwise(pl.col(c)).alias(c) for c in FIGURES])
    return rewrite(path, change)


def test_spud_scores_all_nan_are_rows_with_their_reason(tmp_path, run_cli):
    """Before: exit 2, `no scored pair of an original and a nonce sentence`."""
    items, scores = spud_inputs(tmp_path, n_groups=6)
    for path in scores:
        _nan(path)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 0, err
    summary = pl.read_parquet(out / "spud_ratio_summary.parquet")
    assert summary.select("nonce_method", "model", "method", "status", "n_pairs").rows() == [
        ("pos", "bert", "pppl", "skipped", 0), ("pos", "bert", "pppl_l2r", "skipped", 0),
        ("pos", "gpt", "ppl", "skipped", 0), ("spud", "bert", "pppl", "skipped", 0),
        ("spud", "bert", "pppl_l2r", "skipped", 0), ("spud", "gpt", "ppl", "skipped", 0)]
    assert set(summary["reason"]) == {
        "no usable score: of 18 score rows, 18 NaN (e.g. a float16 overflow)"}
    assert summary["ratio_median"].null_count() == summary.height
    assert pl.read_parquet(out / "spud_ratios.parquet").is_empty()

    from spudflow.aggregate.front_page import front_page

    page = tmp_path / "index.html"
    page.write_text(front_page({"spud_ratio_summary": out / "spud_ratio_summary.parquet"}, {},
                               tmp_path), encoding="utf-8")
    html = page.read_text(encoding="utf-8")
    red = [line for line in html.split("<p ") if "#b00020" in line]
    assert len(red) == 3
    assert ("spud_en, gpt · ppl: no usable score: of 18 score rows, 18 NaN (e.g. a float16 "
            "overflow)</p>") in red[2]
    assert "Not shown: 6 rows" in " ".join(read_page(page)["spud_ratio_summary"]["text"].split())


def test_one_scoring_function_all_nan_beside_usable_ones(tmp_path, run_cli):
    """The others' rows are computed as before (status ok); the NaN one's say why."""
    items, scores = spud_inputs(tmp_path, n_groups=6)
    out = tmp_path / "before"
    assert run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                   "--out-dir", out)[0] == 0
    gpt = next(p for p in scores if p.parent.name == "gpt")
    _nan(gpt)
    after = tmp_path / "after"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", after)
    assert code == 0, err
    old = pl.read_parquet(out / "spud_ratio_summary.parquet")
    new = pl.read_parquet(after / "spud_ratio_summary.parquet")
    assert set(old["status"]) == {"ok"} and old["reason"].null_count() == old.height
    assert new.filter(pl.col("model") != "gpt").equals(old.filter(pl.col("model") != "gpt"))
    assert new.filter(pl.col("model") == "gpt").select("nonce_method", "status").rows() == [
        ("pos", "skipped"), ("spud", "skipped")]


@pytest.mark.parametrize("command, inputs, table, keys", [
    ("table-blimp", blimp_inputs, "blimp_overall", ["model", "method", "status", "n_pairs"]),
    ("table-german-case", german_case_inputs, "german_case_auc",
     ["model", "method", "analysis", "status", "n_templates"]),
    ("table-cola", cola_inputs, "cola_thresholds", ["model", "method", "split", "status",
                                                    "n_items"]),
])
def test_other_tables_all_nan(tmp_path, run_cli, command, inputs, table, keys):
    """Before: exit 2 (`no BLiMP pair with both sentences scored`, `no scored German case
    item`, `no CoLA item with a label and a score`)."""
    items, scores = inputs(tmp_path)
    for path in scores:
        _nan(path)
    out = tmp_path / "tables"
    code, _, err = run_cli(command, "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    rows = pl.read_parquet(out / f"{table}.parquet")
    assert rows.height and set(rows["status"]) == {"skipped"}
    assert all(r.startswith("no usable score: of ") for r in rows["reason"])
    assert set(rows.select(keys).rows()[0][len(keys) - 2:]) == {"skipped", 0}


def test_bad_input_still_stops_the_command(tmp_path, run_cli):
    """All-NaN scores are rows; a score file that breaks its contract is still exit 2."""
    items, scores = spud_inputs(tmp_path, n_groups=4)
    for path in scores:
        _nan(path)
    tamper(scores[0], lambda f: f.drop("ppl"))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 2
    assert err.strip().startswith(f"{scores[0]}: column 'ppl' missing")
    assert not out.exists()


JAPANESE_TABLES = ("japanese_agreement", "japanese_regression", "japanese_regression_max",
                   "japanese_regression_min", "japanese_length_correlation",
                   "japanese_length_perplexity")


def _japanese(run_cli, items, scores, out, *options):
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores,
                           "--out-dir", out, "--folds", 3, "--seed", 1, "--top", 4, *options)
    assert code == 0, err
    return err


def test_japanese_all_nan_are_rows_with_their_reason(tmp_path, run_cli):
    """Before: exit 2, `no Japanese pair with both sentences scored`. Each mode (whole sentence,
    verb only) has its japanese_accuracy row, `skipped` with the reason; the other tables have
    no row of it; the front page shows a red line per scoring function."""
    items, scores = japanese_inputs(tmp_path)
    for path in scores:
        _nan(path)
    out = tmp_path / "tables"
    _japanese(run_cli, items, scores, out)
    accuracy = pl.read_parquet(out / "japanese_accuracy.parquet")
    assert accuracy.select("model", "method", "region", "decision", "status", "n_obligatory",
                           "n_ties").rows() == [
        ("bert", "pppl", None, "perplexity", "skipped", 0, 0),
        ("bert", "pppl", "verb", "perplexity", "skipped", 0, 0),
        ("gpt", "ppl", None, "perplexity", "skipped", 0, 0)]
    assert accuracy["reason"].to_list() == [
        "no usable score: of 144 score rows, 144 NaN (e.g. a float16 overflow)",
        "no usable score: of 144 score rows, 144 NaN (e.g. a float16 overflow)",
        "no usable score: of 144 score rows, 144 NaN (e.g. a float16 overflow)"]
    assert accuracy["accuracy_obligatory"].null_count() == accuracy.height
    for name in JAPANESE_TABLES:
        assert pl.read_parquet(out / f"{name}.parquet").is_empty(), name

    from spudflow.aggregate.front_page import front_page

    page = tmp_path / "index.html"
    page.write_text(front_page({"japanese_accuracy": out / "japanese_accuracy.parquet"}, {},
                               tmp_path), encoding="utf-8")
    html = page.read_text(encoding="utf-8")
    red = [line for line in html.split("<p ") if "#b00020" in line]
    assert len(red) == 2  # bert · pppl (both its modes say the same) and gpt · ppl
    assert ("japanese_base, gpt · ppl: no usable score: of 144 score rows, 144 NaN (e.g. a "
            "float16 overflow)</p>") in red[1]
    assert "Not shown: 3 rows" in " ".join(read_page(page)["japanese_accuracy"]["text"].split())


def test_japanese_one_function_all_nan_is_left_out_of_the_other_tables(tmp_path, run_cli,
                                                                        caplog):
    """The other modes' rows are the same as without it; its accuracy row says why, and the
    regression, agreement and length tables leave it out with a line in the log, even where
    --agreement-mode names it."""
    items, scores = japanese_inputs(tmp_path)
    before = tmp_path / "before"
    _japanese(run_cli, items, scores, before)
    _nan(next(p for p in scores if p.parent.name == "gpt"))
    after = tmp_path / "after"
    caplog.set_level("WARNING")
    _japanese(run_cli, items, scores, after, "--agreement-mode", "bert/pppl",
              "--agreement-mode", "bert/pppl@verb", "--agreement-mode", "gpt/ppl")
    old = pl.read_parquet(before / "japanese_accuracy.parquet")
    new = pl.read_parquet(after / "japanese_accuracy.parquet")
    assert set(old["status"]) == {"ok"} and old["reason"].null_count() == old.height
    assert new.filter(pl.col("model") != "gpt").equals(old.filter(pl.col("model") != "gpt"))
    assert new.filter(pl.col("model") == "gpt").select("status", "n_obligatory").rows() == [
        ("skipped", 0)]
    for name in JAPANESE_TABLES:
        old, new = (pl.read_parquet(d / f"{name}.parquet") for d in (before, after))
        if name == "japanese_agreement":
            gpt = pl.col("mode_a").str.starts_with("gpt") | pl.col("mode_b").str.starts_with("gpt")
        else:
            gpt = pl.col("model") == "gpt"
        assert old.filter(gpt).height and not new.filter(gpt).height, name
        assert new.equals(old.filter(~gpt)), name
    assert ("japanese_base, gpt/ppl: no usable score: of 144 score rows, 144 NaN (e.g. a float16 "
            "overflow); left out of japanese_agreement, japanese_regression (max, min) and "
            "japanese_length_*") in caplog.text
