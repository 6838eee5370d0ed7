"""The committed schema snapshot (core/schemas.snapshot.json, core/schema_snapshot.py): a
definition that changes without a version bump fails here, naming the artifact."""

from __future__ import annotations

import dataclasses
import json

from spudflow.core import artifacts, schema_snapshot
from spudflow.core.table_artifacts import ALL_ARTIFACTS


def test_the_snapshot_is_the_definitions():
    recorded = json.loads(schema_snapshot.SNAPSHOT.read_text(encoding="utf-8"))
    problems = schema_snapshot.differences(schema_snapshot.snapshot(ALL_ARTIFACTS), recorded)
    assert not problems, "\n".join(problems)


def _with(artifact, **change):
    return [dataclasses.replace(artifact, **change) if a is artifact else a
            for a in ALL_ARTIFACTS]


def test_a_changed_schema_needs_a_version_bump():
    """items.cola gained `phenomenon_set` at version 1: caught; at version 2: regenerate."""
    cola = artifacts.ITEMS_COLA
    without = tuple(c for c in cola.columns if c.name != "phenomenon_set")
    recorded = schema_snapshot.snapshot(_with(cola, columns=without, version=1))
    unbumped = schema_snapshot.snapshot(_with(cola, version=1))
    assert schema_snapshot.differences(unbumped, recorded) == [
        "items.cola: schema changed (columns) but version is still 1: bump its version, then "
        f"regenerate the snapshot ({schema_snapshot.WRITE})"]
    bumped = schema_snapshot.snapshot(_with(cola, version=2))
    assert schema_snapshot.differences(bumped, recorded) == [
        f"items.cola: version 1 -> 2: regenerate the snapshot ({schema_snapshot.WRITE})"]


def test_nested_nullability_and_extras_are_part_of_the_schema():
    tokens = artifacts.TREEBANK_TOKENS
    retyped = tuple(dataclasses.replace(c, type=artifacts.STR) if c.name == "replaced" else c
                    for c in tokens.extra)
    assert schema_snapshot.differences(schema_snapshot.snapshot(_with(tokens, extra=retyped)),
                                       schema_snapshot.snapshot(ALL_ARTIFACTS))[0].startswith(
        f"treebank_tokens: schema changed (extra) but version is still {tokens.version}")
    items = artifacts.ITEMS
    loose = tuple(dataclasses.replace(c, null_inside=("[]",)) if c.name == "word_starts" else c
                  for c in items.columns)
    assert schema_snapshot.differences(schema_snapshot.snapshot(_with(items, columns=loose)),
                                       schema_snapshot.snapshot(ALL_ARTIFACTS))[0].startswith(
        "items: schema changed (columns)")


def test_write_then_check(tmp_path, capsys):
    path = tmp_path / "snapshot.json"
    assert schema_snapshot.main(["--write", "--snapshot", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == schema_snapshot.SNAPSHOT.read_text(
        encoding="utf-8")
    assert schema_snapshot.main(["--snapshot", str(path)]) == 0
    recorded = json.loads(path.read_text(encoding="utf-8"))
    recorded["item_scores"]["columns"][0][1] = "int64"
    path.write_text(json.dumps(recorded), encoding="utf-8")
    assert schema_snapshot.main(["--snapshot", str(path)]) == 1
    version = artifacts.ITEM_SCORES.version
    assert f"item_scores: schema changed (columns) but version is still {version}" in \
        capsys.readouterr().err
