"""Control models trained from scratch (`spudflow control-train`): determinism, the saved
directory (reloadable, scoreable by `spudflow score`), a falling loss, treebank text, bad input."""

from __future__ import annotations

import json

import polars as pl
import pytest
from scoring_models import CORPUS, make_item
from test_scoring_cli import write_items

from spudflow.cli import main
from spudflow.scoring.items import sample_groups

from conftest import REPO

TINY_EN = REPO / "tests" / "data" / "workflow" / "tiny_en.conllu"
TINY = ["--vocab-size", "300", "--layers", "1", "--hidden", "32", "--heads", "2",
        "--max-length", "64", "--batch-size", "4", "--threads", "1"]
METHODS = {"masked": "pppl,pppl_l2r,unmasked", "causal": "ppl", "electra": "electra"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "corpus.txt"
    path.write_text("\n".join(CORPUS * 2) + "\n", encoding="utf-8")
    return path


def train(text, out, kind="masked", seed=0, epochs=2, *extra):
    return main(["control-train", "--kind", kind, "--text", str(text), "--out", str(out),
                 "--seed", str(seed), "--epochs", str(epochs), *TINY, *map(str, extra)])


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    """kind -> a tiny control of that kind, trained for a few steps."""
    root = tmp_path_factory.mktemp("controls")
    for kind in METHODS:
        assert train(corpus, root / kind, kind) == 0
    return {kind: root / kind for kind in METHODS}


def weights(directory):
    return (directory / "model.safetensors").read_bytes()


@pytest.mark.parametrize("kind", list(METHODS))
def test_same_seed_gives_identical_weights(trained, corpus, tmp_path, kind):
    assert train(corpus, tmp_path / "again", kind) == 0
    assert weights(tmp_path / "again") == weights(trained[kind])
    for name in ("tokenizer.json", "training_loss.parquet", "control.json"):
        assert (tmp_path / "again" / name).read_bytes() == (trained[kind] / name).read_bytes()
    assert train(corpus, tmp_path / "other", kind, 1) == 0
    assert weights(tmp_path / "other") != weights(trained[kind])


@pytest.mark.parametrize("kind", list(METHODS))
def test_saved_directory_reloads_and_is_scored(trained, tmp_path, kind):
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoModelForPreTraining,
        AutoTokenizer,
    )

    directory = trained[kind]
    auto = {"masked": AutoModelForMaskedLM, "causal": AutoModelForCausalLM,
            "electra": AutoModelForPreTraining}[kind]
    model = auto.from_pretrained(directory)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    assert tokenizer.is_fast and model.config.vocab_size == len(tokenizer)
    expected = {"masked": "BertForMaskedLM", "causal": "GPT2LMHeadModel",
                "electra": "ElectraForPreTraining"}[kind]
    assert type(model).__name__ == expected
    sentences = tmp_path / "sentences.txt"
    long = " ".join(["cat"] * 80)  # more tokens than --max-length 64: left out, not truncated
    sentences.write_text(f"The cat sat on the mat.\nThe mat sat on the cat.\n{long}\n")
    out = tmp_path / "scores"
    assert main(["score", str(sentences), "--model", str(directory), "--kind", kind,
                 "--method", METHODS[kind], "--out", str(out), "--threads", "1"]) == 0
    scores = pl.read_parquet(out / "item_scores.parquet").filter(pl.col("region").is_null())
    assert scores.height == 3 * len(METHODS[kind].split(","))
    scored = scores.filter(pl.col("item_id") != "3")
    assert scored["skipped"].is_null().all() and scored["ppl"].is_not_null().all()
    assert set(scores.filter(pl.col("item_id") == "3")["skipped"]) == {"too_long"}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(METHODS))
def test_loss_falls(corpus, tmp_path, kind):
    assert train(corpus, tmp_path / kind, kind, 0, 8, "--learning-rate", "0.003") == 0
    losses = pl.read_parquet(tmp_path / kind / "training_loss.parquet")
    assert losses["step"].to_list() == list(range(1, losses.height + 1))
    by_epoch = losses.group_by("epoch").agg(pl.col("loss").mean()).sort("epoch")["loss"]
    assert by_epoch[-1] < 0.9 * by_epoch[0]
    parts = losses.select("generator_loss", "discriminator_loss")
    assert parts.null_count().row(0) == ((0, 0) if kind == "electra" else (losses.height,) * 2)


def test_trains_on_an_ingested_treebank_split(tmp_path):
    assert main(["ingest", str(TINY_EN), "--out", str(tmp_path / "tiny_en")]) == 0
    assert train(tmp_path / "tiny_en", tmp_path / "bert") == 0
    settings = json.loads((tmp_path / "bert" / "control.json").read_text())
    assert settings["sentences"] == 4 and settings["kind"] == "masked"
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "bert")
    # the sentences' own text trained the tokenizer: its words are in the vocabulary
    assert tokenizer.unk_token not in tokenizer.tokenize("What if Google Morphed Into GoogleOS?")


@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "recurrent"], "--kind: unknown kind 'recurrent' (masked, causal, electra)"),
    (["--kind", "masked", "--heads", "3"], "--heads: 3 heads do not divide --hidden 32"),
    (["--kind", "masked", "--epochs", "0"], "--epochs: must be at least 1, not 0"),
])
def test_bad_arguments_exit_2_without_output(corpus, tmp_path, capsys, args, message):
    out = tmp_path / "model"
    code = main(["control-train", "--text", str(corpus), "--out", str(out), "--hidden", "32",
                 *args])
    assert code == 2
    assert capsys.readouterr().err.strip() == message
    assert list(tmp_path.iterdir()) == []


def test_missing_text_exits_2(tmp_path, capsys):
    assert main(["control-train", "--kind", "causal", "--text", str(tmp_path / "none"),
                 "--out", str(tmp_path / "model")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert not (tmp_path / "model").exists()


def test_sample_keeps_whole_groups_and_is_seeded(tmp_path):
    items = [make_item(f"g{g}-{v}", f"Sentence {g} {v}.", ["Sentence", str(g), str(v), "."])
             for g in range(10) for v in range(3)]
    path = write_items(tmp_path / "items.parquet", items)
    picked = sample_groups(items, path, 4, 0)
    groups = {i.item_id.split("-")[0] for i in picked}
    assert len(groups) == 4 and len(picked) == 12
    assert [i.item_id for i in picked] == [i.item_id for i in items if i.item_id.split("-")[0]
                                           in groups]
    assert sample_groups(items, path, 4, 0) == picked
    assert {i.item_id.split("-")[0] for i in sample_groups(items, path, 4, 1)} != groups
    assert sample_groups(items, path, 10, 0) == items

