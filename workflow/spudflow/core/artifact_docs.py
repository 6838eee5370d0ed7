"""The column tables of docs/*.md, rendered from the artifact definitions (core/artifacts.py).

Each table sits between `<!-- artifact: NAME -->` and `<!-- /artifact -->` in a docs page;
tests/test_artifacts.py fails when a block differs from its rendering or an artifact has none.
`python -m spudflow.core.artifact_docs [--check] DOCS...` rewrites (or checks) the blocks.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from spudflow.core.contract import Artifact

BLOCK = re.compile(r"(<!-- artifact: (?P<name>[\w.]+) -->\n)(?P<body>.*?)(<!-- /artifact -->)",
                   re.S)
# docs/architecture.md's one-line-per-artifact table of what the stages hand each other.
SUMMARY = re.compile(r"(<!-- artifacts: stages -->\n)(?P<body>.*?)(<!-- /artifacts -->)", re.S)
RESULTS_PATH = re.compile(r"`(results/[^`]*)`")


def type_name(dtype: pa.DataType) -> str:
    """Parquet-ish type names as the docs write them: string, int32, float64, list<string>."""
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return "string"
    if pa.types.is_floating(dtype):
        return f"float{dtype.bit_width}"
    if pa.types.is_boolean(dtype):
        return "bool"
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return f"list<{type_name(dtype.value_type)}>"
    if pa.types.is_struct(dtype):
        return "struct<" + ", ".join(f"{f.name}: {type_name(f.type)}" for f in dtype) + ">"
    return str(dtype)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")


def render(artifact: Artifact) -> str:
    """The artifact's description line and its column table (Markdown)."""
    lines = [f"*{artifact.name}* (version {artifact.version}, written by `spudflow "
             f"{artifact.producer}`){'; further columns may follow' if artifact.open else ''}."
             f" {artifact.doc}", "", "| column | type | meaning |", "|---|---|---|"]
    if artifact.key:
        key = ", ".join(f"`{k}`" for k in artifact.key)
        lines[0] = lines[0].rstrip(" .") + f". One row per {key} (a file with two is bad input)."
    if artifact.inherited:
        lines[0] += f" The first {artifact.inherited} columns are the items columns above; then:"
    for column in artifact.columns[artifact.inherited:] + artifact.extra:
        type_cell = _cell(type_name(column.type)) + (", null" if column.nullable else "")
        inside = [path for path, nullable in column.nested_paths() if nullable]
        type_cell += f", null in {_cell(', '.join(inside))}" if inside else ""
        extra = " (only some files have it)" if column in artifact.extra else ""
        lines.append(f"| {column.name} | {type_cell} | {_cell(column.doc)}{extra} |")
    return "\n".join(lines) + "\n"


def _file(artifact: Artifact, by_name: dict[str, Artifact]) -> str:
    """The artifact's results path as its doc names it; an items family's is its base's."""
    found = RESULTS_PATH.search(artifact.doc)
    if found:
        return f"`{found[1]}`"
    base = by_name.get(artifact.name.split(".")[0])
    return _file(base, by_name) if base is not None and base is not artifact else ""


def render_summary(artifacts: Iterable[Artifact]) -> str:
    """One row per artifact a stage hands to another: who writes it, where, one row per what."""
    artifacts = list(artifacts)
    by_name = {a.name: a for a in artifacts}
    lines = ["| artifact | written by | file | one row per |", "|---|---|---|---|"]
    for artifact in artifacts:
        key = ", ".join(f"`{k}`" for k in artifact.key)
        lines.append(f"| {artifact.name} | `spudflow {artifact.producer}` | "
                     f"{_cell(_file(artifact, by_name))} | {key} |")
    return "\n".join(lines) + "\n"


def summaries(text: str) -> list[str]:
    """The bodies of the stage-artifact summary blocks in a docs page."""
    return [m.group("body") for m in SUMMARY.finditer(text)]


def blocks(text: str) -> dict[str, str]:
    """Artifact name -> the body of its block in a docs page."""
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(text)}


def rewrite(text: str, artifacts: dict[str, Artifact], source: str) -> str:
    def body(match: re.Match) -> str:
        name = match.group("name")
        if name not in artifacts:
            raise SystemExit(f"{source}: block for unknown artifact {name!r}")
        return match.group(1) + render(artifacts[name]) + match.group(4)

    from spudflow.core.artifacts import STAGE_ARTIFACTS

    text = SUMMARY.sub(lambda m: m.group(1) + render_summary(STAGE_ARTIFACTS) + m.group(3), text)
    return BLOCK.sub(body, text)


def main(argv: Iterable[str] | None = None) -> int:
    from spudflow.core.table_artifacts import ALL_ARTIFACTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", type=Path, nargs="+")
    parser.add_argument("--check", action="store_true", help="only report stale blocks")
    args = parser.parse_args(list(argv) if argv is not None else None)
    by_name = {a.name: a for a in ALL_ARTIFACTS}
    stale = []
    for path in args.docs:
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, by_name, str(path))
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{path}: {'stale' if args.check else 'rewritten'}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
