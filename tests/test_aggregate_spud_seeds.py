"""SPUD statistics over several nonce seeds: per seed, and combined with each original
sentence counted once. Inputs are what the real stages write: the first sentences of the vendored
English PUD treebank, ingested, made nonce with two seeds, paired, and scored by an n-gram model."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest
from scipy.stats import wilcoxon

from aggregate_inputs import REPO, assert_table_files

PUD = REPO / "resources" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu.gz"
N_SENTENCES = 40
SEEDS = (1, 2)
SCORING_FUNCTIONS = (("trigram", "kn"), ("trigram", "addk"))


def _first_sentences(path, n: int) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        text = file.read()
    return "\n\n".join(text.split("\n\n")[:n]) + "\n\n"


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """(items file, scores file, tables directory) made by the real commands."""
    from spudflow.cli import main

    root = tmp_path_factory.mktemp("spud_seeds")
    source = root / "en_pud_test.conllu"
    source.write_text(_first_sentences(PUD, N_SENTENCES), encoding="utf-8")
    orig = root / "ingest"
    assert main(["ingest", str(source), "--out", str(orig)]) == 0
    nonce = []
    for seed in SEEDS:
        out = root / "nonce" / "spud" / f"seed{seed}"
        assert main(["nonce", str(orig), "--lang", "en", "--seed", str(seed), "--method", "spud",
                     "--out", str(out)]) == 0
        nonce += ["--nonce", str(out)]
    items = root / "results" / "items" / "spud_en_test.parquet"
    assert main(["items", "spud", "--orig", str(orig), *nonce, "--lang", "en", "--dataset",
                 "spud_en_test", "--out", str(items)]) == 0
    model = root / "trigram.parquet"
    assert main(["ngram-train", str(orig), "--out", str(model), "--lang", "en"]) == 0
    scores = root / "results" / "scores" / "spud_en_test" / "trigram"
    assert main(["score", str(items), "--model", str(model), "--kind", "ngram", "--method",
                 "kn,addk", "--name", "trigram", "--out", str(scores), "--threads", "1"]) == 0
    tables = root / "tables"
    assert main(["table-spud-scores", "--items", str(items), "--scores",
                 str(scores / "item_scores.parquet"), "--out-dir", str(tables)]) == 0
    return items, scores / "item_scores.parquet", tables


def _ratios(items_path, scores_path, function) -> dict[tuple[str, str], float]:
    """(group, seed) -> r of one scoring function, straight from the producers' files."""
    items = pl.read_parquet(items_path)
    scores = pl.read_parquet(scores_path).filter(
        pl.col("model") == function[0], pl.col("method") == function[1], pl.col("region").is_null())
    ppl = dict(zip(scores["item_id"], scores["ppl"], strict=True))
    ratios = {}
    for row in items.filter(pl.col("method") == "spud").iter_rows(named=True):
        orig = f"{row['group_id']}:orig"
        ratios[row["group_id"], str(row["seed"])] = ppl[row["item_id"]] / ppl[orig]
    return ratios


def _per_original(ratios: dict) -> dict[str, float]:
    """Geometric mean ratio per original sentence over its seeds."""
    logs: dict[str, list[float]] = {}
    for (group, _), r in ratios.items():
        logs.setdefault(group, []).append(np.log(r))
    return {g: float(np.exp(np.mean(v))) for g, v in logs.items()}


@pytest.mark.slow
def test_inputs_have_one_nonce_version_per_seed(produced):
    items = pl.read_parquet(produced[0])
    nonce = items.filter(pl.col("method") == "spud")
    assert sorted(nonce["seed"].unique().to_list()) == list(SEEDS)
    assert nonce.height == len(SEEDS) * items.filter(pl.col("method") == "orig").height


