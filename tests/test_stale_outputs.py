"""Tables and figures an earlier run of the same config made that it no longer makes: removed
only where that run recorded them as spudflow wrote them, nobody changed them since and no other
config's run recorded them as they are, and only once everything the config plans is there
(spudflow/stale_outputs.py). A model taken out of a finished run's config:
tests/test_incremental.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from spudflow.core.contract import conform, write_parquet
from spudflow.core.outputs_registry import rule_outputs
from spudflow.core.plan_base import registry_files
from spudflow.core.table_artifacts import NONCE_TYPE_TOKEN_RATIO
from spudflow.core.tables import write_table
from spudflow.core.written_files import ENTRY_SUFFIX, MARK_DIR, mark, sha256_of
from spudflow.stale_outputs import RECORDS, config_key, left_by_its_job, planned_files
from spudflow.stale_outputs import settle_outputs as settle_with_proof

KEPT = "table_treebank_stats"      # planned by both runs of the config
DROPPED = "figure_probe_layers"    # planned by the first run only
KEY = "config/config.yaml"


def as_left(file: Path) -> bool:
    """Every Parquet file is as its job left it (Snakemake's record says so)."""
    return True


def settle(key, planned, root, job_left=as_left) -> list[Path]:
    """settle_outputs(), which here meets no file it cannot read or remove: the files removed."""
    removed, problems = settle_with_proof(key, planned, job_left, root)
    assert problems == []
    return removed


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
    assert settle(key, planned_files(targets(KEPT, DROPPED)), root) == []
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

    assert settle(KEY, planned_files(targets(KEPT)), tmp_path) == sorted(dropped)
    assert not any(path.exists() for path in dropped)
    assert not any((p.parent / MARK_DIR / f"{p.name}{ENTRY_SUFFIX}").exists() for p in dropped)
    assert all(path.read_text() == "kept\n" for path in kept)
    assert user.read_text() == "mine\n"
    assert settle(KEY, planned_files(targets(KEPT)), tmp_path) == []
    record, = (tmp_path / RECORDS).glob("*.json")
    recorded = json.loads(record.read_text())["files"]
    assert {path: entry["sha256"] for path, entry in recorded.items()} == {
        str(path.relative_to(tmp_path)): sha256_of(path) for path in kept}


def test_a_file_another_configs_run_left_otherwise_is_no_longer_its(tmp_path):
    """The default config's run, then the user's config rewrote a table of both in the same
    folder and no longer makes it: the default config's record lists other bytes, so it goes."""
    _, dropped = first_run(tmp_path, "config/config.yaml")
    for path in dropped:
        written(tmp_path, str(path.relative_to(tmp_path)), "mine now\n")
    everything = planned_files(targets(KEPT, DROPPED))
    assert settle("my.yaml", everything, tmp_path) == []
    assert settle("my.yaml", planned_files(targets(KEPT)), tmp_path) == sorted(dropped)


def test_another_configs_run_in_the_same_folder_removes_none_of_its_files(tmp_path):
    """A paper preset run after another: each is a key of its own."""
    kept, dropped = first_run(tmp_path, "config/papers/spud.yaml")
    other = "config/papers/german_case.yaml"
    assert settle(other, planned_files(targets(KEPT)), tmp_path) == []
    # the German preset's later runs leave the SPUD preset's figure alone, as does the SPUD
    # preset's own next run while the German one's record lists a file of both
    assert settle(other, planned_files(targets(KEPT)), tmp_path) == []
    assert settle("config/papers/spud.yaml", planned_files(targets(DROPPED)), tmp_path) == []
    assert all(path.is_file() for path in [*kept, *dropped])


def test_a_file_changed_since_the_run_or_not_spudflows_stays(tmp_path):
    _, (svg, png) = first_run(tmp_path)
    svg.write_text("then, and a note by hand\n")
    (png.parent / MARK_DIR / f"{png.name}{ENTRY_SUFFIX}").unlink()  # no longer spudflow's

    assert settle(KEY, planned_files(targets(KEPT)), tmp_path) == []
    assert svg.is_file() and png.is_file()


def ttr_frame(words: int) -> pl.DataFrame:
    """A row of the nonce TTR table, of WORDS words."""
    schema = NONCE_TYPE_TOKEN_RATIO.polars_schema()
    row = {name: ["tiny_en"] if dtype == pl.String else [0.5] if dtype == pl.Float64 else [1]
           for name, dtype in schema.items()}
    return pl.DataFrame(row | {"words": [words]}, schema=schema)


def relative(root: Path, files) -> set[str]:
    return {str(path.relative_to(root)) for path in files}


@pytest.mark.parametrize("edited", [None, "before the drop", "before another run"])
def test_a_parquet_table_goes_only_as_its_job_left_it(tmp_path, edited):
    """A Parquet file carries its own mark (its artifact): rewritten with another row it is
    still a spudflow artifact, but no longer as its job left it (Snakemake's record of the job
    says another time), so a later run does not record it and the drop leaves it."""
    stem = tmp_path / "results" / "tables" / "nonce_type_token_ratio"
    parquet = write_table(ttr_frame(10), stem, NONCE_TYPE_TOKEN_RATIO)["parquet"]
    tables = relative(tmp_path, parquet.parent.glob("nonce_type_token_ratio.*"))
    assert len(tables) == 4
    assert settle(KEY, tables, tmp_path) == []
    if edited:  # the Parquet file alone, rewritten as spudflow writes one
        write_parquet(conform(ttr_frame(11), NONCE_TYPE_TOKEN_RATIO), parquet)
    if edited == "before another run":
        assert settle(KEY, tables, tmp_path, job_left=lambda file: file != parquet) == []
    removed = settle(KEY, set(), tmp_path)
    edited_files = relative(tmp_path, [parquet]) if edited else set()
    assert relative(tmp_path, removed) == tables - edited_files
    assert parquet.is_file() is bool(edited)


def test_a_file_that_cannot_be_removed_is_a_warning_and_the_rest_goes_on(tmp_path, monkeypatch):
    _, (svg, png) = first_run(tmp_path)
    unlink = Path.unlink

    def refused(path, missing_ok=False):
        if path == svg:
            raise PermissionError(13, "Permission denied")
        unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", refused)
    removed, problems = settle_with_proof(KEY, planned_files(targets(KEPT)), as_left, tmp_path)
    assert removed == [png] and svg.is_file()
    assert problems == [f"{svg.relative_to(tmp_path)}: not removed (Permission denied)"]
    record, = (tmp_path / RECORDS).glob("*.json")
    assert set(json.loads(record.read_text())["files"]) == planned_files(targets(KEPT))


def test_nothing_happens_while_a_planned_file_is_missing(tmp_path):
    _, dropped = first_run(tmp_path)
    record, = (tmp_path / RECORDS).glob("*.json")
    before = record.read_bytes()
    missing = tmp_path / registry_files(KEPT)["csv"]
    missing.unlink()  # a run of a few targets, or one whose job failed

    assert settle(KEY, planned_files(targets(KEPT)), tmp_path) == []
    assert all(path.is_file() for path in dropped)
    assert record.read_bytes() == before


def test_config_key_is_the_config_files_as_named_in_order_and_the_config_values(tmp_path):
    assert config_key(["config/config.yaml"], None, tmp_path) == "config/config.yaml"
    assert config_key([tmp_path / "config/config.yaml"], {}, tmp_path) == "config/config.yaml"
    # --configfile a b and b a merge into different configs
    assert config_key(["b.yaml", "a.yaml"], None, tmp_path) == "b.yaml\na.yaml"
    assert config_key(["/elsewhere/my.yaml"], None, tmp_path) == "/elsewhere/my.yaml"
    (tmp_path / "link.yaml").symlink_to(tmp_path / "config.yaml")
    assert config_key(["link.yaml"], None, tmp_path) == "link.yaml"  # the path named
    overridden = config_key(["config/config.yaml"], {"probe": {"seeds": [1]}}, tmp_path)
    assert overridden == 'config/config.yaml\n--config {"probe": {"seeds": [1]}}'


class Persistence:
    """Snakemake's records of jobs (workflow.persistence): each output's record, by path."""

    def __init__(self, records):
        self.records = records

    def metadata(self, target):
        record = self.records[str(target)]
        if isinstance(record, Exception):
            raise record
        return record


def test_a_file_is_as_its_job_left_it_while_its_time_is_the_jobs_end(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("left.parquet", "edited.parquet", "unrecorded.parquet", "unreadable.parquet"):
        Path(name).write_bytes(b"PAR1")
    end = Path("left.parquet").stat().st_mtime
    records = {"left.parquet": SimpleNamespace(endtime=end),
               "edited.parquet": SimpleNamespace(endtime=end - 5), "unrecorded.parquet": None,
               "unreadable.parquet": ValueError("a record of another format")}
    left = left_by_its_job(Persistence(records))
    assert [name for name in records if left(Path(name))] == ["left.parquet"]
