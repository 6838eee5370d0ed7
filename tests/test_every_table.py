"""The whole pipeline on the every-table config (tests/data/workflow/every_table.yaml), end to
end through Snakemake: every dataset family (CoLA from test files in its format), every model kind
(an n-gram model, causal, masked and ELECTRA controls the pipeline trains), scoring shards, the
probe with nonce test sets and its three baselines. Every consumer reads what its producer really
wrote; every table must have rows and no number column that should hold numbers may be all null.
The statistics themselves are checked against scipy/sklearn in the test_aggregate_* files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from workflow_helpers import finished_tiny_run, snakemake_cli

from spudflow.core import outputs_registry

from aggregate_inputs import assert_table_files

# The expectations come from the registry of tables and figures (core/outputs_registry.py).
# Tables documented in other stages' pages (fed by treebanks, nonce treebanks, the human
# evaluation): all four formats, columns checked there.
OTHER_STAGES = (outputs_registry.TREEBANKS, outputs_registry.NONCE, outputs_registry.HUMAN_EVAL)
OTHER_STAGES_TABLES = tuple(o.name for o in outputs_registry.OUTPUTS
                            if o.output_type == outputs_registry.TABLE and o.feed in OTHER_STAGES)
TABLES = tuple(o.name for o in outputs_registry.OUTPUTS
               if o.output_type == outputs_registry.TABLE and o.feed not in OTHER_STAGES)
DATA_TABLES = tuple(o.name for o in outputs_registry.OUTPUTS
                    if o.output_type == outputs_registry.DATA)

# Number columns that may be null throughout on the tiny data, and why.
MAY_BE_ALL_NULL = {
    **{("probe_summary", f"{figure}_sd"): "one probe seed (a sample sd needs two)"
       for figure in ("uas", "las", "relacc", "root_acc", "delta_uas", "delta_las",
                      "delta_relacc")},
    # one probe seed; the nonce sds go over one probe seed x one nonce seed too
    **{("probe_languages", f"{part}_{metric}_sd"): "one probe seed (a sample sd needs two)"
       for part in ("orig", "nonce", "delta") for metric in ("uas", "las", "relacc")},
    # glmnet's default lambda.1se picks the intercept-only model on a few dozen pairs per mode
    # (as R's cv.glmnet does on the same folds): the intercept is the one coefficient to rank,
    # in the table of its sign; test_every_table_has_rows_and_numbers checks that it is there
    # (tests/test_aggregate_japanese.py checks ranked coefficients at lambda.min and lambda.1se)
    **{(table, column): "lambda.1se keeps only the intercept, of one sign"
       for table in ("japanese_regression_max", "japanese_regression_min")
       for column in ("rank", "coefficient", "tied_with_next")},
    # the tiny n-gram model is English: the German and Japanese items are scored by transformer
    # models only, which have no unseen words (item_scores n_unseen null)
    **{(table, "unseen_fraction"): "scored by transformer models only"
       for table in ("german_case_auc", "japanese_accuracy")},
    # a bootstrap within groups needs 5 items a group (uncertainty.MIN_GROUP_SIZE): the tiny
    # run's BLiMP paradigms and Japanese obligatory pairs are fewer (tests/test_uncertainty.py
    # and tests/test_comparison_tables.py check the intervals on larger data)
    **{(table, f"{figure}_ci_{end}"): "fewer than 5 pairs per group in the tiny run"
       for table, figure in (("blimp_overall", "paradigm_mean_accuracy"),
                             ("blimp_field", "paradigm_mean_accuracy"),
                             ("blimp_comparison", "difference"),
                             ("japanese_comparison", "difference"))
       for end in ("low", "high")},
    **{("probe_edges", f"{figure}_sd"): "one probe seed (a sample sd needs two)"
       for figure in ("fraction", "uas", "las", "relacc", "delta_uas", "delta_las",
                      "delta_relacc")},
}
# Tables that may have no rows on this run's data (their registry entry's empty_when), and why.
MAY_BE_EMPTY = {"german_case_comparison": "one scoring function (tiny_gpt2 ppl) scores the "
                "German items: no two to compare"}
FIGURES = tuple(outputs_registry.FIGURE_OUTPUTS)
MODE_KEYS = ["dataset", "model", "method", "region"]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    return finished_tiny_run(tmp_path_factory.mktemp("e2e") / "workflow", "every_table.yaml")


def _numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() and dtype != pl.Boolean


@pytest.mark.slow
def test_every_table_has_rows_and_numbers(finished_run):
    tables = finished_run / "results" / "tables"
    empty, all_null = [], []
    for name in TABLES + DATA_TABLES + OTHER_STAGES_TABLES:
        table = pl.read_parquet(tables / f"{name}.parquet")
        if table.height == 0:
            if name not in MAY_BE_EMPTY or not outputs_registry.TABLE_OUTPUTS[name].empty_when:
                empty.append(name)
            continue
        for column, dtype in table.schema.items():
            if (_numeric(dtype) and table[column].null_count() == table.height
                    and (name, column) not in MAY_BE_ALL_NULL):
                all_null.append(f"{name}.{column}")
    assert not empty, f"tables without rows: {empty}"
    assert not all_null, f"number columns that are null throughout: {all_null}"
    # every fit ranks at least its intercept, in the table of its sign
    ranked = pl.concat([pl.read_parquet(tables / f"japanese_regression_{side}.parquet")
                        for side in ("max", "min")]).drop_nulls("coefficient")
    fits = pl.read_parquet(tables / "japanese_regression.parquet").filter(
        pl.col("status") == "ok")
    assert fits.height and set(ranked.select(MODE_KEYS).rows()) == set(
        fits.select(MODE_KEYS).rows())
    assert set(ranked["feature"]) >= {"(Intercept)"}


@pytest.mark.slow
def test_cola_table_has_every_normalisation(finished_run):
    """NormLP, SLOR and Word-LP Min-1 come from the unigram model the pipeline trained; a renamed
    score column once made NormLP silently disappear from the table."""
    cola = pl.read_parquet(finished_run / "results" / "tables" / "cola_thresholds.parquet")
    assert set(cola["normalisation"]) == {"LogProb", "MeanLP", "NormLP", "SLOR",
                                          "Word-LP Min-1"}
    assert set(cola["split"]) == {"in_domain_dev", "out_of_domain_dev"}
    tables = finished_run / "results" / "tables"
    phenomena = pl.read_parquet(tables / "cola_phenomena.parquet")
    assert set(phenomena["phenomenon"]) == {"svo", "wh_extraction"}
    assert set(phenomena["normalisation"]) == set(cola["normalisation"])
    sources = pl.read_parquet(tables / "cola_sources.parquet")
    assert set(sources["source"]) == {f"t0{i}" for i in range(1, 6)} | {f"o0{i}"
                                                                         for i in range(1, 5)}


@pytest.mark.slow
def test_every_model_kind_scored_and_was_sharded(finished_run):
    scores = finished_run / "results" / "scores"
    methods = set()
    for path in scores.glob("*/*/item_scores.parquet"):
        methods |= set(pl.read_parquet(path, columns=["method"])["method"])
    assert {"kn", "addk", "ppl", "pppl", "pppl_l2r", "unmasked", "electra"} <= methods
    # tiny_trigram was scored in two shard jobs, then gathered; the transformers in one job each
    # (shards of a transformer: tests/test_scoring_invariance.py, test_scoring_pipeline.py)
    assert {p.name for p in scores.glob("*/tiny_trigram/shards/*")} == {"1-of-2", "2-of-2"}
    assert not list(scores.glob("*/tiny_gpt2/shards"))


@pytest.mark.slow
def test_every_table_and_figure_is_written(finished_run):
    tables = finished_run / "results" / "tables"
    for name in TABLES:
        assert_table_files(tables, name)
    for name in OTHER_STAGES_TABLES:
        for ext in ("parquet", "csv", "md", "tex"):
            assert (tables / f"{name}.{ext}").stat().st_size > 0
    for name in FIGURES:
        for ext in ("png", "svg"):
            assert (finished_run / "results" / "figures" / f"{name}.{ext}").stat().st_size > 1000
    # the n-gram model scored the SPUD pairs of both tiny treebanks with both of its methods
    summary = pl.read_parquet(tables / "spud_ratio_summary.parquet")
    assert summary.height > 0
    # the control model the pipeline trained scored the SPUD pairs of both languages
    control = summary.filter(pl.col("model") == "tiny_bert")
    assert set(control["method"]) == {"pppl", "pppl_l2r", "unmasked"}
    assert set(control["dataset"]) == {"spud_tiny_en_test", "spud_tiny_de_test"}
    # every_table.yaml's thresholds at 1: outliers dropped (§4.4), both outlier tables (12–13)
    assert summary.filter(pl.col("outliers") == "removed")["n_dropped"].sum() > 0
    outliers = pl.read_parquet(tables / "spud_outliers.parquet")
    assert set(outliers["extreme"]) == {"above", "below"}
    assert set(outliers["ppl_model"]) == {"tiny_gpt2"} and set(outliers["mlm_model"]) == {
        "tiny_bert"}
    blimp = pl.read_parquet(tables / "blimp_overall.parquet")
    assert blimp.height > 0
    # the tiny BERT and its three baselines were probed on the held-out halves of tiny_en and
    # tiny_de (trained on the other halves) and their nonce versions
    probe = pl.read_parquet(tables / "probe_summary.parquet")
    assert set(zip(probe["treebank"], probe["baseline"], probe["eval_set"], strict=True)) == {
        (t, b, e) for t in ("tiny_en", "tiny_de") for b in ("lm", "M0", "MR", "MRC")
        for e in ("orig", "spud", "pos")}
    assert probe.filter(pl.col("eval_set") != "orig")["delta_las_mean"].null_count() == 0
    languages = pl.read_parquet(tables / "probe_languages.parquet")
    assert set(zip(languages["treebank"], languages["baseline"], languages["nonce"],
                   strict=True)) == {
        (t, b, e) for t in ("tiny_en", "tiny_de") for b in ("lm", "M0", "MR", "MRC")
        for e in ("spud", "pos")}
    # per treebank: the LM at its configured pair (tiny_en (1, auto), tiny_de (1, 2)) and the
    # sweep's (0,0), (1,1), (2,2) (auto runs the sweep, tiny_de's layer_sweep), M0, MR and MRC:
    # 7 x 2 nonce methods
    assert languages.height == 2 * 7 * 2


@pytest.mark.slow
def test_report_holds_the_tables_and_figures(finished_run):
    result = snakemake_cli("--report", "results/report.html", cwd=finished_run)
    assert result.returncode == 0, result.stderr[-3000:]
    html = (finished_run / "results" / "report.html").read_text(encoding="utf-8")
    for text in ("treebank_stats.csv", "spud_log_ratios.svg", "german_case_auc.csv",
                 "blimp_overall.csv", "tiny_trigram", "japanese_agreement_graph.svg",
                 "japanese_regression_max.csv", "japanese_length_correlation.csv",
                 # a table's caption, from its registry entry, as its command filled it
                 "BLiMP accuracy per field. Intervals at 0.95",
                 "Reproduces: BLiMP, accuracy per field."):
        assert text in html, text


@pytest.mark.slow
def test_front_page_shows_every_headline(finished_run):
    """results/index.html: one headline table per paper, with the full tables' own numbers."""
    from test_front_page import as_grid, fmt, read_page

    def with_interval(row, name):
        low, high = row[f"{name}_ci_low"], row[f"{name}_ci_high"]
        return fmt(row[name]) + ("" if low is None else f" [{fmt(low)}, {fmt(high)}]")

    page = finished_run / "results" / "index.html"
    sections = read_page(page)
    tables = finished_run / "results" / "tables"
    assert set(sections) == {"spud_ratio_summary", "probe_languages", "german_case_auc",
                             "cola_thresholds", "blimp_overall", "japanese_accuracy",
                             "human_eval_grammaticality"}
    for name, section in sections.items():
        assert len(section["rows"]) >= 2, name  # a header and at least one row
        assert f"tables/{name}.csv" in section["links"], name
    for href in {h for s in sections.values() for h in s["links"]} - {"report.html"}:
        assert (page.parent / href).is_file(), href

    japanese = pl.read_parquet(tables / "japanese_accuracy.parquet").filter(
        pl.col("region").is_null())
    header, *body = sections["japanese_accuracy"]["rows"]
    for row in japanese.iter_rows(named=True):
        line = next(r for r in body if r[:2] == [row["dataset"],
                                                 f"{row['model']} · {row['method']}"])
        accuracy = row["accuracy_obligatory"]  # null without obligatory contexts: "n/a"
        assert accuracy is not None or row["n_obligatory"] == 0
        # the accuracy with its Wilson interval in one cell
        assert line[header.index("accuracy_obligatory")] == ("n/a" if accuracy is None else (
            f"{fmt(accuracy)} [{fmt(row['accuracy_obligatory_ci_low'])}, "
            f"{fmt(row['accuracy_obligatory_ci_high'])}]"))
        assert line[header.index("n_ties")] == str(row["n_ties_obligatory"])
    # Table 1 of the human evaluation; the committed sheets fit the kit: no stale items, no red
    # line
    human = pl.read_parquet(tables / "human_eval_grammaticality.parquet").row(0, named=True)
    grid = as_grid(sections["human_eval_grammaticality"]["rows"])
    assert human["stale_items"] == 0 and human["status"] == "ok"
    for column in ("spud_yes", "posfree_no", "kappa"):
        assert grid[(human["language"], column)] == fmt(human[column])
    assert "annotation sheets are stale" not in page.read_text(encoding="utf-8")
    cola = pl.read_parquet(tables / "cola_thresholds.parquet")
    # a row per split and scoring function, one table (its columns fit the page)
    assert len(sections["cola_thresholds"]["tables"]) == 1
    header, *body = sections["cola_thresholds"]["rows"]
    assert header == ["split", "scoring_function", "mcc", "unseen", "tied"]
    assert len(body) == cola.height
    lines = {(line[0], line[1]): line for line in body}
    for row in cola.iter_rows(named=True):
        line = lines[(row["split"], f"{row['model']} · {row['method']} · {row['normalisation']}")]
        # null for a split of one class (CoLA item 12): the page shows "n/a"; else the MCC with
        # its bootstrap interval in one cell
        mcc, low, high = row["mcc"], row["mcc_ci_low"], row["mcc_ci_high"]
        assert low is not None or mcc is None
        assert line[2] == ("n/a" if mcc is None else f"{fmt(mcc)} [{fmt(low)}, {fmt(high)}]")
        assert line[3:] == ["n/a" if row[f] is None else fmt(row[f])
                            for f in ("unseen_fraction", "tie_fraction")]
    languages = pl.read_parquet(tables / "probe_languages.parquet")
    body = sections["probe_languages"]["rows"]
    header = body[0]
    for row in languages.iter_rows(named=True):
        layers = f"{row['dist_layer']}/{row['label_layer']}" + (" (auto)" * row["auto_layers"])
        line = next(r for r in body[1:]
                    if r[:4] == [row["treebank"], row["model"], row["baseline"], layers])
        # each figure with its interval over the test sentences
        assert line[header.index("LAS orig")] == \
            ("n/a" if row["orig_las_mean"] is None else with_interval(row, "orig_las_mean"))
        if row["nonce"] is not None:
            assert line[header.index(f"Δ LAS {row['nonce']}")] == \
                with_interval(row, "delta_las_mean")
    assert {r[0] for r in body[1:]} == {"tiny_en", "tiny_de"}  # one row group per language


