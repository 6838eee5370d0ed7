"""A treebank split given as a list of files (UD ships some training sets in parts, German HDT
train-a-1 … train-b-2): ingested as one split, the files and their sentences in order; a URL in
the list is downloaded to its own file first; the overlap check reads every file."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow_helpers import snakemake_cli

from spudflow.core.overlap import source_texts, split_file, treebank_part
from spudflow.core.treebank import read_treebank

from conftest import REPO

MINI = REPO / "tests" / "data" / "mini.conllu"
TINY_EN = REPO / "tests" / "data" / "workflow" / "tiny_en.conllu"
TINY_DE = REPO / "tests" / "data" / "workflow" / "tiny_de.conllu"


def _ingest_alone(run_cli, src: Path, out: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    assert run_cli("ingest", src, "--out", out)[0] == 0
    return read_treebank(out)


@pytest.mark.slow
def test_a_split_given_as_two_files_ingests_as_one_split_in_order(run_cli, tmp_path):
    # the second file by file:// URL: a list may mix paths and URLs
    remote = tmp_path / "remote" / "tiny_en.conllu"
    remote.parent.mkdir()
    shutil.copy(TINY_EN, remote)
    config = {"treebanks": {"mix": {"lang": "en",
                                    "splits": {"train": [str(MINI), remote.as_uri()]}}},
              "ingest": {"lenient": False}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    workdir = tmp_path / "work"
    result = snakemake_cli("--snakefile", REPO / "Snakefile", "--cores", "1", "--configfile",
                           tmp_path / "config.yaml", "--directory", workdir, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # the URL went to the list's second download file
    assert (workdir / "resources/downloads/mix/train.2.conllu").read_bytes() == TINY_EN.read_bytes()
    tokens, sentences = read_treebank(workdir / "results/ingest/mix/train")
    mini_tokens, mini_sentences = _ingest_alone(run_cli, MINI, tmp_path / "mini")
    en_tokens, en_sentences = _ingest_alone(run_cli, TINY_EN, tmp_path / "en")
    assert sentences.get_column("sent_id").to_list() == [
        "s1", "s2", "n01001011", "n01001013", "n01002017", "n01002032"]
    assert sentences.get_column("sent_index").to_list() == list(range(6))
    # each file's rows, in file order, the second file's sentences numbered on from the first's
    shift = pl.col("sent_index") + mini_sentences.height
    assert tokens.equals(pl.concat([mini_tokens, en_tokens.with_columns(shift)]))
    assert sentences.equals(pl.concat([mini_sentences, en_sentences.with_columns(shift)]))
    stats = pl.read_parquet(workdir / "results/tables/treebank_stats.parquet")
    assert stats.select("split", "sentences").rows() == [("train", 6)]


def test_a_sent_id_repeated_in_a_later_file_exits_2_naming_both_files(run_cli, tmp_path):
    # tiny_de and tiny_en are parallel PUD sentences: the same sent_ids
    code, _, err = run_cli("ingest", TINY_EN, TINY_DE, "--out", tmp_path / "out")
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"{TINY_DE}:1: duplicate sent_id 'n01001011' (first at {TINY_EN}:1)")
    assert not (tmp_path / "out").exists()


def test_the_overlap_check_reads_every_file_of_a_split():
    config = {"treebanks": {"mix": {"lang": "en", "splits": {"train": [str(MINI), str(TINY_EN)],
                                                              "url": ["https://x.org/a.conllu"]}}}}
    assert split_file(config, "mix", "train") == (str(MINI), str(TINY_EN))
    assert split_file(config, "mix", "url") is None  # not downloaded yet
    texts = source_texts(treebank_part(config, "mix/train", "all"))
    assert "Wir gehen zum Markt." in texts and len(texts) == 6
