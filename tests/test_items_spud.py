"""SPUD pairs: original sentences with their nonce versions, words from the treebank."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from items_support import assert_bad_input, read_items, run_cli

from spudflow.core.treebank import read_treebank, write_treebank

CONLLU = """\
# sent_id = s1
# text = Le chat du voisin dort.
1\tLe\tle\tDET\t_\t_\t2\tdet\t_\t_
2\tchat\tchat\tNOUN\t_\t_\t6\tnsubj\t_\t_
3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\t_\t5\tdet\t_\t_
5\tvoisin\tvoisin\tNOUN\t_\t_\t2\tnmod\t_\t_
6\tdort\tdormir\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t_\t_\t6\tpunct\t_\t_

# sent_id = s2
# text = Il dort.
1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tdort\tdormir\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = s3
# text = Pierre mange  une pomme et Marie aussi.
1\tPierre\tPierre\tPROPN\t_\t_\t2\tnsubj\t2:nsubj\t_
2\tmange\tmanger\tVERB\t_\t_\t0\troot\t0:root\t_
3\tune\tun\tDET\t_\t_\t4\tdet\t4:det\t_
4\tpomme\tpomme\tNOUN\t_\t_\t2\tobj\t2:obj\t_
5\tet\tet\tCCONJ\t_\t_\t6\tcc\t6:cc\t_
6\tMarie\tMarie\tPROPN\t_\t_\t2\tconj\t6.1:nsubj\t_
6.1\tmange\tmanger\tVERB\t_\t_\t_\t_\t2:conj\t_
7\taussi\taussi\tADV\t_\t_\t6\tadvmod\t6.1:advmod\tSpaceAfter=No
8\t.\t.\tPUNCT\t_\t_\t2\tpunct\t2:punct\t_

