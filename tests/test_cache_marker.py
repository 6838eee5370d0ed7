"""The cache commands touch only score caches: a folder without the marker `score --cache`
writes (nor the strict layout of a cache made before the marker) is refused with exit 2 and one
line, and nothing in it is removed or added. `score --cache` refuses a folder that holds
anything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_model_hash_memo import _ngram
from test_scoring_cli import ITEMS, write_items

from spudflow.core.errors import EXIT_BAD_INPUT
from spudflow.scoring.cache_marker import MARKER


def tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


def foreign_folder(root: Path) -> Path:
    """A results folder: subfolders, a file named like a cache segment, a Parquet table."""
    (root / "tables").mkdir(parents=True)
    (root / "tables" / "blimp.parquet").write_bytes(b"PAR1 a table PAR1")
    (root / "scores" / "spud").mkdir(parents=True)
    (root / "scores" / "spud" / "seg-1.parquet").write_bytes(b"not a segment")
    (root / "notes.txt").write_text("mine\n")
    return root


@pytest.mark.parametrize("command", [["stats"], ["verify"], ["compact"],
                                     ["prune", "--keep-models", "foo"]])
def test_a_cache_command_refuses_a_folder_that_is_not_a_score_cache(run_cli, tmp_path, command):
    folder = foreign_folder(tmp_path / "results")
    before = tree(folder)
    code, out, err = run_cli("cache", command[0], folder, *command[1:])
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{folder}: not a score cache (no {MARKER}, which `score --cache` writes, and other "
        "files than a cache's): nothing done"]
    assert out == ""
    assert tree(folder) == before


@pytest.fixture
def ngram_job(tmp_path):
    """(score arguments without --cache and --out, the number of items)."""
    items = write_items(tmp_path / "items.parquet", ITEMS[:2])
    model = _ngram(tmp_path, "cow")
    return ["score", items, "--model", model, "--kind", "ngram", "--method", "kn",
            "--lang", "en", "--name", "m", "--threads", "1"]


def test_score_marks_its_cache_and_refuses_a_foreign_folder(run_cli, tmp_path, ngram_job):
    cache = tmp_path / "cache"
    code, _, err = run_cli(*ngram_job, "--out", tmp_path / "a", "--cache", cache)
    assert code == 0, err
    assert (cache / MARKER).is_file()
    code, out, err = run_cli("cache", "prune", cache, "--keep-models", "m")
    assert code == 0, err
    folder = foreign_folder(tmp_path / "results")
    before = tree(folder)
    code, _, err = run_cli(*ngram_job, "--out", tmp_path / "b", "--cache", folder)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines()[-1].startswith(f"{folder}: not a score cache")
    assert tree(folder) == before and not (tmp_path / "b").exists()


def test_a_cache_made_before_the_marker_keeps_working(run_cli, tmp_path, ngram_job, caplog):
    """Its layout is recognised strictly; the next job marks it and hits."""
    caplog.set_level("INFO")
    cache = tmp_path / "cache"
    assert run_cli(*ngram_job, "--out", tmp_path / "a", "--cache", cache)[0] == 0
    (cache / MARKER).unlink()  # as older spudflow left it
    for command in (["stats"], ["verify"], ["compact"], ["prune", "--keep-models", "m"]):
        code, _, err = run_cli("cache", *command[:1], cache, *command[1:])
        assert code == 0, (command, err)
    caplog.clear()
    assert run_cli(*ngram_job, "--out", tmp_path / "b", "--cache", cache)[0] == 0
    assert "cache: 2 hits, 0 computed" in caplog.text
    assert (cache / MARKER).is_file()
    # one foreign file among the settings: no longer a cache's layout
    (cache / "notes.txt").write_text("mine\n")
    (cache / MARKER).unlink()
    assert run_cli("cache", "stats", cache)[0] == EXIT_BAD_INPUT


def test_cache_commands_touch_only_the_settings_they_made_and_follow_no_link(
        run_cli, tmp_path, ngram_job):
    """Inside a marked cache: a user's folder, a folder named like a setting but a link to one
    outside (whose torn segment verify would remove), and a torn segment that is a link to a
    file outside are all left alone by verify, compact and prune."""
    cache = tmp_path / "cache"
    assert run_cli(*ngram_job, "--out", tmp_path / "a", "--cache", cache)[0] == 0
    [setting] = [p for p in cache.iterdir() if p.is_dir()]
    (cache / "my_notes").mkdir()
    (cache / "my_notes" / "notes.txt").write_text("mine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "seg-0-0.parquet").write_bytes(b"torn, and not the cache's")
    (outside / "model.json").write_text("{}\n")
    (cache / ("f" * 24)).symlink_to(outside)
    (setting / "seg-1-1.parquet").symlink_to(outside / "seg-0-0.parquet")
    before = tree(outside)
    for command in (["verify"], ["compact"], ["prune", "--keep-models", "m"],
                    ["prune", "--keep-models", "other"]):
        code, _, err = run_cli("cache", command[0], cache, *command[1:])
        assert code == 0, (command, err)
        assert tree(outside) == before, command
        assert (cache / "my_notes" / "notes.txt").read_text() == "mine\n", command
        assert (cache / ("f" * 24)).is_symlink(), command
    assert not setting.exists()  # pruned: prune still removes a setting it made


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_cache_path_is_refused(run_cli, tmp_path, ngram_job, monkeypatch, value):
    """`score --cache ''` would make the working folder the cache."""
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    code, _, err = run_cli(*ngram_job, "--out", tmp_path / "a", "--cache", value)
    assert code == EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == [
        f"{value!r}: an empty path, which would be the working folder: name a folder of its own"]
    assert tree(tmp_path) == before


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_scoring_cache_is_a_config_error(value):
    import yaml

    from spudflow.core.config import config_errors

    repo = Path(__file__).parent.parent
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text(encoding="utf-8"))
    config["scoring"]["cache"] = value
    errors = config_errors(config, repo / "config" / "schema.yaml")
    assert [e.split(":")[0] for e in errors] == ["config key scoring.cache"], errors
