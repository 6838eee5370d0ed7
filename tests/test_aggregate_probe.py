"""DepProbe tables: mean ± sd over seeds and Δ = original − nonce per run, against numpy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from artifact_files import rewrite, tamper

from spudflow.core.artifacts import PROBE_SENTENCES_FILE

from aggregate_inputs import assert_table_files, probe_metrics, run_command


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The probe metrics and the folder of their tables, made once for the tests that only read
    them (10,000 resamples of every interval: a second a run)."""
    root = tmp_path_factory.mktemp("probe")
    metrics = probe_metrics(root)
    out = root / "tables"
    assert run_command("table-probe", metrics, "--out-dir", out) == 0
    return pl.read_parquet(metrics), out


def _rows(metrics, model, baseline, layers):
    return metrics.filter((pl.col("model") == model) & (pl.col("baseline") == baseline)
                          & (pl.col("dist_layer") == layers[0])
                          & (pl.col("label_layer") == layers[1]))


def test_summary_means_sds_and_deltas(probe):
    metrics, out = probe
    summary = assert_table_files(out, "probe_summary")
    # (bert, gpt, bert MR) at 6/7 and bert at layers 0-3; eval sets orig, spud, pos
    assert summary.height == 7 * 3
    runs = _rows(metrics, "bert", "lm", (6, 7))
    orig = runs.filter(pl.col("eval_set") == "orig").sort("seed")
    row = summary.filter((pl.col("model") == "bert") & (pl.col("baseline") == "lm")
                         & (pl.col("dist_layer") == 6) & (pl.col("eval_set") == "orig")).row(
        0, named=True)
    assert row["n_runs"] == 3
    for metric in ("uas", "las", "relacc", "root_acc"):
        assert row[f"{metric}_mean"] == pytest.approx(orig[metric].to_numpy().mean())
        assert row[f"{metric}_sd"] == pytest.approx(orig[metric].to_numpy().std(ddof=1))
    assert row["delta_uas_mean"] is None

    spud = runs.filter(pl.col("eval_set").str.starts_with("spud/"))
    by_seed = dict(zip(orig["seed"], orig["uas"], strict=True))
    deltas = np.array([by_seed[s] - u for s, u in zip(spud["seed"], spud["uas"], strict=True)])
    row = summary.filter((pl.col("model") == "bert") & (pl.col("baseline") == "lm")
                         & (pl.col("dist_layer") == 6) & (pl.col("eval_set") == "spud")).row(
        0, named=True)
    assert row["n_runs"] == 6 == len(deltas)  # three probe seeds x two nonce seeds
    assert row["uas_mean"] == pytest.approx(spud["uas"].mean())
    assert row["delta_uas_mean"] == pytest.approx(deltas.mean())
    assert row["delta_uas_sd"] == pytest.approx(deltas.std(ddof=1))
    # SPUD nonce sentences hurt more than POS-only ones in the generated metrics
    pos = summary.filter((pl.col("model") == "bert") & (pl.col("baseline") == "lm")
                         & (pl.col("dist_layer") == 6) & (pl.col("eval_set") == "pos"))
    assert row["delta_las_mean"] > pos["delta_las_mean"][0] > 0
    baseline = summary.filter(pl.col("baseline") == "MR")
    assert baseline.height == 3


def test_layer_table(probe):
    metrics, out = probe
    layers = assert_table_files(out, "probe_layers")
    sweep = layers.filter((pl.col("model") == "bert") & (pl.col("eval_set") == "orig"))
    assert sweep["layer"].to_list() == [0, 1, 2, 3]
    for layer, value in zip(sweep["layer"], sweep["las_mean"], strict=True):
        runs = _rows(metrics, "bert", "lm", (layer, layer)).filter(pl.col("eval_set") == "orig")
        assert value == pytest.approx(runs["las"].mean())
    assert layers.filter(pl.col("model") == "gpt").is_empty()  # 6/7 probes are no sweep


def test_nonce_rows_without_their_original_are_bad_input(tmp_path, run_cli):
    path = probe_metrics(tmp_path)
    rewrite(path, lambda f: f.filter(~((pl.col("model") == "gpt") & (pl.col("seed") == 2)
                                       & (pl.col("eval_set") == "orig"))))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", path, "--out-dir", out)
    assert code == 2
    assert err.strip() == (f"{path}: probe run treebank=en_ewt, model=gpt, baseline=lm, "
                           "dist_layer=6, label_layer=7, auto_layers=False, seed=2 has a "
                           "'spud/seed1' row but no original-set row")
    assert not out.exists()


def test_a_missing_column_is_bad_input(tmp_path, run_cli):
    path = probe_metrics(tmp_path)
    tamper(path, lambda f: f.drop("relacc"))
    code, _, err = run_cli("table-probe", path, "--out-dir", tmp_path / "tables")
    assert code == 2
    assert err.strip() == (f"{path}: column 'relacc' missing; the probe-train stage writes it "
                           "(probe_metrics v4)")


