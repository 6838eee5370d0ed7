"""Filled sheets + answer key -> the paper's Table 1 (grammaticality) and Table 2 (preference),
with Cohen's kappa between annotators (sklearn.metrics.cohen_kappa_score). Items whose sentences
changed since their sheet was exported (stale items) are left out and counted, never matched to
the new sentences."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from sklearn.metrics import cohen_kappa_score

from spudflow.core.contract import Artifact
from spudflow.core.errors import InputError
from spudflow.core.table_artifacts import (
    HUMAN_EVAL_GRAMMATICALITY,
    HUMAN_EVAL_PREFERENCE,
    STATUS_OK,
    STATUS_SKIPPED,
)
from spudflow.nonce.human_eval import COMPARED, GRAMMATICAL
from spudflow.nonce.human_eval.sheets import read_sheet

PREFERENCE = ("equal", *COMPARED, "unsure")  # Table 2's columns, in the paper's order
LABELS = ("treebank", "split", "language")


# Why a sheet's item is stale: its sentences are no longer the answer key's (docs/nonce.md,
# "Human evaluation": the same item is the key's item number with the same original and the same
# A/B sentences). The original changed: the treebank sentence was edited; only a nonce sentence
# changed: the nonce version was drawn again (an edit elsewhere, a nonce setting).
STALE_ORIGINAL = "original changed"
STALE_NONCE = "nonce sentence changed"
JUDGMENTS = {"annotator": pl.String, "item": pl.Int64, "sent_index": pl.Int64,
             "original": pl.String, **dict.fromkeys(COMPARED, pl.String),
             "preference": pl.String}


@dataclass(frozen=True)
class StaleItem:
    """An item of a filled sheet left out of the tables: where it is, whose, and why."""
    path: Path
    line: int
    annotator: str
    item: int
    reason: str  # STALE_ORIGINAL or STALE_NONCE


def judgments(key: pl.DataFrame, sheets: list[Path]) -> tuple[pl.DataFrame, list[StaleItem]]:
    """One row per annotator and item whose sentences are the answer key's: sent_index and the
    answers by method: original, spud, posfree (yes/no/unsure) and preference (equal, spud,
    posfree, unsure); and the stale items, left out. A sheet none of whose items has the key's
    original is a sheet of another kit: bad input, as is a malformed one."""
    annotators = key["annotator"].unique(maintain_order=True).to_list()
    by_item = {(r["annotator"], r["item"]): r for r in key.iter_rows(named=True)}
    seen: dict[str, Path] = {}
    rows: list[dict] = []
    stale: list[StaleItem] = []
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
        mine: list[dict] = []
        mine_stale: list[StaleItem] = []
        for row in filled:
            judgment = _judgment(path, row.line, row.fields, annotator, by_item, items)
            if isinstance(judgment, str):
                mine_stale.append(StaleItem(path, row.line, annotator,
                                            int(row.fields["item"]), judgment))
            else:
                mine.append(judgment)
        expected = set(range(1, sum(1 for a, _ in by_item if a == annotator) + 1))
        if items != expected:
            missing = ", ".join(map(str, sorted(expected - items)))
            raise InputError(path, filled[-1].line, f"items missing: {missing}")
        if not mine and all(s.reason == STALE_ORIGINAL for s in mine_stale):
            first = mine_stale[0]
            raise InputError(path, first.line, f"no item's original is the answer key's "
                             f"(item {first.item}'s differs first): a sheet of another kit "
                             "(another seed, split or annotator order)")
        rows += mine
        stale += mine_stale
    absent = [a for a in annotators if a not in seen]
    if absent:
        raise InputError(sheets[0], None, f"no sheet of annotator(s) {', '.join(absent)} of "
                         "the answer key")
    return pl.DataFrame(rows, schema=JUDGMENTS), stale


def _judgment(path: Path, line: int, fields: dict[str, str], annotator: str,
              by_item: dict, items: set[int]) -> dict | str:
    """The item's answers by method, or the reason it is stale (STALE_ORIGINAL, STALE_NONCE)."""
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
    if fields["original"] != key["original"]:
        return STALE_ORIGINAL
    if (fields["sentence_a"], fields["sentence_b"]) != (key[key["sentence_a"]],
                                                        key[key["sentence_b"]]):
        return STALE_NONCE
    which = {"A": key["sentence_a"], "B": key["sentence_b"]}
    return {"annotator": annotator, "item": item, "sent_index": key["sent_index"],
            "original": fields["original_grammatical"],
            which["A"]: fields["a_grammatical"], which["B"]: fields["b_grammatical"],
            "preference": which.get(fields["closer"], fields["closer"])}


