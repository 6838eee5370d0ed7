"""CoLA thresholds: cross-validated accuracy and MCC against a brute-force search with sklearn."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import accuracy_score, matthews_corrcoef
from sklearn.model_selection import KFold

from spudflow.aggregate.cola import _counts, defined_mcc, fit_threshold

from aggregate_inputs import REPO, assert_table_files, cola_inputs

NORMALISATIONS = {"LogProb": "logprob_sum", "MeanLP": "mean_logprob", "NormLP": "normlp",
                  "SLOR": "slor", "Word-LP Min-1": "word_lp_min1"}


def brute_force(scores, labels, folds, seed, metric):
    """Every threshold between two distinct training scores (and ±inf), scored by sklearn on
    the training folds; the best (highest on ties) predicts the held-out fold."""
    predictions = np.zeros(len(scores), dtype=int)
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(scores):
        values = np.unique(scores[train])
        candidates = [np.inf, *((values[1:] + values[:-1]) / 2)[::-1], -np.inf]
        quality = [metric(labels[train], (scores[train] >= t).astype(int)) for t in candidates]
        best = candidates[int(np.argmax(quality))]
        predictions[test] = scores[test] >= best
    return accuracy_score(labels, predictions), matthews_corrcoef(labels, predictions)


def test_mcc_and_accuracy_are_sklearns_to_the_bit():
    """The table's MCC and accuracy, computed from the 2 x 2 table, are sklearn's floats
    exactly: on every table with cells 0..4 and on random ones of CoLA's sizes."""
    rng = np.random.default_rng(5)
    tables = [np.array(c) for c in np.ndindex(5, 5, 5, 5)]
    tables += [rng.integers(0, n, 4) for n in rng.integers(2, 9_000, 300)]
    checked = 0
    for cells in tables:
        labels = np.repeat([0, 0, 1, 1], cells)
        predictions = np.repeat([0, 1, 0, 1], cells)
        if len(labels) == 0:
            continue
        counts, _, _ = _counts(pl.DataFrame({"label": labels, "prediction": predictions}))
        assert counts["accuracy"] == accuracy_score(labels, predictions)
        mcc = defined_mcc(labels, predictions)
        if labels.min() == labels.max():
            assert mcc is None
            continue
        assert mcc == matthews_corrcoef(labels, predictions)
        checked += 1
    assert checked > 500


@pytest.mark.slow
@pytest.mark.parametrize(("criterion", "metric"), [("accuracy", accuracy_score),
                                                   ("mcc", matthews_corrcoef)])
def test_cross_validated_thresholds(tmp_path, run_cli, criterion, metric):
    items, scores = cola_inputs(tmp_path, n_per_split=40)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out,
                           "--folds", 10, "--seed", 3, "--criterion", criterion)
    assert code == 0, err
    table = assert_table_files(out, "cola_thresholds")
    assert table.height == 2 * len(NORMALISATIONS)
    assert table["normalisation"].unique(maintain_order=True).to_list() == list(NORMALISATIONS)
    frame = pl.read_parquet(items).join(pl.read_parquet(scores[0]), on="item_id")
    for split in ("in_domain_dev", "out_of_domain_dev"):
        part = frame.filter(pl.col("split") == split)
        labels = part["label"].cast(pl.Int64).to_numpy()
        # few normalisations keep the brute force (a sklearn call per threshold) fast
        for name in ("LogProb", "SLOR") if criterion == "accuracy" else ("MeanLP",):
            column = NORMALISATIONS[name]
            accuracy, mcc = brute_force(part[column].to_numpy(), labels, 10, 3, metric)
            row = table.filter((pl.col("split") == split)
                               & (pl.col("normalisation") == name)).row(0, named=True)
            assert (row["n_items"], row["n_acceptable"], row["folds"]) == \
                (40, int(labels.sum()), 10)
            assert row["accuracy"] == pytest.approx(accuracy), (split, name)
            assert row["mcc"] == pytest.approx(mcc), (split, name)


def test_threshold_fit_on_a_hand_made_case():
    scores = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    labels = np.array([0, 0, 1, 0, 1, 1])
    # accuracy 5/6 either between 2 and 3 or between 4 and 5: the higher threshold wins
    assert fit_threshold(scores, labels, "accuracy") == 4.5
    assert fit_threshold(scores, np.ones(6), "accuracy") == -np.inf
    assert fit_threshold(scores, np.zeros(6), "mcc") == np.inf