"""


def _surface_text(tokens: pl.DataFrame, sent_index: int) -> str:
    rows = tokens.filter(pl.col("sent_index") == sent_index).sort("token_index").to_dicts()
    text, inside = "", 0
    for row in rows:
        token_type = row["token_type"]
        if token_type == "empty" or (token_type == "word" and row["word_index"] <= inside):
            continue
        if row["token_type"] == "mwt":
            inside = row["mwt_end"]
        text += row["form"] + ("" if "SpaceAfter=No" in row["misc"] else " ")
    return text.rstrip()


def make_nonce(orig: Path, out: Path, replacements: dict[tuple[int, int], str]) -> Path:
    """A nonce treebank in the agreed format: forms replaced at (sent_index, word_index)."""
    tokens, sentences = read_treebank(orig)
    keys = list(zip(tokens["sent_index"], tokens["word_index"], tokens["token_type"], strict=True))
    replaced = [token_type == "word" and (s, w) in replacements for s, w, token_type in keys]
    forms = [replacements[s, w] if r else f
             for (s, w, _), r, f in zip(keys, replaced, tokens["form"], strict=True)]
    tokens = tokens.with_columns(orig_form=pl.col("form"), orig_lemma=pl.col("lemma"),
                                 form=pl.Series(forms), replaced=pl.Series(replaced))
    texts = [_surface_text(tokens, i) for i in sentences["sent_index"]]
    comments = [[f"# text = {t}" if c.startswith("# text = ") else c for c in cs]
                for cs, t in zip(sentences["comments"], texts, strict=True)]
    sentences = sentences.with_columns(
        orig_text=pl.col("text"), short=pl.col("n_words") < 4, text=pl.Series(texts),
        comments=pl.Series(comments))
    write_treebank(out, tokens, sentences)
    return out


@pytest.fixture
def treebanks(tmp_path, capsys):
    src = tmp_path / "fr.conllu"
    src.write_text(CONLLU, encoding="utf-8")
    orig = tmp_path / "orig"
    assert run_cli(capsys, "ingest", src, "--out", orig)[0] == 0
    spud = make_nonce(orig, tmp_path / "nonce" / "spud" / "seed1",
                      {(0, 2): "livre", (0, 4): "la", (2, 4): "porte"})
    pos = make_nonce(orig, tmp_path / "nonce" / "pos" / "seed2", {(0, 6): "mange"})
    return orig, spud, pos


def _build(capsys, out, orig, *nonce, extra=()):
    args = ["items", "spud", "--orig", orig, "--lang", "fr", "--dataset", "spud_fr_test"]
    for directory in nonce:
        args += ["--nonce", directory]
    code, err = run_cli(capsys, *args, *extra, "--out", out)
    assert code == 0, err
    return read_items(out)


def test_groups_hold_the_original_and_each_nonce_version(treebanks, tmp_path, capsys):
    rows = _build(capsys, tmp_path / "items.parquet", *treebanks)
    # s2 has 3 words (< 4) and is left out.
    assert [(r["group_id"], r["method"], r["seed"]) for r in rows] == [
        ("spud_fr_test:s1", "orig", None), ("spud_fr_test:s1", "spud", 1),
        ("spud_fr_test:s1", "pos", 2), ("spud_fr_test:s3", "orig", None),
        ("spud_fr_test:s3", "spud", 1), ("spud_fr_test:s3", "pos", 2)]
    assert [r["item_id"] for r in rows[:3]] == [
        "spud_fr_test:s1:orig", "spud_fr_test:s1:spud:seed1", "spud_fr_test:s1:pos:seed2"]
    assert [r["label"] for r in rows] == [1, None, None] * 2
    assert [r["n_replaced"] for r in rows] == [None, 2, 1, None, 1, 0]
    assert {r["language"] for r in rows} == {"fr"}
    assert rows[0]["n_words"] == 7 and rows[0]["sent_id"] == "s1" and rows[3]["sent_index"] == 2


def test_words_are_surface_tokens_with_offsets(treebanks, tmp_path, capsys):
    rows = _build(capsys, tmp_path / "items.parquet", *treebanks)
    original, spud = rows[0], rows[1]
    assert original["sentence"] == "Le chat du voisin dort."
    # The multiword token is one word (its surface form); "dort" and "." are not joined.
    assert original["words"] == ["Le", "chat", "du", "voisin", "dort", "."]
    assert original["word_starts"] == [0, 3, 8, 11, 18, 22]
    assert original["word_ends"] == [2, 7, 10, 17, 22, 23]
    assert spud["sentence"] == "Le livre du voisin dort."
    # Replaced words: "livre", and "le" inside the multiword token "du".
    spans = [(g["name"], spud["sentence"][g["start"]:g["end"]]) for g in spud["regions"]]
    assert spans == [("replaced", "livre"), ("replaced", "du")]
    assert original["regions"] == []
    # The text's double space is kept; the empty node 6.1 is no word.
    s3 = rows[3]
    assert s3["sentence"] == "Pierre mange  une pomme et Marie aussi."
    assert s3["words"] == ["Pierre", "mange", "une", "pomme", "et", "Marie", "aussi", "."]
    assert s3["word_starts"][2] == 14
    assert rows[4]["sentence"] == "Pierre mange une porte et Marie aussi."


def test_min_words_is_configurable(treebanks, tmp_path, capsys):
    orig, spud, _ = treebanks
    rows = _build(capsys, tmp_path / "items.parquet", orig, spud, extra=["--min-words", "3"])
    assert [r["sent_id"] for r in rows] == ["s1", "s1", "s2", "s2", "s3", "s3"]
    rows = _build(capsys, tmp_path / "items.parquet", orig, extra=["--min-words", "8"])
    assert [r["item_id"] for r in rows] == ["spud_fr_test:s3:orig"]


def test_item_ids_and_bytes_are_stable(treebanks, tmp_path, capsys):
    _build(capsys, tmp_path / "a.parquet", *treebanks)
    _build(capsys, tmp_path / "b.parquet", *treebanks)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_bad_nonce_directories_exit_2(treebanks, tmp_path, capsys):
    orig, spud, _ = treebanks
    out = tmp_path / "items.parquet"
    base = ["items", "spud", "--orig", orig, "--lang", "fr"]
    assert_bad_input(capsys, out, base + ["--nonce", orig], str(orig),
                     "expected a path ending in {method}/seed{N}")
    plain = tmp_path / "x" / "spud" / "seed3"
    tokens, sentences = read_treebank(orig)
    write_treebank(plain, tokens, sentences)
    assert_bad_input(capsys, out, base + ["--nonce", plain], str(plain / "tokens.parquet"),
                     "no column(s) orig_form, orig_lemma, replaced")
    other = tmp_path / "y" / "spud" / "seed4"
    tokens, sentences = read_treebank(spud)
    write_treebank(other, tokens.filter(pl.col("sent_index") < 2),
                   sentences.filter(pl.col("sent_index") < 2))
    assert_bad_input(capsys, out, base + ["--nonce", other], str(other / "sentences.parquet"),
                     "its sentences differ")
    assert_bad_input(capsys, out, ["items", "spud", "--orig", tmp_path / "none", "--lang", "fr"],
                     str(tmp_path / "none" / "tokens.parquet"), "no such file")


def test_a_nonce_treebank_copied_to_another_seed_is_refused(tmp_path, capsys):
    """The nonce stage's marker says which method and seed made a treebank: the same folder at
    two seeds' paths would count one draw twice."""
    import shutil

    src = tmp_path / "fr.conllu"
    src.write_text(CONLLU, encoding="utf-8")
    orig = tmp_path / "orig"
    assert run_cli(capsys, "ingest", src, "--out", orig)[0] == 0
    seed1 = tmp_path / "nonce" / "spud" / "seed1"
    assert run_cli(capsys, "nonce", orig, "--lang", "fr", "--seed", "1", "--out", seed1)[0] == 0
    seed2 = tmp_path / "nonce" / "spud" / "seed2"
    shutil.copytree(seed1, seed2)
    base = ["items", "spud", "--orig", orig, "--lang", "fr", "--nonce", seed1, "--nonce", seed2]
    assert_bad_input(capsys, tmp_path / "items.parquet", base, str(seed2 / "tokens.parquet"),
                     "made by spudflow nonce as spud/seed1, but its path says spud/seed2")
    # Given as the original, a nonce treebank is named by its marker too.
    assert_bad_input(capsys, tmp_path / "items.parquet",
                     ["items", "spud", "--orig", seed1, "--lang", "fr"],
                     str(seed1 / "tokens.parquet"), "a nonce treebank (made by spudflow nonce")
