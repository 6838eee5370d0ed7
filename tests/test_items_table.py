"""The shared items schema: builder, spaCy word offsets, TSV reading."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spudflow.core.artifacts import items_family
from spudflow.core.contract import Column, ContractError
from spudflow.core.errors import InputError
from spudflow.items.table import BASE_COLUMNS, ItemsBuilder, Region, spacy_words
from spudflow.items.tsv import read_tsv


@pytest.mark.parametrize("language, sentence, words", [
    ("en", "Who  should Derek hug? ", ["Who", "should", "Derek", "hug", "?"]),
    ("de", "Wir wissen, dass der Mann dem Jungen hilft.",
     ["Wir", "wissen", ",", "dass", "der", "Mann", "dem", "Jungen", "hilft", "."]),
    ("ja", "私がドアを開ける。", ["私", "が", "ドア", "を", "開ける", "。"]),
])
def test_spacy_words_have_offsets_into_the_sentence(language, sentence, words):
    [(got, starts, ends)] = spacy_words([sentence], language)
    assert got == words
    assert [sentence[s:e] for s, e in zip(starts, ends, strict=True)] == words


def toy_family(*columns):
    return items_family("toy", tuple(Column(n, t, null) for n, t, null in columns), "toy items")


def test_builder_writes_the_base_schema_then_conditions():
    builder = ItemsBuilder("toy", "en", toy_family(("side", pa.string(), False),
                                                  ("n", pa.int32(), True)))
    builder.add("toy:1:good", "toy:1", "Dogs bark.", 1, regions=[Region("verb", 5, 9)],
                side="good", n=1)
    builder.add("toy:1:bad", "toy:1", "Dogs barks.", 0, side="bad", n=None)
    builder.add("toy:2", "toy:2", "Cats?", None, words=(["Cats", "?"], [0, 4], [4, 5]),
                side="x", n=2)
    table = builder.table()
    assert tuple(table.column_names) == BASE_COLUMNS + ("side", "n")
    assert table.schema.field("label").type == pa.int8()
    # Offsets are never null, nor any value inside them (the contract says so in the type).
    assert table.schema.field("word_starts").type == pa.list_(pa.field("item", pa.int32(),
                                                                       nullable=False))
    rows = table.to_pylist()
    assert rows[0]["words"] == ["Dogs", "bark", "."]
    assert rows[0]["regions"] == [{"name": "verb", "start": 5, "end": 9}]
    assert rows[1]["regions"] == [] and rows[1]["label"] == 0
    assert rows[2]["words"] == ["Cats", "?"] and rows[2]["label"] is None
    assert {r["dataset"] for r in rows} == {"toy"} and {r["language"] for r in rows} == {"en"}


def test_builder_rejects_duplicate_ids_bad_offsets_and_wrong_conditions():
    builder = ItemsBuilder("toy", "en", toy_family(("side", pa.string(), False)))
    builder.add("a", "g", "Hi.", 1, side="x")
    builder.add("a", "g", "Ho.", 1, side="x")
    with pytest.raises(ValueError, match="duplicate item_id"):
        builder.table()
    builder = ItemsBuilder("toy", "en", toy_family(("side", pa.string(), False)))
    builder.add("a", "g", "Hi.", 1, words=(["Ho"], [0], [2]), side="x")
    with pytest.raises(ValueError, match="is not at"):
        builder.table()
    with pytest.raises(ValueError, match="missing"):
        builder.add("b", "g", "Hi.", 1)
    with pytest.raises(ValueError, match="label.*twice"):
        toy_family(("label", pa.string(), False))
    # A condition declared not nullable may not be null (checked before anything is written).
    builder = ItemsBuilder("toy", "en", toy_family(("side", pa.string(), False)))
    builder.add("a", "g", "Hi.", 1, side=None)
    with pytest.raises(ContractError, match="side has 1 null"):
        builder.table()


def test_read_tsv_reports_file_and_line(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("# note\na\tb\n1\t2\n\n3\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_tsv(path, ("a", "b"))
    assert error.value.format() == f"{path}:5: expected 2 tab-separated columns, found 1"
    path.write_text("a\tc\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column.*b.*unknown column.*c"):
        read_tsv(path, ("a", "b"))
    path.write_text("b\ta\n2\t1\n", encoding="utf-8")
    assert read_tsv(path, ("a", "b")) == [(2, {"b": "2", "a": "1"})]
