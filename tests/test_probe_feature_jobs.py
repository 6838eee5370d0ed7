"""One probe feature job per (model, treebank, split) trained or selected on, writing every
baseline's file, one encoder at a time: planned and run through Snakemake on the tiny config,
unsharded and sharded, against one `probe features` call per baseline. A tested split has no
feature job: each probe job extracts its eval sets (the original and its nonce versions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from probe_support import ewt_sentences, save_tiny_encoder
from workflow_helpers import copy_workflow, plan, run_workflow, update_config

from spudflow.cli import main
from spudflow.probe.feature_file import eval_sets_in, read_features

MODEL, TREEBANK, TESTED, TRAINED = "tiny_bert", "tiny_en", "test@heldout", "test@train"
# the tiny config's baselines: lm and M0
BASELINES = ["M0", "lm"]


def _feature_dir(split: str) -> str:
    return f"results/probe/features/{MODEL}/{TREEBANK}/{split}"


def _jobs(planned, rule: str) -> list[dict[str, str]]:
    return sorted((dict(w) for r, w in planned.jobs if r == rule),
                  key=lambda w: sorted(w.items()))


def _assert_same_features(left: Path, right: Path) -> None:
    a, b = read_features(left), read_features(right)
    assert sorted(a.layers) == sorted(b.layers)
    for layer in a.layers:
        assert np.array_equal(a.layers[layer], b.layers[layer])
    assert np.array_equal(a.sent_index, b.sent_index)
    assert np.array_equal(a.word_offsets, b.word_offsets)
    assert a.too_long == b.too_long
    assert {k: v for k, v in a.info.items() if k != "model"} == \
        {k: v for k, v in b.info.items() if k != "model"}


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory) -> Path:
    """The tiny workflow's features of the training share, made by Snakemake."""
    workdir = copy_workflow(tmp_path_factory.mktemp("features") / "workflow")
    run_workflow(workdir, targets=[_feature_dir(TRAINED)])
    return workdir


@pytest.mark.slow
def test_a_split_trained_on_is_one_job_for_every_baseline_and_a_tested_one_none(unsharded,
                                                                                tmp_path):
    planned = plan(unsharded, forceall=True)
    jobs = _jobs(planned, "probe_features")
    assert jobs == [{"probe_model": MODEL, "treebank": TREEBANK, "split": TRAINED}]
    train = ("probe_features", tuple(sorted(jobs[0].items())))
    assert planned.outputs[train] == {(_feature_dir(TRAINED), True)}
    assert " --baselines lm=1,2 M0=0 --eval-sets orig --device " in planned.shell[train]
    assert "/nonce/" not in " ".join(planned.inputs[train])
    # each probe run reads its baseline's file of the training share's directory and extracts
    # the tested share's eval sets itself
    runs = [j for j in planned.jobs if j[0] == "probe_train" and dict(j[1])["baseline"] == "M0"]
    assert runs and all(_feature_dir(TRAINED) in planned.inputs[j]
                        and _feature_dir(TESTED) not in " ".join(planned.inputs[j])
                        and f"{_feature_dir(TRAINED)}/M0/orig.safetensors" in planned.shell[j]
                        and "--eval-extract spud/seed1 results/nonce/tiny_en/test/spud/seed1 "
                        in planned.shell[j] for j in runs)

    out = unsharded / _feature_dir(TRAINED)
    assert eval_sets_in(out) == [f"{b}/orig" for b in BASELINES]
    # the same features as one `probe features` call per baseline
    share = unsharded / "results/shares" / TREEBANK / "test" / "train"
    for baseline, layers in (("lm", "1,2"), ("M0", "0")):
        single = tmp_path / baseline
        assert main(["probe", "features", str(unsharded / "results/ingest/tiny_en/test"),
                     "--model", str(unsharded / "resources/tiny/tiny_bert"), "--baselines",
                     f"{baseline}={layers}", "--sentences", str(share), "--device", "cpu",
                     "--out", str(single)]) == 0
        _assert_same_features(out / baseline / "orig.safetensors",
                              single / baseline / "orig.safetensors")


