"""The registry of items datasets (core/dataset_families.py): a new dataset is its builder module,
its registry entry and its test; its rule, command, config section, docs row, family and language
come from the entry."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from workflow_helpers import REPO, copy_workflow, in_copy, update_config

from spudflow.cli import main
from spudflow.core.artifacts import ITEMS
from spudflow.core.contract import ARTIFACT_KEY, read_artifact
from spudflow.core.dataset_families import BUILT_FAMILIES, DATASET_FAMILIES, FAMILIES
from spudflow.items import registry


def test_the_rendered_schema_and_docs_are_fresh():
    """config/schema.yaml and docs/items.md hold what the registry renders."""
    assert registry.main(["--check", str(REPO / "config" / "schema.yaml"),
                          str(REPO / "docs" / "items.md")]) == 0


def test_every_family_has_a_command_and_a_schema_section(capsys):
    import yaml

    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text(encoding="utf-8"))
    assert set(schema["properties"]["pairs"]["properties"]) == set(DATASET_FAMILIES)
    with pytest.raises(SystemExit):
        main(["items", "--help"])
    listed = capsys.readouterr().out
    assert all(re.search(rf"^    {f.command}\b", listed, re.M) for f in FAMILIES), listed
    assert {"german-case", "cola", "blimp"} <= {f.command for f in BUILT_FAMILIES.values()}
    assert [f.name for f in FAMILIES][0] == "spud"  # SPUD datasets come first in every plan


def test_the_old_command_name_still_runs_and_says_so(tmp_path, capsys):
    """`spudflow pairs blimp` (the stage's old name, core/renamed.py) writes the same items after
    a deprecation line."""
    paradigm = REPO / "resources" / "blimp" / "causative.jsonl"
    new, old = tmp_path / "new.parquet", tmp_path / "old.parquet"
    assert main(["items", "blimp", str(paradigm), "--sample", "3", "--out", str(new)]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main(["pairs", "blimp", str(paradigm), "--sample", "3", "--out", str(old)]) == 0
    assert "spudflow: `pairs` is deprecated, use `items` (same options)" in (
        capsys.readouterr().err)
    assert old.read_bytes() == new.read_bytes()


# The throwaway dataset: judgements `sentence<TAB>label` of a TSV, one item per line.
NEW_BUILDER = '''"""Acceptability judgements from `sentence<TAB>label` lines (a test's own)."""

from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.plan_base import quoted, sample_args
from spudflow.core.sampling import sample_indices
from spudflow.core.text_lines import read_lines

HELP = "acceptability judgements, sentence<TAB>label lines"
DESCRIPTION = "One item (and group) per line."
CONFIG = {"files": {"description": "the TSV files", "type": "array", "minItems": 1,
                    "items": {"type": "string"}}}


def add_arguments(parser):
    parser.add_argument("files", type=Path, nargs="+", help="TSV files")


def build(*, files, dataset, sample, seed):
    from spudflow.core.dataset_families import DATASET_FAMILIES
    from spudflow.items.table import ItemsBuilder

    rows = []
    for path in files:
        for number, line in read_lines(path):
            sentence, _, label = line.partition("\\t")
            if label not in ("0", "1"):
                raise InputError(path, number, f"label {label!r}: 0 or 1")
            rows.append((path, number, sentence, int(label)))
    builder = ItemsBuilder(dataset, "en", DATASET_FAMILIES["judgements"].artifact)
    for index in sample_indices(len(rows), sample, seed):
        path, number, sentence, label = rows[index]
        item = f"{dataset}:{path.stem}:{number}"
        builder.add(item, item, sentence, label, line=number)
    return builder.table()


def inputs(section):
    return {"tsv": section["files"]}


def arguments(section):
    return [quoted(section["files"]), sample_args(section["sample"])]
'''
NEW_ENTRY = '''    DatasetFamily("judgements", "en", items_family("judgements", (
        col("line", I32, "1-based line in the file"),), "Judgements (`judgements`)."),
        ("files",), builder="judgements", summary="a test's own"),
'''


def _add_a_dataset(copy: Path) -> None:
    code = copy / "workflow" / "spudflow"
    registry_file = code / "core" / "dataset_families.py"
    text = registry_file.read_text(encoding="utf-8")
    end = text.index("\n)\nDATASET_FAMILIES") + 1  # the tuple's closing line
    text = text[:end] + NEW_ENTRY + text[end:]
    imports = "from spudflow.core.artifacts import (\n"
    text = text.replace(imports, imports + "    I32,\n    col,\n    items_family,\n")
    registry_file.write_text(text, encoding="utf-8")
    (code / "items" / "judgements.py").write_text(NEW_BUILDER, encoding="utf-8")


@pytest.mark.slow
def test_a_new_dataset_is_its_builder_its_entry_and_its_test(tmp_path):
    """In a copy of the tiny workflow, a dataset added as its builder module and one registry
    entry gets its config section and docs row once rendered; the config enables it; rule all
    plans its rule with its command; a run writes its items as its family's artifact, and
    the scoring stage plans its scores."""
    copy = copy_workflow(tmp_path / "workflow")
    _add_a_dataset(copy)
    (copy / "docs").mkdir()  # a workflow copy has no docs: the page to render into
    shutil.copy2(REPO / "docs" / "items.md", copy / "docs" / "items.md")
    rendered = in_copy(copy, "-m", "spudflow.items.registry", "config/schema.yaml",
                        "docs/items.md")
    assert rendered.returncode == 0, rendered.stderr
    assert "| `judgements` | `spudflow items judgements` | a test's own |" in (
        copy / "docs" / "items.md").read_text(encoding="utf-8")
    (copy / "judged.tsv").write_text("The cat sleeps.\t1\nCat the sleeps.\t0\n", encoding="utf-8")
    update_config(copy, lambda c: c["pairs"].__setitem__("judgements", {
        "enabled": True, "files": ["judged.tsv"]}))
    planned = in_copy(copy, "-m", "snakemake", "-n", "--cores", "1")
    assert planned.returncode == 0, planned.stderr
    assert re.search(r"^items_judgements\s+1$", planned.stdout, re.M), planned.stdout
    assert ("spudflow items judgements judged.tsv  --out results/items/judgements.parquet "
            "2> results/logs/items_judgements.log") in planned.stdout
    assert "results/scores/judgements/" in planned.stdout  # scored like every enabled dataset
    items = "results/items/judgements.parquet"
    ran = in_copy(copy, "-m", "snakemake", items, "--cores", "1")
    assert ran.returncode == 0, ran.stderr[-3000:]
    table = read_artifact(copy / items, ITEMS)  # the items artifact, checked on read
    assert table["sentence"].to_list() == ["The cat sleeps.", "Cat the sleeps."]
    assert table["label"].to_list() == [1, 0] and set(table["language"]) == {"en"}
    assert table["words"].to_list()[0] == ["The", "cat", "sleeps", "."]
    import pyarrow.parquet as pq

    metadata = pq.read_schema(copy / items).metadata
    assert metadata[ARTIFACT_KEY] == b"items.judgements"
    assert pl.read_parquet(copy / items)["line"].to_list() == [1, 2]
