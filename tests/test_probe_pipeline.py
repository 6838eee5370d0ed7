"""The probe stage end to end on slices of the vendored EWT treebank with a tiny random BERT:
features (sharded = unsharded), training (the loss falls), metrics for orig and nonce, predictions
that round-trip through `spudflow ingest`, and bad input."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch
from probe_support import LAYERS, ewt_sentences, feature_file, save_tiny_encoder

from spudflow.cli import main
from spudflow.core.errors import EXIT_BAD_INPUT
from spudflow.core.treebank import read_treebank, write_treebank
from spudflow.probe.feature_file import read_features


@pytest.fixture(scope="module")
def probe_data(tmp_path_factory):
    """Ingested train (EWT dev slice) and test (EWT test slice) splits, a SPUD version of the
    test split, and the tiny encoder."""
    root = tmp_path_factory.mktemp("probe")
    for name, split, count in (("train", "dev", 120), ("test", "test", 40)):
        (root / f"{name}.conllu").write_text(ewt_sentences(split, 0, count), encoding="utf-8")
        assert main(["ingest", str(root / f"{name}.conllu"), "--out",
                     str(root / name)]) == 0
    assert main(["nonce", str(root / "test"), "--lang", "en", "--seed", "1", "--out",
                 str(root / "spud1")]) == 0
    model = save_tiny_encoder(root / "encoder")
    return root, model


def features(root, model, split, out, *extra, baseline="lm"):
    return feature_file(root / split, model, f"0,1,{LAYERS}", out, *extra, baseline=baseline)


def test_sharded_features_equal_unsharded(probe_data):
    root, model = probe_data
    whole = root / "whole.safetensors"
    assert features(root, model, "train", whole, "--block-size", "16") == 0
    shards = [root / f"shard{i}.safetensors" for i in range(3)]
    for i, shard in enumerate(shards, 1):
        assert features(root, model, "train", shard, "--block-size", "16", "--shard",
                        f"{i}/3") == 0
    assert main(["probe", "gather", *map(str, shards), "--out",
                 str(root / "gathered.safetensors")]) == 0
    assert (root / "gathered.safetensors").read_bytes() == whole.read_bytes()
    loaded = read_features(whole)
    assert sorted(loaded.layers) == [0, 1, LAYERS]
    assert len(loaded.sent_index) == 120
    assert loaded.layers[1].shape == (loaded.word_offsets[-1], 32)
    assert loaded.layers[1].dtype == np.float16
    # A shard is a contiguous range of sentences.
    first = read_features(shards[0])
    assert first.sent_index.tolist() == loaded.sent_index[:len(first.sent_index)].tolist()


def test_baselines_differ_from_the_model(probe_data):
    root, model = probe_data
    files = {}
    for name in ("lm", "MR", "MRC"):
        files[name] = root / f"base_{name}.safetensors"
        assert features(root, model, "test", files[name], baseline=name) == 0
    assert feature_file(root / "test", model, "0", root / "base_M0.safetensors",
                        baseline="M0") == 0
    lm, mr, mrc = (read_features(files[n]) for n in ("lm", "MR", "MRC"))
    m0 = read_features(root / "base_M0.safetensors")
    assert np.array_equal(m0.layers[0], lm.layers[0])
    assert not np.allclose(mr.layers[0], lm.layers[0], atol=1e-2)
    assert not np.allclose(mrc.layers[1], lm.layers[1], atol=1e-2)
    # Same seed, same random model.
    assert features(root, model, "test", root / "again.safetensors", baseline="MR") == 0
    assert (root / "again.safetensors").read_bytes() == files["MR"].read_bytes()


@pytest.mark.slow
def test_train_evaluates_orig_and_nonce(probe_data):
    root, model = probe_data
    for split in ("train", "test", "spud1"):
        assert features(root, model, split, root / f"{split}.safetensors") == 0
    args = ["probe", "train", "--train", str(root / "train.safetensors"), str(root / "train"),
            "--eval", "orig", str(root / "test.safetensors"), str(root / "test"),
            "--eval", "spud/seed1", str(root / "spud1.safetensors"), str(root / "spud1"),
            "--dist-layer", "1", "--label-layer", str(LAYERS), "--seeds", "1",
            "--treebank", "ewt", "--model", "tiny", "--max-epochs", "8", "--out",
            str(root / "run")]
    assert main(args) == 0
    out = root / "run" / "seed1"
    history = pl.read_parquet(out / "history.parquet")
    assert history.get_column("train_loss")[-1] < 0.8 * history.get_column("train_loss")[0]
    metrics = pl.read_parquet(out / "metrics.parquet")
    assert metrics.get_column("eval_set").to_list() == ["orig", "spud/seed1"]
    assert metrics.get_column("baseline").to_list() == ["lm", "lm"]  # the model itself
    for column in ("uas", "las", "relacc", "root_acc"):
        values = metrics.get_column(column)
        assert values.is_between(0, 1).all()
    row = metrics.row(0, named=True)
    assert row["las"] <= row["uas"] and row["las"] <= row["relacc"]
    assert row["n_words"] > 0 and row["n_short"] >= 0
    # Same inputs and seed: byte-identical outputs.
    again = root / "again" / "seed1"
    assert main([*args[:-1], str(again.parent)]) == 0
    for name in ("metrics.parquet", "history.parquet", "probe.safetensors",
                 "predictions/orig.conllu"):
        assert (again / name).read_bytes() == (out / name).read_bytes()
    # Predictions are CoNLL-U that `spudflow ingest` reads back.
    predicted = out / "predictions" / "spud" / "seed1.conllu"
    assert main(["ingest", str(predicted), "--out", str(root / "reingested")]) == 0
    words = pl.read_parquet(root / "reingested" / "tokens.parquet").filter(
        pl.col("token_type") == "word")
    assert words.height == metrics.row(1, named=True)["n_words"]
    assert words.get_column("head").null_count() == 0


def test_bad_input_exits_2(probe_data, tmp_path, capsys):
    root, model = probe_data
    assert main(["probe", "features", str(root / "test"), "--model", str(model), "--baselines",
                 "lm=1", "MR=1,9", "--out", str(tmp_path / "f")]) == EXIT_BAD_INPUT
    assert "layer 9 is outside the model (layers 0..2" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # not even the lm baseline, built first

    # A split without HEAD/DEPREL cannot train a probe.
    tokens, sentences = read_treebank(root / "test")
    bare = tmp_path / "bare"
    write_treebank(bare, tokens.with_columns(pl.lit(None, dtype=pl.Int32).alias("head")),
                   sentences)
    assert features(root, model, "test", tmp_path / "t.safetensors") == 0
    assert main(["probe", "train", "--train", str(tmp_path / "t.safetensors"), str(bare),
                 "--eval", "orig", str(tmp_path / "t.safetensors"), str(bare),
                 "--dist-layer", "1", "--label-layer", "1", "--treebank", "x", "--model", "y",
                 "--out", str(tmp_path / "run")]) == EXIT_BAD_INPUT
    assert "word without HEAD/DEPREL" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_long_sentences_are_left_out_and_counted(probe_data, tmp_path, caplog):
    root, model = probe_data
    out = tmp_path / "short.safetensors"
    assert features(root, model, "test", out, "--max-length", "20") == 0
    err = caplog.text  # logged through core/logs.py, not printed
    loaded = read_features(out)
    words = pl.read_parquet(root / "test" / "sentences.parquet")
    assert loaded.too_long and len(loaded.too_long) + len(loaded.sent_index) == words.height
    assert f"{len(loaded.too_long)} sentence(s) longer than 20 tokens left out" in err
    # Every kept sentence fits; none is cut.
    assert not set(loaded.too_long) & set(loaded.sent_index.tolist())


def test_more_shards_than_blocks_gives_empty_shards(probe_data, tmp_path):
    root, model = probe_data
    whole = tmp_path / "whole.safetensors"
    assert features(root, model, "test", whole, "--block-size", "32") == 0  # 40 sentences
    shards = [tmp_path / f"s{i}.safetensors" for i in range(3)]
    for i, shard in enumerate(shards, 1):
        assert features(root, model, "test", shard, "--block-size", "32", "--shard",
                        f"{i}/3") == 0
    assert [len(read_features(s).sent_index) for s in shards] == [0, 32, 8]
    assert main(["probe", "gather", *map(str, shards), "--out",
                 str(tmp_path / "gathered.safetensors")]) == 0
    assert (tmp_path / "gathered.safetensors").read_bytes() == whole.read_bytes()


def _short_sentences(treebank, min_words=4) -> tuple[int, int]:
    """(sentences, those with fewer than min_words syntactic words) of an ingested split."""
    counts = (pl.read_parquet(treebank / "tokens.parquet").filter(pl.col("token_type") == "word")
              .group_by("sent_index").len())
    return counts.height, counts.filter(pl.col("len") < min_words).height


def test_min_words_filters_training_selection_and_evaluation(probe_data, tmp_path):
    """App. C: sentences under 4 words are dropped everywhere, not only from the eval sets."""
    root, model = probe_data
    (tmp_path / "dev.conllu").write_text(ewt_sentences("dev", 120, 40), encoding="utf-8")
    assert main(["ingest", str(tmp_path / "dev.conllu"), "--out", str(tmp_path / "dev")]) == 0
    splits = {"train": root / "train", "dev": tmp_path / "dev"}
    for name, treebank in splits.items():
        assert feature_file(treebank, model, "1", tmp_path / f"{name}.safetensors") == 0
    data = {name: [str(tmp_path / f"{name}.safetensors"), str(treebank)]
            for name, treebank in splits.items()}
    n_train, short_train = _short_sentences(splits["train"])
    n_dev, short_dev = _short_sentences(splits["dev"])
    assert short_train >= 5 and short_dev >= 2  # the slices do hold short sentences
    common = ["--train", *data["train"], "--eval", "orig", *data["dev"], "--dist-layer", "1",
              "--label-layer", "1", "--treebank", "ewt", "--model", "tiny", "--max-epochs", "2"]

    # Selection on a dev split: each split drops its own short sentences.
    assert main(["probe", "train", *common, "--dev", *data["dev"],
                 "--out", str(tmp_path / "with_dev")]) == 0
    row = pl.read_parquet(tmp_path / "with_dev" / "seed1" / "metrics.parquet").row(0, named=True)
    assert (row["n_train_sentences"], row["n_train_short"]) == (n_train - short_train,
                                                                short_train)
    assert (row["n_dev_sentences"], row["n_dev_short"]) == (n_dev - short_dev, short_dev)
    assert (row["n_sentences"], row["n_short"]) == (n_dev - short_dev, short_dev)

    # Selection on a held-out share: drawn from the training sentences that are kept.
    assert main(["probe", "train", *common, "--min-words", "6",
                 "--out", str(tmp_path / "holdout")]) == 0
    row = pl.read_parquet(tmp_path / "holdout" / "seed1" / "metrics.parquet").row(0, named=True)
    _, short6 = _short_sentences(splits["train"], 6)
    assert short6 > short_train
    assert row["n_train_short"] == short6 and row["n_dev_short"] == 0
    assert row["n_dev_sentences"] == round(0.1 * (n_train - short6))
    assert row["n_train_sentences"] + row["n_dev_sentences"] == n_train - short6
    assert row["n_short"] == _short_sentences(splits["dev"], 6)[1]

    # Nothing left to train on is bad input, not a crash.
    assert main(["probe", "train", *common, "--min-words", "1000",
                 "--out", str(tmp_path / "none")]) == EXIT_BAD_INPUT
    assert not (tmp_path / "none").exists()


def test_a_sentence_too_long_in_one_version_leaves_every_eval_set(probe_data, tmp_path):
    """A nonce version may have more tokens than its original: with a limit between the two,
    the sentence is in one feature file only, and Δ would compare different sentences."""
    from transformers import AutoTokenizer

    from spudflow.probe.features import encode_sentence
    from spudflow.probe.words import read_words

    root, model = probe_data
    tokenizer = AutoTokenizer.from_pretrained(model)
    lengths = {}
    for split in ("test", "spud1"):
        words = read_words(root / split, need_trees=False)
        lengths[split] = {int(s): len(encode_sentence(tokenizer, forms)[0])
                          for s, forms in zip(words.sent_index, words.forms, strict=True)}
    # the longest limit under which the two versions leave out different sentences
    limit = next(n for n in sorted({*lengths["test"].values(), *lengths["spud1"].values()},
                                   reverse=True)
                 if {s for s, m in lengths["test"].items() if m > n}
                 != {s for s, m in lengths["spud1"].items() if m > n})
    too_long = {s for split in lengths for s, m in lengths[split].items() if m > limit}
    for split in ("train", "test", "spud1"):
        extra = [] if split == "train" else ["--max-length", str(limit)]
        assert features(root, model, split, tmp_path / f"{split}.safetensors", *extra) == 0
    assert set(read_features(tmp_path / "test.safetensors", [1]).too_long) != \
        set(read_features(tmp_path / "spud1.safetensors", [1]).too_long)
    assert main(["probe", "train", "--train", str(tmp_path / "train.safetensors"),
                 str(root / "train"), "--eval", "orig", str(tmp_path / "test.safetensors"),
                 str(root / "test"), "--eval", "spud/seed1", str(tmp_path / "spud1.safetensors"),
                 str(root / "spud1"), "--dist-layer", "1", "--label-layer", "1", "--seeds", "1",
                 "--treebank", "ewt", "--model", "tiny", "--max-epochs", "2", "--min-words", "1",
                 "--out", str(tmp_path / "run")]) == 0
    out = tmp_path / "run" / "seed1"
    metrics = pl.read_parquet(out / "metrics.parquet")
    assert metrics["n_too_long"].to_list() == [len(too_long)] * 2
    assert metrics["n_sentences"].to_list() == [len(lengths["test"]) - len(too_long)] * 2
    # the same sentences, by sent_id, in both predictions
    ids = []
    for name in ("orig", "spud/seed1"):
        text = (out / "predictions" / f"{name}.conllu").read_text(encoding="utf-8")
        ids.append([line for line in text.splitlines() if line.startswith("# sent_id")])
    assert ids[0] == ids[1] and len(ids[0]) == len(lengths["test"]) - len(too_long)


@pytest.mark.slow
def test_a_capped_split_extracts_the_probes_sample_and_trains_as_the_whole_split(probe_data,
                                                                                 tmp_path,
                                                                                 capsys):
    """`probe features --max-sentences` writes only the sentences `probe train
    --max-train-sentences` would draw from the whole split's file (after the too-long and the
    short ones), counts what it left out, and the probe trained on it writes the same files."""
    from spudflow.probe.data import capped, load_set

    root, model = probe_data
    cap = ["--max-sentences", "30", "--max-sentences-seed", "7", "--min-words", "4"]
    limit = ["--max-length", "40"]  # some sentences of the slice are longer
    whole, sample = tmp_path / "whole.safetensors", tmp_path / "sample.safetensors"
    assert features(root, model, "train", whole, *limit) == 0
    assert features(root, model, "train", sample, *limit, *cap, "--block-size", "8") == 0

    everything = load_set("train", whole, root / "train", 1, LAYERS, 4)
    drawn = capped(everything, 30, 7)
    assert everything.n_too_long > 0 and everything.n_short > 0 and len(everything) > 30
    kept = read_features(sample)
    assert kept.sent_index.tolist() == drawn.words.sent_index.tolist()
    assert kept.too_long == read_features(whole).too_long
    assert kept.info["n_short"] == str(everything.n_short)
    # the tiny encoder's vectors do not depend on the sentences batched with them (a wider one's
    # may, by a float16 step: docs/probe.md)
    loaded = load_set("train", sample, root / "train", 1, LAYERS, 4)
    assert torch.equal(loaded.dist, drawn.dist) and torch.equal(loaded.label, drawn.label)
    assert (loaded.n_too_long, loaded.n_short) == (drawn.n_too_long, drawn.n_short)

    # sharded, it is the same file
    shards = [tmp_path / f"s{i}.safetensors" for i in (1, 2)]
    for i, shard in enumerate(shards, 1):
        assert features(root, model, "train", shard, *limit, *cap, "--block-size", "8",
                        "--shard", f"{i}/2") == 0
    assert main(["probe", "gather", *map(str, shards), "--out",
                 str(tmp_path / "gathered.safetensors")]) == 0
    assert (tmp_path / "gathered.safetensors").read_bytes() == sample.read_bytes()

    assert features(root, model, "test", tmp_path / "test.safetensors") == 0
    runs = {}
    for name, path in (("whole", whole), ("sample", sample)):
        runs[name] = tmp_path / f"run_{name}"
        assert main(["probe", "train", "--train", str(path), str(root / "train"),
                     "--eval", "orig", str(tmp_path / "test.safetensors"), str(root / "test"),
                     "--dist-layer", "1", "--label-layer", str(LAYERS), "--treebank", "ewt",
                     "--model", "tiny", "--max-epochs", "2", "--max-train-sentences", "30",
                     "--max-sentences-seed", "7", "--out", str(runs[name])]) == 0
    for name in ("metrics.parquet", "history.parquet", "probe.safetensors",
                 "predictions/orig.conllu"):
        assert ((runs["sample"] / "seed1" / name).read_bytes()
                == (runs["whole"] / "seed1" / name).read_bytes()), name
    row = pl.read_parquet(runs["sample"] / "seed1" / "metrics.parquet").row(0, named=True)
    # 30 sentences, a tenth held out for selection (no --dev)
    assert (row["n_train_sentences"], row["n_dev_sentences"]) == (27, 3)
    assert (row["n_train_short"], row["n_too_long"]) == (everything.n_short, 0)

    # a sample drawn under other settings is not the probe's: bad input, nothing written
    for other in (["--max-train-sentences", "31", "--max-sentences-seed", "7"],
                  ["--max-train-sentences", "30", "--max-sentences-seed", "8"], []):
        assert main(["probe", "train", "--train", str(sample), str(root / "train"),
                     "--eval", "orig", str(tmp_path / "test.safetensors"), str(root / "test"),
                     "--dist-layer", "1", "--label-layer", "1", "--treebank", "ewt",
                     "--model", "tiny", *other, "--out", str(tmp_path / "bad")]) \
            == EXIT_BAD_INPUT
        assert f"{sample}: holds a sample of at most 30 sentences (seed 7)" in \
            capsys.readouterr().err
        assert not (tmp_path / "bad").exists()
    # nor is a capped file an eval set, or a cap of a test split's eval sets
    assert main(["probe", "train", "--train", str(whole), str(root / "train"), "--eval", "orig",
                 str(sample), str(root / "train"), "--dist-layer", "1", "--label-layer", "1",
                 "--treebank", "ewt", "--model", "tiny", "--out", str(tmp_path / "bad")]) \
        == EXIT_BAD_INPUT
    assert "holds a sample of its split" in capsys.readouterr().err
    assert main(["probe", "features", str(root / "test"), str(root / "spud1"), "--eval-sets",
                 "orig", "spud/seed1", "--model", str(model), "--baselines", "lm=1", *cap,
                 "--out", str(tmp_path / "f")]) == EXIT_BAD_INPUT
    assert "--max-sentences: caps a training or selection split" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(("baseline", "label", "extract"), [
    ("lm", LAYERS, []),
    # a random baseline probed below the top layer of its stored features (its weights are
    # drawn for the model built: --encoder-top), and a limit under which some test sentences
    # are too long
    ("MR", 1, ["--max-length", "40", "--init-seed", "3", "--encoder-top", str(LAYERS)]),
])
def test_eval_sets_extracted_by_the_probe_job_give_the_stored_features_runs(
        probe_data, tmp_path, baseline, label, extract):
    """`probe train --eval-extract` (the eval sets' features extracted in the job, in memory,
    as the workflow runs it: a test split's features are never stored) writes the very files
    of `probe train --eval` on the files `probe features` writes (layers 0..2)."""
    root, model = probe_data
    for split in ("train", "test", "spud1"):
        assert features(root, model, split, tmp_path / f"{split}.safetensors",
                        *(extract[:4] if split != "train" else extract[2:4]),
                        baseline=baseline) == 0
    common = ["--train", str(tmp_path / "train.safetensors"), str(root / "train"),
              "--dist-layer", "1", "--label-layer", str(label), "--seeds", "1", "2",
              "--treebank", "ewt", "--model", "tiny", "--max-epochs", "2"]
    if baseline != "lm":
        common += ["--baseline", baseline]
    stored, extracted = tmp_path / "stored", tmp_path / "extracted"
    assert main(["probe", "train", *common,
                 "--eval", "orig", str(tmp_path / "test.safetensors"), str(root / "test"),
                 "--eval", "spud/seed1", str(tmp_path / "spud1.safetensors"),
                 str(root / "spud1"), "--out", str(stored)]) == 0
    assert main(["probe", "train", *common, "--eval-extract", "orig", str(root / "test"),
                 "--eval-extract", "spud/seed1", str(root / "spud1"), "--encoder", str(model),
                 *extract, "--out", str(extracted)]) == 0
    files = sorted(p.relative_to(stored) for p in stored.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(extracted) for p in extracted.rglob("*") if p.is_file())
    assert len(files) == 2 * 7  # per seed: probe, history, 3 tables, 2 predicted treebanks
    for name in files:
        assert (extracted / name).read_bytes() == (stored / name).read_bytes(), name
    if extract:
        assert pl.read_parquet(extracted / "seed1" / "metrics.parquet")["n_too_long"].min() > 0
        # a random model of layers 0..1 has other weights than one of 0..2
        assert main(["probe", "train", *common, "--eval-extract", "orig", str(root / "test"),
                     "--eval-extract", "spud/seed1", str(root / "spud1"), "--encoder",
                     str(model), *extract[:4], "--out", str(tmp_path / "cut")]) == 0
        cut = pl.read_parquet(tmp_path / "cut" / "seed1" / "metrics.parquet")
        kept = pl.read_parquet(stored / "seed1" / "metrics.parquet")
        assert cut["n_words"].to_list() == kept["n_words"].to_list()
        assert cut["las"].to_list() != kept["las"].to_list()


def _run_files(run):
    """Every file of a `probe train` output folder by relative path."""
    return {p.relative_to(run): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("role", ["train", "dev"])
def test_training_and_selection_splits_extracted_by_the_probe_job_give_the_stored_runs(
        probe_data, tmp_path, role):
    """`probe train --train-extract` / `--dev-extract` (a layer sweep's run of a layer its
    feature job does not store) extracts the split's features in memory, capped as its feature
    job caps it (`probe features --max-sentences`, the probe's own cap), and writes the very
    files of the run on the stored file."""
    root, model = probe_data
    limit = ["--max-length", "40"]  # some sentences of the slices are longer
    if role == "train":  # train on the EWT dev slice, select on a held-out tenth of it
        split, cap = root / "train", ["--max-train-sentences", "30"]
        common = ["--eval-extract", "orig", str(root / "test")]
    else:  # train on the dev slice, select on the test slice, test on its SPUD version
        split, cap = root / "test", ["--max-dev-sentences", "20"]
        common = ["--train", str(tmp_path / "train.safetensors"), str(root / "train"),
                  "--eval-extract", "spud/seed1", str(root / "spud1")]
        assert features(root, model, "train", tmp_path / "train.safetensors", *limit) == 0
    stored = tmp_path / f"{role}.safetensors"
    assert features(root, model, split.name, stored, *limit, "--max-sentences", cap[1],
                    "--max-sentences-seed", "7", "--min-words", "4") == 0
    common += ["--dist-layer", "1", "--label-layer", str(LAYERS), "--seeds", "1", "2",
               "--treebank", "ewt", "--model", "tiny", "--max-epochs", "2", *cap,
               "--max-sentences-seed", "7", "--encoder", str(model), *limit]
    runs = {"stored": [f"--{role}", str(stored), str(split)],
            "extracted": [f"--{role}-extract", str(split)]}
    for name, source in runs.items():
        assert main(["probe", "train", *source, *common, "--out", str(tmp_path / name)]) == 0
    files = _run_files(tmp_path / "stored")
    assert len(files) == 2 * 6  # per seed: probe, history, 3 tables, 1 predicted treebank
    assert _run_files(tmp_path / "extracted") == files
    row = pl.read_parquet(tmp_path / "extracted" / "seed1" / "metrics.parquet").row(0, named=True)
    assert row[f"n_{role}_sentences"] == (27 if role == "train" else 20)
    # what the job extracts is the stored file's content: the sample, what it was drawn from,
    # what it left out and says, and the probed layers' values
    from spudflow.cli import shared_parser
    from spudflow.probe.cli import probe_job
    from spudflow.probe.run import extract_in_memory

    job = probe_job(shared_parser().parse_args(
        ["probe", "train", *runs["extracted"], *common, "--out", str(tmp_path / "unused")]))
    ((_, _, extracted),) = extract_in_memory(getattr(job.inputs, f"{role}_extracted"))
    kept = read_features(stored)
    assert extracted.sent_index.tolist() == kept.sent_index.tolist()
    assert extracted.eligible.tolist() == kept.eligible.tolist()
    assert extracted.too_long == kept.too_long and extracted.too_long
    assert extracted.info == {k: v for k, v in kept.info.items() if k not in ("format", "layers",
                                                                             "too_long")}
    for layer in (1, LAYERS):
        assert np.array_equal(extracted.layers[layer], kept.layers[layer])
    if role == "dev":
        assert row["n_too_long"] > 0  # of the eval set, left out as in the stored run


def test_eval_extraction_options_are_checked_before_anything_loads(probe_data, tmp_path,
                                                                    capsys, monkeypatch):
    root, model = probe_data
    # every set's treebank is read before an encoder is built: a missing eval set is found
    # before the training split's forward pass
    import spudflow.probe.run

    def no_encoder(*args):
        raise AssertionError("an encoder was built before every treebank was read")

    monkeypatch.setattr(spudflow.probe.run, "_baseline_encoder", no_encoder)
    assert main(["probe", "train", "--train-extract", str(root / "train"), "--eval-extract",
                 "orig", str(root / "missing"), "--encoder", str(model), "--dist-layer", "1",
                 "--label-layer", "1", "--treebank", "ewt", "--model", "tiny",
                 "--out", str(tmp_path / "run")]) == EXIT_BAD_INPUT
    assert str(root / "missing") in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    common = ["probe", "train", "--train", str(root / "none.safetensors"), str(root / "train"),
              "--dist-layer", "1", "--label-layer", "1", "--treebank", "ewt", "--model", "tiny",
              "--out", str(tmp_path / "run")]
    for extra, message in (
            (["--eval-extract", "orig", str(root / "test")], "--encoder: needed for "
             "--eval-extract"),
            (["--eval", "orig", "x.safetensors", str(root / "test"), "--encoder", str(model)],
             "--encoder: given, but no --eval-extract"),
            (["--eval", "orig", "x.safetensors", str(root / "test"), "--eval-extract",
              "spud/seed1", str(root / "spud1"), "--encoder", str(model)],
             "--eval-extract: and --eval in one job"),
            (["--eval-extract", "orig", str(root / "test"), "--encoder", str(model),
              "--encoder-top", "0"], "--encoder-top: layer 0 is below the probed layer 1"),
            (["--eval-extract", "orig", str(root / "test"), "--eval-extract", "orig",
              str(root / "spud1"), "--encoder", str(model)], "orig"),
            (["--eval-extract", "orig", str(root / "test"), "--encoder", str(model),
              "--dev-sentences", str(root)], "--dev-sentences: given, but no --dev-extract")):
        assert main([*common, *extra]) == EXIT_BAD_INPUT
        assert message in capsys.readouterr().err
        assert not (tmp_path / "run").exists()
    # a split's features stored or extracted here, not both (argparse's one line, exit 2)
    for extra, message in (
            (["--train-extract", str(root / "train")],
             "argument --train-extract: not allowed with argument --train"),
            (["--dev", "x.safetensors", str(root / "test"), "--dev-extract", str(root / "test")],
             "argument --dev-extract: not allowed with argument --dev")):
        with pytest.raises(SystemExit) as exited:
            main([*common, "--eval-extract", "orig", str(root / "test"), "--encoder",
                  str(model), *extra])
        assert exited.value.code == EXIT_BAD_INPUT
        assert message in capsys.readouterr().err
        assert not (tmp_path / "run").exists()