def test_the_threshold_maximises_mcc_unless_told_otherwise():
    """The paper's Table 4 has held-out accuracies below the majority class (0.590-0.652 in
    domain, about 0.69 acceptable), which an accuracy-maximising threshold, with "everything
    acceptable" among its candidates, would not give: the CoLA preset, the default config and
    the command's default all fit MCC."""
    import yaml

    from spudflow.cli import build_parser

    for config in ("config/config.yaml", "config/papers/cola.yaml"):
        text = (REPO / config).read_text(encoding="utf-8")
        assert yaml.safe_load(text)["aggregate"]["cola_criterion"] == "mcc", config
    args = build_parser().parse_args(["table-cola", "--items", "i", "--scores", "s",
                                      "--out-dir", "o"])
    assert args.criterion == "mcc"
    # a case where the two criteria part: accuracy takes "everything acceptable"
    scores = np.arange(8.0)
    labels = np.array([1, 1, 0, 1, 0, 1, 0, 1])
    assert fit_threshold(scores, labels, "accuracy") == -np.inf  # 5/8, MCC 0
    assert fit_threshold(scores, labels) == fit_threshold(scores, labels, "mcc") == 6.5


def test_without_unigram_scores_only_logprob_and_meanlp(tmp_path, run_cli):
    items, scores = cola_inputs(tmp_path, n_per_split=20, unigram=False)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    table = pl.read_parquet(out / "cola_thresholds.parquet")
    assert table["normalisation"].to_list() == ["LogProb"] * 2 + ["MeanLP"] * 2


def test_one_fold_is_refused(tmp_path, run_cli):
    items, scores = cola_inputs(tmp_path, n_per_split=20)
    with pytest.raises(SystemExit) as exit_info:
        run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", tmp_path,
                "--folds", 1)
    assert exit_info.value.code == 2


# --- the phenomenon sets (section 8, Table 5) and per-source MCC (section 7), on what the
# real producers write: `pairs cola` on the CoLA-format test files, `score` with an n-gram model
# (and its unigrams for SLOR, Word-LP Min-1, NormLP) trained on their sentences.

TINY_COLA = REPO / "tests" / "data" / "workflow" / "cola"
FOLDS, SEED = 4, 1
# A source whose sentences are all acceptable: its MCC is undefined (null), not sklearn's 0.
ONE_CLASS = "k99\t1\t\tThe dog slept.\nk99\t1\t\tThe cat sat on the mat.\n"


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """(items joined with whole-sentence scores, tables directory)."""
    from spudflow.cli import main

    root = tmp_path_factory.mktemp("cola_produced")
    dev = root / "in_domain_dev.tsv"
    dev.write_text((TINY_COLA / "in_domain_dev.tsv").read_text(encoding="utf-8") + ONE_CLASS,
                   encoding="utf-8")
    files = [dev, TINY_COLA / "out_of_domain_dev.tsv"]
    phenomena = sorted((TINY_COLA / "phenomena").glob("*.tsv"))
    items = root / "results" / "items" / "cola.parquet"
    assert main(["items", "cola", *map(str, files), "--phenomena", *map(str, phenomena),
                 "--out", str(items)]) == 0
    # The model learns from some acceptable sentences of every file, so that its scores separate
    # the classes in part (MCCs neither all 0 nor all 1).
    text = root / "train.txt"
    text.write_text("".join(fields[3] + "\n" for f in [*files, *phenomena]
                            for number, line in enumerate(f.read_text("utf-8").splitlines())
                            if (fields := line.split("\t"))[1] == "1" and number % 4 < 2),
                    encoding="utf-8")
    model = root / "bigram.parquet"
    assert main(["ngram-train", str(text), "--order", "2", "--lang", "en", "--out",
                 str(model)]) == 0
    out = root / "results" / "scores" / "cola" / "bigram"
    assert main(["score", str(items), "--model", str(model), "--kind", "ngram", "--method",
                 "kn", "--unigram", str(model), "--name", "bigram", "--out", str(out),
                 "--threads", "1"]) == 0
    scores = out / "item_scores.parquet"
    tables = root / "tables"
    assert main(["table-cola", "--items", str(items), "--scores", str(scores), "--out-dir",
                 str(tables), "--folds", str(FOLDS), "--seed", str(SEED), "--criterion",
                 "accuracy"]) == 0
    scored = pl.read_parquet(items).join(
        pl.read_parquet(scores).filter(pl.col("region").is_null()), on="item_id")
    return scored, tables


