"""`spudflow probe features` and `probe gather` in this process, on the directory layout the
probe_features rules use (OUT/{baseline}/{eval set}.safetensors): sharded directories gather into
the unsharded one byte for byte; bad eval-set names, bad arguments and shards of different jobs
exit 2 and leave nothing behind."""

from __future__ import annotations

import pytest
from probe_support import ewt_sentences, save_tiny_encoder

from spudflow.cli import main
from spudflow.core.errors import EXIT_BAD_INPUT

EVAL_SETS = ("orig", "spud/seed1")


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """An ingested EWT test slice, its nonce version and the tiny encoder."""
    root = tmp_path_factory.mktemp("features")
    (root / "test.conllu").write_text(ewt_sentences("test", 0, 24), encoding="utf-8")
    assert main(["ingest", str(root / "test.conllu"), "--out", str(root / "test")]) == 0
    assert main(["nonce", str(root / "test"), "--lang", "en", "--seed", "1", "--out",
                 str(root / "spud1")]) == 0
    return root, save_tiny_encoder(root / "encoder")


def features(root, model, out, *extra):
    return main(["probe", "features", str(root / "test"), str(root / "spud1"), "--model",
                 str(model), "--baselines", "lm=0,1", "M0=0", "--eval-sets", *EVAL_SETS,
                 "--block-size", "8", "--out", str(out), *map(str, extra)])


def files_of(folder):
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_gathered_shard_directories_are_the_unsharded_directory(split, tmp_path):
    root, model = split
    assert features(root, model, tmp_path / "whole") == 0
    whole = files_of(tmp_path / "whole")
    assert sorted(whole) == [f"{b}/{s}.safetensors" for b in ("M0", "lm") for s in EVAL_SETS]
    shards = [tmp_path / f"shard{i}" for i in (1, 2)]
    for i, shard in enumerate(shards, 1):
        assert features(root, model, shard, "--shard", f"{i}/2") == 0
    assert main(["probe", "gather", *map(str, shards), "--out", str(tmp_path / "gathered")]) == 0
    assert files_of(tmp_path / "gathered") == whole


def test_shards_of_different_jobs_or_an_empty_shard_are_refused(split, tmp_path, capsys):
    root, model = split
    assert features(root, model, tmp_path / "one", "--shard", "1/2") == 0
    other = tmp_path / "other"
    assert main(["probe", "features", str(root / "test"), "--model", str(model),
                 "--baselines", "lm=0", "--block-size", "8", "--shard", "2/2",
                 "--out", str(other)]) == 0
    out = tmp_path / "gathered"
    assert main(["probe", "gather", str(tmp_path / "one"), str(other), "--out",
                 str(out)]) == EXIT_BAD_INPUT
    assert "shards of different jobs?" in capsys.readouterr().err
    assert not out.exists()
    (tmp_path / "empty").mkdir()
    assert main(["probe", "gather", str(tmp_path / "empty"), str(other), "--out",
                 str(out)]) == EXIT_BAD_INPUT
    assert "holds no probe feature file" in capsys.readouterr().err
    assert not out.exists()


def test_a_shard_that_fails_to_read_midway_leaves_no_gathered_file(split, tmp_path, capsys):
    root, model = split
    shards = [tmp_path / f"shard{i}" for i in (1, 2)]
    for i, shard in enumerate(shards, 1):
        assert features(root, model, shard, "--shard", f"{i}/2") == 0
    # the last file gathered (M0 is gathered before lm) is broken in the second shard
    (shards[1] / "lm" / "spud" / "seed1.safetensors").write_bytes(b"not safetensors")
    out = tmp_path / "gathered"
    assert main(["probe", "gather", *map(str, shards), "--out", str(out)]) == EXIT_BAD_INPUT
    assert "not a probe feature file" in capsys.readouterr().err
    assert [p for p in out.rglob("*") if p.is_file()] == []  # the three gathered before: gone


@pytest.mark.parametrize(("eval_sets", "message"), [
    (["orig"], "1 name(s) for 2 treebank directories"),
    (["orig", "../up"], "not an eval set name: '../up'"),
    (["orig", "/abs"], "not an eval set name: '/abs'"),
    (["orig", ".hidden"], "not an eval set name: '.hidden'"),
    (["orig", "orig"], "names an eval set twice"),
])
def test_bad_eval_set_names_exit_2_before_anything_is_written(split, tmp_path, capsys,
                                                              eval_sets, message):
    root, model = split
    out = tmp_path / "out"
    assert main(["probe", "features", str(root / "test"), str(root / "spud1"), "--model",
                 str(model), "--baselines", "lm=0", "--eval-sets", *eval_sets,
                 "--out", str(out)]) == EXIT_BAD_INPUT
    assert f"--eval-sets: {message}" in capsys.readouterr().err
    assert not out.exists()


def test_a_baseline_named_twice_exits_2(split, tmp_path, capsys):
    root, model = split
    assert main(["probe", "features", str(root / "test"), "--model", str(model),
                 "--baselines", "lm=0", "lm=1", "--out", str(tmp_path / "out")]) == EXIT_BAD_INPUT
    assert "names a baseline twice" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--baselines", "XX=0"], "not NAME=LAYERS with NAME one of lm, M0, MR, MRC: 'XX=0'"),
    (["--baselines", "lm="], "not NAME=LAYERS"),
    (["--baselines", "lm=a,b"], "not a list of layer numbers: 'a,b'"),
    (["--baselines", "lm=0", "--shard", "3/2"], "--shard"),
])
def test_bad_arguments_exit_2_with_the_reason(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        main(["probe", "features", str(tmp_path), "--model", "m", "--out",
              str(tmp_path / "out"), *args])
    assert stop.value.code == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("layer", "ok"), [("auto", True), ("2", True), ("two", False)])
def test_a_label_layer_is_a_number_or_auto(tmp_path, capsys, layer, ok):
    from spudflow.probe.cli import _layer

    if ok:
        assert _layer(layer) in ("auto", 2)
    else:
        with pytest.raises(Exception, match="not a layer number or 'auto': 'two'"):
            _layer(layer)
