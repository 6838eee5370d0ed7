"""The `*_examples` tables and per-item files of each family (aggregate/family_examples.py),
written by the family's table command: the k items each scoring function gets most confidently
wrong, checked against an independent sort; k from --examples; byte-identical reruns; the front
page's escaped "where it goes wrong" list."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from spudflow.aggregate.cola import cross_validated, fit_threshold
from spudflow.aggregate.front_page import front_page
from spudflow.core import artifacts

from aggregate_inputs import (
    REPO,
    cola_inputs,
    german_case_inputs,
    items_frame,
    japanese_inputs,
    probe_metrics,
    probe_predictions,
    probe_words,
    score_path,
    scores_frame,
    spud_inputs,
    write,
)

PARADIGMS = ("adjunct_island", "anaphor_gender_agreement", "causative")


def real_blimp(root, n_pairs=40):
    """Items from the vendored BLiMP sentences (resources/blimp), two scoring functions whose
    log-probabilities are a seeded function of the sentence (so some pairs come out wrong);
    one sentence holds <, & and a quote, as the front page must escape."""
    rows = []
    for uid in PARADIGMS:
        lines = (REPO / "resources" / "blimp" / f"{uid}.jsonl").read_text().splitlines()
        for line in lines[:n_pairs]:
            pair = json.loads(line)
            for label, kind in ((1, "good"), (0, "bad")):
                rows.append({"item_id": f"{uid}-{pair['pairID']}-{kind}",
                             "group_id": f"{uid}-{pair['pairID']}",
                             "sentence": pair[f"sentence_{kind}"], "label": label,
                             "field": pair["field"], "linguistics_term": pair["linguistics_term"],
                             "UID": uid, "pairID": pair["pairID"]})
    # short, so both functions prefer it by far: every one's most confidently wrong pair
    rows[1]["sentence"] = "<b>Who</b> & \"R\"?"
    items = items_frame(rows, "blimp", "en")
    items_path = write(items, root / "results" / "items" / "blimp.parquet", artifacts.ITEMS_BLIMP)
    ids = items["item_id"].to_list()
    length = items["sentence"].str.len_chars().to_numpy()
    n_tokens = np.full(len(ids), 8)
    frames = []
    for k, model in enumerate(("lm", "other")):
        rng = np.random.default_rng(k)
        # rounded: equal margins happen, as with n-gram models
        logprob = np.round(-0.5 * length + rng.normal(0, 2.0, len(ids)), 0)
        frames.append(scores_frame(ids, model, "ppl", logprob, n_tokens))
    paths = [write(frame, score_path(root, "blimp", model))
             for frame, model in zip(frames, ("lm", "other"), strict=True)]
    return items_path, paths


def _run(run_cli, command, items, scores, out, *options):
    code, _, err = run_cli(command, "--items", items, "--scores", *scores, "--out-dir", out,
                           *options)
    assert code == 0, err
    return out


def _assert_top_k(examples, keys, margins_by_key, k, ids_by_key=None):
    """Per group, the example margins are the k largest of the independently computed wrong
    margins (all of them when fewer), in order; where the k-th margin is not tied with the
    next, the items are exactly those."""
    assert examples.height > 0
    for key, rows in examples.group_by(keys, maintain_order=True):
        expected = sorted(margins_by_key[key], reverse=True)
        assert rows["rank"].to_list() == list(range(1, min(k, len(expected)) + 1))
        assert rows["margin"].to_list() == pytest.approx(expected[:k], abs=1e-9)
        if ids_by_key is not None and len(expected) > k and expected[k - 1] > expected[k]:
            ordered = sorted(ids_by_key[key], key=lambda pair: -pair[1])
            assert set(rows["id"]) == {i for i, _ in ordered[:k]}
    assert set(examples.select(keys).unique().rows()) == {
        key for key, margins in margins_by_key.items() if margins}


def test_blimp_examples_are_the_k_most_confidently_wrong_pairs(tmp_path, run_cli):
    items, scores = real_blimp(tmp_path)
    out = _run(run_cli, "table-blimp", items, scores, tmp_path / "tables", "--examples", "4",
               "--resamples", "0")
    examples = pl.read_parquet(out / "blimp_examples.parquet")
    # independently: every pair's log-probabilities from the input files, by numpy
    item_frame = pl.read_parquet(items)
    margins, ids = {}, {}
    for path in scores:
        frame = pl.read_parquet(path).join(item_frame, on="item_id")
        for (model,), rows in frame.group_by("model"):
            good = dict(rows.filter(pl.col("label") == 1).select("group_id", "logprob_sum")
                        .iter_rows())
            bad = dict(rows.filter(pl.col("label") == 0).select("group_id", "logprob_sum")
                       .iter_rows())
            wrong = [(g, bad[g] - good[g]) for g in good if bad[g] >= good[g]]
            margins[("blimp", model, "ppl")] = [m for _, m in wrong]
            ids[("blimp", model, "ppl")] = wrong
    _assert_top_k(examples.rename({"group_id": "id"}), ["dataset", "model", "method"], margins,
                  4, ids)
    assert examples.group_by("model").len()["len"].max() == 4
    row = examples.row(0, named=True)
    assert row["margin"] == pytest.approx(row["logprob_bad"] - row["logprob_good"])
    text = item_frame.filter(pl.col("group_id") == row["group_id"]).sort("label")
    assert (row["sentence_bad"], row["sentence_good"]) == tuple(text["sentence"])
    # the per-item file: every pair and function, its margin and outcome
    every = pl.read_parquet(out / "blimp_items.parquet")
    assert every.height == 2 * len(PARADIGMS) * 40 and (out / "blimp_items.csv").is_file()
    assert every.filter(~pl.col("correct"))["margin"].min() >= 0
    assert (every["correct"] == (every["logprob_good"] > every["logprob_bad"])).all()
    # k from the option; a rerun writes the same bytes
    again = _run(run_cli, "table-blimp", items, scores, tmp_path / "again", "--examples", "4",
                 "--resamples", "0")
    for name in ("blimp_examples.parquet", "blimp_examples.csv", "blimp_items.parquet"):
        assert (again / name).read_bytes() == (out / name).read_bytes()
    two = _run(run_cli, "table-blimp", items, scores, tmp_path / "two", "--examples", "2",
               "--resamples", "0")
    fewer = pl.read_parquet(two / "blimp_examples.parquet")
    assert fewer.equals(examples.filter(pl.col("rank") <= 2))


def test_cola_examples_are_furthest_on_the_wrong_side_of_their_folds_threshold(tmp_path,
                                                                              run_cli):
    items, scores = cola_inputs(tmp_path)
    out = _run(run_cli, "table-cola", items, scores, tmp_path / "tables", "--examples", "3",
               "--resamples", "0", "--folds", "5")
    examples = pl.read_parquet(out / "cola_examples.parquet")
    every = pl.read_parquet(out / "cola_items.parquet")
    thresholds = pl.read_parquet(out / "cola_thresholds.parquet")
    # the held-out predictions behind cola_thresholds' accuracy are the per-item file's
    accuracy = every.group_by("split", "normalisation").agg(pl.col("correct").mean())
    joined = thresholds.join(accuracy, on=["split", "normalisation"])
    assert joined.height == thresholds.height
    assert joined["accuracy"].to_list() == pytest.approx(joined["correct"].to_list())
    keys = ["dataset", "model", "method", "split", "normalisation"]
    margins = {}
    for key, rows in every.group_by(keys):
        score, threshold, label = (rows[c].to_numpy() for c in ("score", "threshold", "label"))
        wrong = np.where(label == 1, score < threshold, score >= threshold)
        margins[key] = list(np.abs(score - threshold)[wrong])
    _assert_top_k(examples, keys, margins, 3)
    assert (examples["margin"] >= 0).all()


def test_held_out_thresholds_are_those_of_the_cross_validation():
    """Each item's threshold is the one its fold's training folds fitted, which made its
    held-out prediction (cola_items lists it beside the prediction)."""
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(3)
    scores, labels = rng.normal(0, 1, 50), (rng.random(50) < 0.6).astype(int)
    predictions, per_fold, thresholds = cross_validated(scores, labels, 7, 2, "mcc")
    assert ((scores >= thresholds).astype(int) == predictions).all()
    splits = KFold(n_splits=7, shuffle=True, random_state=2).split(scores)
    for (train, test), threshold in zip(splits, per_fold, strict=True):
        assert threshold == fit_threshold(scores[train], labels[train], "mcc")
        assert (thresholds[test] == threshold).all()


def test_german_spud_and_japanese_examples(tmp_path, run_cli):
    items, scores = german_case_inputs(tmp_path / "de")
    out = _run(run_cli, "table-german-case", items, scores, tmp_path / "de" / "t",
               "--examples", "3", "--resamples", "0")
    examples = pl.read_parquet(out / "german_case_examples.parquet")
    every = pl.read_parquet(out / "german_case_items.parquet")
    # the lowest of the table's own per-template AUCs (all sentences)
    templates = pl.read_parquet(out / "german_case_auc_templates.parquet").filter(
        pl.col("analysis") == "all").group_by("model").agg(pl.col("auc").min())
    assert dict(templates.iter_rows()) == pytest.approx(dict(
        examples.group_by("model").agg(pl.col("template_auc").first()).iter_rows()), abs=1e-12)
    for (model,), rows in examples.group_by("model"):
        mine = every.filter(pl.col("model") == model)
        assert rows["template_auc"][0] == pytest.approx(mine["template_auc"].min())
        template = mine.filter(pl.col("template") == rows["template"][0])
        good = template.filter(pl.col("grammatical"))["logprob_sum"].to_numpy()
        bad = template.filter(~pl.col("grammatical"))["logprob_sum"].to_numpy()
        expected = sorted((bad[None, :] - good[:, None]).ravel(), reverse=True)[:3]
        assert rows["margin"].to_list() == pytest.approx(expected)

    # SPUD: the k largest ratios of each nonce seed (seeds 2 and 10 in numeric order)
    items, scores = spud_inputs(tmp_path / "spud", nonce_seeds=(2, 10))
    out = _run(run_cli, "table-spud-scores", items, scores, tmp_path / "spud" / "t",
               "--examples", "2", "--resamples", "0")
    examples = pl.read_parquet(out / "spud_examples.parquet")
    ratios = pl.read_parquet(out / "spud_ratios.parquet")
    keys = ["nonce_method", "model", "method", "nonce_seed"]
    groups = ratios.select(keys).unique()
    assert groups["nonce_seed"].n_unique() == 2
    assert examples.height == 2 * groups.height
    for key, rows in examples.group_by(keys):
        mine = ratios.filter(*(pl.col(c) == v for c, v in zip(keys, key, strict=True)))
        assert rows["ratio"].to_list() == sorted(mine["ratio"], reverse=True)[:2]
    first = examples.filter(pl.col("model") == examples["model"][0],
                            pl.col("method") == examples["method"][0],
                            pl.col("nonce_method") == examples["nonce_method"][0])
    assert first["nonce_seed"].to_list() == ["2", "2", "10", "10"]

    items, scores = japanese_inputs(tmp_path / "ja")
    out = _run(run_cli, "table-japanese-transitivity", items, scores, tmp_path / "ja" / "t",
               "--examples", "2", "--resamples", "0", "--folds", "3")
    examples = pl.read_parquet(out / "japanese_examples.parquet")
    frame = pl.read_parquet(items).join(pl.concat([pl.read_parquet(p) for p in scores]),
                                        on="item_id")
    frame = frame.filter(pl.col("context_label") == "obligatory")
    modes = ["model", "method", "region"]
    for key, rows in examples.group_by(modes):
        mine = frame.filter(*(pl.col(c).eq_missing(v) for c, v in zip(modes, key, strict=True)))
        by_group = mine.pivot("verb_form", index="group_id", values="mean_logprob")
        margin = (by_group["intransitive"] - by_group["transitive"]).to_numpy()
        assert rows["margin"].to_list() == pytest.approx(sorted(margin[margin >= 0],
                                                                reverse=True)[:2])
        assert rows["sentence_transitive"].str.contains("[をがは]|。").all()


def test_japanese_items_are_the_pairs_the_accuracy_counts_and_hold_the_examples(tmp_path,
                                                                              run_cli):
    """japanese_transitivity_items: one row per obligatory pair and mode (verb-only modes
    included) whose `correct` averages to japanese_accuracy's accuracy per mode, checked against
    the input files; japanese_examples is the top k of its wrong rows by margin. Parquet only;
    the front page links the Parquet file and says so."""
    items, scores = japanese_inputs(tmp_path)
    out = _run(run_cli, "table-japanese-transitivity", items, scores, tmp_path / "t",
               "--examples", "3", "--resamples", "0", "--folds", "3")
    every = pl.read_parquet(out / "japanese_transitivity_items.parquet")
    assert not (out / "japanese_transitivity_items.csv").exists()
    modes = ["dataset", "model", "method", "region"]
    accuracy = pl.read_parquet(out / "japanese_accuracy.parquet").filter(
        pl.col("status") == "ok")
    per_mode = every.group_by(modes).agg(pl.col("correct").mean(), pl.len())
    joined = accuracy.join(per_mode, on=modes, nulls_equal=True)
    assert joined.height == accuracy.height == per_mode.height == 3
    assert joined["accuracy_obligatory"].to_list() == pytest.approx(joined["correct"].to_list(),
                                                                    abs=1e-12)
    assert joined["n_obligatory"].to_list() == joined["len"].to_list()
    assert set(every["mode"]) == {"bert/pppl", "bert/pppl@verb", "gpt/ppl"}
    # independently: each pair's mean log-probabilities and sentences from the input files
    item_frame = pl.read_parquet(items)
    raw = item_frame.join(pl.concat([pl.read_parquet(p) for p in scores]), on="item_id").filter(
        pl.col("context_label") == "obligatory")
    wide = raw.pivot("verb_form", index=["group_id", "model", "method", "region"],
                     values=["mean_logprob", "item_id", "sentence"])
    check = every.join(wide, on=["group_id", "model", "method", "region"], nulls_equal=True)
    assert check.height == every.height == wide.height
    assert (check["correct"] == (check["mean_logprob_transitive"]
                                 > check["mean_logprob_intransitive"])).all()
    assert check["margin"].to_list() == pytest.approx(
        (check["mean_logprob_intransitive"] - check["mean_logprob_transitive"]).to_list())
    for side in ("transitive", "intransitive"):
        assert (check[f"item_id_{side}"] == check[f"item_id_{side}_right"]).all()
        assert (check[f"sentence_{side}"] == check[f"sentence_{side}_right"]).all()
    # the examples: each mode's 3 wrong rows of the largest margin (no equal margins here)
    examples = pl.read_parquet(out / "japanese_examples.parquet")
    wrong = every.filter(~pl.col("correct"))
    expected = wrong.sort("margin", descending=True).group_by(modes, maintain_order=True).head(3)
    columns = [*modes, "group_id", "verb_pair", "sentence_transitive", "sentence_intransitive",
               "score_transitive", "score_intransitive", "margin"]
    assert examples.select(columns).sort([*modes, "margin"], nulls_last=False).equals(
        expected.select(columns).sort([*modes, "margin"], nulls_last=False))
    assert examples.height == 9
    page = front_page({"japanese_accuracy": out / "japanese_accuracy.parquet",
                       "japanese_examples": out / "japanese_examples.parquet"}, {}, tmp_path)
    where = page[page.index('<div id="examples">'):]
    assert ('href="t/japanese_transitivity_items.parquet">every item: '
            "japanese_transitivity_items (Parquet only)") in where
    assert "japanese_transitivity_items.csv" not in page


def test_the_rules_outputs_and_the_docs_list_follow_each_entrys_formats():
    """A per-item file's formats are its registry entry's: the rule expects (and the docs' list
    names) Parquet and CSV for blimp_items, Parquet alone for japanese_transitivity_items."""
    from spudflow.core.outputs_registry import render
    from spudflow.core.plan_base import registry_files

    japanese = registry_files("table_japanese_transitivity")
    assert japanese["japanese_transitivity_items_parquet"] == \
        "results/tables/japanese_transitivity_items.parquet"
    assert not any(k.startswith("japanese_transitivity_items_") and not k.endswith("parquet")
                   for k in japanese)
    blimp = registry_files("table_blimp")
    assert {blimp["blimp_items_parquet"], blimp["blimp_items_csv"]} == {
        "results/tables/blimp_items.parquet", "results/tables/blimp_items.csv"}
    rows = {line.split(" | ")[0]: line.split(" | ")[2] for line in render().splitlines()[2:]}
    assert rows["| `japanese_transitivity_items`"] == "parquet"
    assert rows["| `blimp_items`"] == "parquet, csv"
    assert rows["| `blimp_overall`"] == "parquet, csv, md, tex"


def test_a_file_written_in_parts_is_its_parts_checked_and_all_or_nothing(tmp_path, run_cli):
    """core/tables.write_table_parts (how japanese_transitivity_items is written, one dataset
    and model at a time): the parts in order, each checked against the artifact; two parts of
    one (dataset, model) would let a key repeat across parts: refused, nothing written."""
    from spudflow.core.table_artifacts import TABLES
    from spudflow.core.tables import write_table_parts

    items, scores = japanese_inputs(tmp_path)
    out = _run(run_cli, "table-japanese-transitivity", items, scores, tmp_path / "t",
               "--examples", "1", "--resamples", "0", "--folds", "3")
    whole = pl.read_parquet(out / "japanese_transitivity_items.parquet")
    artifact = TABLES["japanese_transitivity_items"]
    parts = whole.partition_by("model", maintain_order=True)
    assert len(parts) == 2
    rows = write_table_parts(iter(parts), tmp_path / "parts", artifact, ("dataset", "model"))
    assert rows == whole.height and pl.read_parquet(tmp_path / "parts.parquet").equals(whole)
    with pytest.raises(ValueError, match="in two parts"):
        write_table_parts(iter([parts[0], parts[0]]), tmp_path / "twice", artifact,
                          ("dataset", "model"))
    assert not (tmp_path / "twice.parquet").exists()
    assert write_table_parts(iter([]), tmp_path / "none", artifact, ("dataset", "model")) == 0
    assert pl.read_parquet(tmp_path / "none.parquet").schema == whole.schema


def test_the_front_page_lists_the_examples_escaped_and_links_every_item(tmp_path, run_cli):
    items, scores = real_blimp(tmp_path)
    out = _run(run_cli, "table-blimp", items, scores, tmp_path / "tables", "--examples", "40",
               "--resamples", "0")
    page = front_page({"blimp_overall": out / "blimp_overall.parquet",
                       "blimp_examples": out / "blimp_examples.parquet"}, {}, tmp_path)
    where = page[page.index('<div id="examples">'):]
    assert "<details><summary>Where it goes wrong" in where
    assert where.count("&lt;b&gt;Who&lt;/b&gt; &amp; &quot;R&quot;?") == 2  # rank 1 of both
    assert "<b>Who" not in page
    # 2 x 40 rows: above what the page shows, so each function's first, and a line saying so
    assert "Shown: 2 of its 80 rows" in where
    assert 'href="tables/blimp_items.csv"' in where
    assert 'href="tables/blimp_examples.csv"' in where


def test_k_and_the_seed_come_from_the_config_as_a_rerun_trigger(default_plan):
    """aggregate.examples (default 5) and aggregate.seed reach each family's table command
    through its `options` param, a rerun trigger (not a function of the job's input)."""
    family_rules = {"table_blimp", "table_spud_scores", "table_german_case", "table_cola",
                    "table_japanese_transitivity"}
    planned = [j for j in default_plan.jobs if j[0] in family_rules]
    assert planned
    for job in planned:
        assert "--examples 5 --examples-seed 0" in default_plan.shell[job], job
        assert "--examples 5" in str(default_plan.params[job]["options"]), job


def test_probe_examples_are_the_largest_las_drops_per_sentence(tmp_path, run_cli, caplog):
    metrics = probe_metrics(tmp_path)
    predictions = probe_predictions(metrics)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-probe", metrics, "--out-dir", out, "--resamples", "0",
                           "--examples", "3", "--predictions", predictions)
    assert code == 0, err
    examples = pl.read_parquet(out / "probe_examples.parquet")
    # each with its words and those of its nonce versions, from predictions.parquet
    for row in examples.iter_rows(named=True):
        i, method = row["sent_index"], row["nonce_method"]
        n = probe_words(i)
        assert row["sentence"] == " ".join(f"w{i}.{k}" for k in range(1, n + 1))
        assert row["nonce_sentences"] == " ‖ ".join(
            f"{method}/seed{s}: " + " ".join(f"{method}{s}.{i}.{k}" for k in range(1, n + 1))
            for s in (1, 2))
    # without predictions (a command run by hand): the same rows, no text, the log says so
    code, _, err = run_cli("table-probe", metrics, "--out-dir", tmp_path / "untold",
                           "--resamples", "0", "--examples", "3")
    assert code == 0, err
    untold = pl.read_parquet(tmp_path / "untold" / "probe_examples.parquet")
    assert untold.drop("sentence", "nonce_sentences").equals(
        examples.drop("sentence", "nonce_sentences"))
    assert untold["sentence"].null_count() == untold.height
    assert "their sentences' text is left null" in caplog.text
    # independently: LAS per sentence, pooled over the runs' seeds, from the counts file
    counts = pl.read_parquet(metrics.parent / "sentence_counts.parquet").with_columns(
        pl.col("eval_set").str.split("/").list.first().alias("method"))
    las = counts.group_by("model", "baseline", "dist_layer", "method", "sent_index").agg(
        (pl.col("n_las").sum() / pl.col("n_words").sum()).alias("las"))
    for (model, baseline, layer, method), rows in examples.group_by(
            "model", "baseline", "dist_layer", "nonce_method"):
        mine = las.filter(pl.col("model") == model, pl.col("baseline") == baseline,
                          pl.col("dist_layer") == layer)
        orig = dict(mine.filter(pl.col("method") == "orig").select("sent_index", "las")
                    .iter_rows())
        drops = sorted((orig[i] - v for i, v in mine.filter(pl.col("method") == method)
                        .select("sent_index", "las").iter_rows()), reverse=True)
        drops = [d for d in drops if d > 0]  # a sentence whose LAS does not drop is no failure
        assert rows["margin"].to_list() == pytest.approx(drops[:3], abs=1e-12)
    # 7 configurations x 2 nonce methods, k each
    assert examples.height == 7 * 2 * 3
    # every nonce version scored as its original: no sentence's LAS drops, no examples
    counts_file = metrics.parent / "sentence_counts.parquet"
    saved = {path: path.read_bytes() for path in (counts_file, metrics)}
    for path, artifact in ((counts_file, artifacts.PROBE_SENTENCES),
                           (metrics, artifacts.PROBE_METRICS)):
        frame = pl.read_parquet(path)
        orig = frame.filter(pl.col("eval_set") == "orig")
        write(pl.concat([orig.with_columns(pl.lit(name).alias("eval_set"))
                         for name in frame["eval_set"].unique(maintain_order=True)]),
              path, artifact)
    code, _, err = run_cli("table-probe", metrics, "--out-dir", tmp_path / "flat",
                           "--resamples", "0", "--examples", "3")
    assert code == 0, err
    assert pl.read_parquet(tmp_path / "flat" / "probe_examples.parquet").height == 0
    for path, data in saved.items():
        path.write_bytes(data)
    page = front_page({"probe_examples": out / "probe_examples.parquet"}, {}, tmp_path)
    assert "<h3>SPUD: DepProbe</h3>" in page and "probe_examples.csv" in page
    # runs trained before their per-sentence counts were written: no examples, the log says
    # why, the other tables are made as before (no interval needs the counts at 0 resamples)
    (metrics.parent / "sentence_counts.parquet").unlink()
    code, _, err = run_cli("table-probe", metrics, "--out-dir", tmp_path / "old",
                           "--resamples", "0")
    assert code == 0, err
    assert pl.read_parquet(tmp_path / "old" / "probe_examples.parquet").height == 0
    assert "probe_examples left empty: 1 probe runs have no sentence_counts.parquet" in (
        caplog.text)


def test_table_probe_reads_every_runs_predictions_for_its_examples_text(default_plan):
    """table_probe's input: each run's predictions.parquet beside its metrics.parquet (the
    aggregate plan's probe_predictions_files), given to the command as --predictions."""
    (job,) = [j for j in default_plan.jobs if j[0] == "table_probe"]
    metrics = sorted(f for f in default_plan.inputs[job] if f.endswith("/metrics.parquet"))
    predictions = sorted(f for f in default_plan.inputs[job]
                         if f.endswith("/predictions.parquet"))
    assert metrics and predictions == [f.replace("metrics.parquet", "predictions.parquet")
                                       for f in metrics]
    given = default_plan.shell[job].split(" --predictions ")[1].split(" --")[0].split()
    assert sorted(given) == predictions
