"""`spudflow score` end to end: inputs, both tables, regions, SLOR, skipped items, resuming,
determinism and bad input."""

from __future__ import annotations

import math

import huggingface_hub
import polars as pl
import pyarrow.parquet as pq
import pytest
from scoring_models import make_item, tiny_model_dir

from spudflow.cli import main
from spudflow.core.artifacts import ITEMS as ITEMS_ARTIFACT
from spudflow.core.contract import write_artifact
from spudflow.scoring import run
from spudflow.scoring.ngram import NgramModel
from spudflow.scoring.outputs import ITEM_SCORES_SCHEMA, TOKEN_SCORES_SCHEMA


def write_items(path, items, dataset="tiny"):
    # Through the items contract, as the items stage writes them (an open ITEMS file).
    write_artifact(pl.DataFrame({
        "dataset": [dataset] * len(items),
        "item_id": [i.item_id for i in items],
        "group_id": [i.item_id.split("-")[0] for i in items],
        "sentence": [i.sentence for i in items],
        "words": [list(i.words) for i in items],
        "word_starts": [list(i.word_starts) for i in items],
        "word_ends": [list(i.word_ends) for i in items],
        "label": [1] * len(items),
        "language": [i.language for i in items],
        "regions": [[{"name": r.name, "start": r.start, "end": r.end} for r in i.regions]
                    for i in items],
    }, schema_overrides={
        "word_starts": pl.List(pl.Int32), "word_ends": pl.List(pl.Int32), "label": pl.Int8,
        "regions": pl.List(pl.Struct({"name": pl.String, "start": pl.Int32,
                                      "end": pl.Int32}))}), path, ITEMS_ARTIFACT)
    return path


LONG = " ".join(["word"] * 60)
ITEMS = [
    make_item("p1-good", "The cat sat on the mat.", ["The", "cat", "sat", "on", "the", "mat", "."],
              regions=[("verb", "sat"), ("object", "the mat")]),
    make_item("p1-bad", "The cat sit on the mat.", ["The", "cat", "sit", "on", "the", "mat", "."],
              regions=[("verb", "sit")]),
    make_item("long", LONG, LONG.split()),
    make_item("jp", "東京は日本の首都です。", ["東京", "は", "日本", "の", "首都", "です", "。"],
              regions=[("verb", "です")], language="ja"),
]


def score(args):
    return main(["score", *map(str, args), "--threads", "1"])


@pytest.fixture(scope="module")
def items_file(tmp_path_factory):
    return write_items(tmp_path_factory.mktemp("items") / "tiny.parquet", ITEMS)


@pytest.fixture(scope="module")
def unigram_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("unigram") / "en.parquet"
    NgramModel.train([s.split() for s in ["The cat sat .", "the mat", "a cat"]], order=1,
                     lang="en").save(path)
    return path


@pytest.fixture(scope="module")
def masked_run(tmp_path_factory, items_file, unigram_file):
    out = tmp_path_factory.mktemp("masked")
    assert score([items_file, "--model", tiny_model_dir("masked", "wordpiece"), "--kind",
                  "masked", "--method", "pppl,pppl_region,unmasked", "--out", out, "--name",
                  "bert", "--unigram", unigram_file, "--batch-tokens", "100"]) == 0
    return out


def test_tables_have_exactly_the_documented_columns(masked_run):
    assert pq.read_schema(masked_run / "token_scores.parquet").equals(TOKEN_SCORES_SCHEMA)
    assert pq.read_schema(masked_run / "item_scores.parquet").equals(ITEM_SCORES_SCHEMA)
    assert set(pl.read_parquet(masked_run / "token_scores.parquet")["model"]) == {"bert"}
    assert not list(masked_run.glob(".partial-*"))


