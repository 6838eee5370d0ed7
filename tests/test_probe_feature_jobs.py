"""One probe feature job per (model, baseline, treebank, split), writing every eval set of the
split (the original and its nonce versions) with one model load: planned and run through
Snakemake on the tiny config, unsharded and sharded, against one `probe features` call per set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from workflow_helpers import copy_workflow, plan, run_workflow, update_config

from spudflow.cli import main
from spudflow.probe.feature_file import eval_sets_in, read_features

MODEL, TREEBANK, TESTED, TRAINED = "tiny_bert", "tiny_en", "test@heldout", "test@train"
# the tiny config's eval sets: nonce methods spud and pos, seed 1
EVAL_SETS = ["orig", "pos/seed1", "spud/seed1"]


def _feature_dir(baseline: str, split: str) -> str:
    return f"results/probe/features/{MODEL}/{baseline}/{TREEBANK}/{split}"


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
    """The tiny workflow's lm features of the tested share, made by Snakemake."""
    workdir = copy_workflow(tmp_path_factory.mktemp("features") / "workflow")
    run_workflow(workdir, targets=[_feature_dir("lm", TESTED)])
    return workdir


def test_a_split_tested_on_k_eval_sets_is_one_job_per_baseline(unsharded, tmp_path):
    planned = plan(unsharded, forceall=True)
    jobs = _jobs(planned, "probe_features")
    assert jobs == [{"probe_model": MODEL, "baseline": b, "treebank": TREEBANK, "split": s}
                    for b in ("M0", "lm") for s in (TESTED, TRAINED)]
    lm = ("probe_features", tuple(sorted(jobs[2].items())))
    assert dict(lm[1])["baseline"] == "lm" and dict(lm[1])["split"] == TESTED
    assert planned.outputs[lm] == {(_feature_dir("lm", TESTED), True)}
    # the training share is only trained on: its job extracts `orig` alone
    train = ("probe_features", tuple(sorted(jobs[3].items())))
    assert planned.shell[train].split("--out ")[1].split()[0] == \
        f"{_feature_dir('lm', TRAINED)}/orig.safetensors"
    assert "/nonce/" not in " ".join(planned.inputs[train])
    assert "--layers 1,2 " in planned.shell[lm]

    out = unsharded / _feature_dir("lm", TESTED)
    assert eval_sets_in(out) == EVAL_SETS
    # the same features as one `probe features` call per eval set (the job's options)
    share = unsharded / "results/shares" / TREEBANK / "test" / "heldout"
    for eval_set in EVAL_SETS:
        treebank = unsharded / ("results/ingest/tiny_en/test" if eval_set == "orig" else
                                f"results/nonce/tiny_en/test/{eval_set}")
        single = tmp_path / f"{eval_set.replace('/', '_')}.safetensors"
        assert main(["probe", "features", str(treebank), "--model",
                     str(unsharded / "resources/tiny/tiny_bert"), "--layers", "1,2",
                     "--sentences", str(share), "--device", "cpu", "--out", str(single)]) == 0
        _assert_same_features(out / f"{eval_set}.safetensors", single)


def test_sharded_features_gather_into_the_unsharded_directory(unsharded, tmp_path):
    workdir = copy_workflow(tmp_path / "workflow")
    update_config(workdir, lambda config: config["probe"].update(feature_shards=2))
    target = _feature_dir("lm", TESTED)
    planned = plan(workdir, targets=[target])
    assert _jobs(planned, "probe_features") == []
    assert [w["shard"] for w in _jobs(planned, "probe_features_shard")] == ["1", "2"]
    assert len(_jobs(planned, "probe_features_gather")) == 1
    run_workflow(workdir, targets=[target])
    gathered = workdir / target
    assert eval_sets_in(gathered) == EVAL_SETS
    for eval_set in EVAL_SETS:
        name = f"{eval_set}.safetensors"
        assert (gathered / name).read_bytes() == (unsharded / target / name).read_bytes()
    assert not list(gathered.parent.glob("*.shard*"))  # temp shard directories are removed


def test_a_failed_set_leaves_none_of_the_job_s_files(unsharded, tmp_path, capsys):
    """Bad input in the second treebank: nothing is written, not even the first set."""
    model = str(unsharded / "resources/tiny/tiny_bert")
    good = unsharded / "results/ingest/tiny_en/test"
    outs = [tmp_path / "out" / "orig.safetensors", tmp_path / "out" / "spud" / "seed1.safetensors"]
    assert main(["probe", "features", str(good), str(tmp_path / "missing"), "--model", model,
                 "--layers", "1", "--out", *map(str, outs)]) == 2
    assert "missing" in capsys.readouterr().err
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    assert main(["probe", "features", str(good), "--model", model, "--layers", "1",
                 "--out", *map(str, outs)]) == 2
    assert "--out: 2 file(s) for 1 treebank directories" in capsys.readouterr().err
