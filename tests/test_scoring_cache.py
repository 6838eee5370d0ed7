"""The item-level score cache (`score --cache`): hits give the cold run's tables byte for byte;
anything that can change a score misses; concurrent jobs and a job killed mid-run leave nothing a
later run takes for a valid entry; `cache stats` and `cache prune`."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cache_scenario import COUNTS
from preloaded_jobs import TEST_JOB, kill_job
from scoring_models import changed_weights, edge_case_items, make_item, tiny_model_dir
from test_scoring_cli import ITEMS, write_items
from waiting import running, wait_until

from spudflow.cli import main
from spudflow.scoring.cache_files import SEGMENT_GLOB
from spudflow.scoring.file_hashes import MEMO_FILE

TABLES = ("token_scores.parquet", "item_scores.parquet")
MIXED = [*ITEMS, *edge_case_items()]


def score(items, out, cache, *extra, model=None, kind="causal", method="ppl", caplog=None):
    """Runs `spudflow score`; returns (hits, computed) from the job's log line."""
    model = model or tiny_model_dir("causal", "bytebpe")
    args = ["score", str(items), "--model", str(model), "--kind", kind, "--method", method,
            "--out", str(out), "--name", "m", "--device", "cpu", "--threads", "1",
            *map(str, extra)]
    if cache is not None:
        args += ["--cache", str(cache)]
    if caplog is not None:
        caplog.clear()
    assert main(args) == 0
    if cache is None or caplog is None:
        return None
    found = [COUNTS.search(r.getMessage()) for r in caplog.records]
    (hits, computed), = [tuple(map(int, m.groups())) for m in found if m]
    return hits, computed


def same_tables(a: Path, b: Path) -> bool:
    return all((a / t).read_bytes() == (b / t).read_bytes() for t in TABLES)


@pytest.fixture
def items(tmp_path):
    return write_items(tmp_path / "items.parquet", MIXED)


def n_scorable(out: Path) -> int:
    import polars as pl

    scores = pl.read_parquet(out / "item_scores.parquet")
    return scores.filter(pl.col("skipped").is_null())["item_id"].n_unique()


def test_hits_give_the_cold_runs_tables_byte_for_byte(tmp_path, items, caplog):
    caplog.set_level("INFO")
    score(items, tmp_path / "cold", None)
    n = n_scorable(tmp_path / "cold")
    cache = tmp_path / "cache"
    assert score(items, tmp_path / "first", cache, caplog=caplog) == (0, n)
    assert score(items, tmp_path / "second", cache, caplog=caplog) == (n, 0)
    # other batches and blocks: the same entries serve
    assert score(items, tmp_path / "third", cache, "--batch-tokens", 64, "--block-size", 3,
                 caplog=caplog) == (n, 0)
    for run in ("first", "second", "third"):
        assert same_tables(tmp_path / "cold", tmp_path / run), run


