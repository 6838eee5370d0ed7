"""A split made without a UPOS (nonce.splits' upos, the reference's train and dev without ADV)
has no ratio for it in the Table 7 layout: null, not 0."""

from __future__ import annotations

import polars as pl
from nonce_helpers import conllu, ingest, nonce

from spudflow.cli import main


def sentence(adverb: str, noun: str) -> str:
    return f"""
1 {noun} {noun} NOUN Number=Sing 2 nsubj
2 runs run VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
3 {adverb} {adverb} ADV _ 2 advmod
"""


def test_a_upos_a_split_did_not_replace_has_no_ratio(tmp_path):
    directory = ingest(tmp_path, conllu(sentence("fast", "dog"), sentence("slowly", "cat")))
    with_adv, without = tmp_path / "with", tmp_path / "without"
    nonce(directory, "en", "--upos", "NOUN,ADV", "--split", "test", out=with_adv)
    nonce(directory, "en", "--upos", "NOUN", "--split", "dev", out=without)
    out = tmp_path / "table"
    assert main(["table-nonce-ratio", str(with_adv / "replacement_stats.parquet"),
                 str(without / "replacement_stats.parquet"), "--out", str(out)]) == 0
    table = pl.read_parquet(out.with_suffix(".parquet"))
    rows = {row["split"]: row for row in table.iter_rows(named=True)}
    assert rows["test"]["ADV"] == 1.0 and rows["test"]["NOUN"] == 1.0
    assert rows["dev"]["ADV"] is None and rows["dev"]["NOUN"] == 1.0
