"""The German case paper's breakdowns: the reference's 1-vs-6 AUC by case order and first case (the
word-order figure) and by the animacy of the NP in each case (the animacy table), the other
word-order readings, violation types on the plausible sentences only (the plausible-sentences
table), and the word-order and per-template AUC figures. Inputs are what the real stages write:
`spudflow items german-case` on four shipped templates, scored by `spudflow score` with a tiny GPT-2
(WordPiece: every sentence fits its 48 positions). Expected values are recomputed here with sklearn
from the template TSV and the
items' cases/positions (tests/test_german_case_reference.py checks the same tables against the
reference's own numbers)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import polars as pl
import pytest
from artifact_files import rewrite
from sklearn.metrics import roc_auc_score

from spudflow.cli import main

from aggregate_inputs import REPO, assert_table_files

SHIPPED = REPO / "config" / "templates" / "german_case.tsv"
# Animacy of np1 np2 np3 (nominative, dative, accusative in the template): 110, 010, 111, 100.
TEMPLATES = ("t01", "t43", "t31", "t45")
NAD = "NAD"


def _template_rows() -> tuple[str, dict[str, str]]:
    lines = [line for line in SHIPPED.read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    header, rows = lines[0], {line.split("\t")[0]: line for line in lines[1:]}
    return header, {t: rows[t] for t in TEMPLATES}


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """(scored items joined with their template's np animacy flags, tables directory, items
    file, item_scores file)."""
    from scoring_models import tiny_model_dir

    root = tmp_path_factory.mktemp("german_paper")
    header, rows = _template_rows()
    templates = root / "templates.tsv"
    templates.write_text("\n".join([header, *rows.values()]) + "\n", encoding="utf-8")
    items = root / "results" / "items" / "german_case.parquet"
    assert main(["items", "german-case", "--templates", str(templates), "--out", str(items)]) == 0
    out = root / "results" / "scores" / "german_case" / "tiny"
    assert main(["score", str(items), "--model", str(tiny_model_dir("causal", "wordpiece")),
                 "--kind", "causal", "--method", "ppl", "--name", "tiny", "--out", str(out),
                 "--threads", "1"]) == 0
    scores = out / "item_scores.parquet"
    tables = root / "tables"
    assert main(["table-german-case", "--items", str(items), "--scores", str(scores),
                 "--out-dir", str(tables)]) == 0
    flags = {t: row.split("\t")[9] for t, row in rows.items()}
    frame = pl.read_parquet(items).join(
        pl.read_parquet(scores).filter(pl.col("region").is_null()), on="item_id")
    frame = frame.with_columns(
        pl.struct("cases", "positions").map_elements(
            lambda r: "".join(r["cases"][int(k) - 1] for k in r["positions"]),
            return_dtype=pl.String).alias("in_order"),
        pl.col("template").replace_strict(flags).alias("np_flags"))
    return frame, tables, items, scores


def _auc(positives: pl.DataFrame, negatives: pl.DataFrame) -> float:
    labels = [1] * positives.height + [0] * negatives.height
    return roc_auc_score(labels, pl.concat([positives, negatives])["logprob_sum"].to_numpy())


def _row(table: pl.DataFrame, **where) -> dict:
    rows = table.filter(*[pl.col(k) == v for k, v in where.items()])
    assert rows.height == 1, where
    return rows.row(0, named=True)


def _check(row: dict, aucs: list[float]) -> None:
    assert row["n_templates"] == len(aucs)
    assert row["auc_mean"] == pytest.approx(np.mean(aucs))
    assert row["auc_sd"] == pytest.approx(np.std(aucs, ddof=1))


@pytest.mark.slow
def test_producers_wrote_four_templates(produced):
    frame, *_ = produced
    assert frame.height == 4 * 144
    assert frame["logprob_sum"].null_count() == 0
    assert frame["logprob_sum"].n_unique() > 100  # the tiny model separates sentences


def _one_vs_six(frame: pl.DataFrame) -> dict[str, float]:
    """item_id -> the AUC of the grammatical sentence against the six violations that give one
    of its NPs another case, NPs in the same order (sklearn, one positive)."""
    logprob = {(t, c, p): lp for t, c, p, lp in
               frame.select("template", "cases", "positions", "logprob_sum").iter_rows()}
    aucs = {}
    for item_id, t, cases, positions in frame.filter(pl.col("grammatical")).select(
            "item_id", "template", "cases", "positions").iter_rows():
        swaps = [cases[:k] + other + cases[k + 1:] for k in range(3) for other in NAD
                 if other != cases[k]]
        assert len(set(swaps)) == 6 and all(s.count(s[0]) < 3 for s in swaps)
        scores = [logprob[t, cases, positions]] + [logprob[t, v, positions] for v in swaps]
        aucs[item_id] = roc_auc_score([1] + [0] * 6, scores)
    return aucs


def _mean_over_templates(frame: pl.DataFrame, aucs: dict[str, float], keep) -> list[float]:
    """Per template the mean 1-vs-6 AUC of its grammatical sentences that `keep` selects."""
    means = []
    for template in TEMPLATES:
        part = frame.filter(pl.col("template") == template, pl.col("grammatical"))
        chosen = [aucs[i] for i, c, o in part.select("item_id", "cases", "in_order").iter_rows()
                  if keep(c, o)]
        if chosen:
            means.append(float(np.mean(chosen)))
    return means


@pytest.mark.slow
def test_one_vs_six_by_case_order_and_first_case(produced):
    """The word-order figure as the reference's 1-vs-6: each grammatical sentence against its six
    one-case violations in the same NP order, averaged per case order and per first case."""
    frame, tables, *_ = produced
    table = assert_table_files(tables, "german_case_order_auc")
    aucs = _one_vs_six(frame)
    assert len(aucs) == 4 * 36
    for order in ("".join(p) for p in itertools.permutations(NAD)):
        row = _row(table, comparison="one_vs_six", subset=order)
        _check(row, _mean_over_templates(frame, aucs, lambda c, o: o == order))  # noqa: B023
        assert (row["n_positive"], row["n_negative"]) == (4 * 6, 4 * 6 * 6)
    for first in NAD:
        row = _row(table, comparison="one_vs_six_first_case", subset=first)
        _check(row, _mean_over_templates(frame, aucs, lambda c, o: o[0] == first))  # noqa: B023
        assert (row["n_positive"], row["n_negative"]) == (4 * 12, 4 * 12 * 6)
    assert "order_vs_all_orders" not in set(table["comparison"])


def test_animacy_is_the_one_vs_six_difference_by_np_position(produced):
    """The animacy table: per case, mean 1-vs-6 AUC where the case sits on np1 or np2 (animate)
    minus where it sits on np3 (inanimate), as the reference defines its templates; no animacy flag
    needed."""
    frame, tables, *_ = produced
    table = assert_table_files(tables, "german_case_animacy")
    assert table["case"].to_list() == ["N", "A", "D"]
    assert set(table["animacy_from"]) == {"positions"}
    aucs = _one_vs_six(frame)
    for case in NAD:
        animate = _mean_over_templates(frame, aucs, lambda c, o: c.index(case) < 2)  # noqa: B023
        inanimate = _mean_over_templates(frame, aucs, lambda c, o: c[2] == case)  # noqa: B023
        difference = np.subtract(animate, inanimate)
        row = _row(table, case=case)
        assert row["n_templates"] == 4
        assert (row["n_animate"], row["n_inanimate"]) == (4 * 24, 4 * 12)
        assert row["auc_animate"] == pytest.approx(np.mean(animate))
        assert row["auc_inanimate"] == pytest.approx(np.mean(inanimate))
        assert row["difference_mean"] == pytest.approx(np.mean(difference))
        assert row["difference_sd"] == pytest.approx(np.std(difference, ddof=1))


@pytest.mark.slow
def test_animacy_from_the_templates_flags_is_the_other_reading(produced, tmp_path):
    """--animacy flags: the templates' own animate column decides; t31 (111) has no inanimate
    NP, so it drops out."""
    frame, _, items, scores = produced
    tables = tmp_path / "flags"
    assert main(["table-german-case", "--items", str(items), "--scores", str(scores),
                 "--out-dir", str(tables), "--animacy", "flags"]) == 0
    table = pl.read_parquet(tables / "german_case_animacy.parquet")
    aucs = _one_vs_six(frame)
    flags = dict(frame.select("template", "np_flags").unique().iter_rows())
    for case in NAD:
        animate, inanimate = [], []
        for template in TEMPLATES:
            part = frame.filter(pl.col("template") == template, pl.col("grammatical"))
            split = {True: [], False: []}
            for item_id, cases in part.select("item_id", "cases").iter_rows():
                split[flags[template][cases.index(case)] == "1"].append(aucs[item_id])
            if split[True] and split[False]:
                animate.append(np.mean(split[True]))
                inanimate.append(np.mean(split[False]))
        row = _row(table, case=case)
        assert row["animacy_from"] == "flags" and row["n_templates"] == len(animate) == 3
        assert row["difference_mean"] == pytest.approx(np.mean(animate) - np.mean(inanimate))


def test_one_order_against_the_other_five_and_against_violations(produced):
    """The other readings of the word-order figure: one grammatical case order against the other
    five, and against the violations."""
    frame, tables, *_ = produced
    table = assert_table_files(tables, "german_case_order_auc")
    orders = ["".join(p) for p in itertools.permutations(NAD)]
    for order in orders:
        vs_violations, vs_others = [], []
        for template in TEMPLATES:
            part = frame.filter(pl.col("template") == template)
            grammatical = part.filter(pl.col("grammatical"))
            this = grammatical.filter(pl.col("in_order") == order)
            assert this.height == 6  # one NP order per grammatical assignment reads `order`
            vs_violations.append(_auc(this, part.filter(~pl.col("grammatical"))))
            vs_others.append(_auc(this, grammatical.filter(pl.col("in_order") != order)))
        row = _row(table, comparison="order_vs_other_orders", subset=order)
        _check(row, vs_others)
        assert (row["n_positive"], row["n_negative"]) == (4 * 6, 4 * 30)
        _check(_row(table, comparison="order_vs_violations", subset=order), vs_violations)


def test_violations_by_position_and_case_order(produced):
    frame, tables, *_ = produced
    table = assert_table_files(tables, "german_case_order_auc")
    positions = {"12": ("NNA", "NND", "AAN", "AAD", "DDN", "DDA"),
                 "13": ("NAN", "NDN", "ANA", "ADA", "DND", "DAD"),
                 "23": ("ANN", "DNN", "NAA", "DAA", "NDD", "ADD")}
    for where, orders in positions.items():
        aucs = []
        for template in TEMPLATES:
            part = frame.filter(pl.col("template") == template)
            violations = part.filter(pl.col("in_order").is_in(orders))
            assert violations.height == 36 and not violations["grammatical"].any()
            aucs.append(_auc(part.filter(pl.col("grammatical")), violations))
        row = _row(table, comparison="violation_position", subset=where)
        _check(row, aucs)
        assert (row["n_positive"], row["n_negative"]) == (4 * 36, 4 * 36)
    violation_orders = table.filter(pl.col("comparison") == "violation_order")
    assert violation_orders.height == 18
    aucs = [_auc(part.filter(pl.col("grammatical")), part.filter(pl.col("in_order") == "DND"))
            for part in frame.partition_by("template")]
    _check(_row(table, comparison="violation_order", subset="DND"), aucs)


def test_violation_types_on_plausible_sentences(produced):
    """The plausible-sentences table: the 6 sentences of the original assignment against each
    violation type."""
    frame, tables, *_ = produced
    table = assert_table_files(tables, "german_case_auc_violation")
    assert table.select("analysis", "violation").rows() == [
        ("all", "N"), ("all", "A"), ("all", "D"),
        ("restricted", "N"), ("restricted", "A"), ("restricted", "D")]
    for violation in NAD:
        restricted, everything = [], []
        for template in TEMPLATES:
            part = frame.filter(pl.col("template") == template)
            doubled = part.filter(pl.col("cases").map_elements(
                lambda c: c.count(violation) == 2, return_dtype=pl.Boolean))  # noqa: B023
            assert doubled.height == 36
            original = part.filter(pl.col("cases") == "NDA")
            assert original.height == 6 and original["grammatical"].all()
            restricted.append(_auc(original, doubled))
            everything.append(_auc(part.filter(pl.col("grammatical")), doubled))
        _check(_row(table, analysis="restricted", violation=violation), restricted)
        _check(_row(table, analysis="all", violation=violation), everything)


@pytest.mark.slow
def test_order_figure_shows_an_order_without_sentences_as_missing(produced, tmp_path):
    """Without scores for the grammatical sentences that read NAD, that order has no AUC: its
    bars (1 vs 6, one order vs the other five) say n/a instead of standing at 0."""
    frame, *_ = produced
    keep = frame.filter(~(pl.col("grammatical") & (pl.col("in_order") == "NAD")))["item_id"]
    scores = next(tmp_path.parent.glob("german_paper*/results/scores/german_case/tiny"))
    partial = tmp_path / "scores" / "german_case" / "tiny" / "item_scores.parquet"
    rewrite(scores / "item_scores.parquet", lambda f: f.filter(pl.col("item_id").is_in(keep)),
            partial)
    items = next(tmp_path.parent.glob("german_paper*/results/items/german_case.parquet"))
    tables = tmp_path / "tables"
    assert main(["table-german-case", "--items", str(items), "--scores", str(partial),
                 "--out-dir", str(tables)]) == 0
    aucs = pl.read_parquet(tables / "german_case_order_auc.parquet")
    assert aucs.filter(pl.col("subset") == "NAD").is_empty()
    assert aucs.filter(pl.col("comparison") == "order_vs_other_orders").height == 5
    assert aucs.filter(pl.col("comparison") == "one_vs_six").height == 5
    stem = tmp_path / "figures" / "german_case_order_auc"
    assert main(["figure-german-case-order-auc", str(tables / "german_case_order_auc.parquet"),
                 "--out", str(stem)]) == 0
    svg = stem.with_name("german_case_order_auc.svg").read_text(encoding="utf-8")
    texts = [t.strip() for t in re.findall(r"<!-- (.*?) -->", svg)]
    assert texts.count("n/a") == 2
    assert texts.count("NAD") == 2  # the order keeps its tick in both panels
