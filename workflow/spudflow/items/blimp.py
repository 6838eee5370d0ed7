"""BLiMP (Warstadt et al. 2020): English minimal pairs, one good and one bad sentence each.

Input: the paradigm files (JSON lines; fields sentence_good, sentence_bad, field,
linguistics_term, UID, pairID and four method flags). Each pair gives two items in one group:
the good sentence (label 1) and the bad one (label 0).

BLiMP 1.0 spells one field two ways: principle_A_case_2's pairs say `syntax/semantics`, the
other 13 paradigms of that field `syntax_semantics`. The items carry the one spelling
(FIELD_SPELLINGS, logged per file), so that the per-field table and a CoLA split by field count
the binding paradigm in its field instead of as a field of its own.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import BLIMP_FLAGS, ITEMS_BLIMP
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.pairs_files import blimp_paradigm_files
from spudflow.core.sampling import sample_indices
from spudflow.core.shell_args import quoted, sample_args
from spudflow.core.text_lines import read_lines
from spudflow.items.table import ItemsBuilder

TEXT_FIELDS = ("sentence_good", "sentence_bad", "field", "linguistics_term", "UID", "pairID")
FLAG_FIELDS = BLIMP_FLAGS
# another spelling of a field in the BLiMP release -> the spelling its other paradigms use
FIELD_SPELLINGS = {"syntax/semantics": "syntax_semantics"}

log = get_logger(__name__)


def paradigm_files(paths: list[str | Path]) -> list[Path]:
    """Files as given; a directory stands for its *.jsonl files in name order."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise InputError(path, None, "no *.jsonl paradigm files in this directory")
            files += found
        else:
            files.append(path)
    return files


def read_paradigm(path: Path) -> list[dict]:
    records = []
    for number, line in read_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(path, number, f"not JSON: {error.msg}") from None
        if not isinstance(record, dict):
            raise InputError(path, number, "not a JSON object")
        for name in TEXT_FIELDS:
            value = record.get(name)
            if not isinstance(value, str | int) or isinstance(value, bool) or value == "":
                raise InputError(path, number, f"no {name}" if value is None
                                 else f"{name} is not a non-empty string")
            record[name] = str(value)
        for flag in FLAG_FIELDS:
            if not isinstance(record.get(flag), bool | None):
                raise InputError(path, number, f"{flag} is not true/false")
        records.append({"line": number, **record})
    if not records:
        raise InputError(path, None, "no sentence pairs (empty file)")
    respelled = Counter(r["field"] for r in records if r["field"] in FIELD_SPELLINGS)
    for spelling, count in sorted(respelled.items()):
        log.info("%s: field %r of %d pairs read as %r, the spelling of its other paradigms",
                 path, spelling, count, FIELD_SPELLINGS[spelling])
    for record in records:
        record["field"] = FIELD_SPELLINGS.get(record["field"], record["field"])
    return records


def read_pairs(paths: list[str | Path]) -> list[tuple[Path, dict]]:
    """(file, record) of every pair of the paradigm files, in canonical order (files, then
    lines); a pair id (UID:pairID) given twice is bad input."""
    records = [(path, r) for path in paradigm_files(paths) for r in read_paradigm(path)]
    seen: dict[str, tuple[Path, int]] = {}
    for path, record in records:
        key = f"{record['UID']}:{record['pairID']}"
        if key in seen:
            first = seen[key]
            raise InputError(path, record["line"], f"pair {key} already on {first[0]}:{first[1]}")
        seen[key] = (path, record["line"])
    return records


def sampled_pairs(paths: list[str | Path], sample: int | None, seed: int) -> list[dict]:
    """The records of a seeded sample of `sample` pairs over all files (all when None): the same
    paths, sample and seed give the same pairs to every dataset built from them."""
    records = read_pairs(paths)
    return [records[index][1] for index in sample_indices(len(records), sample, seed)]


def build_blimp_items(paths: list[str | Path], dataset: str = "blimp", sample: int | None = None,
                      seed: int = 0) -> pa.Table:
    """Items of every pair (or of a seeded sample of `sample` pairs over all files)."""
    builder = ItemsBuilder(dataset, "en", ITEMS_BLIMP)
    for record in sampled_pairs(paths, sample, seed):
        group = f"{dataset}:{record['UID']}:{record['pairID']}"
        shared = {name: record[name] for name in ("field", "linguistics_term", "UID", "pairID")}
        flags = {flag: record.get(flag) for flag in FLAG_FIELDS}
        for version, label in (("good", 1), ("bad", 0)):
            builder.add(f"{group}:{version}", group, record[f"sentence_{version}"], label,
                        version=version, **shared, **flags)
    return builder.table()


# Its rule and command, generated from its registry entry (core/dataset_families.py).
HELP = "BLiMP paradigm files (JSON lines) -> good/bad pairs"
DESCRIPTION = ("Each pair gives a group of two items: sentence_good (label 1) and sentence_bad "
               "(label 0). A directory stands for its *.jsonl files.")


def add_arguments(parser) -> None:
    parser.add_argument("paths", type=Path, nargs="+",
                        help="paradigm .jsonl files or directories")


def build(*, paths: list[Path], dataset: str, sample: int | None, seed: int) -> pa.Table:
    return build_blimp_items(paths, dataset, sample, seed)


def inputs(section: dict) -> dict:
    return {"jsonl": blimp_paradigm_files(section)}


def arguments(section: dict) -> list[str]:
    return [quoted(blimp_paradigm_files(section)), sample_args(section["sample"])]