def held_out(part: pl.DataFrame, column: str, thresholds: list | None = None) -> np.ndarray:
    """The brute-force held-out predictions of one split (accuracy criterion); the folds'
    thresholds are appended to `thresholds`."""
    scores = part[column].to_numpy()
    labels = part["label"].cast(pl.Int64).to_numpy()
    predictions = np.zeros(len(scores), dtype=int)
    folds = KFold(n_splits=min(FOLDS, len(scores)), shuffle=True, random_state=SEED)
    for train, test in folds.split(scores):
        values = np.unique(scores[train])
        candidates = [np.inf, *((values[1:] + values[:-1]) / 2)[::-1], -np.inf]
        quality = [accuracy_score(labels[train], (scores[train] >= t).astype(int))
                   for t in candidates]
        best = candidates[int(np.argmax(quality))]
        predictions[test] = scores[test] >= best
        if thresholds is not None:
            thresholds.append(best)
    return predictions


@pytest.mark.slow
def test_phenomenon_mcc_is_sklearns_on_each_set(produced):
    scored, tables = produced
    table = assert_table_files(tables, "cola_phenomena")
    assert set(table["phenomenon"]) == {"svo", "wh_extraction"}
    assert set(table["normalisation"]) == set(NORMALISATIONS)
    thresholds = pl.read_parquet(tables / "cola_thresholds.parquet")
    assert set(thresholds["split"]) == {"in_domain_dev", "out_of_domain_dev"}
    infinite = 0
    for phenomenon in ("svo", "wh_extraction"):
        part = scored.filter(pl.col("split") == phenomenon)
        labels = part["label"].cast(pl.Int64).to_numpy()
        for name in NORMALISATIONS:
            thresholds = []
            predictions = held_out(part, NORMALISATIONS[name], thresholds)
            row = table.filter(pl.col("phenomenon") == phenomenon,
                               pl.col("normalisation") == name).row(0, named=True)
            assert (row["n_items"], row["n_acceptable"], row["folds"]) == \
                (part.height, int(labels.sum()), FOLDS)
            assert row["mcc"] == pytest.approx(matthews_corrcoef(labels, predictions))
            assert row["accuracy"] == pytest.approx(accuracy_score(labels, predictions))
            # a fold that called every sentence one class has an infinite threshold: no mean
            if np.isfinite(thresholds).all():
                assert row["threshold_mean"] == pytest.approx(np.mean(thresholds))
            else:
                assert row["threshold_mean"] is None
                infinite += 1
    assert infinite and infinite < 2 * len(NORMALISATIONS)  # both cases are checked


def test_source_mcc_is_sklearns_on_the_splits_predictions(produced):
    scored, tables = produced
    table = assert_table_files(tables, "cola_sources")
    assert set(table["split"]) == {"in_domain_dev", "out_of_domain_dev"}
    checked = 0
    for split in ("in_domain_dev", "out_of_domain_dev"):
        part = scored.filter(pl.col("split") == split)
        for name in ("SLOR", "Word-LP Min-1"):
            frame = part.with_columns(pl.Series("prediction",
                                                held_out(part, NORMALISATIONS[name])))
            rows = table.filter(pl.col("split") == split, pl.col("normalisation") == name)
            assert sorted(rows["source"]) == sorted(set(part["source"]))
            for source, group in frame.group_by("source"):
                labels = group["label"].cast(pl.Int64).to_numpy()
                predictions = group["prediction"].to_numpy()
                row = rows.filter(pl.col("source") == source[0]).row(0, named=True)
                assert (row["n_items"], row["n_acceptable"]) == (group.height, labels.sum())
                assert row["accuracy"] == pytest.approx(accuracy_score(labels, predictions))
                if source[0] == "k99":
                    assert row["mcc"] is None  # labels of one class
                else:
                    assert row["mcc"] == pytest.approx(matthews_corrcoef(labels, predictions))
                    checked += 1
    assert checked == 2 * (5 + 4)


