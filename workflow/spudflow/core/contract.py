"""Checking Parquet artifacts against their one definition (core/artifacts.py), on write and read.

A writer calls `write_artifact`: the frame must hold every declared column (castable to its type,
no nulls where the column is not nullable, nor inside a list or struct where its type does not
allow them) and, unless the artifact is open, nothing else (an open one's declared extras are
checked likewise when present); the file gets the artifact's name and version in its Parquet
metadata (keys `spudflow.artifact` and `spudflow.schema_version`, a name kept since every file
written holds it). A reader calls `read_artifact`: a file that is missing, not Parquet, of another
artifact or version, or whose columns (nested values included) differ from the definition is bad
input (exit 2, one line naming the file, the column and the stage that writes it). Nothing is
ever filled with nulls. Two rows with one value of the artifact's `key` (one sentence twice, one
item's score twice) are a writer's bug on write and bad input on read: they would count twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spudflow.core.errors import InputError
from spudflow.core.input_files import parquet_schema

# polars is imported where a frame is made: the artifact definitions are read by every
# Snakemake process that plans (each job of a cluster run plans twice), which needs no polars.
if TYPE_CHECKING:
    import polars as pl

ARTIFACT_KEY = b"spudflow.artifact"
VERSION_KEY = b"spudflow.schema_version"
# An extension's file (`items.cola`) also carries the version of the artifact it extends
# (`items`), for readers of that general artifact; the extension's own version is under VERSION_KEY.
BASE_VERSION_KEY = b"spudflow.base_schema_version"


@dataclass(frozen=True)
class Column:
    """One column. Values nested in a list or struct type are not nullable either, except at the
    parts `null_inside` names relative to the column: `[]` (the list's elements), `[].start` (a
    field of its struct elements), `.name` (a field of a struct column)."""

    name: str
    type: pa.DataType
    nullable: bool = False
    doc: str = ""
    null_inside: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        allowed = set(self.null_inside)
        object.__setattr__(self, "type", _nested_nullability(self.type, "", allowed))
        if allowed:
            raise ValueError(f"column {self.name}: null_inside names no part of its type: "
                             f"{', '.join(sorted(allowed))}")

    def nested_paths(self) -> list[tuple[str, bool]]:
        """(path, nullable) of every value nested in the column's type, e.g. `regions[].start`."""
        return [(self.name + path, nullable) for path, nullable in _nested(self.type, "")]


def _is_list(dtype: pa.DataType) -> bool:
    return (pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
            or pa.types.is_list_view(dtype) or pa.types.is_large_list_view(dtype))


def _nested(dtype: pa.DataType, path: str) -> list[tuple[str, bool]]:
    if _is_list(dtype):
        inner = f"{path}[]"
        return [(inner, dtype.value_field.nullable), *_nested(dtype.value_type, inner)]
    if pa.types.is_struct(dtype):
        return [part for f in dtype for part in
                [(f"{path}.{f.name}", f.nullable), *_nested(f.type, f"{path}.{f.name}")]]
    return []


def _nested_nullability(dtype: pa.DataType, path: str, allowed: set[str]) -> pa.DataType:
    """DTYPE with every nested field non-nullable unless its path is in ALLOWED (which loses
    the paths it used, so that a stray one can be reported)."""
    if _is_list(dtype):
        inner = f"{path}[]"
        value = pa.field(dtype.value_field.name,
                         _nested_nullability(dtype.value_type, inner, allowed),
                         nullable=inner in allowed)
        allowed.discard(inner)
        return pa.list_(value)
    if pa.types.is_struct(dtype):
        fields = []
        for f in dtype:
            inner = f"{path}.{f.name}"
            fields.append(pa.field(f.name, _nested_nullability(f.type, inner, allowed),
                                   nullable=inner in allowed))
            allowed.discard(inner)
        return pa.struct(fields)
    return dtype


