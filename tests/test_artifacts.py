"""The artifact contracts (core/contract.py, core/artifacts.py): checked on write and on read,
and the docs' schema tables rendered from them."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from artifact_files import tamper

from spudflow.core import artifact_docs
from spudflow.core.contract import (
    Artifact,
    Column,
    ContractError,
    read_artifact,
    write_artifact,
)
from spudflow.core.errors import InputError
from spudflow.core.table_artifacts import ALL_ARTIFACTS

REPO = Path(__file__).resolve().parents[1]
TOY = Artifact("toy", "toy-stage", columns=(
    Column("name", pa.string()), Column("count", pa.int32()),
    Column("score", pa.float64(), nullable=True)))


def toy_frame(**change) -> pl.DataFrame:
    return pl.DataFrame({"name": ["a", "b"], "count": [1, 2], "score": [0.5, None], **change})


def test_written_file_has_declared_types_and_metadata(tmp_path):
    path = tmp_path / "toy.parquet"
    write_artifact(toy_frame(), path, TOY)
    schema = pq.read_schema(path)
    assert schema.field("count").type == pa.int32()       # cast from polars' Int64
    assert schema.metadata[b"spudflow.artifact"] == b"toy"
    assert schema.metadata[b"spudflow.schema_version"] == b"1"
    assert read_artifact(path, TOY).to_dicts() == toy_frame().to_dicts()


@pytest.mark.parametrize("frame, message", [
    (toy_frame().drop("score"), "lacks column(s) score"),
    (toy_frame(extra=[1, 2]), "undeclared column(s) extra"),
    (toy_frame(count=[1, None]), "column count has 1 null"),
    (toy_frame(count=["x", "y"]), "column count is string"),
])
def test_writer_checks_before_writing(tmp_path, frame, message):
    path = tmp_path / "toy.parquet"
    with pytest.raises(ContractError, match=re.escape(message)):
        write_artifact(frame, path, TOY)
    assert not path.exists()


@pytest.mark.parametrize("change, message", [
    (lambda f: f.drop("score"), "column 'score' missing; the toy-stage stage writes it (toy v1)"),
    (lambda f: f.with_columns(pl.col("count").cast(pl.String)),
     "column 'count' is string, not int32"),
    (lambda f: f.with_columns(pl.lit(None, pl.Int32).alias("count")),
     "column 'count' has 2 null(s) but may not"),
    (lambda f: f.with_columns(pl.lit(1).alias("more")), "undeclared column(s) more"),
])
def test_reader_rejects_a_broken_file_with_one_line(tmp_path, change, message):
    path = tmp_path / "toy.parquet"
    write_artifact(toy_frame(), path, TOY)
    tamper(path, change)
    with pytest.raises(InputError) as error:
        read_artifact(path, TOY)
    assert error.value.format() == f"{path}: {message}" or message in error.value.format()
    assert "\n" not in error.value.format()


def test_reader_rejects_other_artifacts_versions_and_plain_parquet(tmp_path):
    path = tmp_path / "toy.parquet"
    write_artifact(toy_frame(), path, TOY)
    other = Artifact("other", "elsewhere", columns=TOY.columns)
    with pytest.raises(InputError, match="a toy file; expected other: the elsewhere stage"):
        read_artifact(path, other)
    newer = Artifact("toy", "toy-stage", columns=TOY.columns, version=2)
    with pytest.raises(InputError, match="toy version 1, this spudflow reads version 2"):
        read_artifact(path, newer)
    toy_frame().write_parquet(path)
    with pytest.raises(InputError, match="not a spudflow artifact"):
        read_artifact(path, TOY)


def test_a_kind_satisfies_a_reader_of_its_general_artifact(tmp_path):
    general = Artifact("rows", "s", columns=TOY.columns[:1], open=True)
    kind = general.extend("rows.kind", TOY.columns[1:])
    path = tmp_path / "kind.parquet"
    write_artifact(toy_frame(), path, kind)
    assert read_artifact(path, general, ["name"]).columns == ["name"]
    assert read_artifact(path, kind).columns == ["name", "count", "score"]


def test_every_artifact_has_unique_name_and_documented_columns():
    names = [a.name for a in ALL_ARTIFACTS]
    assert len(names) == len(set(names))
    for artifact in ALL_ARTIFACTS:
        assert artifact.doc, artifact.name
        assert all(c.doc for c in artifact.columns + artifact.extra), artifact.name


def test_docs_schema_tables_are_rendered_from_the_definitions():
    """Every artifact has exactly one block in docs/, equal to its rendering
    (`python -m spudflow.core.artifact_docs docs/*.md` rewrites them)."""
    found: dict[str, list[str]] = {}
    for page in sorted((REPO / "docs").glob("*.md")):
        for name, body in artifact_docs.blocks(page.read_text(encoding="utf-8")).items():
            found.setdefault(name, []).append(page.name)
            artifact = next((a for a in ALL_ARTIFACTS if a.name == name), None)
            assert artifact is not None, f"{page.name}: block for unknown artifact {name}"
            assert body == artifact_docs.render(artifact), f"{page.name}: {name} is stale"
    missing = [a.name for a in ALL_ARTIFACTS if a.name not in found]
    assert not missing, f"artifacts without a docs table: {missing}"
    assert all(len(pages) == 1 for pages in found.values()), found


def test_docs_check_command_reports_a_stale_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- artifact: item_scores -->\n| old |\n<!-- /artifact -->\n",
                    encoding="utf-8")
    assert artifact_docs.main(["--check", str(page)]) == 1
    assert artifact_docs.main([str(page)]) == 0
    assert artifact_docs.main(["--check", str(page)]) == 0
    assert "| normlp | float64, null |" in page.read_text(encoding="utf-8")


def test_aggregate_column_maps_name_declared_columns():
    """aggregate/columns.py maps internal names to the file columns it reads: each must be a
    column of the artifact it is read from (a renamed producer column fails here, not in a run)."""
    from spudflow.aggregate import columns
    from spudflow.core import artifacts

    reads = [(columns.ITEMS, artifacts.ITEMS), (columns.SPUD_ITEMS, artifacts.ITEMS_SPUD),
             (columns.GERMAN_CASE_ITEMS, artifacts.ITEMS_GERMAN_CASE),
             (columns.JAPANESE_ITEMS, artifacts.ITEMS_JAPANESE),
             (columns.COLA_ITEMS, artifacts.ITEMS_COLA),
             (columns.BLIMP_ITEMS, artifacts.ITEMS_BLIMP),
             (columns.SCORES, artifacts.ITEM_SCORES),
             (columns.PROBE_METRICS, artifacts.PROBE_METRICS)]
    for mapping, artifact in reads:
        undeclared = set(mapping.values()) - set(artifact.names)
        assert not undeclared, f"{artifact.name} declares no {sorted(undeclared)}"


OPEN_TOY = Artifact("toy", "toy-stage", columns=TOY.columns, open=True,
                    extra=(Column("flag", pa.bool_(), doc="declared extra"),))


@pytest.mark.parametrize("flag, message", [
    (["yes", "no"], "column flag is string, not bool"),
    ([True, None], "column flag has 1 null(s) but is not nullable"),
])
def test_declared_extras_are_checked_on_write(tmp_path, flag, message):
    path = tmp_path / "toy.parquet"
    with pytest.raises(ContractError, match=re.escape(message)):
        write_artifact(toy_frame(flag=flag), path, OPEN_TOY)
    assert not path.exists()
    write_artifact(toy_frame(flag=[True, False], other=["x", None]), path, OPEN_TOY)
    assert read_artifact(path, OPEN_TOY).columns == ["name", "count", "score", "flag", "other"]


def test_a_nonce_column_of_the_wrong_type_is_bad_input(tmp_path):
    """A treebank_tokens file with `replaced` as a string was accepted (its extras unchecked)."""
    from spudflow.cli import main
    from spudflow.core.treebank import read_nonce_treebank, read_treebank

    directory = tmp_path / "tb"
    assert main(["ingest", str(REPO / "tests" / "data" / "mini.conllu"), "--out",
                 str(directory)]) == 0
    with pytest.raises(InputError, match=re.escape(
            "tokens.parquet: no column(s) orig_form, orig_lemma, replaced: not a nonce treebank")):
        read_nonce_treebank(directory)
    tamper(directory / "tokens.parquet", lambda f: f.with_columns(
        orig_form=pl.col("form"), orig_lemma=pl.col("lemma"), replaced=pl.lit("no")))
    with pytest.raises(InputError, match=re.escape(
            "column 'replaced' is string, not bool; the ingest stage writes it")):
        read_treebank(directory)
