"""The layer sweep's choice for `auto` (App. F.6) and the edge-direction table (App. F.7,
Tables 21-22), on real probe runs (EWT slices, the tiny encoder): the choice against an argmax
picked by hand from the runs' metrics, the edge numbers against a count over the CoNLL-U text of
the gold treebank and the predictions, and the `auto` wiring in the workflow's plan."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest
from probe_support import LAYERS, probe_sweep, train_args

from spudflow.cli import main
from spudflow.core.artifacts import PROBE_PREDICTIONS_FILE
from spudflow.core.errors import EXIT_BAD_INPUT

SEEDS = (1, 2)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return probe_sweep(tmp_path_factory.mktemp("sweep"), SEEDS, max_epochs=6)


def _metrics(sweep) -> list[str]:
    return [str(run / "metrics.parquet") for run in sweep["runs"].values()]


# --- the layer choice ---------------------------------------------------------------------------

@pytest.mark.slow
def test_choice_is_the_argmax_of_the_mean_selection_metric(sweep, tmp_path):
    out = tmp_path / "choice.parquet"
    assert main(["probe", "select-layers", *_metrics(sweep), "--out", str(out)]) == 0
    choice = {r["part"]: r for r in pl.read_parquet(out).iter_rows(named=True)}
    # by hand: per layer, the mean over seeds of the run's dev metric; the first best layer
    for part, metric in (("dist", "dev_uas"), ("label", "dev_relacc")):
        means = []
        for layer in range(LAYERS + 1):
            values = [pl.read_parquet(sweep["runs"][layer, s] / "metrics.parquet")
                      .filter(pl.col("eval_set") == "orig")[metric][0] for s in SEEDS]
            means.append(np.mean(values))
        assert choice[part]["layer"] == int(np.argmax(means)), (part, means)
        assert choice[part]["score"] == pytest.approx(max(means))
        assert choice[part]["n_seeds"] == len(SEEDS)
        assert choice[part]["n_layers"] == LAYERS + 1


def test_a_tie_goes_to_the_lower_layer(sweep):
    """Equal selection scores on every layer (as a probe that learnt nothing gives): layer 0,
    whatever order the layers come in (polars' arg_max once picked the last of a tie)."""
    from pathlib import Path

    from spudflow.probe.layer_choice import choose_layers, read_sweep

    runs = read_sweep([Path(m) for m in reversed(_metrics(sweep))])
    tied = runs.with_columns(pl.lit(0.0).alias("dev_relacc"),
                             pl.lit(0.081081).alias("dev_uas"))
    assert choose_layers(tied)["layer"].to_list() == [0, 0]


def test_dev_metrics_are_the_selection_split_scores(sweep):
    """dev_* are scores of the selected probe on the held-out share: one value per run, within
    0-1, LAS below UAS and RelAcc."""
    for run in sweep["runs"].values():
        metrics = pl.read_parquet(run / "metrics.parquet")
        for column in ("dev_uas", "dev_las", "dev_relacc", "dev_root_acc"):
            assert metrics[column].n_unique() == 1
            assert 0 <= metrics[column][0] <= 1
        row = metrics.row(0, named=True)
        assert row["dev_las"] <= min(row["dev_uas"], row["dev_relacc"])
        assert row["auto_layers"] is False


@pytest.fixture(scope="module")
def auto_run(sweep):
    root = sweep["root"]
    choice = root / "choice.parquet"
    assert main(["probe", "select-layers", *_metrics(sweep), "--out", str(choice)]) == 0
    out = root / "runs" / "distauto_labelauto"
    assert main([*train_args(root, [1], 6), "--dist-layer", "auto", "--label-layer", "auto",
                 "--layer-choice", str(choice), "--out", str(out)]) == 0
    return choice, out / "seed1"


def test_auto_trains_on_the_chosen_layers(sweep, auto_run):
    choice, out = auto_run
    chosen = dict(pl.read_parquet(choice).select("part", "layer").iter_rows())
    metrics = pl.read_parquet(out / "metrics.parquet")
    assert metrics["dist_layer"].to_list() == [chosen["dist"]] * 2
    assert metrics["label_layer"].to_list() == [chosen["label"]] * 2
    assert metrics["auto_layers"].all()
    if chosen["dist"] == chosen["label"]:  # the same probe as that sweep run, seed for seed
        sweep_run = pl.read_parquet(sweep["runs"][chosen["dist"], 1] / "metrics.parquet")
        assert metrics.drop("auto_layers").equals(sweep_run.drop("auto_layers"))


def test_auto_without_a_choice_or_for_another_model_is_bad_input(sweep, auto_run, tmp_path,
                                                                 capsys):
    root, (choice, _) = sweep["root"], auto_run
    base = [*train_args(root, [1], 1), "--dist-layer", "1", "--label-layer", "auto"]
    assert main([*base, "--out", str(tmp_path / "a")]) == EXIT_BAD_INPUT
    assert "--layer-choice: needed" in capsys.readouterr().err
    other = [a if a != "tiny" else "other" for a in base]
    assert main([*other, "--layer-choice", str(choice), "--out", str(tmp_path / "b")]) \
        == EXIT_BAD_INPUT
    assert f"{choice}: 0 choices for treebank 'ewt', model 'other'" in capsys.readouterr().err
    layered = [a if a != "auto" else "2" for a in base]
    assert main([*layered, "--layer-choice", str(choice), "--out", str(tmp_path / "c")]) \
        == EXIT_BAD_INPUT
    assert "--layer-choice: given, but no layer is `auto`" in capsys.readouterr().err
    assert not any((tmp_path / d).exists() for d in "abc")


def test_select_layers_rejects_an_incomplete_or_foreign_sweep(sweep, auto_run, tmp_path, capsys):
    missing = [m for m in _metrics(sweep) if "dist2_label2/seed2" not in m]
    assert main(["probe", "select-layers", *missing, "--out", str(tmp_path / "c.parquet")]) \
        == EXIT_BAD_INPUT
    assert "a sweep run is missing" in capsys.readouterr().err
    auto_metrics = str(auto_run[1] / "metrics.parquet")
    assert main(["probe", "select-layers", *_metrics(sweep), auto_metrics, "--out",
                 str(tmp_path / "c.parquet")]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.startswith(f"{auto_metrics}: not a layer-sweep run")
    assert not (tmp_path / "c.parquet").exists()


@pytest.mark.slow
def test_layer_table_marks_the_choice_and_keeps_auto_runs_apart(sweep, auto_run, tmp_path):
    choice, out = auto_run
    metrics = [*_metrics(sweep), str(out / "metrics.parquet")]
    tables = tmp_path / "tables"
    assert main(["table-probe", *metrics, "--layer-choice", str(choice), "--out-dir",
                 str(tables)]) == 0
    layers = pl.read_parquet(tables / "probe_layers.parquet")
    chosen = dict(pl.read_parquet(choice).select("part", "layer").iter_rows())
    dev = layers.filter(pl.col("eval_set") == "dev").sort("layer")
    assert dev["layer"].to_list() == list(range(LAYERS + 1))
    assert dev["n_runs"].to_list() == [len(SEEDS)] * (LAYERS + 1)
    for layer in range(LAYERS + 1):
        hand = np.mean([pl.read_parquet(sweep["runs"][layer, s] / "metrics.parquet")["dev_uas"][0]
                        for s in SEEDS])
        assert dev["uas_mean"][layer] == pytest.approx(hand)
    for part in ("dist", "label"):
        marked = layers.filter(pl.col(f"{part}_chosen"))
        assert set(marked["layer"]) == {chosen[part]}
        assert set(marked["eval_set"]) == {"dev", "orig", "spud"}
    # the auto run is its own row of probe_summary, not merged with the sweep run
    summary = pl.read_parquet(tables / "probe_summary.parquet")
    auto_rows = summary.filter(pl.col("auto_layers"))
    assert auto_rows.height == 2 and auto_rows["n_runs"].to_list() == [1, 1]
    assert layers.height == 3 * (LAYERS + 1)  # dev, orig, spud; the auto run is not a layer row
    assert main(["figure-probe-layers", str(tables / "probe_layers.parquet"), "--out",
                 str(tmp_path / "fig")]) == 0
    # the marks are drawn: the same table without them draws another figure
    from spudflow.core.contract import write_artifact
    from spudflow.core.table_artifacts import TABLES

    unmarked = layers.with_columns(pl.lit(False).alias("dist_chosen"),
                                   pl.lit(False).alias("label_chosen"))
    write_artifact(unmarked, tmp_path / "unmarked.parquet", TABLES["probe_layers"])
    assert main(["figure-probe-layers", str(tmp_path / "unmarked.parquet"), "--out",
                 str(tmp_path / "plain")]) == 0
    assert (tmp_path / "plain.svg").read_bytes() != (tmp_path / "fig.svg").read_bytes()


# --- edge directions ------------------------------------------------------------------------

def _sentences(conllu: str) -> dict[str, list[tuple[int, int, str, str]]]:
    """sent_id -> words as (id, head, deprel, upos), read from the CoNLL-U text."""
    out, sent_id = {}, None
    for line in conllu.splitlines():
        if line.startswith("# sent_id = "):
            sent_id = line.removeprefix("# sent_id = ").strip()
            out[sent_id] = []
        elif line and not line.startswith("#"):
            f = line.split("\t")
            if f[0].isdigit():
                out[sent_id].append((int(f[0]), int(f[6]), f[7], f[3]))
    return out


def _hand_counts(gold_text: str, predicted_text: str) -> dict[str, Counter]:
    gold, predicted = _sentences(gold_text), _sentences(predicted_text)
    counts = {d: Counter() for d in ("left", "right", "root")}
    for sent_id, words in predicted.items():
        for (i, head, deprel, _), (gi, ghead, gdeprel, _) in zip(words, gold[sent_id],
                                                                   strict=True):
            assert i == gi
            side = "root" if ghead == 0 else "left" if ghead < i else "right"
            label_ok = deprel == gdeprel.split(":")[0]
            counts[side].update(n=1, uas=head == ghead, relacc=label_ok,
                                las=head == ghead and label_ok)
    return counts


def _hand_scores(sweep, layer, seed, eval_set) -> dict[str, float]:
    """Fraction, UAS, LAS and RelAcc per direction, from the text files alone. A SPUD treebank
    keeps the original trees, so the original CoNLL-U is its gold tree too."""
    predicted = (sweep["runs"][layer, seed] / "predictions" / f"{eval_set}.conllu").read_text(
        encoding="utf-8")
    counts = _hand_counts(sweep["conllu"]["test"], predicted)
    total = sum(c["n"] for c in counts.values())
    return {(side, m): (c["n"] / total if m == "fraction" else c[m] / c["n"])
            for side, c in counts.items() for m in ("fraction", "uas", "las", "relacc")}


@pytest.fixture(scope="module")
def edges(sweep, tmp_path_factory):
    root = sweep["root"]
    out = tmp_path_factory.mktemp("edges")
    assert main(["table-probe-edges", *_metrics(sweep), "--gold", "ewt", "orig",
                 str(root / "test"), "--gold", "ewt", "spud/seed1", str(root / "spud1"),
                 "--out-dir", str(out)]) == 0
    return pl.read_parquet(out / "probe_edges.parquet")


def test_edge_directions_match_a_hand_count(sweep, edges):
    layer = 1
    for eval_name, eval_set in (("orig", "orig"), ("spud", "spud/seed1")):
        hand = [_hand_scores(sweep, layer, s, eval_set) for s in SEEDS]
        for side in ("left", "right", "root"):
            row = edges.filter((pl.col("dist_layer") == layer) & (pl.col("eval_set") == eval_name)
                               & (pl.col("direction") == side)).row(0, named=True)
            assert row["n_runs"] == len(SEEDS)
            for m in ("fraction", "uas", "las", "relacc"):
                values = np.array([h[side, m] for h in hand])
                assert row[f"{m}_mean"] == pytest.approx(values.mean()), (eval_name, side, m)
                assert row[f"{m}_sd"] == pytest.approx(values.std(ddof=1), abs=1e-12)
    # Table 21's shape: left + right < 1, the rest being the roots (one per sentence)
    orig = edges.filter((pl.col("dist_layer") == layer) & (pl.col("eval_set") == "orig"))
    fractions = dict(orig.select("direction", "fraction_mean").iter_rows())
    assert fractions["left"] + fractions["right"] < 1
    assert sum(fractions.values()) == pytest.approx(1)
    assert 0.3 < fractions["left"] < fractions["right"] < 0.7  # English: more heads to the right


def test_edge_deltas_are_per_run(sweep, edges):
    layer, side = 2, "left"
    deltas = np.array([_hand_scores(sweep, layer, s, "orig")[side, "uas"]
                       - _hand_scores(sweep, layer, s, "spud/seed1")[side, "uas"]
                       for s in SEEDS])
    rows = edges.filter((pl.col("dist_layer") == layer) & (pl.col("direction") == side))
    spud = rows.filter(pl.col("eval_set") == "spud").row(0, named=True)
    assert spud["delta_uas_mean"] == pytest.approx(deltas.mean())
    assert spud["delta_uas_sd"] == pytest.approx(deltas.std(ddof=1), abs=1e-12)
    assert rows.filter(pl.col("eval_set") == "orig")["delta_uas_mean"].is_null().all()


def test_edges_refuse_predictions_that_do_not_reproduce_the_metrics(sweep, tmp_path, capsys):
    root = sweep["root"]
    gold = ["--gold", "ewt", "orig", str(root / "test"), "--gold", "ewt", "spud/seed1",
            str(root / "spud1")]
    one = str(sweep["runs"][1, 1] / "metrics.parquet")
    # counted without punctuation, while the run counted it
    assert main(["table-probe-edges", one, *gold, "--no-punct", "--out-dir",
                 str(tmp_path / "a")]) == EXIT_BAD_INPUT
    assert "predictions do not reproduce metrics.parquet" in capsys.readouterr().err
    # the training split given as the gold test treebank
    wrong = ["--gold", "ewt", "orig", str(root / "train"), *gold[4:]]
    assert main(["table-probe-edges", one, *wrong, "--out-dir", str(tmp_path / "b")]) \
        == EXIT_BAD_INPUT
    assert "is not in" in capsys.readouterr().err
    # no gold for an eval set
    assert main(["table-probe-edges", one, *gold[:4], "--out-dir", str(tmp_path / "c")]) \
        == EXIT_BAD_INPUT
    assert "no --gold treebank for treebank 'ewt', eval set 'spud/seed1'" in \
        capsys.readouterr().err
    assert not any(tmp_path.rglob("*.parquet"))


def test_an_eval_set_without_words_has_edge_rows_without_scores(sweep, tmp_path):
    """An eval set whose sentences were all too short: the probe writes an empty predictions
    file, no predictions.parquet rows and 0 words; its direction rows have no fraction or score
    (null) instead of stopping the job with "no sentences", and the original set's rows are as
    before."""
    import shutil

    from artifact_files import rewrite

    root = sweep["root"]
    run = tmp_path / "run"
    shutil.copytree(sweep["runs"][1, 1], run)
    empty = pl.col("eval_set") == "spud/seed1"
    rewrite(run / "metrics.parquet", lambda f: f.with_columns(
        *[pl.when(empty).then(0.0).otherwise(pl.col(m)).alias(m)
          for m in ("uas", "las", "relacc", "root_acc")],
        *[pl.when(empty).then(0).otherwise(pl.col(c)).cast(pl.Int64).alias(c)
          for c in ("n_words", "n_sentences")]))
    (run / "predictions" / "spud" / "seed1.conllu").write_text("", encoding="utf-8")
    rewrite(run / PROBE_PREDICTIONS_FILE, lambda f: f.filter(pl.col("eval_set") != "spud/seed1"))
    out = tmp_path / "tables"
    assert main(["table-probe-edges", str(run / "metrics.parquet"), "--gold", "ewt", "orig",
                 str(root / "test"), "--gold", "ewt", "spud/seed1", str(root / "spud1"),
                 "--out-dir", str(out)]) == 0
    edges = pl.read_parquet(out / "probe_edges.parquet")
    spud = edges.filter(pl.col("eval_set") == "spud")
    assert spud["n_edges_mean"].to_list() == [0.0] * 3
    assert spud.select("fraction_mean", "uas_mean", "delta_las_mean").null_count().row(0) == (
        3, 3, 3)
    assert edges.filter(pl.col("eval_set") == "orig")["uas_mean"].null_count() == 0


def test_predictions_meet_their_gold_sentence_by_sent_index_where_words_repeat(tmp_path):
    """A treebank may repeat a sentence's words with another tree (EWT's short replies; every
    sentence of bench_scale's repeated treebank, where matching on words first failed the totals
    check at 16x). predictions.parquet names each word's sentence by its sent_index: the
    evaluated sentence is that one, not the first of the same words; a sentence of other words,
    or of fewer, is another treebank's."""
    from spudflow.aggregate.probe_edges import PREDICTIONS_EMPTY, matched_gold
    from spudflow.core.errors import InputError

    gold = pl.DataFrame({"sent_index": [0, 0, 1, 1, 2, 2], "word_index": [1, 2] * 3,
                         "form": ["Thanks", "!"] * 3, "gold_head": [0, 1, 2, 0, 0, 1]})

    def predicted(sentences, forms=("Thanks", "!")):
        return pl.DataFrame({"eval_set": "orig",
                             "sent_index": [s for s in sentences for _ in forms],
                             "word_index": [k + 1 for _ in sentences for k in range(len(forms))],
                             "form": [f for _ in sentences for f in forms],
                             "head": 0, "deprel": "root"}, schema=PREDICTIONS_EMPTY.schema)

    words = matched_gold(predicted([1, 2]), gold, tmp_path, tmp_path)
    assert words["gold_head"].to_list() == [2, 0, 0, 1]
    with pytest.raises(InputError, match=r"sentence 3 \(sent_index\) is not in"):
        matched_gold(predicted([3]), gold, tmp_path, tmp_path)
    with pytest.raises(InputError, match=r"sentence 1 \(sent_index\) is not in .* same words"):
        matched_gold(predicted([1], ("Thanks", ".")), gold, tmp_path, tmp_path)
    with pytest.raises(InputError, match=r"sentence 2 \(sent_index\) is not in"):
        matched_gold(predicted([2], ("Thanks",)), gold, tmp_path, tmp_path)


# --- the workflow's plan with an `auto` layer -----------------------------------------------

def test_auto_layer_plan(tmp_path):
    """every_table.yaml: tiny_en's label layer `auto` (its sweep's choice), tiny_de's pair 1/2
    with a layer sweep (probe.layer_sweep), which chooses nothing."""
    from workflow_helpers import copy_workflow, plan

    workdir = copy_workflow(tmp_path / "wf", "every_table.yaml")
    planned = plan(workdir, forceall=True)
    select = [j for j in planned.jobs if j[0] == "probe_select_layers"]
    # one choice, of the task with `auto`, from that task's own sweep runs
    assert [dict(j[1]) for j in select] == [{"treebank": "tiny_en", "probe_model": "tiny_bert"}]
    assert planned.inputs[select[0]] == {
        f"results/probe/runs/tiny_en/tiny_bert/lm/dist{la}_label{la}/seed1/metrics.parquet"
        for la in range(3)}
    auto_train = [j for j in planned.jobs if j[0] == "probe_train"
                  and dict(j[1])["label"] == "auto"]
    # the model and its MR and MRC baselines; M0 reads layer 0 only
    assert sorted((dict(j[1])["treebank"], dict(j[1])["baseline"]) for j in auto_train) == [
        ("tiny_en", v) for v in ("MR", "MRC", "lm")]
    for train in auto_train:
        assert select[0] in planned.dependencies[train]
        assert "--layer-choice results/probe/layers/tiny_en/tiny_bert.parquet" in \
            planned.shell[train]
        assert "--label-layer auto" in planned.shell[train]
    # each feature job builds every baseline; with `auto`, every layer the sweep may choose; of
    # a swept task, the pair's layers (its sweep's run of layer 0 extracts the share itself)
    features = {dict(j[1])["treebank"]: j for j in planned.jobs if j[0] == "probe_features"}
    assert sorted(features) == ["tiny_de", "tiny_en"]  # training shares (the test shares: in
    # memory)
    assert " --baselines lm=0,1,2 M0=0 MR=0,1,2 MRC=0,1,2 " in planned.shell[features["tiny_en"]]
    assert " --baselines lm=1,2 M0=0 MR=1,2 MRC=1,2 " in planned.shell[features["tiny_de"]]
    for job in (j for j in planned.jobs if j[0] == "probe_train"):
        w = dict(job[1])
        extracts = (w["treebank"], w["baseline"], w["dist"]) == ("tiny_de", "lm", "0")
        assert ("--train-extract results/ingest/tiny_de/test --train-sentences "
                "results/shares/tiny_de/test/train " in planned.shell[job]) == extracts
        assert (features[w["treebank"]] in planned.dependencies[job]) != extracts
        # the probe jobs of MR and MRC build the model the feature jobs build (layers 0..2):
        # their random weights are drawn for it
        top = " --encoder-top 2 " in planned.shell[job]
        assert top == (w["baseline"] in ("MR", "MRC")), planned.shell[job]
    tables = {j[0]: j for j in planned.jobs if j[0] in ("table_probe", "table_probe_edges")}
    assert [p for p in planned.inputs[tables["table_probe"]] if "/probe/layers/" in p] == [
        "results/probe/layers/tiny_en/tiny_bert.parquet"]
    for treebank in ("tiny_en", "tiny_de"):
        assert f"--gold {treebank} spud/seed1 results/nonce/{treebank}/" in \
            planned.shell[tables["table_probe_edges"]]
