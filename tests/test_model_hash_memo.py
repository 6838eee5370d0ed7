"""The model-file hash memo never serves a stale hash: another model file of the same size,
written in place (same inode) with its timestamp set back to the old one's (reproducible
archives set 1980-01-01), is hashed again, and the cache gives the new model's scores."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import polars as pl
import pytest
from scoring_models import make_item
from test_scoring_cli import write_items

from spudflow.cli import main
from spudflow.scoring.file_hashes import MEMO_FILE, FileHashes

# 1980-01-01 00:00 UTC, the timestamp reproducible archives (zip, wheels) give every file.
ARCHIVE_TIME_NS = 315532800 * 10**9


def replace_in_place(path: Path, data: bytes) -> None:
    """Write DATA over PATH's bytes (the inode stays) and set its timestamps back to the old
    ones, as an unpacked reproducible archive leaves them."""
    before = path.stat()
    assert len(data) == before.st_size
    time.sleep(0.05)  # past the kernel's coarse clock tick: the write moves the ctime
    with path.open("r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == \
        (before.st_size, before.st_mtime_ns, before.st_ino)
    assert after.st_ctime_ns != before.st_ctime_ns


def test_a_file_rewritten_in_place_with_its_old_timestamp_is_hashed_again(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"old weights")
    os.utime(weights, ns=(ARCHIVE_TIME_NS, ARCHIVE_TIME_NS))
    memo = tmp_path / MEMO_FILE
    assert FileHashes(memo).sha256(weights) == hashlib.sha256(b"old weights").hexdigest()
    replace_in_place(weights, b"new weights")
    hashes = FileHashes(memo)  # a later job, reading the memo
    assert hashes.sha256(weights) == hashlib.sha256(b"new weights").hexdigest()
    assert hashes.hashed == 1


def _ngram(folder: Path, word: str) -> Path:
    text = folder / f"{word}.txt"
    text.write_text(f"The {word} sat on the mat .\nA dog saw the {word} .\n", encoding="utf-8")
    assert main(["ngram-train", str(text), "--order", "2", "--lang", "en",
                 "--out", str(folder / f"{word}.parquet")]) == 0
    return folder / f"{word}.parquet"


def _scores(items: Path, model: Path, out: Path, cache: Path | None) -> list[float]:
    argv = ["score", str(items), "--model", str(model), "--kind", "ngram", "--method", "kn",
            "--lang", "en", "--name", "m", "--out", str(out), "--threads", "1"]
    assert main(argv + (["--cache", str(cache)] if cache else [])) == 0
    frame = pl.read_parquet(out / "item_scores.parquet").filter(pl.col("region").is_null())
    return frame.sort("item_id")["logprob_sum"].to_list()


@pytest.mark.slow
def test_the_cache_gives_the_new_models_scores_after_an_in_place_rewrite(tmp_path):
    """Two bigram models of the same file size (their words differ in one letter); the second
    is written over the first in place with the first's timestamp."""
    items = write_items(tmp_path / "items.parquet", [
        make_item(f"s{i}", text, text.split()) for i, text in
        enumerate(["The cow sat on the mat .", "A dog saw the cox ."])])
    old, new = _ngram(tmp_path, "cow"), _ngram(tmp_path, "cox")
    assert old.stat().st_size == new.stat().st_size
    expected_new = _scores(items, new, tmp_path / "new", None)
    model = tmp_path / "model" / "bigram.parquet"
    model.parent.mkdir()
    model.write_bytes(old.read_bytes())
    os.utime(model, ns=(ARCHIVE_TIME_NS, ARCHIVE_TIME_NS))
    cache = tmp_path / "cache"
    expected_old = _scores(items, model, tmp_path / "first", cache)
    assert expected_old != expected_new  # the words differ: so do the scores
    replace_in_place(model, new.read_bytes())
    assert _scores(items, model, tmp_path / "second", cache) == expected_new
