"""Nullability inside list and struct columns (core/contract.py): a null in `word_starts[]` or
`regions[].start` is refused on write (a bug in the writer) and on read (bad input: exit 2, one
line naming the file and the column path), never handed to the scorer."""

from __future__ import annotations

import re

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from artifact_files import tamper

from spudflow.cli import main
from spudflow.core.artifacts import ITEMS
from spudflow.core.contract import Artifact, Column, ContractError, read_artifact, write_artifact
from spudflow.core.errors import InputError
from spudflow.scoring.ngram import NgramModel

WORDS = ["The", "cat", "sat", "."]
SENTENCE = "The cat sat."
STARTS, ENDS = [0, 4, 8, 11], [3, 7, 11, 12]
REGION = pl.Struct({"name": pl.String, "start": pl.Int32, "end": pl.Int32})


def items_frame(**change) -> pl.DataFrame:
    columns = {
        "dataset": ["tiny"] * 2, "item_id": ["a", "b"], "group_id": ["a", "b"],
        "sentence": [SENTENCE] * 2, "words": [WORDS] * 2, "word_starts": [STARTS] * 2,
        "word_ends": [ENDS] * 2, "label": [1, 0], "language": ["en"] * 2,
        "regions": [[{"name": "verb", "start": 8, "end": 11}], []], **change}
    return pl.DataFrame(columns, schema_overrides={
        "word_starts": pl.List(pl.Int32), "word_ends": pl.List(pl.Int32), "label": pl.Int8,
        "regions": pl.List(REGION)})


NULL_START = {"word_starts": [STARTS, [0, None, 8, 11]]}
NULL_REGION_START = {"regions": [[{"name": "verb", "start": None, "end": 11}], []]}
NULL_REGION = {"regions": [[None], []]}


@pytest.mark.parametrize("change, path", [
    (NULL_START, "word_starts[]"), (NULL_REGION_START, "regions[].start"),
    (NULL_REGION, "regions[]"), ({"words": [WORDS, ["The", None, "sat", "."]]}, "words[]")])
def test_writer_refuses_a_null_inside(tmp_path, change, path):
    out = tmp_path / "items.parquet"
    with pytest.raises(ContractError, match=re.escape(
            f"column {path} has 1 null(s) inside but is not nullable there")):
        write_artifact(items_frame(**change), out, ITEMS)
    assert not out.exists()


@pytest.mark.parametrize("change, path", [
    (NULL_START, "word_starts[]"), (NULL_REGION_START, "regions[].start"),
    (NULL_REGION, "regions[]")])
def test_reader_refuses_a_null_inside(tmp_path, change, path):
    items = tmp_path / "items.parquet"
    write_artifact(items_frame(), items, ITEMS)
    tamper(items, lambda f: f.with_columns(items_frame(**change).select(*change)))
    with pytest.raises(InputError) as error:
        read_artifact(items, ITEMS)
    assert error.value.format() == (f"{items}: column {path!r} has 1 null(s) inside but may "
                                    "not; the items stage writes it (items v1)")


@pytest.mark.parametrize("change, path", [(NULL_START, "word_starts[]"),
                                          (NULL_REGION_START, "regions[].start")])
def test_score_exits_2_on_a_null_inside(tmp_path, capsys, change, path):
    """The issue's case: a null inside `word_starts` was a TypeError traceback (exit 1)."""
    items = tmp_path / "items.parquet"
    write_artifact(items_frame(), items, ITEMS)
    tamper(items, lambda f: f.with_columns(items_frame(**change).select(*change)))
    model = tmp_path / "lm.parquet"
    NgramModel.train([WORDS], order=2, lang="en").save(model)
    out = tmp_path / "out"
    code = main(["score", str(items), "--model", str(model), "--kind", "ngram", "--method",
                 "addk", "--out", str(out), "--threads", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1] == (f"{items}: column {path!r} has 1 null(s) inside but may not; the items "
                       "stage writes it (items v1)")
    assert "Traceback" not in "\n".join(err)
    assert not out.exists()


def test_items_files_declare_their_nested_values_required(tmp_path):
    items = tmp_path / "items.parquet"
    write_artifact(items_frame(), items, ITEMS)
    schema = pq.read_schema(items)
    assert not schema.field("word_starts").type.value_field.nullable
    region = schema.field("regions").type.value_type
    assert [f.nullable for f in region] == [False, False, False]
    assert read_artifact(items, ITEMS)["word_starts"].to_list() == [STARTS] * 2


def test_null_inside_is_allowed_where_declared(tmp_path):
    toy = Artifact("toy", "toy-stage", columns=(
        Column("values", pa.list_(pa.int32()), null_inside=("[]",)),
        Column("spans", pa.list_(pa.struct([("a", pa.int32()), ("b", pa.int32())])),
               null_inside=("[].b",))))
    frame = pl.DataFrame({"values": [[1, None]], "spans": [[{"a": 1, "b": None}]]})
    path = tmp_path / "toy.parquet"
    write_artifact(frame, path, toy)
    assert read_artifact(path, toy).to_dicts() == frame.to_dicts()
    assert toy.columns[1].nested_paths() == [("spans[]", False), ("spans[].a", False),
                                             ("spans[].b", True)]
    with pytest.raises(ContractError, match=r"column spans\[\]\.a has 1 null"):
        write_artifact(pl.DataFrame({"values": [[1]], "spans": [[{"a": None, "b": 2}]]}),
                       path, toy)
    with pytest.raises(ValueError, match=r"null_inside names no part of its type: \[\]\.c"):
        Column("spans", pa.list_(pa.struct([("a", pa.int32())])), null_inside=("[].c",))


def test_a_sliced_column_is_checked_on_its_own_rows():
    """Nulls outside a slice's rows are not its rows' (pc.list_flatten honours offsets)."""
    from spudflow.core.contract import nulls_inside

    column = ITEMS.column("word_starts")
    values = pa.array([[0, None], [1, 2], [3]], pa.list_(pa.int32()))
    assert nulls_inside(values, column) == ("word_starts[]", 1)
    assert nulls_inside(values.slice(1), column) is None
