"""One row per key in every artifact (core/contract.py `key`): a doubled row (one sentence, score
or statistics row twice) would be counted twice downstream, so it is a writer's bug on write and
bad input, one line, on read."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spudflow.core import artifacts
from spudflow.core.contract import ContractError, conform, read_artifact, write_artifact
from spudflow.core.errors import InputError
from spudflow.core.table_artifacts import (
    ALL_ARTIFACTS,
    NONCE_REPLACEMENT_RATIO,
    TABLE_ARTIFACTS,
    TABLES,
)


def _value(dtype: pa.DataType):
    if pa.types.is_list(dtype):
        return [] if pa.types.is_struct(dtype.value_type) else [_value(dtype.value_type)]
    if pa.types.is_string(dtype):
        return "x"
    if pa.types.is_boolean(dtype):
        return True
    if pa.types.is_floating(dtype):
        return 0.5
    return 1


def one_row(artifact) -> pa.Table:
    """A valid one-row table of the artifact (every column, extras included, one value)."""
    columns = artifact.columns + artifact.extra
    schema = pa.schema([pa.field(c.name, c.type, nullable=c.nullable) for c in columns])
    return pa.Table.from_pylist([{c.name: _value(c.type) for c in columns}], schema=schema)


# The result tables (core/table_artifacts.py) as well: a table's row is one group's numbers.
EVERY = [pytest.param(a, id=a.name) for a in ALL_ARTIFACTS]


def test_every_artifact_names_its_rows():
    """Stage artifacts and every result table: none is a list whose rows may repeat."""
    assert [a.name for a in ALL_ARTIFACTS if not a.key] == []
    assert NONCE_REPLACEMENT_RATIO.key
    assert set(TABLES) == {a.name for a in TABLE_ARTIFACTS} | {"treebank_stats",
                                                               "nonce_replacements"}
    assert all(a.key for a in TABLES.values())


@pytest.mark.parametrize("artifact", EVERY)
def test_a_doubled_row_is_refused_on_write(tmp_path, artifact):
    row = one_row(artifact)
    write_artifact(row, tmp_path / "one.parquet", artifact)  # one row is fine
    path = tmp_path / "twice.parquet"
    with pytest.raises(ContractError, match="rows 0 and 1 share the key"):
        write_artifact(pa.concat_tables([row, row]), path, artifact)
    assert not path.exists()


@pytest.mark.parametrize("artifact", EVERY)
def test_a_doubled_row_is_bad_input_on_read(tmp_path, artifact):
    row = conform(one_row(artifact), artifact)
    path = tmp_path / "twice.parquet"
    pq.write_table(pa.concat_tables([row, row]), path)  # what a broken writer would leave
    with pytest.raises(InputError) as error:
        read_artifact(path, artifact)
    message = error.value.format()
    assert message.startswith(f"{path}: rows 1 and 2 are one row twice (")
    assert "\n" not in message
    # Also when the reader asks for other columns than the key.
    other = [c for c in artifact.names if c not in artifact.key][:1]
    with pytest.raises(InputError, match="one row twice"):
        read_artifact(path, artifact, other)


def test_rows_that_differ_in_a_key_column_are_kept(tmp_path):
    artifact = artifacts.TREEBANK_SENTENCES
    row = one_row(artifact)
    other = row.set_column(0, row.schema.field(0), pa.array([2], pa.int32()))
    path = tmp_path / "two.parquet"
    write_artifact(pa.concat_tables([row, other]), path, artifact)
    assert read_artifact(path, artifact).height == 2


def test_every_key_names_declared_columns():
    for artifact in ALL_ARTIFACTS:
        assert set(artifact.key) <= set(artifact.names), artifact.name
