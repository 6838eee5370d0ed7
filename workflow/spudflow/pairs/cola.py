"""CoLA (Warstadt et al. 2018): acceptability judgements, one item per sentence.

The public TSVs have no header and four columns: source code, label (1 acceptable, 0 not), the
original author's mark (often empty) and the sentence. The split is the file name's stem
(in_domain_train, in_domain_dev, out_of_domain_dev).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import ITEMS_COLA
from spudflow.core.errors import InputError
from spudflow.core.sampling import sample_indices
from spudflow.core.text_lines import read_lines
from spudflow.pairs.items import ItemsBuilder


def read_cola(path: str | Path) -> list[tuple[int, str, int, str | None, str]]:
    """(line, source, label, mark, sentence) of every non-blank line."""
    rows = []
    for number, line in read_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise InputError(path, number, f"expected 4 tab-separated columns (source, label, "
                             f"original mark, sentence), found {len(fields)}")
        source, label, mark, sentence = fields
        if label not in ("0", "1"):
            raise InputError(path, number, f"label {label!r} is not 0 or 1")
        if not sentence.strip() or not source:
            raise InputError(path, number, "empty source or sentence")
        rows.append((number, source, int(label), mark.strip() or None, sentence))
    if not rows:
        raise InputError(path, None, "no sentences (empty file)")
    return rows


def build_cola_items(paths: list[str | Path], dataset: str = "cola", sample: int | None = None,
                     seed: int = 0) -> pa.Table:
    """Items of every file, in the order given; `sample` draws sentences over all files."""
    splits = [Path(p).name.removesuffix(".tsv") for p in paths]
    if len(set(splits)) != len(splits):
        raise InputError(paths[0], None, "two files with the same split name")
    rows = [(split, *row) for path, split in zip(paths, splits, strict=True)
            for row in read_cola(path)]
    builder = ItemsBuilder(dataset, "en", ITEMS_COLA)
    for index in sample_indices(len(rows), sample, seed):
        split, line, source, label, mark, sentence = rows[index]
        item = f"{dataset}:{split}:{line}"
        builder.add(item, item, sentence, label, split=split, source=source,
                    original_mark=mark, line=line)
    return builder.table()
