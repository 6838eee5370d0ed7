"""Blocks of a file rendered from a registry (the scoring methods, the items datasets): the
text between a block's start and end markers is rewritten from its renderer, and `--check`
reports a file whose block is stale instead (tests and CI run it)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

Block = tuple[re.Pattern, Callable[[], str]]  # (start, body, end) groups; the body's renderer


def rewrite(text: str, blocks: Iterable[Block]) -> str:
    for block, render in blocks:
        text = block.sub(lambda m, r=render: m.group(1) + r() + m.group(3), text)
    return text


def main(argv: Iterable[str] | None, blocks: tuple[Block, ...], what: str, prog: str,
         description: str, require: bool = False) -> int:
    """Rewrite (or, with --check, report) the blocks of WHAT in the files; `require`: a file
    without one is an error."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    args = parser.parse_args(list(argv) if argv is not None else None)
    stale = []
    for path in args.files:
        text = path.read_text(encoding="utf-8")
        if require and not any(block.search(text) for block, _ in blocks):
            raise SystemExit(f"{path}: no {what} block")
        new = rewrite(text, blocks)
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"stale {what}: {path}" if args.check else f"{path}: rewritten", file=sys.stderr)
    return 1 if stale and args.check else 0
