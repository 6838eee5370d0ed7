"""Sentence blocks of CoNLL-U files, as the stand-in treebanks and corpora are cut from them."""

from __future__ import annotations

import gzip
from pathlib import Path


def read_blocks(path: Path) -> list[str]:
    """Every sentence block of a .conllu(.gz) file, with its comment lines, without the blank
    line that ends it."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read().replace("\r\n", "\n")
    return [block for block in text.split("\n\n") if block.strip()]


def block_text(block: str) -> str:
    for line in block.splitlines():
        if line.startswith("# text ="):
            return line.split("=", 1)[1].strip()
    return " ".join(line.split("\t")[1] for line in block.splitlines()
                    if line and not line.startswith("#") and line.split("\t")[0].isdigit())


def renamed(block: str, suffix: str) -> str:
    """The block under sent_id `<its sent_id><suffix>` (a repeated sentence of a grown split)."""
    lines = [f"{line}{suffix}" if line.startswith("# sent_id =") else line
             for line in block.splitlines()]
    return "\n".join(lines)


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` (gzipped with a fixed header for .gz) unless the file holds it already, so
    that a second rehearsal leaves every mtime alone; True when written."""
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True