def test_wilcoxon_counts_each_original_once(produced):
    items, scores, tables = produced
    a, b = (_ratios(items, scores, s) for s in SCORING_FUNCTIONS)
    tests = assert_table_files(tables, "spud_wilcoxon")
    rows = tests.filter(pl.col("model_a") == "trigram", pl.col("outliers") == "kept")
    assert rows.filter(pl.col("method_a") != "addk").height == 0  # sorted: (addk, kn)
    assert rows["nonce_seed"].to_list() == ["1", "2", "all"]
    n_originals = len({g for g, _ in a})
    for row in rows.iter_rows(named=True):
        if row["nonce_seed"] == "all":
            ra, rb = _per_original(b), _per_original(a)  # a: kn, b: addk; addk is model_a
            assert row["n_seeds"] == len(SEEDS)
        else:
            ra = {g: r for (g, s), r in b.items() if s == row["nonce_seed"]}
            rb = {g: r for (g, s), r in a.items() if s == row["nonce_seed"]}
            assert row["n_seeds"] == 1
        groups = sorted(ra)
        x, y = np.array([ra[g] for g in groups]), np.array([rb[g] for g in groups])
        # one observation per original sentence, never one per (original, seed)
        assert row["n_pairs"] == len(groups) == n_originals
        expected = wilcoxon(x, y)
        assert row["statistic"] == pytest.approx(expected.statistic)
        assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
        assert row["median_ratio_difference"] == pytest.approx(np.median(x - y))
        assert row["fraction_a_greater"] == pytest.approx(np.mean(x > y))


def test_summary_per_seed_and_combined(produced):
    items, scores, tables = produced
    summary = assert_table_files(tables, "spud_ratio_summary")
    for function in SCORING_FUNCTIONS:
        ratios = _ratios(items, scores, function)
        rows = summary.filter(pl.col("model") == function[0], pl.col("method") == function[1],
                              pl.col("outliers") == "kept")
        assert rows["nonce_seed"].to_list() == ["1", "2", "all"]
        for row in rows.iter_rows(named=True):
            if row["nonce_seed"] == "all":
                r = np.array(list(_per_original(ratios).values()))
            else:
                r = np.array([v for (_, s), v in ratios.items() if s == row["nonce_seed"]])
            assert row["n_pairs"] == len(r) == len({g for g, _ in ratios})
            q1, median, q3 = np.quantile(r, [0.25, 0.5, 0.75])
            assert [row["ratio_q1"], row["ratio_median"], row["ratio_q3"]] == pytest.approx(
                [q1, median, q3], rel=1e-12)
            assert row["ratio_mean"] == pytest.approx(r.mean(), rel=1e-12)
            assert row["fraction_ratio_gt1"] == pytest.approx(np.mean(r > 1))


# --- outliers (§4.4): the same statistics without observations above a threshold ------------
THRESHOLD = 10.0  # about the median r of kn (addk: all below 2)


@pytest.fixture(scope="module")
def trimmed(produced, tmp_path_factory):
    """The tables of `produced`'s files again, with a threshold that the trigram ratios cross."""
    from spudflow.cli import main

    items, scores, _ = produced
    tables = tmp_path_factory.mktemp("spud_trimmed")
    assert main(["table-spud-scores", "--items", str(items), "--scores", str(scores),
                 "--out-dir", str(tables), "--outlier-threshold", str(THRESHOLD)]) == 0
    return items, scores, tables


def _observations(ratios: dict, seed: str) -> dict[str, float]:
    if seed == "all":
        return _per_original(ratios)
    return {g: r for (g, s), r in ratios.items() if s == seed}


def test_summary_without_outliers(trimmed):
    items, scores, tables = trimmed
    summary = assert_table_files(tables, "spud_ratio_summary")
    dropped = 0
    for function in SCORING_FUNCTIONS:
        ratios = _ratios(items, scores, function)
        rows = summary.filter(pl.col("model") == function[0], pl.col("method") == function[1])
        # side by side: every seed's row on all observations, then without the outliers
        assert rows.select("nonce_seed", "outliers").rows() == [
            (seed, outliers) for seed in ("1", "2", "all") for outliers in ("kept", "removed")]
        for row in rows.filter(pl.col("outliers") == "removed").iter_rows(named=True):
            every = np.array(list(_observations(ratios, row["nonce_seed"]).values()))
            r = every[every <= THRESHOLD]
            assert row["outlier_threshold"] == THRESHOLD
            assert row["n_dropped"] == len(every) - len(r)
            assert row["n_pairs"] == len(r)
            assert [row["ratio_q1"], row["ratio_median"], row["ratio_q3"]] == pytest.approx(
                np.quantile(r, [0.25, 0.5, 0.75]), rel=1e-12)
            assert row["ratio_mean"] == pytest.approx(r.mean(), rel=1e-12)
            assert row["fraction_ratio_gt1"] == pytest.approx(np.mean(r > 1))
            dropped += row["n_dropped"]
    assert dropped > 0  # the threshold bites


