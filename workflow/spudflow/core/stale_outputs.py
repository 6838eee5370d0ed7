"""Tables and figures an earlier run of the same config made that the config no longer makes.

Snakemake leaves the outputs of jobs that are no longer planned where they are. For a removed
model's scores or a treebank's probe runs that is harmless (no job reads them, and they serve
again when the config names them again), but a table or figure left in results/tables or
results/figures beside the current ones is what a researcher copies into a paper. So after each
successful run that leaves every table and figure its config plans in place, the Snakefile's
`onsuccess` records those files with their SHA-256 under the config's key (the config files'
paths: a paper preset run after another in the same folder is another key, and keeps its
tables), and removes what the key's previous record lists that the config no longer plans, where
the file is as that record has it (nobody changed it since), spudflow's own (core/written_files.py)
and listed by no other key's record. A file of the user's, one edited by hand, and the outputs of
a run killed before its first success (never recorded) stay.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from spudflow.core.output_formats import self_marked
from spudflow.core.outputs_registry import OUTPUTS
from spudflow.core.plan_base import registry_files
from spudflow.core.written_files import ENTRY_SUFFIX, MARK_DIR, sha256_of, written_hash

# beside Snakemake's own records of the working directory's runs, not among the results
RECORDS = Path(".snakemake") / "spudflow-outputs"
FOLDERS = ("results/tables/", "results/figures/")
FRONT_PAGE = "results/index.html"


def config_key(configfiles: Iterable[str | os.PathLike], root: Path = Path(".")) -> str:
    """The config files' paths (relative to ROOT, the working directory, where under it), sorted:
    what names one config from run to run while its contents change."""
    base = root.resolve()
    paths = []
    for file in configfiles:
        path = (root / file).resolve()
        paths.append(str(path.relative_to(base)) if path.is_relative_to(base) else str(path))
    return "\n".join(sorted(paths))


def planned_files(targets: Iterable[str]) -> set[str]:
    """Every table and figure file (each format) of the registry rules whose targets are among a
    run's targets (rule all's), and the front page when it is one."""
    targets = set(map(str, targets))
    rules = {o.rule for o in OUTPUTS if o.target in targets}
    files = {str(path) for rule in rules for path in registry_files(rule).values()}
    files = {path for path in files if path.startswith(FOLDERS)}
    return files | ({FRONT_PAGE} & targets)


def _record_path(root: Path, key: str) -> Path:
    return root / RECORDS / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def _records(root: Path) -> dict[str, dict[str, str]]:
    records = {}
    for path in sorted((root / RECORDS).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            records[record["config"]] = dict(record["files"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable record lists nothing: none of its files is removed
    return records


def _spudflows(path: Path) -> bool:
    if not path.is_file() or path.is_symlink():
        return False
    marked = self_marked(path)
    if marked is not None:
        return "no spudflow" not in marked and "unreadable" not in marked
    return written_hash(path) is not None


def settle_outputs(key: str, planned: Iterable[str], root: Path = Path(".")) -> list[Path]:
    """After a successful run of the config KEY, whose tables and figures are PLANNED (paths
    relative to ROOT): removes the files KEY's previous record lists that PLANNED does not (as
    recorded, spudflow's, in no other key's record) with their marks, then records PLANNED.
    Nothing happens while a planned file is missing (a run of a few targets). Returns the files
    removed."""
    planned = sorted(set(planned))
    if not all((root / path).is_file() for path in planned):
        return []
    records = _records(root)
    previous = records.pop(key, {})
    claimed = {path for files in records.values() for path in files}
    removed = []
    for path, digest in sorted(previous.items()):
        file = root / path
        if path in claimed or path in planned or not _spudflows(file):
            continue
        if sha256_of(file) == digest:
            file.unlink()
            (file.parent / MARK_DIR / f"{file.name}{ENTRY_SUFFIX}").unlink(missing_ok=True)
            removed.append(file)
    record = {"config": key, "files": {path: sha256_of(root / path) for path in planned}}
    target = _record_path(root, key)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    os.replace(tmp, target)
    return removed
