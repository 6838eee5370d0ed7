"""Opening input files and directories: a missing path, an empty file, a file of another format
or a Parquet table of another kind is bad input (InputError naming the path), never a traceback.

`what` names what was expected ("nonce replacement statistics"); it ends the message so that the
user sees which artifact the command wanted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from spudflow.core.errors import InputError


def require_file(path: str | Path, what: str) -> Path:
    """PATH, which must be a non-empty regular file."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "no such file")
    if not path.is_file():
        raise InputError(path, None, f"is a directory, not a file ({what} expected)")
    if path.stat().st_size == 0:
        raise InputError(path, None, f"empty file ({what} expected)")
    return path


def require_directory(path: str | Path, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, f"no such directory ({what} expected)")
    if not path.is_dir():
        raise InputError(path, None, f"is a file, not a directory ({what} expected)")
    return path


def _reason(error: BaseException) -> str:
    """The first sentence of a reader's message, on one line."""
    return " ".join(str(error).split()).split(". ")[0]


def parquet_schema(path: str | Path, what: str) -> pa.Schema:
    """The schema of a Parquet file; anything that is not one is bad input."""
    path = require_file(path, what)
    try:
        return pq.read_schema(path)
    except (pa.ArrowException, OSError) as error:
        raise InputError(path, None, f"not a Parquet file ({what} expected): "
                         f"{_reason(error)}") from None


def check_columns(path: str | Path, present: Sequence[str], required: Iterable[str],
                  what: str) -> None:
    """A table lacking a required column is of another kind (or version): bad input."""
    missing = [c for c in required if c not in present]
    if missing:
        raise InputError(path, None, f"missing column(s) {', '.join(missing)}; the file has "
                         f"{', '.join(present)} ({what} expected)")


def read_parquet_checked(path: str | Path, what: str, required: Iterable[str] = (),
                         columns: Sequence[str] | None = None) -> pl.DataFrame:
    """A Parquet file as a polars DataFrame (only `columns` when given), after checking that it
    is a Parquet file with every `required` column (and every one of `columns`)."""
    schema = parquet_schema(path, what)
    check_columns(path, schema.names, dict.fromkeys([*required, *(columns or ())]), what)
    try:
        return pl.read_parquet(path, columns=list(columns) if columns is not None else None)
    except (pl.exceptions.ComputeError, OSError) as error:  # a corrupt page past the footer
        raise InputError(path, None, f"unreadable Parquet file: {_reason(error)}") from None


def read_arrow_checked(path: str | Path, what: str, required: Iterable[str] = ()) -> pa.Table:
    """Like read_parquet_checked, as a pyarrow Table (with the file's schema metadata)."""
    schema = parquet_schema(path, what)
    check_columns(path, schema.names, required, what)
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise InputError(path, None, f"unreadable Parquet file: {_reason(error)}") from None
