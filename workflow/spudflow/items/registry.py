"""What the registry of items datasets (core/dataset_families.py) renders into files a person
reads: the datasets table of docs/items.md, and the `pairs:` section of config/schema.yaml of each
family whose builder declares CONFIG (the keys of its section besides `enabled` and `sample`).

`python -m spudflow.items.registry [--check] FILE...` rewrites the rendered blocks of each file
(--check: names a stale file and exits 1, writing nothing). tests/test_items_registry.py checks
the checkout's files."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterable

import yaml

from spudflow.core import rendered_blocks
from spudflow.core.dataset_families import FAMILIES, DatasetFamily

SAMPLE = {"$ref": "#/properties/pairs/$defs/sample", "default": {"n": None, "seed": 0}}
SCHEMA_INDENT = " " * 6  # a family's section under pairs.properties


def builder_module(family: DatasetFamily):
    return importlib.import_module(f"spudflow.items.{family.builder}")


def render_docs() -> str:
    """docs/items.md's table of datasets: one row per family."""
    rows = ["| dataset (file name) | command | items in the default run |", "|---|---|---|"]
    rows += [f"| `{f.datasets or f.name}` | `spudflow items {f.command}` | {f.summary} |"
             for f in FAMILIES]
    return "\n".join(rows) + "\n"


def family_schema(family: DatasetFamily) -> dict:
    """The schema of a built family's `pairs:` section from its builder's CONFIG: each key
    without a default is required."""
    builder = builder_module(family)
    properties = {"enabled": {"type": "boolean", "default": False}, **builder.CONFIG,
                  "sample": SAMPLE}
    required = [key for key, spec in builder.CONFIG.items() if "default" not in spec]
    return {"description": builder.HELP, "type": "object", "additionalProperties": False,
            **({"required": required} if required else {}), "properties": properties}


def render_schema() -> str:
    """The sections of the families whose builder declares CONFIG, indented for the schema."""
    sections = {f.name: family_schema(f) for f in FAMILIES
                if f.builder and hasattr(builder_module(f), "CONFIG")}
    if not sections:
        return ""
    text = yaml.safe_dump(sections, sort_keys=False, allow_unicode=True, width=100)
    return "".join(SCHEMA_INDENT + line if line.strip() else line
                   for line in text.splitlines(keepends=True))


# Markers around the rendered text: a Markdown comment in docs, a YAML comment in the schema.
BLOCKS = (
    (re.compile(r"(<!-- items datasets -->\n)(.*?)(<!-- /items datasets -->)", re.S),
     render_docs),
    (re.compile(r"( *# items datasets: rendered from core/dataset_families\.py\n)(.*?)"
                r"( *# /items datasets)", re.S), render_schema),
)


def rewrite(text: str) -> str:
    return rendered_blocks.rewrite(text, BLOCKS)


def main(argv: Iterable[str] | None = None) -> int:
    return rendered_blocks.main(argv, BLOCKS, "items datasets", "python -m spudflow.items.registry",
                                __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