def test_a_split_of_one_class_has_no_mcc(tmp_path, run_cli):
    # sklearn says 0 for labels of one class; cola_phenomena and cola_sources say null: one rule
    items, scores = cola_inputs(tmp_path, n_per_split=20)
    from spudflow.core.artifacts import ITEMS_COLA
    from spudflow.core.contract import write_artifact

    frame = pl.read_parquet(items)
    write_artifact(frame.with_columns(
        pl.when(pl.col("split") == "out_of_domain_dev").then(True).otherwise(pl.col("label"))
        .cast(frame.schema["label"]).alias("label")), items, ITEMS_COLA)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    table = assert_table_files(out, "cola_thresholds")
    one_class = table.filter(pl.col("split") == "out_of_domain_dev")
    assert one_class.height == len(NORMALISATIONS)
    assert one_class["mcc"].is_null().all()
    # computed all the same: every held-out sentence called acceptable, which is right
    assert one_class["status"].to_list() == ["ok"] * len(NORMALISATIONS)
    assert one_class["accuracy"].to_list() == [1.0] * len(NORMALISATIONS)
    assert one_class["n_acceptable"].to_list() == one_class["n_items"].to_list()
    assert table.filter(pl.col("split") == "in_domain_dev")["mcc"].is_not_null().all()


def test_a_split_without_two_scored_items_is_a_skipped_row(tmp_path, run_cli, caplog):
    """A split with one item with a finite score cannot be cross-validated: its row per
    normalisation is `skipped` with the reason (the numbers null, a warning in the log) and the
    other split's rows are computed; the first versions left such a split out of the table."""
    items, scores = cola_inputs(tmp_path, n_per_split=20)
    from spudflow.core.artifacts import ITEM_SCORES
    from spudflow.core.contract import write_artifact

    frame = pl.read_parquet(scores[0])
    kept = ~pl.col("item_id").str.starts_with("out_of_domain_dev") | (
        pl.col("item_id") == "out_of_domain_dev-0")
    write_artifact(frame.filter(kept), scores[0], ITEM_SCORES)
    out = tmp_path / "tables"
    with caplog.at_level("WARNING"):
        code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores,
                               "--out-dir", out)
    assert code == 0, err
    table = assert_table_files(out, "cola_thresholds")
    skipped = table.filter(pl.col("split") == "out_of_domain_dev")
    reason = "1 item(s) with a finite score: cross-validation needs 2"
    assert skipped.select("normalisation", "n_items", "status", "reason").rows() == [
        (name, 1, "skipped", reason) for name in NORMALISATIONS]
    assert skipped.select("folds", "accuracy", "mcc", "threshold_mean").null_count().row(0) == (
        5, 5, 5, 5)
    assert table.filter(pl.col("split") == "in_domain_dev")["status"].to_list() == ["ok"] * 5
    sources = assert_table_files(out, "cola_sources")
    assert sources["split"].unique().to_list() == ["in_domain_dev"]
    assert f"skipped: {reason}" in caplog.text


def test_a_fit_that_fails_is_its_rows_reason_and_the_others_are_written(tmp_path, run_cli,
                                                                       monkeypatch):
    """A split's cross-validation stopping with an error (here: made to, on one split) is that
    split's `failed` rows with the error; the other split and every table are written."""
    from spudflow.aggregate import cola

    items, scores = cola_inputs(tmp_path, n_per_split=20)
    real = cola.cross_validated

    def failing(scores, labels, *args):
        if len(scores) == 20 and labels.sum() == failing.labels:
            raise FloatingPointError("made to fail")
        return real(scores, labels, *args)

    labels = pl.read_parquet(items).filter(pl.col("split") == "out_of_domain_dev")["label"]
    failing.labels = int(labels.sum())
    assert failing.labels != int(pl.read_parquet(items)["label"].sum()) - failing.labels
    monkeypatch.setattr(cola, "cross_validated", failing)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-cola", "--items", items, "--scores", *scores, "--out-dir", out)
    assert code == 0, err
    table = assert_table_files(out, "cola_thresholds")
    assert table.filter(pl.col("split") == "out_of_domain_dev").select(
        "status", "reason", "accuracy").unique().rows() == [
        ("failed", "FloatingPointError: made to fail", None)]
    assert table.filter(pl.col("split") == "in_domain_dev")["status"].unique().to_list() == ["ok"]
    assert assert_table_files(out, "cola_sources").height