def test_item_figures_are_reductions_of_the_token_rows(masked_run, unigram_file):
    tokens = pl.read_parquet(masked_run / "token_scores.parquet")
    items = pl.read_parquet(masked_run / "item_scores.parquet")
    whole = items.filter(pl.col("region").is_null() & pl.col("skipped").is_null())
    sums = tokens.filter(~pl.col("method").str.ends_with("_region")).group_by(
        "item_id", "method").agg(total=pl.col("logprob").sum(), n=pl.len())
    joined = whole.join(sums, on=["item_id", "method"])
    assert len(joined) == len(whole) == 3 * 2  # p1-good, p1-bad, jp x pppl, unmasked
    for row in joined.iter_rows(named=True):
        assert row["logprob_sum"] == pytest.approx(row["total"])
        assert row["n_tokens"] == row["n"]
        assert row["ppl"] == pytest.approx(math.exp(-row["total"] / row["n"]))
        assert row["mean_logprob"] == pytest.approx(row["total"] / row["n"])
    # SLOR with the English unigram model: by hand for one item.
    unigram = NgramModel.load(unigram_file)
    good = joined.filter((pl.col("item_id") == "p1-good") & (pl.col("method") == "pppl")).row(
        0, named=True)
    words = ITEMS[0].words
    unigram_sum = sum(unigram.unigram_logprob(w) for w in words)
    assert good["n_words"] == 7
    assert good["slor"] == pytest.approx((good["total"] - unigram_sum) / 7)
    assert good["normlp"] == pytest.approx(-good["total"] / unigram_sum)
    per_word = tokens.filter((pl.col("item_id") == "p1-good") & (pl.col("method") == "pppl")) \
        .group_by("word_index").agg(pl.col("logprob").sum())
    expected = min(-lp / unigram.unigram_logprob(words[w]) for w, lp in per_word.iter_rows())
    assert good["word_lp_min1"] == pytest.approx(expected)
    # No unigram model for Japanese: those figures are null.
    jp = whole.filter(pl.col("item_id") == "jp")
    assert jp["slor"].is_null().all() and jp["normlp"].is_null().all()


def test_region_rows_and_region_method(masked_run):
    tokens = pl.read_parquet(masked_run / "token_scores.parquet")
    items = pl.read_parquet(masked_run / "item_scores.parquet")
    full = items.filter(pl.col("method") == "pppl", pl.col("region").is_not_null())
    region_only = items.filter(pl.col("method") == "pppl_region")
    assert region_only["region"].null_count() == 0
    assert sorted(full.select("item_id", "region").rows()) == sorted(
        region_only.select("item_id", "region").rows()) == [
        ("jp", "verb"), ("p1-bad", "verb"), ("p1-good", "object"), ("p1-good", "verb")]
    both = full.join(region_only, on=["item_id", "region"], suffix="_r")
    for row in both.iter_rows(named=True):
        assert row["logprob_sum"] == pytest.approx(row["logprob_sum_r"], abs=1e-5)
        assert row["n_tokens"] == row["n_tokens_r"] > 0
    good_object = both.filter(pl.col("item_id") == "p1-good", pl.col("region") == "object")
    assert good_object["n_words"].to_list() == [2]
    # pppl_region scores only the tokens inside a region, with the same values as pppl.
    region_tokens = tokens.filter(pl.col("method") == "pppl_region", pl.col("item_id") == "p1-good")
    assert set(region_tokens["word_index"]) == {2, 4, 5}  # sat, the, mat
    pppl = tokens.filter(pl.col("method") == "pppl").select("item_id", "token_index", "logprob")
    matched = region_tokens.join(pppl, on=["item_id", "token_index"], suffix="_full")
    assert (matched["logprob"] - matched["logprob_full"]).abs().max() < 1e-5


def test_too_long_items_are_left_out_and_counted(masked_run):
    tokens = pl.read_parquet(masked_run / "token_scores.parquet")
    items = pl.read_parquet(masked_run / "item_scores.parquet")
    assert tokens.filter(pl.col("item_id") == "long").is_empty()
    long_rows = items.filter(pl.col("item_id") == "long")
    # One row per whole-sentence method; it has no regions, so no pppl_region row.
    assert long_rows["method"].to_list() == ["pppl", "unmasked"]
    assert long_rows["skipped"].to_list() == ["too_long"] * 2
    assert long_rows["logprob_sum"].is_null().all()
    assert (long_rows["n_tokens"] == 60).all()


