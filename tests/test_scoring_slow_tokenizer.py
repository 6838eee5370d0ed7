"""Slow tokenizers (transformers' BertJapaneseTokenizer, which has no fast version: the Japanese
thesis's BERT and character BERT) score through `spudflow score` with the tokenizer's own ids,
and their tokens get character offsets by alignment (core/slow_offsets.py)."""

from __future__ import annotations

import importlib.util
import re

import polars as pl
import pytest
import torch
from scoring_models import make_item
from test_scoring_cli import write_items
from transformers import BertConfig, BertForMaskedLM, BertJapaneseTokenizer

from spudflow.cli import main
from spudflow.core.slow_offsets import UnalignedToken, align_tokens
from spudflow.core.tokenize import tokenize

torch.set_num_threads(1)

WORDS = ["猫", "が", "魚", "を", "食べ", "##る", "##た", "犬", "走っ", "##た", "。", "カ", "ガ",
         "ab", "##c", "東京", "に", "行く"]
CHARS = sorted(set("猫が魚を食べるた犬走っ。カガabc東京に行く"))
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS + CHARS)]
# Half-width ｶﾞ and full-width ａｂｃ are normalised (NFKC) by the tokenizer; 😀 is unknown.
SENTENCES = [
    ("s1", "猫が魚を食べる。", ["猫", "が", "魚", "を", "食べる", "。"], "食べる"),
    ("s2", "犬が ａｂｃ を食べた😀。",
     ["犬", "が", "ａｂｃ", "を", "食べた", "😀", "。"], "食べた"),
    ("s3", "ｶﾞガ東京に行く。", ["ｶﾞガ", "東京", "に", "行く", "。"], "行く"),
]
KINDS = [("basic", "wordpiece"), ("basic", "character"), ("sudachi", "wordpiece"),
         ("sudachi", "character")]


def has_sudachi() -> bool:
    if importlib.util.find_spec("sudachipy") is None:
        return False
    try:
        from sudachipy import dictionary

        dictionary.Dictionary()
    except Exception:  # no dictionary installed
        return False
    return True


def japanese_tokenizer(folder, word, subword):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return BertJapaneseTokenizer(str(folder / "vocab.txt"), word_tokenizer_type=word,
                                 subword_tokenizer_type=subword, model_max_length=64)