@dataclass(frozen=True)
class Artifact:
    """One sort of file a stage writes and others read."""

    name: str                      # e.g. "item_scores"; written into the file's metadata
    producer: str                  # the stage (spudflow command) that writes it
    columns: tuple[Column, ...]
    version: int = 1
    doc: str = ""
    # Open artifacts may carry further columns after the declared ones (a nonce treebank's
    # orig_form, an aggregate table's per-label columns); the declared ones are still required.
    open: bool = False
    extra: tuple[Column, ...] = field(default=())  # documented optional extras of an open one
    inherited: int = 0             # leading columns taken from the artifact it extends
    base_version: int | None = None  # version of the artifact it extends
    # Open artifacts whose further columns sit among the declared ones (one column per UPOS
    # before the total): the writer's column order is kept.
    keep_order: bool = False
    # The columns that name a row: no two rows of a file share their values (nulls equal), or a
    # doubled row would be counted twice downstream. Checked on write and on read.
    key: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns + self.extra]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"{self.name}: column(s) {', '.join(twice)} declared twice")
        unknown = [n for n in self.key if n not in self.names]
        if unknown:
            raise ValueError(f"{self.name}: key column(s) {', '.join(unknown)} not declared")

    def column(self, name: str) -> Column:
        for column in self.columns + self.extra:
            if column.name == name:
                return column
        raise KeyError(f"{self.name} has no column {name!r}")

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.type, nullable=c.nullable) for c in self.columns])

    def polars_schema(self) -> pl.Schema:
        """The declared columns as a polars schema (for building frames to write)."""
        import polars as pl

        return pl.from_arrow(self.schema().empty_table()).schema

    def extend(self, name: str, columns: Iterable[Column], doc: str = "",
               version: int = 1) -> Artifact:
        """A closed artifact of these columns followed by `columns` (items of one family), with its
        own version (bump it when `columns` change; this artifact's version covers the rest)."""
        return Artifact(name=name, producer=self.producer, columns=self.columns + tuple(columns),
                        version=version, doc=doc or self.doc, inherited=len(self.columns),
                        base_version=self.version, key=self.key)


class ContractError(ValueError):
    """A writer's frame breaks its artifact's definition: a bug in the writer, not bad input."""


def repeated_key(data: pa.Table | pl.DataFrame, key: Sequence[str]) -> tuple[int, int, dict] | None:
    """(first row, repeating row, key values), 0-based, of the first key value that two rows of
    DATA share, or None. Nulls count as equal values."""
    if not key:
        return None
    import polars as pl

    frame = pl.from_arrow(data.select(list(key))) if isinstance(data, pa.Table) \
        else data.select(key)
    # The common case, told by distinct row hashes (several times faster than the exact
    # search below, which a hash collision only sends rows to)
    if frame.hash_rows().n_unique() == frame.height:
        return None
    twice = frame.with_row_index("_row").filter(pl.struct(*key).is_duplicated())
    if not twice.height:
        return None
    first = twice.row(0, named=True)
    again = twice.filter(pl.all_horizontal(pl.col(k).eq_missing(first[k]) for k in key)).row(1)
    return first["_row"], again[0], {k: first[k] for k in key}


def describe_key(values: dict) -> str:
    return ", ".join(f"{k} {v!r}" for k, v in values.items())


def _plain(dtype: pa.DataType) -> pa.DataType:
    """The type with large/view string and list variants read as their plain forms."""
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype):
        return pa.binary()
    if _is_list(dtype):
        return pa.list_(_plain(dtype.value_type))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _plain(f.type)) for f in dtype])
    return dtype


def _type_name(dtype: pa.DataType) -> str:
    return str(_plain(dtype))