def stale_summary(stale: list[StaleItem]) -> str | None:
    """Per annotator and reason, the stale items: `annotator1, items 1, 4: original changed;
    ...`; None when there are none."""
    groups: dict[tuple[str, str], list[int]] = {}
    for item in stale:
        groups.setdefault((item.annotator, item.reason), []).append(item.item)
    parts = [f"{annotator}, item{'s' if len(numbers) > 1 else ''} "
             f"{', '.join(map(str, sorted(numbers)))}: {reason}"
             for (annotator, reason), numbers in groups.items()]
    return "; ".join(parts) or None


def _kappa(frame: pl.DataFrame, columns: list[str]) -> tuple[float | None, float | None]:
    """Mean Cohen's kappa and mean fraction of equal answers over annotator pairs, on the answers
    in COLUMNS (stacked) per sentence both of a pair judged (stale items left out make them
    differ); None with one annotator or no pair sharing a sentence, kappa None where it is
    undefined (both annotators gave one and the same answer throughout)."""
    answers = {a: g for a, g in frame.group_by("annotator", maintain_order=True)}
    kappas, agreements = [], []
    for first, second in itertools.combinations(sorted(answers), 2):
        common = answers[first].join(answers[second], on="sent_index", suffix="_2").sort(
            "sent_index")
        if common.is_empty():
            continue
        left = common.select(columns).to_numpy().ravel(order="F")
        right = common.select([f"{c}_2" for c in columns]).to_numpy().ravel(order="F")
        agreements.append(float((left == right).mean()))
        kappas.append(float(cohen_kappa_score(left, right)) if len(set(left) | set(right)) > 1
                      else None)
    if not agreements:
        return None, None
    kappa = sum(kappas) / len(kappas) if None not in kappas else None
    if kappa is not None and math.isnan(kappa):
        kappa = None
    return kappa, sum(agreements) / len(agreements)


def _percentages(frame: pl.DataFrame, column: str,
                 values: tuple[str, ...]) -> dict[str, float | None]:
    """Per value: the percentage of answers in COLUMN, per annotator, then the mean; None
    without answers."""
    per_annotator = [
        {v: 100.0 * (g[column] == v).sum() / g.height for v in values}
        for _, g in frame.group_by("annotator", maintain_order=True)]
    if not per_annotator:
        return dict.fromkeys(values)
    return {v: sum(p[v] for p in per_annotator) / len(per_annotator) for v in values}


def human_eval_tables(key: pl.DataFrame, sheets: list[Path]) -> tuple[pl.DataFrame,
                                                                      pl.DataFrame,
                                                                      list[StaleItem]]:
    """(Table 1: grammaticality, Table 2: preference), one row for the kit's treebank split,
    over the items whose sentences are the answer key's; and the stale items left out, which
    both tables count. With none left, the row is `skipped`, its numbers null."""
    frame, stale = judgments(key, sheets)
    labels = key.select(LABELS).row(0, named=True)
    head = {**labels, "annotators": frame["annotator"].n_unique(),
            "sentences": frame["sent_index"].n_unique()}
    status = {"stale_items": len(stale), "stale": stale_summary(stale),
              "status": STATUS_OK, "reason": None}
    if frame.is_empty():
        status.update(status=STATUS_SKIPPED, reason="every item of the sheets is stale: "
                      "re-annotate them from the new blank sheets")
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
    return (_row(HUMAN_EVAL_GRAMMATICALITY, {**grammatical, **status}),
            _row(HUMAN_EVAL_PREFERENCE, {**preference, **status}), stale)


def _row(table: Artifact, values: dict) -> pl.DataFrame:
    """The one row of TABLE, typed by its definition (numbers may all be null)."""
    return pl.DataFrame([values], schema=table.polars_schema())
