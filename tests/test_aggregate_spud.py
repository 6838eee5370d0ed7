"""SPUD scoring tables: ratios, quartiles, Wilcoxon tests and extremes against numpy/scipy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from artifact_files import rewrite
from scipy.stats import wilcoxon

from spudflow.aggregate.outputs import DATA_FORMATS

from aggregate_inputs import SPUD_SCORING_FUNCTIONS, assert_table_files, run_command, spud_inputs


def _ratios(items_path, score_paths, model, method, nonce_method):
    """r per group, straight from the input files."""
    items = pl.read_parquet(items_path)
    scores = pl.concat([pl.read_parquet(p) for p in score_paths]).filter(
        (pl.col("model") == model) & (pl.col("method") == method))
    ppl = dict(zip(scores["item_id"], scores["ppl"], strict=True))
    ratios = {}
    for group in items.partition_by("group_id"):
        orig = group.filter(pl.col("method") == "orig")["item_id"][0]
        nonce = group.filter(pl.col("method") == nonce_method)["item_id"][0]
        ratios[group["group_id"][0]] = ppl[nonce] / ppl[orig]
    return ratios


@pytest.fixture(scope="module")
def spud_tables(tmp_path_factory):
    """Both languages' inputs and the folder of their tables, made once for the tests that only
    read them."""
    tmp_path = tmp_path_factory.mktemp("spud")
    en = spud_inputs(tmp_path)
    de = spud_inputs(tmp_path, "spud_de", "de", seed=1)
    out = tmp_path / "tables"
    assert run_command("table-spud-scores", "--items", en[0], de[0], "--scores", *en[1],
                       *de[1], "--out-dir", out, "--extremes", 3) == 0
    return en, de, out


def test_summary_matches_numpy(spud_tables):
    en, de, out = spud_tables
    summary = assert_table_files(out, "spud_ratio_summary")
    # datasets x nonce methods x scoring functions x (seed 1, all seeds) x (outliers kept, removed)
    assert summary.height == 2 * 2 * len(SPUD_SCORING_FUNCTIONS) * 2 * 2
    summary = summary.filter(pl.col("outliers") == "kept")
    assert summary["n_dropped"].to_list() == [0] * summary.height
    # with one seed, the combined row is that seed's row
    per_seed = summary.filter(pl.col("nonce_seed") == "1").drop("nonce_seed")
    combined = summary.filter(pl.col("nonce_seed") == "all").drop("nonce_seed")
    assert per_seed["n_seeds"].to_list() == combined["n_seeds"].to_list() == [1] * 12
    for column in per_seed.columns:
        if per_seed[column].dtype == pl.Float64:
            assert combined[column].to_list() == pytest.approx(per_seed[column].to_list())
        else:
            assert combined[column].to_list() == per_seed[column].to_list()
    summary = summary.filter(pl.col("nonce_seed") == "1")
    for (items, scores), dataset in ((en, "spud_en"), (de, "spud_de")):
        for model, method in SPUD_SCORING_FUNCTIONS:
            for nonce_method in ("spud", "pos"):
                r = np.array(list(_ratios(items, scores, model, method, nonce_method).values()))
                row = summary.filter((pl.col("dataset") == dataset) & (pl.col("model") == model)
                                     & (pl.col("method") == method)
                                     & (pl.col("nonce_method") == nonce_method)).row(0, named=True)
                assert row["n_pairs"] == len(r) == 30
                q1, median, q3 = np.quantile(r, [0.25, 0.5, 0.75])
                assert row["ratio_q1"] == pytest.approx(q1, rel=1e-12)
                assert row["ratio_median"] == pytest.approx(median, rel=1e-12)
                assert row["ratio_q3"] == pytest.approx(q3, rel=1e-12)
                assert row["ratio_mean"] == pytest.approx(r.mean(), rel=1e-12)
                assert row["fraction_ratio_gt1"] == pytest.approx(np.mean(r > 1))
    # the generator makes nonce sentences more perplexing
    assert summary["ratio_median"].min() > 1


def test_wilcoxon_matches_scipy(spud_tables):
    en, _, out = spud_tables
    tests = assert_table_files(out, "spud_wilcoxon")
    # datasets x nonce methods x pairs of three scoring functions x (seed 1, all seeds) x outliers
    assert tests.height == 2 * 2 * 3 * 2 * 2
    tests = tests.filter(pl.col("outliers") == "kept")
    a = _ratios(*en, "bert", "pppl", "spud")
    b = _ratios(*en, "gpt", "ppl", "spud")
    groups = sorted(a)
    expected = wilcoxon([a[g] for g in groups], [b[g] for g in groups])
    rows = tests.filter((pl.col("dataset") == "spud_en") & (pl.col("nonce_method") == "spud")
                        & (pl.col("model_a") == "bert") & (pl.col("method_a") == "pppl")
                        & (pl.col("model_b") == "gpt"))
    assert rows["nonce_seed"].to_list() == ["1", "all"]
    # one seed: the combined test is the seed's test
    assert rows.row(0)[rows.columns.index("n_pairs"):] == pytest.approx(
        rows.row(1)[rows.columns.index("n_pairs"):])
    row = rows.row(0, named=True)
    assert row["n_pairs"] == 30
    assert row["statistic"] == pytest.approx(expected.statistic)
    assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
    differences = np.array([a[g] - b[g] for g in groups])
    assert row["median_ratio_difference"] == pytest.approx(np.median(differences))
    assert row["fraction_a_greater"] == pytest.approx(np.mean(differences > 0))


def test_extremes_and_pair_data(spud_tables):
    en, _, out = spud_tables
    extremes = assert_table_files(out, "spud_extremes")
    ratios = _ratios(*en, "gpt", "ppl", "pos")
    chosen = extremes.filter((pl.col("dataset") == "spud_en") & (pl.col("model") == "gpt")
                             & (pl.col("nonce_method") == "pos"))
    highest = chosen.filter(pl.col("extreme") == "highest").sort("rank")
    lowest = chosen.filter(pl.col("extreme") == "lowest").sort("rank")
    assert highest["rank"].to_list() == lowest["rank"].to_list() == [1, 2, 3]
    assert highest["ratio"].to_list() == pytest.approx(sorted(ratios.values(), reverse=True)[:3])
    assert lowest["ratio"].to_list() == pytest.approx(sorted(ratios.values())[:3])
    top = highest.row(0, named=True)
    assert top["group_id"] == max(ratios, key=ratios.get)
    assert top["orig_sentence"].startswith("the cat")
    assert top["nonce_sentence"].startswith("the dax")
    pairs = assert_table_files(out, "spud_ratios", formats=DATA_FORMATS)
    assert pairs.height == 2 * 2 * 30 * len(SPUD_SCORING_FUNCTIONS)
    assert pairs["log_ratio"].to_numpy() == pytest.approx(np.log(pairs["ratio"].to_numpy()))


def test_identical_scoring_functions_get_no_test(tmp_path, run_cli):
    items, scores = spud_inputs(tmp_path, n_groups=8)
    copy_path = tmp_path / "results" / "scores" / "spud_en" / "gpt_copy" / "item_scores.parquet"
    rewrite(scores[0], lambda f: f.filter(pl.col("method") == "ppl").with_columns(
        pl.lit("gpt_copy").alias("model")), copy_path)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", scores[0],
                           copy_path, "--out-dir", out)
    assert code == 0, err
    rows = pl.read_parquet(out / "spud_wilcoxon.parquet").filter(pl.col("model_b") == "gpt_copy")
    assert rows.height == 2 * 2 * 2  # nonce methods x (seed 1, all seeds) x outliers
    for row in rows.iter_rows(named=True):
        assert row["median_ratio_difference"] == 0
        assert row["statistic"] is None and row["p_value"] is None


@pytest.mark.parametrize(("item_id", "column", "value", "message"), [
    ("1-orig", "group_id", "g0",
     "group 'g0' has more than one original sentence (method 'orig')"),
    ("2-spud-1", "group_id", "g1",
     "group 'g1' has more than one nonce sentence of method 'spud' and seed 1"),
    ("3-pos-1", "seed", None, "nonce item '3-pos-1' has no seed"),
], ids=["two originals in a group", "two nonce versions of one seed", "a nonce without a seed"])
def test_a_malformed_group_is_bad_input(tmp_path, run_cli, item_id, column, value, message):
    items, scores = spud_inputs(tmp_path, n_groups=4)
    rewrite(items, lambda f: f.with_columns(
        pl.when(pl.col("item_id") == item_id).then(pl.lit(value, dtype=f.schema[column]))
        .otherwise(pl.col(column)).alias(column)))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 2
    assert err.strip() == f"{items}: {message}"
    assert not out.exists()


def test_outlier_pairs_in_the_layout_of_tables_12_13(tmp_path, run_cli):
    items, scores = spud_inputs(tmp_path)
    out = tmp_path / "tables"
    above, below = 3.0, 1.5  # the synthetic ratios lie around e^0.8
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out, "--outliers-above", above, "--outliers-below", below)
    assert code == 0, err
    table = assert_table_files(out, "spud_outliers")
    assert set(table["ppl_model"]) == {"gpt"} and set(table["mlm_model"]) == {"bert"}
    sentences = {row["item_id"]: row["sentence"] for row in pl.read_parquet(items).iter_rows(
        named=True)}
    for nonce_method in ("spud", "pos"):
        r_ppl = _ratios(items, scores, "gpt", "ppl", nonce_method)
        r_pppl = _ratios(items, scores, "bert", "pppl", nonce_method)
        r_l2r = _ratios(items, scores, "bert", "pppl_l2r", nonce_method)
        rows = table.filter(pl.col("nonce_method") == nonce_method)
        for extreme, chosen in (
                ("above", sorted((g for g in r_ppl if r_ppl[g] > above), key=lambda g: -r_ppl[g])),
                ("below", sorted((g for g in r_ppl if r_ppl[g] < below), key=r_ppl.get))):
            listed = rows.filter(pl.col("extreme") == extreme)
            assert len(chosen) > 0
            assert listed["group_id"].to_list() == chosen
            assert listed["rank"].to_list() == list(range(1, len(chosen) + 1))
            assert set(listed["threshold"]) == {above if extreme == "above" else below}
            # the three ratios of the same pair side by side, the sentences verbatim
            assert listed["r_ppl"].to_list() == pytest.approx([r_ppl[g] for g in chosen])
            assert listed["r_pppl"].to_list() == pytest.approx([r_pppl[g] for g in chosen])
            assert listed["r_pppl_l2r"].to_list() == pytest.approx([r_l2r[g] for g in chosen])
            n = [int(g[1:]) for g in chosen]
            assert listed["orig_sentence"].to_list() == [sentences[f"{k}-orig"] for k in n]
            assert listed["nonce_sentence"].to_list() == [
                sentences[f"{k}-{nonce_method}-1"] for k in n]
    assert table.height < 2 * 30  # not every pair is an outlier


def test_outlier_pairs_without_a_masked_model(tmp_path, run_cli):
    items, scores = spud_inputs(tmp_path, n_groups=12)
    out = tmp_path / "tables"
    gpt_only = [p for p in scores if p.parent.name == "gpt"]
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *gpt_only,
                           "--out-dir", out, "--outliers-above", 2.0, "--outliers-below", 2.0)
    assert code == 0, err
    table = assert_table_files(out, "spud_outliers")
    assert table.height == 2 * 12  # both thresholds at 2: every pair but r = 2 exactly
    assert table["mlm_model"].null_count() == table["r_pppl"].null_count() == table.height


def test_every_observation_an_outlier_keeps_its_rows(tmp_path, run_cli):
    items, scores = spud_inputs(tmp_path, n_groups=6)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", out, "--outlier-threshold", 0.01)
    assert code == 0, err
    summary = assert_table_files(out, "spud_ratio_summary")
    removed = summary.filter(pl.col("outliers") == "removed")
    assert removed.height == summary.height // 2
    assert removed["n_pairs"].to_list() == [0] * removed.height
    assert removed["n_dropped"].to_list() == [6] * removed.height
    assert removed["ratio_median"].null_count() == removed.height
    tests = assert_table_files(out, "spud_wilcoxon").filter(pl.col("outliers") == "removed")
    assert tests["n_pairs"].to_list() == [0] * tests.height
    assert tests["p_value"].null_count() == tests.height



@pytest.mark.parametrize(("orig", "nonce", "message"), [
    (None, float("nan"), "1 score rows with a NaN figure, taken as not scored"),
    (float("inf"), float("inf"), "1 pairs left out: their perplexity ratio is NaN")])
def test_a_pair_without_a_ratio_is_left_out_not_its_groups_statistics(tmp_path, run_cli,
                                                                      caplog, orig, nonce,
                                                                      message):
    """A NaN log-probability (a model's NaN), or infinite perplexities on both sides, gives no
    ratio: the pair is left out, counted in the log, and its group's quartiles and tests are
    those of the other pairs, not NaN."""
    items, scores = spud_inputs(tmp_path, n_groups=12)
    path = scores[0]
    model = pl.read_parquet(path)["model"][0]
    value = {"3-spud-1": nonce, "3-orig": orig}
    rewrite(path, lambda f: f.with_columns(
        pl.col("item_id").replace_strict(value, default=None, return_dtype=pl.Float64)
        .fill_null(pl.col("ppl")).alias("ppl")))
    out = tmp_path / "tables"
    with caplog.at_level("WARNING"):
        code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                               "--out-dir", out)
    assert code == 0, err
    summary = assert_table_files(out, "spud_ratio_summary").filter(
        (pl.col("model") == model) & (pl.col("nonce_method") == "spud")
        & (pl.col("outliers") == "kept"))
    assert summary["n_pairs"].to_list() == [11] * summary.height
    # the fixture's scores count no unseen words (a transformer's): null, which numpy reads as NaN
    assert summary["unseen_fraction"].null_count() == summary.height
    numbers = summary.select(pl.col(pl.Float64).exclude("unseen_fraction")).to_numpy()
    assert np.isfinite(numbers).all()
    tests = assert_table_files(out, "spud_wilcoxon")
    assert np.isfinite(tests["p_value"].drop_nulls().to_numpy()).all()
    assert message in caplog.text


@pytest.mark.parametrize("seed", range(4))
def test_small_samples_with_ties_or_zeros_get_scipys_exact_permutation_p(seed):
    """Up to 13 differences with ties or zeros: scipy.stats.wilcoxon's own (slow) exact
    permutation test and the table's (all sign flips at once) give the same statistic and p,
    bit for bit; other samples go to scipy as they are."""
    from scipy.stats import wilcoxon

    from spudflow.aggregate.spud_scores import _wilcoxon

    rng = np.random.default_rng(seed)
    for n in (1, 3, 6, 9, 10, 20):
        a = rng.choice([0.5, 1.0, 1.5, 2.0], size=n)  # ties and zeros
        b = np.where(rng.random(n) < 0.3, a, rng.choice([0.5, 1.0, 1.5], size=n))
        untied = rng.normal(size=n)
        for x, y in ((a, b), (untied, untied + 0.5 * rng.normal(size=n))):
            if np.all(x == y):
                continue
            expected = wilcoxon(x, y)
            assert _wilcoxon(x, y) == (float(expected.statistic), float(expected.pvalue))