@pytest.mark.slow
def test_auto_label_layer_is_chosen_and_used(finished_run):
    """label_layer: auto in tiny_en (every_table.yaml): the sweep's choice is marked in
    probe_layers and the auto runs (model, MR, MRC) use it; tiny_de's sweep (layer_sweep, its
    pair 1/2 fixed) is in the table with no choice."""
    tables = finished_run / "results" / "tables"
    layers = pl.read_parquet(tables / "probe_layers.parquet")
    assert set(layers["treebank"]) == {"tiny_en", "tiny_de"}
    # one choice per task with `auto`, marked on its dev, orig and nonce rows
    task = layers.filter(pl.col("treebank") == "tiny_en")
    assert task.filter(pl.col("label_chosen"))["layer"].n_unique() == 1
    assert task["dist_chosen"].sum() == 4  # the sweep's best distance layer, unused
    swept = layers.filter(pl.col("treebank") == "tiny_de")
    assert set(swept["layer"]) == {0, 1, 2}
    assert not swept["label_chosen"].any() and not swept["dist_chosen"].any()
    chosen = layers.filter(pl.col("label_chosen"))["layer"].unique().to_list()
    assert set(layers["eval_set"]) == {"dev", "orig", "spud", "pos"}
    summary = pl.read_parquet(tables / "probe_summary.parquet").filter(pl.col("auto_layers"))
    assert set(summary["baseline"]) == {"lm", "MR", "MRC"} and set(summary["treebank"]) == {
        "tiny_en"}
    assert set(summary["label_layer"]) == set(chosen) and set(summary["dist_layer"]) == {1}
    edges = pl.read_parquet(tables / "probe_edges.parquet")
    assert set(edges["direction"]) == {"left", "right", "root"}