def test_text_input_causal_and_determinism(tmp_path, caplog):
    text = tmp_path / "sentences.txt"
    text.write_text(f"The cat sat.\n\n  Spaces around  \nI love pizza 🍕!\n{LONG}\n",
                    encoding="utf-8")
    outs = []
    for run_name in ("one", "two"):
        out = tmp_path / run_name
        assert score([text, "--model", tiny_model_dir("causal", "bytebpe"), "--kind", "causal",
                      "--method", "ppl", "--out", out]) == 0
        outs.append(out)
    assert "1 of 4 items left out (too_long: 1)" in caplog.text
    for name in ("token_scores.parquet", "item_scores.parquet"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    items = pl.read_parquet(outs[0] / "item_scores.parquet")
    # Line numbers (the blank line has no item); spaCy words: The cat sat . | ... | 🍕 !
    assert items["item_id"].to_list() == ["1", "3", "4", "5"]
    assert items["n_words"].to_list() == [4, 2, 5, 60]
    assert items["skipped"].to_list() == [None, None, None, "too_long"]
    assert set(items["model"]) == {"causal-bytebpe"}


def test_resume_skips_finished_blocks(tmp_path, items_file, monkeypatch):
    model = tiny_model_dir("electra", "metaspace")
    args = [items_file, "--model", model, "--kind", "electra", "--method", "electra",
            "--block-size", "1"]
    assert score([*args, "--out", tmp_path / "reference"]) == 0

    calls = []
    real_score_block = run.score_block

    def failing_score_block(job, block, label):
        calls.append(block[0].item_id)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the job is killed while scoring the third block
        return real_score_block(job, block, label)

    monkeypatch.setattr(run, "score_block", failing_score_block)
    out = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        score([*args, "--out", out])
    assert not (out / "item_scores.parquet").exists()
    [partial] = out.glob(".partial-*")
    assert len(list(partial.glob("block-*"))) == 4  # two blocks, two files each
    calls.clear()
    assert score([*args, "--out", out]) == 0
    assert calls == ["long", "jp"]  # blocks 3 and 4 only
    for name in ("token_scores.parquet", "item_scores.parquet"):
        assert pl.read_parquet(out / name).equals(pl.read_parquet(tmp_path / "reference" / name))
    assert not list(out.glob(".partial-*"))


def test_languages_filter_and_nothing_to_score(tmp_path, items_file):
    out = tmp_path / "ja"
    assert score([items_file, "--model", tiny_model_dir("masked", "metaspace"), "--kind",
                  "masked", "--method", "unmasked", "--languages", "ja", "--out", out]) == 0
    rows = pl.read_parquet(out / "item_scores.parquet")
    assert rows.select("item_id", "region").rows() == [("jp", None), ("jp", "verb")]
    # No item of the language: empty tables, and the model is not even loaded.
    out = tmp_path / "de"
    assert score([items_file, "--model", "/nonexistent/model", "--kind", "masked", "--method",
                  "unmasked", "--languages", "de", "--out", out]) == 0
    assert pl.read_parquet(out / "token_scores.parquet").is_empty()
    assert pq.read_schema(out / "item_scores.parquet").equals(ITEM_SCORES_SCHEMA)


def test_ngram_kind(tmp_path, items_file, unigram_file):
    out = tmp_path / "ngram"
    assert score([items_file, "--model", unigram_file, "--kind", "ngram", "--method",
                  "kn,addk_region", "--out", out]) == 0
    tokens = pl.read_parquet(out / "token_scores.parquet")
    good = tokens.filter(pl.col("item_id") == "p1-good", pl.col("method") == "kn")
    assert good["token"].to_list() == list(ITEMS[0].words)
    assert good["word_index"].to_list() == list(range(7))
    items = pl.read_parquet(out / "item_scores.parquet")
    assert items.filter(pl.col("method") == "addk_region")["region"].null_count() == 0



@pytest.mark.slow
def test_an_ngram_job_never_imports_torch(tmp_path, items_file, unigram_file):
    """An n-gram score job (threads and cache given, as the rules pass them) runs without torch
    or transformers: importing them is two of its three seconds on a CPU node."""
    import subprocess
    import sys

    code = ("import sys; from spudflow.cli import main; "
            f"code = main(['score', {str(items_file)!r}, '--model', {str(unigram_file)!r}, "
            "'--kind', 'ngram', '--method', 'kn', '--threads', '2', "
            f"'--cache', {str(tmp_path / 'cache')!r}, '--out', {str(tmp_path / 'out')!r}]); "
            "print(code, sorted(m for m in ('torch', 'transformers', 'tokenizers') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split("\n")[-2] == "0 []"

@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "rnn", "--method", "ppl"], "--kind: unknown model kind 'rnn'"),
    (["--kind", "masked", "--method", "bleu"], "--method: unknown method 'bleu'"),
    (["--kind", "causal", "--method", "pppl"], "--method: a causal model cannot do 'pppl'"),
    (["--kind", "electra", "--method", "ppl_region"],
     "--method: a electra model cannot do 'ppl_region'"),
    (["--kind", "masked", "--method", "pppl", "--batch-tokens", "0"],
     "--batch-tokens: must be at least 1"),
])
def test_bad_kind_or_method_exits_2(tmp_path, items_file, capsys, args, message):
    out = tmp_path / "out"
    assert score([items_file, "--model", tiny_model_dir("masked", "wordpiece"), *args,
                  "--out", out]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(message)
    assert not out.exists()


def test_unloadable_models_exit_2(tmp_path, items_file, capsys, monkeypatch):
    # No network here: a hub id must fail at once instead of retrying connections.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    empty = tmp_path / "empty-model"
    empty.mkdir()
    cases = [
        ([str(empty), "masked"], f"{empty}: holds no model: no config.json"),
        (["no-such-org/no-such-model", "masked"], "no-such-org/no-such-model: cannot load"),
        (["pypi:no_such_package_xyz", "causal"],
         "pypi:no_such_package_xyz: no installed Python package"),
        ([str(tmp_path / "missing.gguf"), "causal"], f"{tmp_path / 'missing.gguf'}: no such"),
        ([str(tiny_model_dir("masked", "wordpiece")), "electra"], "is not an ELECTRA"),
        ([str(tiny_model_dir("causal", "wordpiece")), "ngram"], "an ngram model is a file"),
    ]
    for (model, kind), message in cases:
        method = {"masked": "pppl", "causal": "ppl", "electra": "electra", "ngram": "kn"}[kind]
        out = tmp_path / "out"
        assert score([items_file, "--model", model, "--kind", kind, "--method", method,
                      "--out", out]) == 2, model
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert message in last, last
        assert not out.exists()


def test_bad_items_exit_2(tmp_path, capsys):
    bad = make_item("x", "The cat.", ["The", "cat", "."])
    bad = bad.__class__(**{**bad.__dict__, "word_ends": (3, 8, 8)})
    path = write_items(tmp_path / "bad.parquet", [ITEMS[0], bad])
    assert score([path, "--model", tiny_model_dir("masked", "wordpiece"), "--kind", "masked",
                  "--method", "pppl", "--out", tmp_path / "out"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"{path}:2: item 'x': word 1 is 'cat' but its offsets cover 'cat.'")
    assert score([tmp_path / "missing.parquet", "--model", "x", "--kind", "masked", "--method",
                  "pppl", "--out", tmp_path / "out"]) == 2


def test_spans_sharing_a_name_are_one_region(tmp_path, unigram_file):
    """Every replaced word of a nonce sentence is a `replaced` span: one row sums them all."""
    words = ["The", "cat", "sat", "on", "the", "mat", "."]
    item = make_item("n1", "The cat sat on the mat.", words,
                     regions=[("replaced", "cat"), ("replaced", "mat")])
    items = write_items(tmp_path / "items.parquet", [item])
    model = tmp_path / "lm.parquet"
    NgramModel.train([s.split() for s in ["The cat sat on the mat .", "a cat"]], order=2,
                     lang="en").save(model)
    out = tmp_path / "out"
    assert score([items, "--model", model, "--kind", "ngram", "--method", "addk", "--out", out,
                  "--name", "ng"]) == 0
    scores = pl.read_parquet(out / "item_scores.parquet")
    replaced = scores.filter(pl.col("region") == "replaced")
    assert replaced.height == 1
    tokens = pl.read_parquet(out / "token_scores.parquet")
    expected = tokens.filter(pl.col("token").is_in(["cat", "mat"]))["logprob"].sum()
    assert replaced["n_words"][0] == 2
    assert replaced["logprob_sum"][0] == pytest.approx(expected)


@pytest.mark.parametrize("kind, method", [("masked", "pppl"), ("causal", "ppl")])
def test_an_encoder_without_the_kinds_head_is_bad_input(items_file, tmp_path, capsys, kind,
                                                        method):
    # causal: BERT's encoder as a causal LM (BertLMHeadModel) lacks its `cls` head alike
    """The encoder of the tiny masked model saved alone (no MLM head, as a sentence-embedding
    model ships): transformers would give it a randomly initialised head, scores that differ on
    every cold run. Refused with the weights it lacks; a model with the head still scores."""
    from scoring_models import build_model, hf_tokenizer

    tokenizer = hf_tokenizer("wordpiece")
    model = build_model("masked", len(tokenizer), tokenizer.cls_token_id,
                        tokenizer.sep_token_id)
    encoder = tmp_path / "encoder"
    model.bert.save_pretrained(encoder)
    tokenizer.save_pretrained(encoder)
    out = tmp_path / "out"
    assert score([items_file, "--model", encoder, "--kind", kind, "--method", method,
                  "--out", out]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"{encoder}: holds no weights for ")
    assert f"of a {kind} model" in last
    assert "they would be randomly initialised" in last
    assert not out.exists()
    assert score([items_file, "--model", tiny_model_dir("masked", "wordpiece"), "--kind",
                  "masked", "--method", "pppl", "--out", out]) == 0
