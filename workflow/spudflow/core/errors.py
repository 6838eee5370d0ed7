"""Errors that end a command with exit code 2 and one `FILE:LINE: what is wrong` line."""

from __future__ import annotations

import re
from pathlib import Path

EXIT_BAD_INPUT = 2

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# user:password@ (or a token@) of a URL: never repeated in a message or log
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")


def redact(text: str) -> str:
    """TEXT with the user information of every URL in it replaced by `***`."""
    return _USERINFO.sub(r"\1***@", text)


def one_line(text: str) -> str:
    """TEXT with its control characters escaped as Python writes them (a newline in a path as
    \\n): a message stays one line whatever the paths in it hold."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], redact(text))


class InputError(Exception):
    """Bad input: a file (and line) or a config key, and what is wrong with it."""

    def __init__(self, source: str | Path, line: int | None, message: str):
        self.source = str(source)
        self.line = line
        self.message = message
        super().__init__(self.format())

    def format(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return one_line(f"{where}: {self.message}")