def nulls_inside(values: pa.Array | pa.ChunkedArray, column: Column) -> tuple[str, int] | None:
    """(path, count) of the first nested part of the column's values that holds nulls where the
    column's type allows none, or None. Vectorised (pyarrow compute), so cheap on big files."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    for chunk in chunks:
        found = _first_null_inside(chunk, column.type, column.name)
        if found:
            return found
    return None


def _first_null_inside(array: pa.Array, dtype: pa.DataType, path: str) -> tuple[str, int] | None:
    if _is_list(dtype):
        inner = f"{path}[]"
        elements = pc.list_flatten(array)  # the elements of the non-null lists, offsets applied
        if not dtype.value_field.nullable and elements.null_count:
            return inner, elements.null_count
        return _first_null_inside(elements, dtype.value_type, inner)
    if pa.types.is_struct(dtype):
        if array.null_count:  # a null struct's fields are not values
            array = array.filter(array.is_valid())
        for f in dtype:
            inner = f"{path}.{f.name}"
            child = pc.struct_field(array, [array.type.get_field_index(f.name)])
            if not f.nullable and child.null_count:
                return inner, child.null_count
            found = _first_null_inside(child, f.type, inner)
            if found:
                return found
    return None


def _conformed(values: pa.ChunkedArray, column: Column, artifact: Artifact) -> pa.ChunkedArray:
    """VALUES cast to the column's type, checked for nulls where it allows none."""
    # First to the type with every part nullable, so that a null inside is reported as such.
    if _plain(values.type) != _plain(column.type):
        try:
            values = values.cast(_plain(column.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise ContractError(f"{artifact.name}: column {column.name} is "
                                f"{_type_name(values.type)}, not {column.type} "
                                f"({error})") from None
    if not column.nullable and values.null_count:
        raise ContractError(f"{artifact.name}: column {column.name} has "
                            f"{values.null_count} null(s) but is not nullable")
    inside = nulls_inside(values, column)
    if inside:
        raise ContractError(f"{artifact.name}: column {inside[0]} has {inside[1]} null(s) "
                            "inside but is not nullable there")
    return values.cast(column.type)


def conform(data: pa.Table | pl.DataFrame, artifact: Artifact) -> pa.Table:
    """The data as the artifact's table: declared columns in order and type, then (open
    artifacts only) the others, declared extras checked like the columns; with the artifact's
    name and version in the metadata."""
    table = data if isinstance(data, pa.Table) else data.to_arrow()
    names = artifact.names
    missing = [n for n in names if n not in table.column_names]
    if missing:
        raise ContractError(f"{artifact.name}: the {artifact.producer} stage's table lacks "
                            f"column(s) {', '.join(missing)}")
    extra = [n for n in table.column_names if n not in names]
    if extra and not artifact.open:
        raise ContractError(f"{artifact.name}: undeclared column(s) {', '.join(extra)}")
    declared = {c.name: c for c in artifact.columns + artifact.extra}
    arrays, fields = [], []
    for name in names + tuple(extra):
        column = declared.get(name)
        if column is None:  # an open artifact's undeclared column, kept as written
            arrays.append(table.column(name))
            fields.append(table.schema.field(name))
            continue
        arrays.append(_conformed(table.column(name), column, artifact))
        fields.append(pa.field(name, column.type, nullable=column.nullable))
    if artifact.keep_order:
        position = {f.name: i for i, f in enumerate(fields)}
        order = [position[name] for name in table.column_names]
        arrays, fields = [arrays[i] for i in order], [fields[i] for i in order]
    repeated = repeated_key(table, artifact.key)
    if repeated:
        first, again, values = repeated
        raise ContractError(f"{artifact.name}: rows {first} and {again} share the key "
                            f"({describe_key(values)})")
    metadata = dict(table.schema.metadata or {})
    metadata[ARTIFACT_KEY] = artifact.name.encode()
    metadata[VERSION_KEY] = str(artifact.version).encode()
    if artifact.base_version is not None:
        metadata[BASE_VERSION_KEY] = str(artifact.base_version).encode()
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=metadata))


# Deterministic Parquet: fixed compression, no timestamps, so same data gives same bytes.
PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": True}


def write_parquet(table: pa.Table | pl.DataFrame, path: str | Path) -> None:
    """Deterministic Parquet: fixed compression, no timestamps, so same data gives same bytes."""
    if not isinstance(table, pa.Table):
        table = table.to_arrow()
    pq.write_table(table, str(path), **PARQUET_OPTIONS)


def write_parquet_parts(tables: Iterable[pa.Table], path: str | Path) -> int:
    """One Parquet file of `tables` (one schema), written one after the other as they come, so
    that no more than one is in memory: the same tables in the same order give the same bytes.
    Returns the rows written; `tables` holds one table at least (an empty one for no rows)."""
    rows, writer = 0, None
    try:
        for table in tables:
            if writer is None:
                writer = pq.ParquetWriter(str(path), table.schema, **PARQUET_OPTIONS)
            writer.write_table(table)
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        raise ValueError(f"{path}: no table to write (give an empty one)")
    return rows


def write_artifact(data: pa.Table | pl.DataFrame, path: str | Path, artifact: Artifact) -> None:
    """Check `data` against the artifact and write it to `path` (callers pass a temporary path
    from core.atomic, so that a failed check leaves nothing behind)."""
    write_parquet(conform(data, artifact), path)


def _where(artifact: Artifact) -> str:
    return f"the {artifact.producer} stage writes it ({artifact.name} v{artifact.version})"


