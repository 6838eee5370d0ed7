"""config/README.md from config/schema.yaml: every config key with its type, default and
description, the page the Snakemake workflow catalog shows. Written from the schema so that the
two cannot drift apart (tests/test_module.py compares them):

    python -m spudflow.core.config_readme config/schema.yaml > config/README.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

INTRO = """\
# Configuring spudflow

`config/config.yaml` is the default configuration (the run of `make run`, and what spudflow runs
when used as a module with no config of its own); `config/papers/` holds the paper presets. A config
given with `--configfile`, or passed to the module with `config: config`, replaces the default
whole; keys it leaves out take the defaults below. A wrong key or type stops the workflow before
any job runs, with one line per problem naming the key.

**Paths.** A value `workflow:REL` names a file shipped with spudflow (the vendored treebanks,
German templates, Japanese verb pairs and BLiMP subset): REL is relative to the workflow's own
directory, wherever it is deployed. Any other relative path is relative to the working directory,
where `results/` goes. See docs/running.md, "Use spudflow in your own workflow".

This page is generated from `config/schema.yaml` (`python -m spudflow.core.config_readme
config/schema.yaml > config/README.md`). In key names, `<name>` stands for a name you choose
and `[]` for the items of a list.
"""


def _resolve(node: dict, schema: dict) -> dict:
    """`node` with a local `$ref` followed; the node's own keys (a default) win."""
    if "$ref" not in node:
        return node
    target = schema
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    return {**_resolve(target, schema), **{k: v for k, v in node.items() if k != "$ref"}}


def _type(node: dict) -> str:
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    type_name = node.get("type", "")
    type_name = " or ".join(type_name) if isinstance(type_name, list) else type_name
    items = node.get("items")
    if type_name == "array" and isinstance(items, dict) and "enum" in items:
        return "list of " + ", ".join(f"`{v}`" for v in items["enum"])
    if type_name == "array" and isinstance(items, dict) and isinstance(items.get("type"), str):
        return f"list of {items['type']}"
    return type_name


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def schema_keys(schema: dict) -> list[tuple[str, dict]]:
    """(dotted key, its schema node) of every key, depth first in schema order."""
    rows: list[tuple[str, dict]] = []

    def walk(node: dict, key: str) -> None:
        node = _resolve(node, schema)
        if key:
            rows.append((key, node))
        for name, child in node.get("properties", {}).items():
            walk(child, f"{key}.{name}" if key else name)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{key}.<name>")
        items = node.get("items")
        if isinstance(items, dict) and _resolve(items, schema).get("type") == "object":
            walk(items, f"{key}[]")

    walk(schema, "")
    return rows


def render(schema: dict) -> str:
    """The Markdown page: an introduction, then a table of the keys of each top-level section."""
    lines = [INTRO]
    for key, node in schema_keys(schema):
        if "." not in key:
            lines += ["", f"## `{key}`", ""]
            if node.get("description"):
                lines += [_cell(node["description"]), ""]
            lines += ["| key | type | default | description |", "|---|---|---|---|"]
        default = ""
        if "default" in node:
            default = f"`{json.dumps(node['default'], ensure_ascii=False)}`"
        lines.append(f"| `{key}` | {_cell(_type(node))} | {_cell(default)} "
                     f"| {_cell(node.get('description', ''))} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m spudflow.core.config_readme SCHEMA.yaml", file=sys.stderr)
        return 2
    schema = yaml.safe_load(Path(args[0]).read_text(encoding="utf-8"))
    sys.stdout.write(render(schema))
    return 0


if __name__ == "__main__":
    sys.exit(main())
