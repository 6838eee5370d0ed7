"""One `probe train` call trains every seed (one probe_train job per layer pair): each seed's
folder is byte for byte what a call for that seed alone writes, appears whole or not at all,
and a seed given twice is bad input (on the command line and in the config)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from probe_support import REPO, probe_inputs, train_args

from spudflow.cli import main
from spudflow.core.config import config_errors
from spudflow.core.errors import EXIT_BAD_INPUT

LAYERS = ["--dist-layer", "1", "--label-layer", "2"]
RUN_FILES = ["history.parquet", "metrics.parquet", "predictions.parquet",
             "predictions/orig.conllu", "predictions/spud/seed1.conllu", "probe.safetensors",
             "sentence_counts.parquet"]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("seeds")
    probe_inputs(root)
    return root


def _files(run: Path) -> list[str]:
    return sorted(str(p.relative_to(run)) for p in run.rglob("*") if p.is_file())


def _train(root: Path, seeds: list[int], out: Path, *extra: str) -> int:
    return main([*train_args(root, seeds, 3), *LAYERS, *extra, "--out", str(out)])


@pytest.mark.slow
def test_seeds_in_one_call_equal_each_seed_alone(root, tmp_path):
    assert _train(root, [1, 2], tmp_path / "both") == 0
    assert _train(root, [2], tmp_path / "alone") == 0
    assert sorted(p.name for p in (tmp_path / "both").iterdir()) == ["seed1", "seed2"]
    both, alone = tmp_path / "both" / "seed2", tmp_path / "alone" / "seed2"
    assert _files(both) == _files(alone) == RUN_FILES
    for name in RUN_FILES:
        assert (both / name).read_bytes() == (alone / name).read_bytes(), name
    # not vacuous: the seeds train different probes
    seed1 = tmp_path / "both" / "seed1"
    assert (seed1 / "probe.safetensors").read_bytes() != (both / "probe.safetensors").read_bytes()


def test_a_failing_seed_keeps_the_seeds_before_it_and_nothing_of_itself(root, tmp_path,
                                                                         monkeypatch):
    import spudflow.probe.train as train

    real = train.train_probe

    def stop_at_seed_3(data, dev, settings):
        if settings.seed == 3:
            raise KeyboardInterrupt  # as a job stopped half-way
        return real(data, dev, settings)

    monkeypatch.setattr(train, "train_probe", stop_at_seed_3)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        _train(root, [1, 2, 3], out)
    assert sorted(p.name for p in out.iterdir()) == ["seed1", "seed2"]  # no temp folder either
    for seed in (1, 2):
        assert _files(out / f"seed{seed}") == RUN_FILES


def test_a_seed_given_twice_is_bad_input(root, tmp_path, capsys):
    assert _train(root, [1, 2, 1], tmp_path / "run") == EXIT_BAD_INPUT
    assert capsys.readouterr().err == "--seeds: names seed 1 twice\n"
    assert not (tmp_path / "run").exists()


def test_the_config_rejects_a_probe_seed_given_twice():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    schema = REPO / "config" / "schema.yaml"
    assert config_errors(config, schema) == []
    config["probe"]["seeds"] = [1, 2, 1]
    assert config_errors(config, schema) == [
        "config key probe.seeds: [1, 2, 1] has non-unique elements"]
    config["probe"]["seeds"] = []
    assert config_errors(config, schema) == ["config key probe.seeds: [] should be non-empty"]


def test_max_train_sentences_trains_on_a_seeded_sample(root, tmp_path):
    import polars as pl

    out = tmp_path / "capped"
    assert _train(root, [1], out, "--max-train-sentences", "20", "--max-dev-sentences",
                  "4", "--max-sentences-seed", "7") == 0
    row = pl.read_parquet(out / "seed1" / "metrics.parquet").row(0, named=True)
    # 20 of the training split's sentences, a quarter of them held out, and 4 of those kept
    assert (row["n_train_sentences"], row["n_dev_sentences"]) == (15, 4)


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_a_cap_is_a_positive_number(root, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as stop:
        _train(root, [1], tmp_path / "bad", "--max-train-sentences", value)
    assert stop.value.code == EXIT_BAD_INPUT
    assert "--max-train-sentences" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_acl_predicted_as_unk_writes_the_reference_s_predictions(root, tmp_path):
    import polars as pl

    def deprels(out: Path) -> list[str]:
        text = (out / "seed1" / "predictions" / "orig.conllu").read_text(encoding="utf-8")
        return [line.split("\t")[7] for line in text.splitlines()
                if line and not line.startswith("#")]

    plain, reference = tmp_path / "plain", tmp_path / "reference"
    assert _train(root, [1], plain) == 0
    assert _train(root, [1], reference, "--acl-predicted-as-unk") == 0
    # the same probe (the option changes no training): its `acl` written as UNK
    assert "acl" in deprels(plain)
    assert deprels(reference) == ["UNK" if d == "acl" else d for d in deprels(plain)]
    metrics = [pl.read_parquet(out / "seed1" / "metrics.parquet").row(0, named=True)
               for out in (plain, reference)]
    assert metrics[1]["uas"] == metrics[0]["uas"]
    assert metrics[1]["relacc"] < metrics[0]["relacc"]


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_rank_of_zero_or_less_is_bad_input(root, tmp_path, capsys, value):
    """A rank-0 projection scores every sentence with no probe at all: refused, not trained."""
    with pytest.raises(SystemExit) as stop:
        _train(root, [1], tmp_path / "bad", "--rank", value)
    assert stop.value.code == EXIT_BAD_INPUT
    assert "--rank" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_an_eval_set_that_is_the_training_set_is_bad_input(root, tmp_path, capsys):
    """Tested on what it trained on, a probe would report memory as structure: the same files,
    or a copy of the training split, are refused before any training."""
    import shutil

    args = ["probe", "train", "--train", str(root / "train.safetensors"), str(root / "train"),
            *LAYERS, "--treebank", "ewt", "--model", "tiny", "--rank", "16", "--max-epochs", "1",
            "--holdout", "0.25", "--out", str(tmp_path / "run")]
    same = ["--eval", "orig", str(root / "train.safetensors"), str(root / "train")]
    assert main([*args, *same]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err == (
        f"{root / 'train.safetensors'}: eval set 'orig' is the training set (--train): a probe "
        "is tested on sentences it did not train on\n")
    copy = tmp_path / "copy"
    shutil.copytree(root / "train", copy)
    shutil.copy(root / "train.safetensors", tmp_path / "copy.safetensors")
    assert main([*args, "--eval", "orig", str(tmp_path / "copy.safetensors"), str(copy)]) == \
        EXIT_BAD_INPUT
    assert "every sentence of it is a sentence of the training set" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_run_writes_counts_per_sentence_that_give_its_metrics(root, tmp_path):
    """sentence_counts.parquet, checked when written and read: per eval set, its sentences'
    counts sum to the metrics row, and orig and nonce sets hold the same sentences; the table
    reads it and gives intervals around the run's figures."""
    import polars as pl

    from spudflow.core.artifacts import PROBE_METRICS, PROBE_SENTENCES
    from spudflow.core.contract import read_artifact

    assert _train(root, [1], tmp_path / "run") == 0
    run = tmp_path / "run" / "seed1"
    counts = read_artifact(run / "sentence_counts.parquet", PROBE_SENTENCES)
    metrics = read_artifact(run / "metrics.parquet", PROBE_METRICS)
    assert sorted(counts["eval_set"].unique()) == sorted(metrics["eval_set"]) == [
        "orig", "spud/seed1"]
    for row in metrics.iter_rows(named=True):
        own = counts.filter(pl.col("eval_set") == row["eval_set"])
        assert own.height == row["n_sentences"] > 0
        assert own["n_words"].sum() == row["n_words"]
        for metric in ("uas", "las", "relacc"):
            assert own[f"n_{metric}"].sum() / row["n_words"] == pytest.approx(row[metric],
                                                                              abs=1e-12)
        assert own["root_right"].mean() == pytest.approx(row["root_acc"], abs=1e-12)
    by_set = {e: sorted(g["sent_index"]) for (e,), g in counts.group_by("eval_set")}
    assert by_set["orig"] == by_set["spud/seed1"]
    assert main(["table-probe", str(run / "metrics.parquet"), "--resamples", "200",
                 "--out-dir", str(tmp_path / "tables")]) == 0
    row = pl.read_parquet(tmp_path / "tables" / "probe_languages.parquet").row(0, named=True)
    assert row["orig_las_mean_ci_low"] <= row["orig_las_mean"] <= row["orig_las_mean_ci_high"]
    assert row["delta_uas_mean_ci_low"] <= row["delta_uas_mean"] <= row["delta_uas_mean_ci_high"]


