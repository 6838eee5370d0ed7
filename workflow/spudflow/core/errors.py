"""Errors that end a command with exit code 2 and one `FILE:LINE: what is wrong` line."""

from __future__ import annotations

from pathlib import Path

EXIT_BAD_INPUT = 2


class InputError(Exception):
    """Bad input: a file (and line) or a config key, and what is wrong with it."""

    def __init__(self, source: str | Path, line: int | None, message: str):
        self.source = str(source)
        self.line = line
        self.message = message
        super().__init__(self.format())

    def format(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.message}"
