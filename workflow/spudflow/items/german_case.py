"""German case violations: every case assignment of three NPs, in every order, per template.

A template is a ditransitive subordinate clause whose NPs are np1 (nominative), np2 (dative)
and np3 (accusative). Of the 27 assignments of N/A/D to the three NPs, the 6 that use each case
once are grammatical and the 18 that double one case are violations; NNN, AAA and DDD are left
out. Each assignment appears in the 6 orders of the NPs: 24 x 6 = 144 sentences per template,
`principal + " " + NPs in order + " " + verb + "."`. A template comes from a TSV (each NP a
determiner and a noun, declined here) or from the reference's sentence files, which hold every
NP in every case (german_case_reference.py).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import ITEMS_GERMAN_CASE
from spudflow.core.errors import InputError
from spudflow.core.sampling import sample_indices
from spudflow.items.german_declension import (
    CASES,
    DETERMINERS,
    DeclensionError,
    noun_phrase,
)
from spudflow.items.table import ItemsBuilder, Region
from spudflow.items.tsv import read_tsv

TEMPLATE_COLUMNS = ("id", "principal", "verb", "np1_det", "np1_noun", "np2_det", "np2_noun",
                    "np3_det", "np3_noun")
OPTIONAL_COLUMNS = ("animate",)

ASSIGNMENTS = tuple("".join(a) for a in itertools.product(CASES, repeat=3)
                    if len(set(a)) > 1)
ORDERS = tuple(itertools.permutations((1, 2, 3)))


_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class Template:
    id: str
    principal: str
    verb: str
    # Each NP (np1, np2, np3) as it reads in each case: {"N": "der Mann", "A": "den Mann", ...}.
    forms: tuple[dict[str, str], ...]
    animate: str | None                # e.g. "110", one flag per NP
    # (determiner lemma, noun) of np1, np2, np3 where a TSV gave them; None when recovered from
    # sentences.
    nps: tuple[tuple[str, str], ...] | None = None


def read_templates(path: str | Path) -> list[Template]:
    templates = []
    seen: dict[str, int] = {}
    for line, row in read_tsv(path, TEMPLATE_COLUMNS, OPTIONAL_COLUMNS):
        empty = [c for c in TEMPLATE_COLUMNS if not row[c].strip()]
        if empty:
            raise InputError(path, line, f"malformed template: empty {', '.join(empty)}")
        spaced = [c for c in TEMPLATE_COLUMNS if row[c] != row[c].strip()]
        if spaced:
            raise InputError(path, line, "malformed template: leading or trailing spaces in "
                             + ", ".join(spaced))
        if not _ID.match(row["id"]):
            raise InputError(path, line, f"malformed template: id {row['id']!r} (letters, "
                             "digits, _ . - only)")
        if row["id"] in seen:
            raise InputError(path, line, f"template id {row['id']!r} already used on line "
                             f"{seen[row['id']]}")
        seen[row["id"]] = line
        nps = []
        for k in (1, 2, 3):
            det, noun = row[f"np{k}_det"], row[f"np{k}_noun"]
            if det not in DETERMINERS:
                raise InputError(path, line, f"unknown determiner {det!r} in np{k}_det "
                                 f"(known: {', '.join(DETERMINERS)})")
            if not noun.isalpha() or not noun[0].isupper():
                raise InputError(path, line, f"malformed template: np{k}_noun {noun!r} is not "
                                 "a capitalised single word")
            nps.append((det, noun))
        animate = row.get("animate")
        if animate is not None and not re.fullmatch(r"[01]{3}", animate):
            raise InputError(path, line, f"malformed template: animate {animate!r} must be "
                             "three 0/1 flags (np1, np2, np3)")
        try:
            forms = tuple({case: noun_phrase(det, noun, case,
                                             None if animate is None else animate[k] == "1")
                           for case in CASES} for k, (det, noun) in enumerate(nps))
        except DeclensionError as error:
            raise InputError(path, line, f"template {row['id']}: {error}") from None
        templates.append(Template(row["id"], row["principal"], row["verb"], forms, animate,
                                  tuple(nps)))
    if not templates:
        raise InputError(path, None, "no templates")
    return templates


def _violation(cases: str) -> str | None:
    doubled = [c for c in CASES if cases.count(c) == 2]
    return doubled[0] if doubled else None


def template_sentences(template: Template):
    """(cases, positions, sentence, regions) of the template's 144 sentences: the assignments in
    ASSIGNMENTS order, each in the ORDERS of the NPs."""
    for cases in ASSIGNMENTS:
        phrases = [form[case] for form, case in zip(template.forms, cases, strict=True)]
        for order in ORDERS:
            sentence = template.principal
            regions = []
            for np in order:
                start = len(sentence) + 1
                sentence += " " + phrases[np - 1]
                regions.append(Region(f"np{np}", start, len(sentence)))
            verb_start = len(sentence) + 1
            sentence += " " + template.verb
            regions.append(Region("verb", verb_start, len(sentence)))
            yield cases, "".join(map(str, order)), sentence + ".", regions


def add_template_items(builder: ItemsBuilder, template: Template, dataset: str) -> None:
    group = f"{dataset}:{template.id}"
    for cases, positions, sentence, regions in template_sentences(template):
        violation = _violation(cases)
        animacy = (None if template.animate is None
                   else "".join(template.animate[int(np) - 1] for np in positions))
        builder.add(f"{group}:{cases}:{positions}", group, sentence,
                    0 if violation else 1, regions=regions,
                    template=template.id, cases=cases, positions=positions,
                    grammatical=violation is None, violation=violation, animacy=animacy)


def build_german_case_items(templates: list[Template], dataset: str = "german_case",
                            sample: int | None = None, seed: int = 0) -> pa.Table:
    """Items of every template (or of a seeded sample of `sample` templates): the templates of
    a TSV (read_templates), or those recovered from the reference's sentence files
    (german_case_reference.read_reference_templates)."""
    builder = ItemsBuilder(dataset, "de", ITEMS_GERMAN_CASE)
    for index in sample_indices(len(templates), sample, seed):
        add_template_items(builder, templates[index], dataset)
    return builder.table()
