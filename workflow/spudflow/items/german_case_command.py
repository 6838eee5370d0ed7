"""The German case dataset's command and rule (`spudflow items german_case`, rule
items_german_case), generated from its registry entry (core/dataset_families.py): the items
from a template TSV or from the paper's sentence files (german_case_reference.py), built by
german_case.py. Apart from both, so neither imports the other's importer."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from spudflow.core.pairs_files import local_file
from spudflow.core.shell_args import quoted, sample_args
from spudflow.items.german_case import build_german_case_items, read_templates
from spudflow.items.german_case_reference import read_reference_templates

HELP = "German case violations from templates (144 sentences each)"
DESCRIPTION = ("Every assignment of nominative, accusative and dative to the three NPs of a "
               "template except NNN, AAA and DDD (6 grammatical, 18 with a doubled case), each "
               "in the 6 orders of the NPs. Groups are templates.")
# The paper's two sentence files (pairs.german_case.sentences), in the command's order.
SENTENCE_FILES = ("grammatical", "ungrammatical")


def add_arguments(parser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--templates", type=Path, help="template TSV")
    source.add_argument("--sentences", type=Path, nargs=2,
                        metavar=("GRAMMATICAL", "UNGRAMMATICAL"),
                        help="the paper's sentence files (crochereau/Word-based-LM src/data/"
                        "grammatical_sentences.txt, ungrammatical_sentences.txt: 36 and 108 "
                        "lines per template): the templates are recovered from them, and every "
                        "line must be the sentence they generate")


def build(*, templates: Path | None, sentences: list[Path] | None, dataset: str,
          sample: int | None, seed: int) -> pa.Table:
    found = (read_templates(templates) if sentences is None
             else read_reference_templates(*sentences))
    return build_german_case_items(found, dataset, sample, seed)


def inputs(section: dict) -> dict:
    """The template TSV, or the two sentence files the templates are recovered from (the
    configured paths, or where rule fetch_pairs_file downloads their URLs)."""
    if "sentences" in section:
        return {which: local_file("german_case", section["sentences"][which])
                for which in SENTENCE_FILES}
    return {"templates": section["templates"]}


def arguments(section: dict) -> list[str]:
    files = inputs(section)
    source = (f"--templates {quoted([files['templates']])}" if "templates" in files
              else f"--sentences {quoted([files[which] for which in SENTENCE_FILES])}")
    return [source, sample_args(section["sample"])]
