"""The committed snapshot of every artifact's schema (core/schemas.snapshot.json), generated from
the definitions, so that a schema that changes without a version bump fails a test.

A file written by an older spudflow is rejected by its version (core/contract.py), so a changed
schema needs a new version: otherwise old files are read under the new definition. The snapshot
holds, per artifact, its version and what the version stands for (columns, types with their
nested nullability, nullability, declared extras, openness; not the docs). `--check` (the default)
compares the definitions with it; `--write` regenerates it after a bump.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from spudflow.core.contract import Artifact, Column

SNAPSHOT = Path(__file__).with_name("schemas.snapshot.json")
WRITE = "python -m spudflow.core.schema_snapshot --write"


def _column(column: Column) -> list:
    return [column.name, str(column.type), column.nullable]


def schema_of(artifact: Artifact) -> dict:
    """What the artifact's version stands for. An extension (`items.cola`) records its own columns
    and the version of the artifact it extends, which stands for the rest."""
    schema: dict = {"version": artifact.version}
    if artifact.base_version is not None:
        schema["base_version"] = artifact.base_version
    schema["open"] = artifact.open
    schema["columns"] = [_column(c) for c in artifact.columns[artifact.inherited:]]
    if artifact.extra:
        schema["extra"] = [_column(c) for c in artifact.extra]
    if artifact.keep_order:
        schema["keep_order"] = True
    return schema


def snapshot(artifacts: Iterable[Artifact]) -> dict[str, dict]:
    return {a.name: schema_of(a) for a in sorted(artifacts, key=lambda a: a.name)}


def differences(current: dict[str, dict], recorded: dict[str, dict]) -> list[str]:
    """One line per artifact whose definition and snapshot disagree, saying what to do."""
    problems = []
    for name in sorted(set(current) | set(recorded)):
        now, then = current.get(name), recorded.get(name)
        if now == then:
            continue
        if then is None or now is None:
            what = "is new" if then is None else "is gone"
            problems.append(f"{name} {what}: regenerate the snapshot ({WRITE})")
        elif now["version"] == then["version"]:
            changed = sorted(k for k in now.keys() | then.keys() if now.get(k) != then.get(k))
            problems.append(f"{name}: schema changed ({', '.join(changed)}) but version is still "
                            f"{now['version']}: bump its version, then regenerate the snapshot "
                            f"({WRITE})")
        else:
            problems.append(f"{name}: version {then['version']} -> {now['version']}: regenerate "
                            f"the snapshot ({WRITE})")
    return problems


def _definitions() -> dict[str, dict]:
    from spudflow.core.table_artifacts import ALL_ARTIFACTS

    return snapshot(ALL_ARTIFACTS)


def render(schemas: dict[str, dict]) -> str:
    """JSON with one line per column, so that a diff of the snapshot reads like the change."""
    def dumps(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    entries = []
    for name, schema in schemas.items():
        parts = [f"  {dumps(k)}: {dumps(v)}" for k, v in schema.items()
                 if k not in ("columns", "extra")]
        for key in ("columns", "extra"):
            if key in schema:
                rows = ",\n".join(f"   {dumps(c)}" for c in schema[key])
                parts.append(f"  {dumps(key)}: [\n{rows}\n  ]")
        entries.append(f" {dumps(name)}: {{\n" + ",\n".join(parts) + "\n }")
    return "{\n" + ",\n".join(entries) + "\n}\n"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the snapshot")
    parser.add_argument("--snapshot", type=Path, default=SNAPSHOT, help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv) if argv is not None else None)
    current = _definitions()
    if args.write:
        args.snapshot.write_text(render(current), encoding="utf-8")
        return 0
    recorded = json.loads(args.snapshot.read_text(encoding="utf-8"))
    problems = differences(current, recorded)
    for line in problems:
        print(f"{args.snapshot}: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