def test_language_table_without_nonce_sets_has_null_nonce_columns(tmp_path, run_cli):
    """probe.nonce false: one row per run group, nonce and Δ null (not guessed, not dropped)."""
    path = probe_metrics(tmp_path)
    for file in (path, path.parent / PROBE_SENTENCES_FILE):
        rewrite(file, lambda f: f.filter(pl.col("eval_set") == "orig"))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", path, "--out-dir", out)
    assert code == 0, err
    table = assert_table_files(out, "probe_languages")
    assert table.height == 7  # bert, gpt, bert MR at 6/7 and the bert sweep at layers 0-3
    assert table["nonce"].null_count() == table["n_nonce_runs"].null_count() == 7
    assert table["delta_las_mean"].null_count() == table["nonce_uas_mean"].null_count() == 7
    assert table["n_probe_seeds"].to_list() == [3] * 7
    assert table["orig_las_mean"].null_count() == 0


def test_language_table_reports_the_sentences_left_out_as_too_long(tmp_path, run_cli):
    """probe/run.py leaves a sentence too long in any version out of every eval set of its run;
    the language table says how many."""
    path = probe_metrics(tmp_path)
    rewrite(path, lambda f: f.with_columns(
        pl.when(pl.col("model") == "bert").then(3).otherwise(0).cast(pl.Int64)
        .alias("n_too_long")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", path, "--out-dir", out)
    assert code == 0, err
    table = assert_table_files(out, "probe_languages")
    for row in table.iter_rows(named=True):
        assert row["n_too_long"] == (3 if row["model"] == "bert" else 0)


@pytest.mark.slow
def test_an_eval_set_without_words_has_no_scores_rather_than_zero(tmp_path, run_cli):
    """The probe scores an eval set without words (every sentence too short) 0 over 0 words:
    its means are null, in every table, not a 0 LAS or a mean of the other runs; the other
    eval sets are as before, and the layer figure draws the sweep without that point. Here
    gpt's pos/seed2 sets are empty, and those of bert's sweep run at layer 2."""
    path = probe_metrics(tmp_path)
    empty = ((pl.col("model") == "gpt") | (pl.col("dist_layer") == 2)) & (
        pl.col("eval_set") == "pos/seed2")
    rewrite(path, lambda f: f.with_columns(
        *[pl.when(empty).then(0.0).otherwise(pl.col(m)).alias(m)
          for m in ("uas", "las", "relacc", "root_acc")],
        *[pl.when(empty).then(0).otherwise(pl.col(c)).cast(pl.Int64).alias(c)
          for c in ("n_words", "n_sentences")]))
    # as the probe writes such a set: no sentence, so no counts
    rewrite(path.parent / PROBE_SENTENCES_FILE, lambda f: f.filter(~empty))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", path, "--out-dir", out)
    assert code == 0, err
    summary = assert_table_files(out, "probe_summary")
    gpt = summary.filter(pl.col("model") == "gpt")
    pos = gpt.filter(pl.col("eval_set") == "pos").row(0, named=True)
    assert pos["n_runs"] == 6
    assert [pos[f"{m}_mean"] for m in ("uas", "las", "relacc", "root_acc")] == [None] * 4
    assert pos["delta_las_mean"] is None
    spud = gpt.filter(pl.col("eval_set") == "spud").row(0, named=True)
    assert spud["las_mean"] is not None and spud["delta_las_mean"] > 0
    languages = assert_table_files(out, "probe_languages").filter(pl.col("model") == "gpt")
    assert languages.filter(pl.col("nonce") == "pos")["nonce_las_mean"].to_list() == [None]
    # no interval for a figure without a value; the other figures of its row keep theirs
    pos_row = languages.filter(pl.col("nonce") == "pos").row(0, named=True)
    assert pos_row["nonce_las_mean_ci_low"] is None and pos_row["delta_las_mean_ci_high"] is None
    assert pos_row["orig_las_mean_ci_low"] < pos_row["orig_las_mean"]
    assert spud["las_mean_ci_low"] < spud["las_mean"] < spud["las_mean_ci_high"]
    assert languages.filter(pl.col("nonce") == "spud")["nonce_las_mean"].null_count() == 0
    assert languages["orig_las_mean"].null_count() == 0
    layers = assert_table_files(out, "probe_layers")
    assert layers.filter(pl.col("las_mean").is_null()).select("layer", "eval_set").rows() == [
        (2, "pos")]
    code, _, err = run_cli("figure-probe-layers", out / "probe_layers.parquet", "--out",
                           tmp_path / "layers")
    assert code == 0, err
    assert (tmp_path / "layers.svg").stat().st_size > 1000


def _figures(counts: pl.DataFrame, model: str, nonce: str):
    """Independently of probe_intervals: per figure, a function of scipy's index matrix giving
    the orig, nonce and Δ means (probe seeds × nonce seeds) of one configuration."""
    runs = counts.filter((pl.col("model") == model) & (pl.col("baseline") == "lm")
                         & (pl.col("dist_layer") == 6))
    by = {k: g.sort("sent_index") for k, g in runs.partition_by(
        ["seed", "eval_set"], as_dict=True).items()}

    def score(run, metric, i):
        return by[run][f"n_{metric}"].to_numpy()[i].sum(-1) / by[run]["n_words"].to_numpy()[
            i].sum(-1)

    seeds = sorted({s for s, _ in by})
    versions = sorted(e for s, e in by if s == seeds[0] and e.startswith(nonce + "/"))

    def figure(part, metric):
        def statistic(i, axis=-1):
            if part == "orig":
                return np.mean([score((s, "orig"), metric, i) for s in seeds], axis=0)
            values = [score((s, v), metric, i) if part == "nonce"
                      else score((s, "orig"), metric, i) - score((s, v), metric, i)
                      for s in seeds for v in versions]
            return np.mean(values, axis=0)
        return statistic
    return figure


def test_intervals_over_sentences_are_scipys_bootstrap_of_the_rescored_runs(probe):
    """Each interval of probe_languages: scipy.stats.bootstrap over the test sentences (same
    seed, resamples and blocks), every run rescored on the drawn sentences, its method the
    row's; the summary's rows carry the same intervals."""
    from scipy import stats

    from spudflow.aggregate.cluster_bootstrap import BLOCK

    metrics, out = probe
    counts = pl.read_parquet(out.parent / "results" / "probe" / "en_ewt" / PROBE_SENTENCES_FILE)
    languages = assert_table_files(out, "probe_languages")
    summary = assert_table_files(out, "probe_summary")
    for model in ("bert", "gpt"):
        figure = _figures(counts, model, "spud")
        row = languages.filter((pl.col("model") == model) & (pl.col("baseline") == "lm")
                               & (pl.col("dist_layer") == 6) & (pl.col("nonce") == "spud")
                               ).row(0, named=True)
        assert row["interval"] in ("bca", "percentile")
        for part in ("orig", "nonce", "delta"):
            for metric in ("relacc", "uas", "las"):
                expected = stats.bootstrap(
                    (np.arange(20),), figure(part, metric), n_resamples=10_000, batch=BLOCK,
                    vectorized=True, method=row["interval"],
                    rng=np.random.default_rng(0)).confidence_interval
                name = f"{part}_{metric}_mean"
                assert row[f"{name}_ci_low"] == pytest.approx(expected.low, abs=1e-12)
                assert row[f"{name}_ci_high"] == pytest.approx(expected.high, abs=1e-12)
                assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]
        spud = summary.filter((pl.col("model") == model) & (pl.col("baseline") == "lm")
                              & (pl.col("dist_layer") == 6) & (pl.col("eval_set") == "spud")
                              ).row(0, named=True)
        assert (spud["las_mean_ci_low"], spud["delta_las_mean_ci_high"]) == (
            row["nonce_las_mean_ci_low"], row["delta_las_mean_ci_high"])


def test_probe_intervals_rerun_to_the_byte_and_turn_off(probe, tmp_path, run_cli):
    _, out = probe
    metrics = out.parent / "results" / "probe" / "en_ewt" / "metrics.parquet"
    for name, extra in (("again", []), ("off", ["--resamples", 0])):
        code, _, err = run_cli("table-probe", metrics, "--out-dir", tmp_path / name, *extra)
        assert code == 0, err
    for table in ("probe_summary", "probe_languages"):
        for suffix in ("parquet", "csv", "md", "tex"):
            assert ((tmp_path / "again" / f"{table}.{suffix}").read_bytes()
                    == (out / f"{table}.{suffix}").read_bytes())
        off = pl.read_parquet(tmp_path / "off" / f"{table}.parquet")
        assert off["interval"].is_null().all()
        assert all(n == off.height for n in off.select(pl.col("^.*_ci_.*$")).null_count().row(0))


def test_counts_that_do_not_give_the_metrics_are_bad_input(tmp_path, run_cli):
    path = probe_metrics(tmp_path)
    counts = path.parent / PROBE_SENTENCES_FILE
    rewrite(counts, lambda f: f.with_columns(
        pl.when((pl.col("model") == "gpt") & (pl.col("seed") == 2)
                & (pl.col("eval_set") == "orig") & (pl.col("sent_index") == 0))
        .then(pl.col("n_las") - 1).otherwise(pl.col("n_las")).alias("n_las")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", path, "--out-dir", out)
    assert code == 2
    assert err.startswith(f"{counts}: run treebank=en_ewt, model=gpt, baseline=lm, seed=2, "
                          "dist_layer=6, label_layer=7, eval_set=orig: the counts do not give "
                          "metrics.parquet (las ")
    assert not out.exists()
    counts.unlink()
    code, _, err = run_cli("table-probe", path, "--out-dir", out)
    assert code == 2 and "no per-sentence counts" in err
    code, _, err = run_cli("table-probe", path, "--out-dir", out, "--resamples", 0)
    assert code == 0, err