def test_wilcoxon_without_outliers(trimmed):
    items, scores, tables = trimmed
    kn, addk = (_ratios(items, scores, s) for s in SCORING_FUNCTIONS)
    tests = assert_table_files(tables, "spud_wilcoxon").filter(pl.col("outliers") == "removed")
    assert tests["nonce_seed"].to_list() == ["1", "2", "all"]
    for row in tests.iter_rows(named=True):
        ra = _observations(addk, row["nonce_seed"])  # model_a: (trigram, addk)
        rb = _observations(kn, row["nonce_seed"])
        # one paired observation per original, dropped when either ratio is an outlier
        kept = sorted(g for g in ra if ra[g] <= THRESHOLD and rb[g] <= THRESHOLD)
        assert 0 < len(kept) < len(ra)
        assert row["n_dropped"] == len(ra) - len(kept)
        assert row["n_pairs"] == len(kept)
        x, y = np.array([ra[g] for g in kept]), np.array([rb[g] for g in kept])
        expected = wilcoxon(x, y)
        assert row["statistic"] == pytest.approx(expected.statistic)
        assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
        assert row["median_ratio_difference"] == pytest.approx(np.median(x - y))


def test_summary_orders_seeds_as_numbers_like_the_wilcoxon_table():
    from spudflow.aggregate.spud_scores import ratio_summary

    seeds = ["10", "2", "1"]
    pairs = pl.DataFrame({
        "dataset": "d", "language": "en", "nonce_method": "spud", "nonce_seed": seeds,
        "model": "m", "method": "ppl", "group_id": 0, "ppl_orig": 10.0,
        "ppl_nonce": [20.0, 30.0, 40.0], "ratio": [2.0, 3.0, 4.0]}).with_columns(
        pl.col("ratio").log().alias("log_ratio"))
    summary = ratio_summary(pairs, threshold=250.0).filter(pl.col("outliers") == "kept")
    assert summary["nonce_seed"].to_list() == ["1", "2", "10", "all"]
    assert summary["ratio_median"].to_list() == pytest.approx([4.0, 3.0, 2.0, 24 ** (1 / 3)])


@pytest.mark.slow
def test_quartile_intervals_are_the_bootstrap_over_originals(produced):
    """The `all` rows' quartile intervals: the bootstrap of the quartiles over the per-original
    geometric-mean ratios (each original drawn with all its nonce versions; resampling.py's
    quantile path, checked against scipy.stats.bootstrap in test_cluster_bootstrap.py), the
    configured seed and resamples; the per-seed rows likewise over that seed's pairs."""
    from spudflow.aggregate.resampling import quantile_bootstrap

    items, scores, tables = produced
    summary = pl.read_parquet(tables / "spud_ratio_summary.parquet").filter(
        pl.col("outliers") == "kept", pl.col("model") == "trigram", pl.col("method") == "kn")
    ratios = _ratios(items, scores, SCORING_FUNCTIONS[0])
    observations = {"all": _per_original(ratios),
                    **{str(s): {g: r for (g, seed), r in ratios.items() if seed == str(s)}
                       for s in SEEDS}}
    names = ("ratio_q1", "ratio_median", "ratio_q3")
    for row in summary.iter_rows(named=True):
        by_group = observations[row["nonce_seed"]]
        values = np.array([by_group[g] for g in sorted(by_group)])
        low, high, method = quantile_bootstrap(values, [0.25, 0.5, 0.75], 0.95, 10_000, 0,
                                               one_method=True)
        assert row["ratio_interval"] == method[0] and method[0] in ("bca", "percentile")
        for k, name in enumerate(names):
            assert row[f"{name}_ci_low"] == pytest.approx(low[k], abs=1e-12)
            assert row[f"{name}_ci_high"] == pytest.approx(high[k], abs=1e-12)
            assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]


@pytest.mark.slow
def test_quartile_intervals_rerun_to_the_byte_and_turn_off(produced, tmp_path):
    from spudflow.cli import main

    items, scores, tables = produced
    again, off = tmp_path / "again", tmp_path / "off"
    for out, extra in ((again, []), (off, ["--resamples", "0"])):
        assert main(["table-spud-scores", "--items", str(items), "--scores", str(scores),
                     "--out-dir", str(out), *extra]) == 0
    for suffix in ("parquet", "csv", "md", "tex"):
        name = f"spud_ratio_summary.{suffix}"
        assert (again / name).read_bytes() == (tables / name).read_bytes()
    summary = pl.read_parquet(off / "spud_ratio_summary.parquet")
    assert summary["ratio_median_ci_low"].is_null().all()
    assert summary["ratio_interval"].is_null().all()
    assert summary["ratio_median"].is_not_null().all()