def test_only_changed_items_are_scored_again(tmp_path, items, caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    score(items, tmp_path / "first", cache, caplog=caplog)
    n = n_scorable(tmp_path / "first")
    edited = [make_item("plain", "The dog sat on the mat.",
                        ["The", "dog", "sat", "on", "the", "mat", "."]) if i.item_id == "plain"
              else i for i in MIXED]
    # renamed items (new ids, same content) are hits
    renamed = [dataclasses.replace(i, item_id=f"x-{i.item_id}") for i in edited]
    path = write_items(tmp_path / "edited.parquet", renamed, dataset="another")
    assert score(path, tmp_path / "edited", cache, caplog=caplog) == (n - 1, 1)
    score(path, tmp_path / "edited-cold", None)
    assert same_tables(tmp_path / "edited", tmp_path / "edited-cold")


def _changed_tokenizer(tmp_path) -> Path:
    copy = tmp_path / "changed-tokenizer"
    shutil.copytree(tiny_model_dir("causal", "bytebpe"), copy)
    config = copy / "tokenizer_config.json"
    config.write_text(config.read_text().replace("{", '{"model_max_length": 40,', 1))
    return copy


@pytest.mark.parametrize("change", ["weights", "tokenizer", "dtype", "method", "kind"])
def test_a_change_that_can_change_scores_misses(tmp_path, items, caplog, change):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    score(items, tmp_path / "first", cache, caplog=caplog)
    n = n_scorable(tmp_path / "first")
    options = {
        "weights": {"model": changed_weights(tmp_path)},
        "tokenizer": {"model": _changed_tokenizer(tmp_path)},
        "dtype": {"extra": ("--dtype", "bfloat16")},
        "method": {"method": "ppl_region"},
        "kind": {"model": tiny_model_dir("masked", "bytebpe"), "kind": "masked",
                 "method": "unmasked"},
    }[change]
    extra = options.pop("extra", ())
    hits, computed = score(items, tmp_path / "second", cache, *extra, caplog=caplog, **options)
    assert hits == 0 and computed > 0
    # and the unchanged setting still hits everything
    assert score(items, tmp_path / "third", cache, caplog=caplog) == (n, 0)


def test_pppl_l2r_scores_are_keyed_on_their_words(tmp_path, caplog):
    """A pppl_l2r score made with the tokenizer's words is never served for the items' words
    (they differ on `U.S.`), nor the reverse; pppl's scores do not depend on the setting."""
    import polars as pl

    caplog.set_level("INFO")
    items = write_items(tmp_path / "ud.parquet", [
        make_item("us", "The U.S. embassy said so...",
                  ["The", "U.S.", "embassy", "said", "so", "..."]),
        make_item("plain", "The cat sat on the mat.", ["The", "cat", "sat", "on", "the", "mat",
                                                       "."])])
    cache, model = tmp_path / "cache", tiny_model_dir("masked", "wordpiece")

    def run(out, method, *extra):
        return score(items, tmp_path / out, cache, *extra, model=model, kind="masked",
                     method=method, caplog=caplog)

    assert run("tokenizer", "pppl,pppl_l2r") == (0, 4)
    assert run("items", "pppl,pppl_l2r", "--l2r-words", "items") == (2, 2)
    assert run("items-again", "pppl_l2r", "--l2r-words", "items") == (2, 0)
    assert run("tokenizer-again", "pppl_l2r") == (2, 0)

    def l2r_sums(out):
        table = pl.read_parquet(tmp_path / out / "item_scores.parquet")
        return table.filter(pl.col("method") == "pppl_l2r").sort("item_id")["logprob_sum"]

    tokenizer, by_items = l2r_sums("tokenizer"), l2r_sums("items")
    assert tokenizer[0] == by_items[0]  # plain: the same words either way
    assert tokenizer[1] != by_items[1]  # us
    assert l2r_sums("tokenizer-again").to_list() == tokenizer.to_list()


def _spudflow(*args, client: Path | None = None) -> subprocess.Popen:
    """`spudflow ARGS` as a process of its own (one thread, a fixed hash seed): a fresh Python,
    or with `client` (the preloaded_test_jobs fixture) one forked from a server that has the
    heavy libraries imported (preloaded_jobs.kill_job kills either kind)."""
    program = [str(client / "spudflow")] if client else [sys.executable, "-m", "spudflow"]
    return subprocess.Popen([*program, *map(str, args)], env=dict(os.environ, **TEST_JOB),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _score_command(items, out, cache, *extra):
    return ["score", items, "--model", tiny_model_dir("causal", "bytebpe"), "--kind", "causal",
            "--method", "ppl,ppl_region", "--out", out, "--name", "m", "--device", "cpu",
            "--threads", "1", "--block-size", "4", "--cache", cache, *extra]


@pytest.fixture
def many_items(tmp_path):
    items = [dataclasses.replace(i, item_id=f"{k}-{i.item_id}",
                                 sentence=f"{i.sentence}{' ' * k}")
             for k in range(6) for i in MIXED]
    return write_items(tmp_path / "many.parquet", items)


@pytest.fixture
def longer_items(tmp_path):
    """many_items seven times over: after the kills' 6 blocks, dozens are left, so that a job
    cannot finish between two looks at its blocks (tiny-model blocks take milliseconds)."""
    items = [dataclasses.replace(i, item_id=f"{k}-{i.item_id}",
                                 sentence=f"{i.sentence}{' ' * k}")
             for k in range(42) for i in MIXED]
    return write_items(tmp_path / "longer.parquet", items)


@pytest.mark.slow
def test_concurrent_jobs_share_the_cache_safely(tmp_path, many_items, caplog,
                                                preloaded_test_jobs):
    caplog.set_level("INFO")
    cold = tmp_path / "cold"
    assert main(["score", str(many_items), *map(str, _score_command(
        many_items, cold, tmp_path / "unused")[2:-2])]) == 0
    cache = tmp_path / "cache"
    jobs = [_spudflow(*_score_command(many_items, tmp_path / f"job{k}", cache),
                      client=preloaded_test_jobs) for k in range(4)]
    for job in jobs:
        _, err = job.communicate(timeout=600)
        assert job.returncode == 0, err[-2000:]
    for k in range(4):
        assert same_tables(cold, tmp_path / f"job{k}"), k
    hits, computed = score(many_items, tmp_path / "after", cache, "--method", "ppl,ppl_region",
                           caplog=caplog)
    assert computed == 0 and hits > 0


def _blocks_done(out: Path) -> list[Path]:
    """The blocks an unfinished scoring job into `out` has written (its last table of each)."""
    return sorted(out.glob(f".partial-*/block-*.{TABLES[1]}"))


@pytest.mark.slow
def test_a_job_killed_mid_run_leaves_no_false_entry(tmp_path, longer_items, caplog,
                                                     preloaded_test_jobs):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    killed = tmp_path / "killed"
    # Each job is killed once it has finished `more` blocks beyond those of the jobs before it
    # (each resumes from their blocks: run.py's partial folder, whose files it writes after a
    # block's cache segment), so the three kills fall at three different points in the items.
    for more in (1, 2, 3):
        before = len(_blocks_done(killed))
        job = _spudflow(*_score_command(longer_items, killed, cache), client=preloaded_test_jobs)
        wait_until(lambda: len(_blocks_done(killed)) >= before + more,  # noqa: B023
                   f"{more} more blocks scored", still=running(job))
        kill_job(job, preloaded_test_jobs)
        job.wait()
        assert job.returncode == -signal.SIGKILL, "the job ended before it was killed"
    # whatever the kills left (whole segments, temporary files), a later run is the cold one
    score(longer_items, tmp_path / "cold", None, "--method", "ppl,ppl_region")
    hits, computed = score(longer_items, tmp_path / "after", cache, "--method", "ppl,ppl_region",
                           caplog=caplog)
    assert hits + computed == 2 * n_scorable(tmp_path / "cold")
    assert same_tables(tmp_path / "cold", tmp_path / "after")


def test_torn_or_foreign_files_are_never_read_as_entries(tmp_path, items, caplog):
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    score(items, tmp_path / "first", cache, caplog=caplog)
    n = n_scorable(tmp_path / "first")
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    (segment,) = folder.glob(SEGMENT_GLOB)
    data = segment.read_bytes()
    (folder / ".tmp-torn.parquet").write_bytes(data[: len(data) // 2])  # a killed write
    segment.write_bytes(data[: len(data) // 2])                          # a torn segment
    assert score(items, tmp_path / "second", cache, caplog=caplog) == (0, n)
    assert "unreadable segment" in caplog.text
    assert same_tables(tmp_path / "first", tmp_path / "second")


def test_stats_and_prune(tmp_path, items, capsys):
    cache = tmp_path / "cache"
    score(items, tmp_path / "a", cache)
    score(items, tmp_path / "b", cache, model=tiny_model_dir("masked", "bytebpe"), kind="masked",
          method="unmasked")
    capsys.readouterr()
    assert main(["cache", "stats", str(cache)]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["model", "kind", "dtype", "device", "id", "entries",
                                  "segments", "stores", "torn", "bytes"]
    by_kind = {row.split("\t")[1]: row.split("\t") for row in rows}
    assert set(by_kind) == {"causal", "masked"}
    n = n_scorable(tmp_path / "a")
    assert all(int(row[5]) == n and int(row[9]) > 0 for row in by_kind.values())
    assert main(["cache", "prune", str(cache), "--keep-models", by_kind["causal"][4]]) == 0
    assert [p.name for p in cache.iterdir() if p.is_dir()] == [by_kind["causal"][4]]
    assert (cache / MEMO_FILE).is_file()  # file hashes outlive the settings


def test_a_missing_cache_folder_for_stats_is_bad_input(tmp_path, capsys):
    assert main(["cache", "stats", str(tmp_path / "nowhere")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_file_in_place_of_the_cache_folder_is_bad_input(tmp_path, items, capsys):
    cache = tmp_path / "cache"
    cache.write_text("not a folder\n")
    tiny_model_dir("causal", "bytebpe")
    capsys.readouterr()
    args = ["score", str(items), "--model", str(tiny_model_dir("causal", "bytebpe")), "--kind",
            "causal", "--method", "ppl", "--out", str(tmp_path / "out"), "--cache", str(cache)]
    assert main(args) == 2
    assert capsys.readouterr().err.strip().startswith(f"{cache}: is a file")
    assert not (tmp_path / "out").exists()
