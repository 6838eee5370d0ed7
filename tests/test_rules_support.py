"""The rules' plumbing that runs without Snakemake (spudflow.core.rules_support)."""

from __future__ import annotations

import shutil
from pathlib import Path

from spudflow.core.rules_support import cli_options, code_files, code_version

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "spudflow"


def test_cli_options_spell_config_values_as_options_in_the_given_order():
    spec = {"max_length": 128, "subtypes": True, "punct": False, "languages": ["en", "de"],
            "layers": None, "learning_rate": 0.001, "seed": 0}
    keys = ("seed", "learning_rate", "languages", "subtypes", "punct", "layers", "missing",
            "max_length")
    assert cli_options(spec, keys) == [
        "--seed", "0", "--learning-rate", "0.001", "--languages", "en,de", "--subtypes",
        "--max-length", "128"]


def copy_package(dest: Path) -> Path:
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def test_code_version_follows_the_stage_and_core_code_only(tmp_path):
    package = copy_package(tmp_path / "a" / "spudflow")
    before = {stage: code_version(package, stage) for stage in ("ingest", "probe")}
    # The same code elsewhere (a moved checkout) has the same version.
    assert code_version(copy_package(tmp_path / "b" / "spudflow"), "ingest") == before["ingest"]
    # A file that is not code (notes) changes nothing.
    (package / "ingest" / "notes.md").write_text("scratch\n")
    code_version.cache_clear()
    assert code_version(package, "ingest") == before["ingest"]
    # Editing a stage's module changes that stage's version and no other.
    with (package / "ingest" / "convert.py").open("a") as f:
        f.write("\n# edited\n")
    code_version.cache_clear()
    assert code_version(package, "ingest") != before["ingest"]
    assert code_version(package, "probe") == before["probe"]
    # core is every stage's code; so is a data file a stage ships.
    (package / "core" / "extra.tsv").write_text("a\tb\n")
    code_version.cache_clear()
    assert code_version(package, "probe") != before["probe"]


def test_code_files_are_the_cli_the_stage_and_core():
    files = [f.relative_to(PACKAGE).parts[0] for f in code_files(PACKAGE, "nonce")]
    assert files[0] == "cli.py" and set(files) == {"cli.py", "nonce", "core"}