@pytest.mark.slow
def test_a_runs_predictions_parquet_holds_its_conllus_trees(root, tmp_path):
    """predictions.parquet, checked when written and read: per eval set, every word of its
    predictions CoNLL-U (as `conllu` parses it) with the same sentence, ID, form, head and
    label, and no other word."""
    import conllu
    import polars as pl

    from spudflow.core.artifacts import PROBE_PREDICTIONS, TREEBANK_SENTENCES
    from spudflow.core.contract import read_artifact

    assert _train(root, [1], tmp_path / "run") == 0
    run = tmp_path / "run" / "seed1"
    table = read_artifact(run / "predictions.parquet", PROBE_PREDICTIONS)
    assert table["eval_set"].unique(maintain_order=True).to_list() == ["orig", "spud/seed1"]
    sent_index = {sent_id: i for sent_id, i in read_artifact(
        root / "test" / "sentences.parquet", TREEBANK_SENTENCES).select(
        "sent_id", "sent_index").iter_rows()}
    for eval_set in ("orig", "spud/seed1"):
        text = (run / "predictions" / f"{eval_set}.conllu").read_text(encoding="utf-8")
        parsed = [(sent_index[s.metadata["sent_id"]], t["id"], t["form"], t["head"], t["deprel"])
                  for s in conllu.parse(text) for t in s if isinstance(t["id"], int)]
        own = table.filter(pl.col("eval_set") == eval_set).drop("eval_set")
        assert [tuple(r) for r in own.iter_rows()] == parsed
