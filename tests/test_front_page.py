"""The report's front page (results/index.html): each headline table holds the full table's own
numbers, cut as the caption says; sections without tables say so; links lead to existing files.
The whole run's page is checked in test_every_table.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from aggregate_inputs import blimp_inputs, spud_inputs


class PageTables(HTMLParser):
    """Per <section id>: its headline table as lists of rows of cell texts (`rows`), every table
    of the section (`tables`: the headline, then any table under it), and its links."""

    def __init__(self):
        super().__init__()
        self.sections: dict[str, dict] = {}
        self.current = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.current = self.sections.setdefault(attrs["id"], {"rows": [], "links": [],
                                                                  "tables": []})
        elif self.current is not None and tag == "table":
            self.current["tables"].append(self.current["rows"] if not self.current["tables"]
                                          else [])
        elif self.current is not None and tag == "tr":
            self.current["tables"][-1].append([])
        elif self.current is not None and tag in ("td", "th"):
            self.cell = ""
        elif self.current is not None and tag == "a":
            self.current["links"].append(attrs["href"])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.current["tables"][-1][-1].append(self.cell)
            self.cell = None
        elif tag == "section":
            self.current = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        elif self.current is not None:
            self.current.setdefault("text", "")
            self.current["text"] += data


def read_page(path: Path) -> dict[str, dict]:
    parser = PageTables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.sections


def as_grid(rows: list[list[str]]) -> dict[tuple[str, str], str]:
    """{(first cell of the row, column header): cell} of a headline table."""
    header, *body = rows
    return {(row[0], column): cell
            for row in body for column, cell in zip(header, row, strict=True)}


def fmt(value: float) -> str:
    return f"{value:.3f}"


@pytest.fixture
def tables(tmp_path, run_cli) -> Path:
    """The SPUD and BLiMP tables the real aggregate commands write from scored items."""
    out = tmp_path / "results" / "tables"
    items, scores = spud_inputs(tmp_path / "spud")
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 0, err
    items, scores = blimp_inputs(tmp_path / "blimp")
    code, _, err = run_cli("table-blimp", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    return out


def test_headlines_are_the_full_tables_numbers(tables, run_cli):
    page = tables.parent / "index.html"
    code, _, err = run_cli("front-page", "--table",
                           f"spud_ratio_summary={tables / 'spud_ratio_summary.parquet'}",
                           "--table", f"blimp_overall={tables / 'blimp_overall.parquet'}",
                           "--out", page)
    assert code == 0, err
    sections = read_page(page)

    summary = pl.read_parquet(tables / "spud_ratio_summary.parquet")
    combined = summary.filter((pl.col("nonce_method") == "spud") & (pl.col("nonce_seed") == "all")
                              & (pl.col("outliers") == "kept"))
    header, *body = sections["spud_ratio_summary"]["rows"]
    assert header[:2] == ["language", "model"]
    cells = {(r[0], r[1], method): cell for r in body
             for method, cell in zip(header[2:], r[2:], strict=True)}
    assert len(body) == combined.select("language", "model").n_unique()
    # the headline's `all` rows are spudflow's, not the paper's one instance (§4.3)
    assert "spudflow's extension" in sections["spud_ratio_summary"]["text"]
    assert "one SPUD instance per sentence (§4.3)" in sections["spud_ratio_summary"]["text"]
    for row in combined.iter_rows(named=True):  # each median with its interval over originals
        expected = fmt(row["ratio_median"]) if row["ratio_median_ci_low"] is None else (
            f"{fmt(row['ratio_median'])} [{fmt(row['ratio_median_ci_low'])}, "
            f"{fmt(row['ratio_median_ci_high'])}]")
        assert cells[(row["language"], row["model"], row["method"])] == expected

    blimp = pl.read_parquet(tables / "blimp_overall.parquet")
    header, *body = sections["blimp_overall"]["rows"]
    assert header[4:6] == ["accuracy", "n_ties"]  # ties beside every accuracy
    # the interval beside the accuracy, in its cell: "0.731 [0.702, 0.759]"
    assert [(r[1], r[2], r[4], r[5]) for r in body] == [
        (m, meth, f"{fmt(a)} [{fmt(low)}, {fmt(high)}]", str(t)) for m, meth, a, low, high, t in
        blimp.sort("model", "method").select("model", "method", "accuracy", "accuracy_ci_low",
                                             "accuracy_ci_high", "n_ties").iter_rows()]
    assert "Wilson score interval" in sections["blimp_overall"]["text"]
    assert "count as wrong" in sections["blimp_overall"]["text"]

    # papers without tables in this run say so; every link but the report's leads to a file
    for absent in ("probe_languages", "german_case_auc", "cola_thresholds", "japanese_accuracy"):
        assert "Not in this run" in sections[absent]["text"]
    links = [href for s in sections.values() for href in s["links"]]
    assert "spud_ratio_summary.csv" in " ".join(links)
    for href in links:
        assert (page.parent / href).is_file(), href


def test_the_same_tables_give_the_same_page(tables, run_cli):
    pages = []
    for name in ("a.html", "b.html"):
        code, _, err = run_cli("front-page", "--table",
                               f"blimp_overall={tables / 'blimp_overall.parquet'}",
                               "--out", tables.parent / name)
        assert code == 0, err
        pages.append((tables.parent / name).read_bytes())
    assert pages[0] == pages[1]


def test_a_table_outside_the_pages_folder_is_linked_with_a_relative_path(tables, run_cli):
    """A table beside, not below, the page's folder: linked by `../` (a traceback before:
    relative_to refused a path outside the folder)."""
    page = tables.parent / "site" / "index.html"
    code, _, err = run_cli("front-page", "--table",
                           f"blimp_overall={tables / 'blimp_overall.parquet'}", "--out", page)
    assert code == 0, err
    links = read_page(page)["blimp_overall"]["links"]
    assert "../tables/blimp_overall.csv" in links
    for href in links:
        assert (page.parent / href).is_file(), href


def test_a_table_without_a_section_is_refused(tables, run_cli, capsys):
    with pytest.raises(SystemExit) as stop:
        run_cli("front-page", "--table", f"spud_wilcoxon={tables / 'spud_wilcoxon.parquet'}",
                "--out", tables.parent / "index.html")
    assert stop.value.code == 2
    assert "'spud_wilcoxon': the front page has no section for it" in capsys.readouterr().err
    assert not (tables.parent / "index.html").exists()


def test_a_table_of_another_artifact_is_bad_input(tables, run_cli):
    code, _, err = run_cli("front-page", "--table",
                           f"spud_ratio_summary={tables / 'blimp_overall.parquet'}",
                           "--out", tables.parent / "index.html")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert not (tables.parent / "index.html").exists()


def test_japanese_headline_shows_the_ties_beside_the_accuracy(tmp_path, run_cli):
    """The default run's Japanese trigram: accuracy 0.026 with 189 of 194 obligatory pairs
    tied. Without the ties it reads as "prefers the wrong verb"."""
    from spudflow.core.table_artifacts import TABLES
    from spudflow.core.tables import write_table

    accuracy = pl.DataFrame({
        "dataset": ["japanese_base"] * 2, "model": ["trigram"] * 2, "method": ["kn"] * 2,
        "region": [None, "verb"], "decision": ["perplexity"] * 2, "status": ["ok"] * 2,
        "reason": [None, None], "n_obligatory": [194, 194],
        "accuracy_obligatory": [5 / 194, 0.5], "accuracy_obligatory_ci_low": [0.011, 0.43],
        "accuracy_obligatory_ci_high": [0.059, 0.57], "accuracy_obligatory_stderr": [0.011, 0.036],
        "n_ties_obligatory": [189, 0],
        "n_ambiguous": [10, 10], "transitive_rate_ambiguous": [0.0, 0.5], "n_ties": [199, 0],
        "tie_fraction_obligatory": [189 / 194, 0.0], "unseen_fraction": [0.62, 0.4]})
    write_table(accuracy, tmp_path / "japanese_accuracy", TABLES["japanese_accuracy"])
    page = tmp_path / "index.html"
    code, _, err = run_cli("front-page", "--table",
                           f"japanese_accuracy={tmp_path / 'japanese_accuracy.parquet'}",
                           "--out", page)
    assert code == 0, err
    section = read_page(page)["japanese_accuracy"]
    header, *body = section["rows"]
    assert header == [
        "dataset", "scoring_function", "n_obligatory", "accuracy_obligatory", "n_ties", "unseen",
        "tied"]
    assert body == [["japanese_base", "trigram · kn", "194", f"{fmt(5 / 194)} [0.011, 0.059]",
                     "189", "0.620",
                     fmt(189 / 194)]]
    assert "count as wrong" in section["text"]
    # and a line saying why the accuracy is far below chance
    assert ("japanese_base: trigram · kn: 97% of its pairs tied, 62% of the words it scored "
            "never seen in training; it decides mostly by ties and unseen words") in \
        section["text"]


def test_probe_headline_puts_each_nonce_methods_drop_beside_the_original_las():
    from spudflow.aggregate.front_page import probe_headline

    keys = {"treebank": ["en_ewt"] * 3, "model": ["bert"] * 3, "baseline": ["lm"] * 3,
            "dist_layer": [6] * 3, "label_layer": [7] * 3, "auto_layers": [True] * 3,
            "orig_las_mean": [0.8] * 3, "orig_las_mean_ci_low": [0.75] * 3,
            "orig_las_mean_ci_high": [0.85] * 3}
    languages = pl.DataFrame({**keys, "nonce": ["spud", "random", None],
                              "delta_las_mean": [0.1, 0.3, None],
                              "delta_las_mean_ci_low": [0.05, None, None],
                              "delta_las_mean_ci_high": [0.15, None, None]})
    headline = probe_headline(languages)
    assert headline.columns == ["treebank", "model", "baseline", "layers", "LAS orig",
                                "Δ LAS random", "Δ LAS spud"]
    # each figure with its interval over the test sentences (the figure alone without one)
    assert headline.rows() == [("en_ewt", "bert", "lm", "6/7 (auto)", "0.800 [0.750, 0.850]",
                                "0.300", "0.100 [0.050, 0.150]")]
    # no nonce rows (a probe of the original sentences only): the original LAS alone
    alone = probe_headline(languages.filter(pl.col("nonce").is_null())
                           .with_columns(pl.lit(False).alias("auto_layers")))
    assert alone.rows() == [("en_ewt", "bert", "lm", "6/7", "0.800 [0.750, 0.850]")]


def test_cola_and_german_headlines_cut_their_tables_as_captioned():
    from spudflow.aggregate.front_page import cola_headline, german_headline

    # a row per split and scoring function (ten of them as columns outgrew the page)
    thresholds = pl.DataFrame({"split": ["test", "dev", "dev"], "model": ["gpt2"] * 3,
                               "method": ["sum"] * 3, "normalisation": ["raw", "slor", "raw"],
                               "mcc": [0.3, 0.2, 0.1], "mcc_ci_low": [0.2, None, 0.05],
                               "mcc_ci_high": [0.4, None, 0.15], "unseen_fraction": [0.5] * 3,
                               "tie_fraction": [0.0, 0.25, 0.125]})
    assert cola_headline(thresholds).rows() == [
        ("dev", "gpt2 · sum · raw", "0.100 [0.050, 0.150]", 0.5, 0.125),
        ("dev", "gpt2 · sum · slor", "0.200", 0.5, 0.25),
        ("test", "gpt2 · sum · raw", "0.300 [0.200, 0.400]", 0.5, 0.0)]
    assert cola_headline(thresholds.clear()).columns == [
        "split", "scoring_function", "mcc", "unseen", "tied"]
    auc = pl.DataFrame({"analysis": ["all", "template", "all"], "dataset": ["dc"] * 3,
                        "model": ["m2", "m1", "m1"], "method": ["sum"] * 3,
                        "n_templates": [4, 4, 4], "auc_mean": [0.7, 0.9, 0.6],
                        "auc_mean_ci_low": [0.6, 0.8, None], "auc_mean_ci_high": [0.8, 1.0, None],
                        "auc_sd": [0.1, 0.0, 0.2], "tie_fraction": [0.0, 0.1, 0.9],
                        "unseen_fraction": [None, 0.3, 0.3]})
    assert german_headline(auc).rows() == [("dc", "m1", "sum", 4, "0.600", 0.2, 0.3, 0.9),
                                           ("dc", "m2", "sum", 4, "0.700 [0.600, 0.800]", 0.1,
                                            None, 0.0)]


def test_a_cell_is_na_when_missing_and_large_numbers_keep_three_digits():
    from spudflow.aggregate.front_page import _cell

    assert (_cell(None), _cell(0.12345), _cell(123456.0), _cell("<b>")) == (
        "n/a", "0.123", "1.23e+05", "&lt;b&gt;")


def test_a_table_with_no_headline_rows_says_so(tables, tmp_path):
    """A SPUD summary without the combined-seed rows (one nonce seed): a line, not a table."""
    from spudflow.aggregate.front_page import front_page
    from spudflow.core.table_artifacts import TABLES
    from spudflow.core.tables import write_table

    summary = pl.read_parquet(tables / "spud_ratio_summary.parquet")
    write_table(summary.filter(pl.col("nonce_seed") != "all"), tmp_path / "spud_ratio_summary",
                TABLES["spud_ratio_summary"])
    page = front_page({"spud_ratio_summary": tmp_path / "spud_ratio_summary.parquet"}, {},
                      tmp_path)
    section = page[page.index('<section id="spud_ratio_summary">'):]
    section = section[:section.index("</section>")]
    assert "The full table has no rows for this headline." in section
    assert "<table>" not in section and 'href="spud_ratio_summary.csv"' in section


def test_front_page_refuses_a_figure_no_section_links():
    from spudflow.aggregate.front_page import front_page

    with pytest.raises(ValueError, match="no front-page section for 'german_case_order_auc'"):
        front_page({}, {"german_case_order_auc": Path("x.svg")}, Path("."))


def test_rows_that_could_not_be_computed_are_counted_not_shown(tmp_path, run_cli):
    """A CoLA split whose numbers could not be computed (status `skipped`: one scored item)
    is left out of the headline, and a line under it counts such rows; the other split's MCCs
    are shown."""
    from spudflow.aggregate.front_page import front_page
    from spudflow.core.artifacts import ITEM_SCORES
    from spudflow.core.contract import write_artifact

    from aggregate_inputs import cola_inputs

    items, scores = cola_inputs(tmp_path / "cola", n_per_split=20)
    frame = pl.read_parquet(scores[0])
    kept = ~pl.col("item_id").str.starts_with("out_of_domain_dev") | (
        pl.col("item_id") == "out_of_domain_dev-0")
    write_artifact(frame.filter(kept), scores[0], ITEM_SCORES)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    page = tmp_path / "index.html"
    page.write_text(front_page({"cola_thresholds": out / "cola_thresholds.parquet"}, {},
                               tmp_path), encoding="utf-8")
    section = read_page(page)["cola_thresholds"]
    assert section["rows"][0][:3] == ["split", "scoring_function", "mcc"]
    assert {row[0] for row in section["rows"][1:]} == {"in_domain_dev"}
    assert "Not shown: 5 rows whose numbers could not be computed (5 skipped)" in " ".join(
        section["text"].split())


def test_stale_annotation_sheets_get_a_red_line(tmp_path):
    """A human-evaluation kit whose filled sheets are stale for some items: its headline shows
    the numbers over the other items, and a red line above it says for how many items the sheets
    are stale and where to re-annotate them; a kit without stale items gets no such line."""
    from spudflow.aggregate.front_page import front_page
    from spudflow.core.table_artifacts import TABLES
    from spudflow.core.tables import write_table

    artifact = TABLES["human_eval_grammaticality"]
    row = dict.fromkeys(artifact.polars_schema().names(), 50.0)
    row.update(treebank="en_ewt", split="test", language="en", annotators=2, sentences=39,
               kappa=0.4, agreement=0.7, stale_items=2, status="ok", reason=None,
               stale="annotator1, item 5: original changed; annotator2, item 9: original changed")
    for stale, items in ((True, 2), (False, 0)):
        row.update(stale_items=items, stale=row["stale"] if stale else None)
        write_table(pl.DataFrame([row], schema=artifact.polars_schema()), tmp_path / "t",
                    artifact)
        page = tmp_path / "index.html"
        page.write_text(front_page({"human_eval_grammaticality": tmp_path / "t.parquet"}, {},
                                   tmp_path), encoding="utf-8")
        section = read_page(page)["human_eval_grammaticality"]
        assert as_grid(section["rows"])["en", "spud_yes"] == "50.000"
        text = " ".join(section["text"].split())
        line = ("en_ewt test: the filled annotation sheets are stale for 2 items (annotator1, "
                "item 5: original changed; annotator2, item 9: original changed)")
        assert (line in text) is stale
        assert ("re-annotate them with the new blank sheet" in text) is stale


# The plain-text German paper's labels (FIGREF16, TABREF18, …) mean nothing to a reader holding
# the published paper; only docs/ keeps them, beside a description.
PLAIN_TEXT_LABEL = re.compile("(FIG|TAB)" + "REF[0-9]+")


def test_the_page_names_no_plain_text_paper_label(tables, run_cli):
    page = tables.parent / "index.html"
    code, _, err = run_cli("front-page", "--table",
                           f"spud_ratio_summary={tables / 'spud_ratio_summary.parquet'}",
                           "--out", page)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "German case paper" in html  # the section of the paper whose labels these were
    assert not PLAIN_TEXT_LABEL.search(html)