def check_schema(path: str | Path, schema: pa.Schema, artifact: Artifact,
                 columns: Sequence[str] | None = None) -> None:
    """Bad input unless the file's schema is the artifact's (the named columns at least)."""
    metadata = schema.metadata or {}
    found = metadata.get(ARTIFACT_KEY, b"").decode() or None
    # `items.spud` extends `items`: a reader of the general artifact takes it.
    if found != artifact.name and not (found or "").startswith(artifact.name + "."):
        what = f"a {found} file" if found else "not a spudflow artifact (no schema metadata)"
        raise InputError(path, None, f"{what}; expected {artifact.name}: {_where(artifact)}")
    version = metadata.get(VERSION_KEY, b"").decode()
    if found != artifact.name:
        # An extension's file read as its general artifact: the version of the general part counts.
        version = metadata.get(BASE_VERSION_KEY, b"").decode()
    if version != str(artifact.version):
        raise InputError(path, None, f"{artifact.name} version {version or '?'}, this "
                         f"spudflow reads version {artifact.version}: rerun the "
                         f"{artifact.producer} stage")
    wanted = artifact.names if columns is None else tuple(columns)
    present_extras = [c.name for c in artifact.extra if c.name in schema.names
                      and (columns is None or c.name in columns)]
    for name in (*wanted, *present_extras):
        column = artifact.column(name)
        index = schema.get_field_index(name)
        if index < 0:
            raise InputError(path, None, f"column {name!r} missing; {_where(artifact)}")
        found_type = schema.field(index).type
        if _plain(found_type) != _plain(column.type):
            raise InputError(path, None, f"column {name!r} is {_type_name(found_type)}, not "
                             f"{column.type}; {_where(artifact)}")
    if not artifact.open and found == artifact.name:
        extra = [n for n in schema.names if n not in artifact.names]
        if extra:
            raise InputError(path, None, f"undeclared column(s) {', '.join(extra)}; "
                             f"{_where(artifact)}")


def read_artifact_table(path: str | Path, artifact: Artifact,
                        columns: Sequence[str] | None = None) -> pa.Table:
    """The file's table (the named columns, or all), checked against the artifact."""
    schema = parquet_schema(path, f"{artifact.name} file of the {artifact.producer} stage")
    check_schema(path, schema, artifact, columns)
    try:
        table = pq.read_table(str(path), columns=None if columns is None else list(columns))
    except (pa.ArrowException, OSError) as error:
        raise InputError(path, None, f"unreadable Parquet file ({error})") from None
    declared = {c.name: c for c in artifact.columns + artifact.extra}
    for name in table.column_names:
        column = declared.get(name)
        if column is None:
            continue
        values = table.column(name)
        if not column.nullable and values.null_count:
            raise InputError(path, None, f"column {name!r} has {values.null_count} null(s) but "
                             f"may not; {_where(artifact)}")
        inside = nulls_inside(values, column)
        if inside:
            raise InputError(path, None, f"column {inside[0]!r} has {inside[1]} null(s) inside "
                             f"but may not; {_where(artifact)}")
    _check_key(path, table, artifact)
    return table


def _check_key(path: str | Path, table: pa.Table, artifact: Artifact) -> None:
    """Bad input where two rows of the file share the artifact's key (read from the file when
    the caller asked for other columns)."""
    if not artifact.key:
        return
    keys = table
    if any(k not in table.column_names for k in artifact.key):
        try:
            keys = pq.read_table(str(path), columns=list(artifact.key))
        except (pa.ArrowException, OSError) as error:
            raise InputError(path, None, f"unreadable Parquet file ({error})") from None
    repeated = repeated_key(keys, artifact.key)
    if repeated:
        first, again, values = repeated
        raise InputError(path, None, f"rows {first + 1} and {again + 1} are one row twice "
                         f"({describe_key(values)}): {artifact.name} files have one row per "
                         f"{', '.join(artifact.key)}")


def read_artifact(path: str | Path, artifact: Artifact,
                  columns: Sequence[str] | None = None) -> pl.DataFrame:
    """As read_artifact_table, as a polars DataFrame."""
    import polars as pl

    table = read_artifact_table(path, artifact, columns)
    return pl.from_arrow(table.replace_schema_metadata(None))


def artifact_of(path: str | Path) -> str | None:
    """The artifact name a spudflow Parquet file declares (None for other files)."""
    metadata = parquet_schema(path, "spudflow Parquet file").metadata or {}
    value = metadata.get(ARTIFACT_KEY)
    return value.decode() if value else None
