"""Filled sheets + answer key -> the paper's Table 1 (grammaticality) and Table 2 (preference),
with Cohen's kappa between annotators (sklearn.metrics.cohen_kappa_score)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import polars as pl
from sklearn.metrics import cohen_kappa_score

from spudflow.core.errors import InputError
from spudflow.nonce.human_eval import COMPARED, GRAMMATICAL
from spudflow.nonce.human_eval.sheets import read_sheet

PREFERENCE = ("equal", *COMPARED, "unsure")  # Table 2's columns, in the paper's order
LABELS = ("treebank", "split", "language")


def judgments(key: pl.DataFrame, sheets: list[Path]) -> pl.DataFrame:
    """One row per annotator and item: sent_index and the answers by method: original, spud,
    posfree (yes/no/unsure) and preference (equal, spud, posfree, unsure)."""
    annotators = key["annotator"].unique(maintain_order=True).to_list()
    by_item = {(r["annotator"], r["item"]): r for r in key.iter_rows(named=True)}
    seen: dict[str, Path] = {}
    rows = []
    for path in sheets:
        filled = read_sheet(path)
        annotator = filled[0].fields["annotator"].strip()
        if annotator not in annotators:
            raise InputError(path, filled[0].line, f"annotator {annotator!r} is not in the "
                             f"answer key ({', '.join(annotators)})")
        if annotator in seen:
            raise InputError(path, filled[0].line, f"a second sheet of annotator {annotator!r} "
                             f"(the first: {seen[annotator]})")
        seen[annotator] = path
        items: set[int] = set()
        for row in filled:
            rows.append(_judgment(path, row.line, row.fields, annotator, by_item, items))
        expected = set(range(1, sum(1 for a, _ in by_item if a == annotator) + 1))
        if items != expected:
            missing = ", ".join(map(str, sorted(expected - items)))
            raise InputError(path, filled[-1].line, f"items missing: {missing}")
    absent = [a for a in annotators if a not in seen]
    if absent:
        raise InputError(sheets[0], None, f"no sheet of annotator(s) {', '.join(absent)} of "
                         "the answer key")
    return pl.DataFrame(rows)


def _judgment(path: Path, line: int, fields: dict[str, str], annotator: str,
              by_item: dict, items: set[int]) -> dict:
    if fields["annotator"].strip() != annotator:
        raise InputError(path, line, f"annotator {fields['annotator']!r}, but the sheet is "
                         f"{annotator!r}'s")
    try:
        item = int(fields["item"])
    except ValueError:
        raise InputError(path, line, f"item {fields['item']!r} is not a number") from None
    if (annotator, item) not in by_item:
        raise InputError(path, line, f"item {item} is not in the answer key")
    if item in items:
        raise InputError(path, line, f"item {item} appears twice")
    items.add(item)
    key = by_item[annotator, item]
    shown = {"original": key["original"], "sentence_a": key[key["sentence_a"]],
             "sentence_b": key[key["sentence_b"]]}
    for column, text in shown.items():
        if fields[column] != text:
            raise InputError(path, line, f"{column} of item {item} differs from the answer "
                             "key's (a sheet of another kit, or an edited sentence?)")
    which = {"A": key["sentence_a"], "B": key["sentence_b"]}
    return {"annotator": annotator, "item": item, "sent_index": key["sent_index"],
            "original": fields["original_grammatical"],
            which["A"]: fields["a_grammatical"], which["B"]: fields["b_grammatical"],
            "preference": which.get(fields["closer"], fields["closer"])}


def _kappa(frame: pl.DataFrame, columns: list[str]) -> tuple[float | None, float | None]:
    """Mean Cohen's kappa and mean fraction of equal answers over annotator pairs, on the answers
    in COLUMNS (stacked) per sentence; None with one annotator, kappa None where it is undefined
    (both annotators gave one and the same answer throughout)."""
    answers = {a: g.sort("sent_index").select(columns).to_numpy().ravel(order="F")
               for a, g in frame.group_by("annotator", maintain_order=True)}
    pairs = list(itertools.combinations(sorted(answers), 2))
    if not pairs:
        return None, None
    kappas, agreements = [], []
    for first, second in pairs:
        left, right = answers[first], answers[second]
        agreements.append(float((left == right).mean()))
        if len(set(left) | set(right)) > 1:
            kappas.append(float(cohen_kappa_score(left, right)))
    kappa = sum(kappas) / len(kappas) if len(kappas) == len(pairs) else None
    if kappa is not None and math.isnan(kappa):
        kappa = None
    return kappa, sum(agreements) / len(agreements)


def _percentages(frame: pl.DataFrame, column: str, values: tuple[str, ...]) -> dict[str, float]:
    """Per value: the percentage of answers in COLUMN, per annotator, then the mean."""
    per_annotator = [
        {v: 100.0 * (g[column] == v).sum() / g.height for v in values}
        for _, g in frame.group_by("annotator", maintain_order=True)]
    return {v: sum(p[v] for p in per_annotator) / len(per_annotator) for v in values}


def human_eval_tables(key: pl.DataFrame, sheets: list[Path]) -> tuple[pl.DataFrame,
                                                                      pl.DataFrame]:
    """(Table 1: grammaticality, Table 2: preference), one row for the kit's treebank split."""
    frame = judgments(key, sheets)
    labels = key.select(LABELS).row(0, named=True)
    head = {**labels, "annotators": frame["annotator"].n_unique(),
            "sentences": key["sent_index"].n_unique()}
    grammatical = dict(head)
    for method in COMPARED:
        percentages = _percentages(frame, method, GRAMMATICAL)
        grammatical.update({f"{method}_{v}": percentages[v] for v in GRAMMATICAL})
    # Originals are judged too but, as in the paper, left out of the table and of kappa.
    kappa, agreement = _kappa(frame, list(COMPARED))
    grammatical.update(kappa=kappa, agreement=agreement)
    # Pooled, the method alone predicts most answers (SPUD yes, posfree no), which inflates
    # kappa; per method it measures agreement on the sentences alone.
    grammatical.update({f"kappa_{method}": _kappa(frame, [method])[0] for method in COMPARED})
    preference = dict(head)
    preference.update(_percentages(frame, "preference", PREFERENCE))
    kappa, agreement = _kappa(frame, ["preference"])
    preference.update(kappa=kappa, agreement=agreement)
    return pl.DataFrame([grammatical]), pl.DataFrame([preference])
