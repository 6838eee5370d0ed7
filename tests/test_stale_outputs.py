"""Tables and figures an earlier run of the same config made that it no longer makes: removed
only where that run recorded them, spudflow wrote them, nobody changed them since and no other
config's run recorded them, and only once everything the config plans is there
(core/stale_outputs.py). A model taken out of a finished run's config: tests/test_incremental.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from spudflow.core.contract import conform, write_parquet
from spudflow.core.outputs_registry import rule_outputs
from spudflow.core.plan_base import registry_files
from spudflow.core.stale_outputs import (
    RECORDS,
    config_key,
    planned_files,
    settle_outputs,
)
from spudflow.core.table_artifacts import NONCE_TYPE_TOKEN_RATIO
from spudflow.core.tables import write_table
from spudflow.core.written_files import ENTRY_SUFFIX, MARK_DIR, mark, sha256_of

KEPT = "table_treebank_stats"      # planned by both runs of the config
DROPPED = "figure_probe_layers"    # planned by the first run only
KEY = "config/config.yaml"


def written(root: Path, path: str, text: str) -> Path:
    """A file as spudflow writes it: its bytes, and their hash in the marks beside it."""
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)
    mark(file, [sha256_of(file)])
    return file


def targets(*rules: str) -> list[str]:
    """A run's targets, as rule all's: each output's registry target."""
    return [o.target for rule in rules for o in rule_outputs(rule)]


def first_run(root: Path, key: str = KEY) -> tuple[list[Path], list[Path]]:
    """A successful run of KEY that made KEPT's and DROPPED's files: (KEPT's, DROPPED's)."""
    kept = [written(root, path, "kept\n") for path in registry_files(KEPT).values()]
    dropped = [written(root, path, "then\n") for path in registry_files(DROPPED).values()]
    assert settle_outputs(key, planned_files(targets(KEPT, DROPPED)), root) == []
    return kept, dropped


def test_planned_files_are_every_format_of_the_planned_tables_and_figures():
    files = planned_files([*targets(KEPT, DROPPED), "results/index.html", "results/items/x"])
    assert files == {*map(str, registry_files(KEPT).values()),
                     *map(str, registry_files(DROPPED).values()), "results/index.html"}
    assert {Path(f).suffix for f in files} >= {".csv", ".parquet", ".md", ".tex", ".svg", ".png"}


def test_a_figure_the_config_no_longer_makes_is_removed_with_its_marks(tmp_path):
    kept, dropped = first_run(tmp_path)
    user = tmp_path / "results" / "figures" / "my_sketch.svg"
    user.write_text("mine\n")

    assert settle_outputs(KEY, planned_files(targets(KEPT)), tmp_path) == sorted(dropped)
    assert not any(path.exists() for path in dropped)
    assert not any((p.parent / MARK_DIR / f"{p.name}{ENTRY_SUFFIX}").exists() for p in dropped)
    assert all(path.read_text() == "kept\n" for path in kept)
    assert user.read_text() == "mine\n"
    assert settle_outputs(KEY, planned_files(targets(KEPT)), tmp_path) == []
    record, = (tmp_path / RECORDS).glob("*.json")
    assert json.loads(record.read_text())["files"] == {
        str(path.relative_to(tmp_path)): sha256_of(path) for path in kept}


def test_another_configs_run_in_the_same_folder_removes_none_of_its_files(tmp_path):
    """A paper preset run after another: each is a key of its own."""
    kept, dropped = first_run(tmp_path, "config/papers/spud.yaml")
    other = "config/papers/german_case.yaml"
    assert settle_outputs(other, planned_files(targets(KEPT)), tmp_path) == []
    # the German preset's later runs leave the SPUD preset's figure alone, as does the SPUD
    # preset's own next run while the German one's record lists a file of both
    assert settle_outputs(other, planned_files(targets(KEPT)), tmp_path) == []
    assert settle_outputs("config/papers/spud.yaml", planned_files(targets(DROPPED)),
                          tmp_path) == []
    assert all(path.is_file() for path in [*kept, *dropped])


def test_a_file_changed_since_the_run_or_not_spudflows_stays(tmp_path):
    _, (svg, png) = first_run(tmp_path)
    svg.write_text("then, and a note by hand\n")
    (png.parent / MARK_DIR / f"{png.name}{ENTRY_SUFFIX}").unlink()  # no longer spudflow's

    assert settle_outputs(KEY, planned_files(targets(KEPT)), tmp_path) == []
    assert svg.is_file() and png.is_file()


def ttr_frame(words: int) -> pl.DataFrame:
    """A row of the nonce TTR table, of WORDS words."""
    schema = NONCE_TYPE_TOKEN_RATIO.polars_schema()
    row = {name: ["tiny_en"] if dtype == pl.String else [0.5] if dtype == pl.Float64 else [1]
           for name, dtype in schema.items()}
    return pl.DataFrame(row | {"words": [words]}, schema=schema)


def relative(root: Path, files) -> set[str]:
    return {str(path.relative_to(root)) for path in files}


@pytest.mark.parametrize("edited", [False, True])
def test_a_parquet_table_goes_only_as_the_run_left_it(tmp_path, edited):
    """A Parquet file carries its own mark (its artifact): rewritten with another row it is
    still a spudflow artifact, but not the file the run recorded."""
    stem = tmp_path / "results" / "tables" / "nonce_type_token_ratio"
    parquet = write_table(ttr_frame(10), stem, NONCE_TYPE_TOKEN_RATIO)["parquet"]
    tables = relative(tmp_path, parquet.parent.glob("nonce_type_token_ratio.*"))
    assert len(tables) == 4
    assert settle_outputs(KEY, tables, tmp_path) == []
    if edited:  # the Parquet file alone, rewritten as spudflow writes one
        write_parquet(conform(ttr_frame(11), NONCE_TYPE_TOKEN_RATIO), parquet)
    removed = settle_outputs(KEY, set(), tmp_path)
    edited_files = relative(tmp_path, [parquet]) if edited else set()
    assert relative(tmp_path, removed) == tables - edited_files
    assert parquet.is_file() is edited


def test_nothing_happens_while_a_planned_file_is_missing(tmp_path):
    _, dropped = first_run(tmp_path)
    record, = (tmp_path / RECORDS).glob("*.json")
    before = record.read_bytes()
    missing = tmp_path / registry_files(KEPT)["csv"]
    missing.unlink()  # a run of a few targets, or one whose job failed

    assert settle_outputs(KEY, planned_files(targets(KEPT)), tmp_path) == []
    assert all(path.is_file() for path in dropped)
    assert record.read_bytes() == before


@pytest.mark.parametrize("files, key", [
    (["config/config.yaml"], "config/config.yaml"),
    (["config/papers/spud.yaml", "extra.yaml"], "config/papers/spud.yaml\nextra.yaml"),
])
def test_config_key_is_the_config_files_paths_within_the_working_directory(tmp_path, files,
                                                                             key):
    assert config_key([tmp_path / f for f in files[::-1]], tmp_path) == key
    assert config_key(files, tmp_path) == key
    assert config_key(["/elsewhere/my.yaml"], tmp_path) == "/elsewhere/my.yaml"
