"""CoNLL-U -> Parquet -> CoNLL-U is byte-identical, and the tables hold what the file says."""

from __future__ import annotations

import gzip
from pathlib import Path

import conllu
import polars as pl
import pytest

from spudflow.core.feats import feature, parse_feats
from spudflow.core.treebank import read_treebank

from conftest import SHARED_DATA, VENDORED_UD

MINI = Path(__file__).parent / "data" / "mini.conllu"


def _read_bytes(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def _round_trip(run_cli, src: Path, tmp_path: Path) -> bytes:
    out = tmp_path / src.name.split(".")[0]
    assert run_cli("ingest", src, "--out", out)[0] == 0
    assert run_cli("export", out, "--out", out / "back.conllu")[0] == 0
    return (out / "back.conllu").read_bytes()


def test_mini_round_trip_and_columns(run_cli, tmp_path):
    assert _round_trip(run_cli, MINI, tmp_path) == MINI.read_bytes()
    tokens, sentences = read_treebank(tmp_path / "mini")
    assert sentences.get_column("sent_id").to_list() == ["s1", "s2"]
    assert sentences.get_column("newdoc").to_list() == ["doc1", None]
    assert sentences.get_column("newpar").to_list() == [None, ""]
    assert sentences.get_column("n_words").to_list() == [6, 4]
    assert sentences.get_column("n_tokens").to_list() == [5, 4]  # zum counts once
    assert sentences.row(1, named=True)["comments"][-1] == "# a comment without equals sign"
    token_types = tokens.group_by("token_type").len().sort("token_type").rows()
    assert token_types == [("empty", 1), ("mwt", 1), ("word", 10)]
    mwt = tokens.filter(pl.col("token_type") == "mwt").row(0, named=True)
    assert (mwt["id"], mwt["word_index"], mwt["mwt_end"], mwt["head"]) == ("3-4", 3, 4, None)
    empty = tokens.filter(pl.col("token_type") == "empty").row(0, named=True)
    assert (empty["word_index"], empty["empty_minor"], empty["head"]) == (4, 1, None)
    assert tokens.schema["head"] == pl.Int32
    assert tokens.filter(feature("Case") == "Dat").get_column("form").to_list() == ["dem", "Markt"]


def test_fields_agree_with_the_conllu_library(run_cli, tmp_path):
    """An independent parser (the `conllu` package) reads the same words, heads and features."""
    _round_trip(run_cli, MINI, tmp_path)
    tokens, _ = read_treebank(tmp_path / "mini")
    words = tokens.filter(pl.col("token_type") == "word")
    ours = [(r["form"], r["head"], parse_feats(r["feats"])) for r in words.iter_rows(named=True)]
    theirs = []
    for sentence in conllu.parse(MINI.read_text(encoding="utf-8")):
        for token in sentence:
            if isinstance(token["id"], int):
                theirs.append((token["form"], token["head"], dict(token["feats"] or {})))
    assert ours == theirs


@pytest.mark.parametrize("path", sorted(VENDORED_UD.glob("*/*.conllu.gz")), ids=lambda p: p.name)
def test_vendored_treebanks_round_trip(run_cli, tmp_path, path):
    assert _round_trip(run_cli, path, tmp_path) == _read_bytes(path)


@pytest.mark.slow
@pytest.mark.shared
def test_every_shared_treebank_round_trips(run_cli, tmp_path):
    files = sorted((SHARED_DATA / "ud").glob("*/*.conllu.gz"))
    assert len({f.parent for f in files}) == 13
    for path in files:
        assert _round_trip(run_cli, path, tmp_path) == _read_bytes(path), path


def test_normalised_input_crlf_bom_missing_final_blank_line(run_cli, tmp_path):
    text = MINI.read_text(encoding="utf-8")
    messy = tmp_path / "messy.conllu"
    messy.write_bytes(b"\xef\xbb\xbf" + text.rstrip("\n").replace("\n", "\r\n").encode())
    assert _round_trip(run_cli, messy, tmp_path) == MINI.read_bytes()


def test_parquet_output_is_deterministic(run_cli, tmp_path):
    for name in ("a", "b"):
        assert run_cli("ingest", MINI, "--out", tmp_path / name)[0] == 0
    for file in ("tokens.parquet", "sentences.parquet"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()


def test_stats_counts(run_cli, tmp_path):
    assert run_cli("ingest", MINI, "--out", tmp_path / "tb")[0] == 0
    out = tmp_path / "stats.parquet"
    assert run_cli("stats", tmp_path / "tb", "--treebank", "mini", "--split", "test",
                   "--lang", "de", "--out", out)[0] == 0
    row = pl.read_parquet(out).row(0, named=True)
    assert (row["sentences"], row["words"], row["tokens"], row["mwts"], row["empty_nodes"]) == (
        2, 10, 9, 1, 1)
    assert row["upos_VERB"] == 3 and row["upos_PRON"] == 2 and row["upos_NOUN"] == 1
    # 10 words, 9 distinct forms ("left" twice? no: one word `left`, the copy is an empty node)
    assert row["word_types"] == 10 and row["type_token_ratio"] == pytest.approx(1.0)


def test_outputs_get_the_usual_file_mode(run_cli, tmp_path):
    import os
    import stat

    assert run_cli("ingest", MINI, "--out", tmp_path / "tb")[0] == 0
    mask = os.umask(0)
    os.umask(mask)
    mode = stat.S_IMODE((tmp_path / "tb" / "tokens.parquet").stat().st_mode)
    assert mode == 0o666 & ~mask
