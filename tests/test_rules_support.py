"""The rules' plumbing that runs without Snakemake (spudflow.core.rules_support)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from types import SimpleNamespace

from spudflow.core.rules_support import (
    cli_options,
    code_files,
    code_version,
    grows_with_attempt,
    input_mb,
    memory_for_input,
)

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


def test_a_gzip_input_counts_at_its_uncompressed_size_and_a_missing_one_as_nothing(tmp_path):
    text = "1\tword\t_\n" * 250_000  # 2.25 MB, compresses to a few kB
    (tmp_path / "a.conllu").write_text(text)
    (tmp_path / "a.conllu.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    assert input_mb([tmp_path / "a.conllu.gz"]) == input_mb([tmp_path / "a.conllu"]) == 2.25
    assert input_mb([tmp_path / "a.conllu", str(tmp_path / "not-yet.parquet")]) == 2.25
    (tmp_path / "tiny.gz").write_bytes(b"x")  # not gzip: its own size
    assert input_mb([tmp_path / "tiny.gz"]) == 1e-6


def test_memory_grows_with_the_named_inputs_above_its_floor(tmp_path):
    big = tmp_path / "big.parquet"
    with big.open("wb") as f:  # 50 MB without writing them: a sparse file
        f.truncate(50_000_000)
    small = tmp_path / "small.parquet"
    small.write_bytes(b"x" * 1000)
    mem = memory_for_input(3000, 500, 130, "tokens")
    assert mem(None, SimpleNamespace(tokens=str(small), pools=[str(big)])) == 3000
    assert mem(None, SimpleNamespace(tokens=str(big), pools=[])) == 500 + 130 * 50
    every = memory_for_input(2000, 500, 70)
    assert every(None, [str(big), str(small)]) == 500 + 3500 + 1  # ceil of 0.07 MB
    # a split given as a list of files: all of them
    assert memory_for_input(2000, 500, 10, "conllu")(
        None, SimpleNamespace(conllu=[str(big)] * 4)) == 500 + 10 * 200


def test_a_resource_grows_by_half_with_each_attempt_and_stays_whole(tmp_path):
    """Attempt 1 asks for the rule's number, 2 for 1.5 times it, 3 for 2.25 times (rounded up);
    a resource function gets the wildcards, and the input and threads when it names them."""
    fixed = grows_with_attempt(1000)
    assert [fixed(None, [], 1, attempt) for attempt in (1, 2, 3)] == [1000, 1500, 2250]
    assert grows_with_attempt(5)(None, [], 1, 2) == 8  # 7.5 minutes, rounded up
    big = tmp_path / "big.parquet"
    big.write_bytes(b"x" * 2_000_000)
    by_input = grows_with_attempt(memory_for_input(1000, 500, 700, "tokens"))
    inputs = SimpleNamespace(tokens=str(big))
    assert [by_input(None, inputs, 4, attempt) for attempt in (1, 2)] == [1900, 2850]
    by_wildcards = grows_with_attempt(lambda wc: 240 if wc.model == "bert" else 30)
    assert by_wildcards(SimpleNamespace(model="bert"), [], 4, 3) == 540
    by_threads = grows_with_attempt(lambda wildcards, threads: 100 * threads)
    assert by_threads(None, [], 4, 2) == 600
    # Snakemake's placeholder for a value it cannot compute yet is passed on as it is
    assert grows_with_attempt(lambda wc: "<TBD>")(None, [], 1, 2) == "<TBD>"