@pytest.mark.slow
def test_sharded_features_gather_into_the_unsharded_directory(unsharded, tmp_path):
    workdir = copy_workflow(tmp_path / "workflow")
    update_config(workdir, lambda config: config["probe"].update(feature_shards=2))
    target = _feature_dir(TRAINED)
    planned = plan(workdir, targets=[target])
    assert _jobs(planned, "probe_features") == []
    assert [w["shard"] for w in _jobs(planned, "probe_features_shard")] == ["1", "2"]
    assert len(_jobs(planned, "probe_features_gather")) == 1
    run_workflow(workdir, targets=[target])
    gathered = workdir / target
    names = eval_sets_in(gathered)
    assert names == [f"{b}/orig" for b in BASELINES]
    for name in names:
        file = f"{name}.safetensors"
        assert (gathered / file).read_bytes() == (unsharded / target / file).read_bytes()
    assert not list(gathered.parent.glob("*.shard*"))  # temp shard directories are removed


@pytest.fixture(scope="module")
def ewt(tmp_path_factory) -> Path:
    """An EWT test slice and its SPUD version, and a tiny pretrained-like encoder."""
    root = tmp_path_factory.mktemp("ewt")
    (root / "test.conllu").write_text(ewt_sentences("test", 0, 30), encoding="utf-8")
    assert main(["ingest", str(root / "test.conllu"), "--out", str(root / "test")]) == 0
    assert main(["nonce", str(root / "test"), "--lang", "en", "--seed", "1", "--out",
                 str(root / "spud1")]) == 0
    save_tiny_encoder(root / "encoder", pretrained_like=True)
    return root


ALL_BASELINES = {"lm": "0,1,2", "M0": "0", "MR": "1,2", "MRC": "0,2"}


def _call(root: Path, out: Path, baselines: list[str]) -> int:
    return main(["probe", "features", str(root / "test"), str(root / "spud1"), "--model",
                 str(root / "encoder"), "--eval-sets", "orig", "spud/seed1", "--init-seed", "7",
                 "--baselines", *(f"{b}={ALL_BASELINES[b]}" for b in baselines),
                 "--block-size", "8", "--out", str(out)])


@pytest.mark.slow
def test_every_baseline_in_one_call_is_byte_identical_to_one_call_each(ewt, tmp_path):
    """Each baseline's files do not depend on the baselines built with it or their order:
    MR/MRC weights come from --init-seed alone."""
    together = tmp_path / "together"
    assert _call(ewt, together, ["lm", "M0", "MR", "MRC"]) == 0
    files = sorted(p.relative_to(together) for p in together.rglob("*.safetensors"))
    assert [f.as_posix() for f in files] == [f"{b}/{s}.safetensors" for b in sorted(ALL_BASELINES)
                                             for s in ("orig", "spud/seed1")]
    reversed_order = tmp_path / "reversed"
    assert _call(ewt, reversed_order, ["MRC", "MR", "M0", "lm"]) == 0
    for baseline in ALL_BASELINES:
        alone = tmp_path / f"alone_{baseline}"
        assert _call(ewt, alone, [baseline]) == 0
        assert [p.name for p in alone.iterdir()] == [baseline]
        for file in (f for f in files if f.parts[0] == baseline):
            expected = (alone / file).read_bytes()
            assert (together / file).read_bytes() == expected, file
            assert (reversed_order / file).read_bytes() == expected, file
    # the baselines do differ: MR is not the model, MRC keeps its embeddings
    lm, mr, mrc = (read_features(together / b / "orig.safetensors") for b in ("lm", "MR", "MRC"))
    assert np.array_equal(mrc.layers[0], lm.layers[0])
    assert not np.allclose(mr.layers[1], lm.layers[1], atol=1e-2)
    assert read_features(together / "MR" / "orig.safetensors").info["init_seed"] == "7"


def test_a_failure_leaves_no_output(ewt, tmp_path, capsys):
    """Bad input in the second treebank, or in the last baseline: nothing is written, not even
    the baselines or sets that were complete."""
    model, good = str(ewt / "encoder"), str(ewt / "test")
    out = tmp_path / "out"
    assert main(["probe", "features", good, str(tmp_path / "missing"), "--model", model,
                 "--baselines", "lm=1", "--eval-sets", "orig", "spud/seed1",
                 "--out", str(out)]) == 2
    assert "missing" in capsys.readouterr().err
    assert main(["probe", "features", good, "--model", model, "--baselines", "lm=1", "M0=1",
                 "--out", str(out)]) == 2
    assert "baseline M0 is layer 0 only" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert main(["probe", "features", good, "--model", model, "--baselines", "lm=1",
                 "--eval-sets", "orig", "spud/seed1", "--out", str(out)]) == 2
    assert "--eval-sets: 2 name(s) for 1 treebank directories" in capsys.readouterr().err
    assert main(["probe", "features", good, "--model", model, "--baselines", "lm=1", "lm=2",
                 "--out", str(out)]) == 2
    assert "--baselines: names a baseline twice" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
