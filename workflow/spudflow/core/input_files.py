"""Opening input files and directories: a missing path, an empty file or a file of another
format is bad input (InputError naming the path), never a traceback. Columns are checked by the
artifact checks (core/contract.py), which open Parquet files through here.

`what` names what was expected ("nonce replacement statistics"); it ends the message so that the
user sees which artifact the command wanted.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spudflow.core.errors import InputError
from spudflow.core.regular_files import not_a_file


def require_file(path: str | Path, what: str) -> Path:
    """PATH, which must be a non-empty regular file."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "no such file")
    if not path.is_file():
        raise InputError(path, None, f"{not_a_file(path)} ({what} expected)")
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
