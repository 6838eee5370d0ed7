"""Every kind of bad input: exit code 2, one `FILE:LINE: message` line, no output files."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """# sent_id = a
# text = Dogs bark .
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

"""


def _replace(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


CASES = {
    # name: (file content as bytes, expected line, expected words in the message)
    "wrong column count": (_replace("\t_\t_\n2", "\t_\n2").encode(), 3, "columns"),
    "non-integer id": (_replace("2\tbark", "two\tbark").encode(), 4, "malformed ID"),
    "malformed range id": (_replace("1\tDogs", "1-\tDogs").encode(), 3, "malformed ID"),
    "id out of sequence": (_replace("2\tbark", "4\tbark").encode(), 4, "out of sequence"),
    "non-integer head": (_replace("\t2\tnsubj", "\tx\tnsubj").encode(), 3, "HEAD"),
    "head outside sentence": (_replace("\t2\tnsubj", "\t9\tnsubj").encode(), 3, "outside"),
    "cycle": ((GOOD.replace("\t2\tnsubj", "\t3\tnsubj").replace("\t2\tpunct", "\t1\tpunct"))
              .encode(), 3, "cycle"),
    "no root": (_replace("\t0\troot", "\t1\troot").encode(), 1, "no root"),
    "two roots": (_replace("\t2\tpunct", "\t0\tpunct").encode(), 5, "2 roots"),
    "duplicate sent_id": ((GOOD + GOOD).encode(), 7, "duplicate sent_id"),
    "invalid utf-8": (_replace("Dogs\tdog", "D\udcffogs\tdog").encode("utf-8", "surrogateescape"),
                      3, "invalid UTF-8"),
    "empty file": (b"", 1, "empty file"),
    "comment after tokens": (_replace("3\t.", "# late\n3\t.").encode(), 5, "comment line after"),
}


def _assert_failed_cleanly(code: int, err: str, src: Path, line: int, words: str, out: Path):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert re.fullmatch(rf"{re.escape(str(src))}:{line}: .+", lines[0]), lines[0]
    assert words in lines[0]
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("name", CASES)
def test_bad_input_exits_2_with_file_line(run_cli, tmp_path, name):
    content, line, words = CASES[name]
    src = tmp_path / "bad.conllu"
    src.write_bytes(content)
    out = tmp_path / "out"
    code, _, err = run_cli("ingest", src, "--out", out)
    _assert_failed_cleanly(code, err, src, line, words, out)


def test_truncated_gzip(run_cli, tmp_path):
    src = tmp_path / "bad.conllu.gz"
    whole = gzip.compress((GOOD.replace("sent_id = a", "sent_id = b") + GOOD).encode() * 1)
    src.write_bytes(whole[: len(whole) // 2])
    out = tmp_path / "out"
    code, _, err = run_cli("ingest", src, "--out", out)
    assert code == 2 and "truncated or corrupt gzip" in err
    assert re.fullmatch(rf"{re.escape(str(src))}:\d+: .+", err.strip())
    assert not out.exists()


def test_exit_code_from_the_console_script(tmp_path):
    """The installed entry point (not just main()) exits 2 and writes one line."""
    src = tmp_path / "bad.conllu"
    src.write_text(_replace("\t2\tnsubj", "\tx\tnsubj"), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "spudflow", "ingest", str(src), "--out",
                             str(tmp_path / "out")], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == f"{src}:3: HEAD 'x' is not a non-negative integer"
    assert not (tmp_path / "out").exists()


def test_lenient_skips_and_counts(run_cli, tmp_path, caplog):
    bad = _replace("\t2\tnsubj", "\t9\tnsubj").replace("sent_id = a", "sent_id = bad")
    src = tmp_path / "mixed.conllu"
    src.write_text(GOOD + bad + GOOD.replace("sent_id = a", "sent_id = c"), encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("ingest", src, "--out", out)[0] == 2
    with caplog.at_level("WARNING"):
        assert run_cli("ingest", src, "--out", out, "--lenient")[0] == 0
    assert "skipped 1 bad sentence" in caplog.text
    import polars as pl

    sentences = pl.read_parquet(out / "sentences.parquet")
    assert sentences.get_column("sent_id").to_list() == ["a", "c"]


def test_export_of_missing_directory_is_reported(run_cli, tmp_path):
    code, _, err = run_cli("ingest", tmp_path / "nope.conllu", "--out", tmp_path / "o")
    assert code == 2 and "no such file" in err