@pytest.fixture(params=KINDS, ids=["-".join(k) for k in KINDS])
def model_dir(request, tmp_path):
    word, subword = request.param
    if word == "sudachi" and not has_sudachi():
        pytest.skip("sudachipy with a dictionary is not installed")
    folder = tmp_path / "model"
    tokenizer = japanese_tokenizer(tmp_path / "vocab", word, subword)
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=len(VOCAB), hidden_size=16,
                                       num_hidden_layers=2, num_attention_heads=2,
                                       intermediate_size=32, max_position_embeddings=64))
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def reference(model_dir, sentence):
    """(tokens, unmasked and PPPL log-probs) with the slow tokenizer's own ids, one sentence
    at a time."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    assert type(tokenizer).__name__ == "BertJapaneseTokenizer" and not tokenizer.is_fast
    model = BertForMaskedLM.from_pretrained(model_dir).eval()
    ids = tokenizer(sentence)["input_ids"]
    inner = range(1, len(ids) - 1)  # [CLS] … [SEP]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].log_softmax(-1)
        unmasked = [logits[i, ids[i]].item() for i in inner]
        pppl = []
        for i in inner:
            masked = list(ids)
            masked[i] = tokenizer.mask_token_id
            out = model(torch.tensor([masked])).logits[0, i].log_softmax(-1)
            pppl.append(out[ids[i]].item())
    return tokenizer.convert_ids_to_tokens(ids[1:-1]), unmasked, pppl


def test_a_slow_japanese_tokenizer_scores_with_its_own_ids(model_dir, tmp_path):
    items = [make_item(i, s, w, regions=[("verb", v)], language="ja")
             for i, s, w, v in SENTENCES]
    items_file = write_items(tmp_path / "items.parquet", items)
    out = tmp_path / "out"
    assert main(["score", str(items_file), "--model", str(model_dir), "--kind", "masked",
                 "--method", "pppl,unmasked", "--out", str(out), "--lang", "ja",
                 "--threads", "1", "--device", "cpu"]) == 0
    rows = pl.read_parquet(out / "token_scores.parquet")
    for item_id, sentence, words, _ in SENTENCES:
        tokens, unmasked, pppl = reference(model_dir, sentence)
        for method, expected in (("unmasked", unmasked), ("pppl", pppl)):
            got = rows.filter((pl.col("item_id") == item_id) & (pl.col("method") == method))
            assert got["token"].to_list() == tokens
            assert got["logprob"].to_list() == pytest.approx(expected, abs=1e-5)
        # every token's characters are where it is in the sentence, and its word is the word
        # those characters are in
        for row in got.iter_rows(named=True):
            spelled = sentence[row["char_start"]:row["char_end"]]
            assert spelled, row
            if spelled.isspace():  # Sudachi's unknown space token: anchored to the next word
                rest = sentence[row["char_end"]:]
                assert rest.lstrip().startswith(words[row["word_index"]])
                continue
            word = words[row["word_index"]]
            assert spelled in word or word in spelled, (row, spelled, word)


def test_offsets_follow_the_tokenizers_normalisation(tmp_path):
    tokenizer = japanese_tokenizer(tmp_path, "basic", "character")
    text = "犬が ａｂｃ を食べた😀。ｶﾞ"
    ids, specials, offsets = tokenize(tokenizer, [text], True)
    assert ids == [tokenizer(text)["input_ids"]]
    spans = [text[a:b] for (a, b), s in zip(offsets[0], specials[0], strict=True) if not s]
    assert spans == ["犬", "が", "ａ", "ｂ", "ｃ", "を", "食", "べ", "た", "😀", "。", "ｶﾞ"]
    assert offsets[0][0] == offsets[0][-1] == (0, 0)  # [CLS], [SEP]


def test_unknown_words_take_the_gap_to_the_next_token():
    # WordPiece: [UNK] is a whole word; the shortest gap after which the rest fits
    assert align_tokens("xx😀 x", [None, "x"]) == [(0, 3), (4, 5)]
    # a character tokenizer's run of unknowns: one character each
    assert align_tokens("a😀😀b", ["a", None, None, "b"]) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    # an unknown whitespace token: the whitespace, which the anchors give to the next word
    assert align_tokens("a b", ["a", None, "b"]) == [(0, 1), (1, 2), (2, 3)]


def test_a_token_the_text_cannot_place_is_bad_input(tmp_path):
    with pytest.raises(UnalignedToken) as error:
        align_tokens("猫が", ["猫", "を"], text_index=3)
    assert (error.value.text_index, error.value.position, error.value.token) == (3, 1, "を")
    # through the scorer: the model and the item are named (exit 2 from the command)
    from spudflow.core.errors import InputError
    from spudflow.scoring.scorers import load_scorer

    folder = tmp_path / "model"
    tokenizer = japanese_tokenizer(tmp_path / "vocab", "basic", "wordpiece")
    BertForMaskedLM(BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1,
                               num_attention_heads=2, intermediate_size=32,
                               max_position_embeddings=64)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    scorer = load_scorer("masked", str(folder), device="cpu", dtype="float32")
    # a tokenizer that rewrites words (as Sudachi's `normalized` projection does)
    original = scorer.tokenizer.word_tokenizer.tokenize
    scorer.tokenizer.word_tokenizer.tokenize = lambda text, **kw: [
        w.replace("猫", "犬") for w in original(text, **kw)]
    item = make_item("cat-1", "猫が", ["猫", "が"], language="ja")
    with pytest.raises(InputError, match="item cat-1: token 0 '犬が'"):
        scorer.encode([item])


def test_pppl_l2r_takes_the_items_words_from_a_slow_tokenizer_and_never_guesses_its_own(
        model_dir, tmp_path, capsys):
    """A slow tokenizer reports no words of its own (word_ids), which pppl_l2r's default
    groups by: that is bad input naming the setting, and `--l2r-words items` scores it."""
    items = [make_item(i, s, w, language="ja") for i, s, w, _ in SENTENCES]
    items_file = write_items(tmp_path / "items.parquet", items)
    common = ["score", str(items_file), "--model", str(model_dir), "--kind", "masked",
              "--method", "pppl_l2r", "--lang", "ja", "--threads", "1", "--device", "cpu"]
    assert main([*common, "--out", str(tmp_path / "default")]) == 2
    err = capsys.readouterr().err
    lines = re.findall(r"scoring\.l2r_words: [^\n]*", err)  # after the progress bar's text
    assert len(lines) == 1 and "l2r_words: items" in lines[0] and "Traceback" not in err, err
    assert not (tmp_path / "default").exists()
    assert main([*common, "--l2r-words", "items", "--out", str(tmp_path / "items")]) == 0
    rows = pl.read_parquet(tmp_path / "items" / "token_scores.parquet")
    assert rows.height and rows["logprob"].is_finite().all()
