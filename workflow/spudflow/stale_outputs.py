"""Tables and figures an earlier run of the same config made that the config no longer makes.

Snakemake leaves the outputs of jobs that are no longer planned where they are. For a removed
model's scores or a treebank's probe runs that is harmless (no job reads them, and they serve
again when the config names them again), but a table or figure left in results/tables or
results/figures beside the current ones is what a researcher copies into a paper. So after each
successful run that leaves every table and figure its config plans in place, the Snakefile's
`onsuccess` records those files with their SHA-256 under the config's key (its config files, in
order, and its `--config` values: a paper preset run after another in the same folder is another
key, and keeps its tables), and removes what the key's previous record lists that the config no
longer plans. A file is recorded only as spudflow wrote it (core/written_files.py lists its
hash; a Parquet file, which carries no such entry, as the job that wrote it left it: its time is
the one Snakemake recorded when the job ended) and goes only while it is still as recorded and
no other key's record lists it as it is. A file of the user's, one edited by hand, and the
outputs of a run killed before its first success (never recorded) stay.

Not a stage's module: only the Snakefile imports it, so no job runs it and it is no part of any
rule's code version (core/rules_support.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from spudflow.core.output_formats import self_marked
from spudflow.core.outputs_registry import OUTPUTS
from spudflow.core.plan_base import registry_files
from spudflow.core.written_files import ENTRY_SUFFIX, MARK_DIR, sha256_of, written_hash

# beside Snakemake's own records of the working directory's runs, not among the results
RECORDS = Path(".snakemake") / "spudflow-outputs"
FOLDERS = ("results/tables/", "results/figures/")
FRONT_PAGE = "results/index.html"


def config_key(configfiles: Iterable[str | os.PathLike], overrides: Mapping | None = None,
               root: Path = Path(".")) -> str:
    """The config files' paths in the order given (relative to ROOT, the working directory,
    where under it; links not followed: the path the user names) and the `--config` values:
    what names one config from run to run while its files' contents change."""
    base = Path(os.path.abspath(root))
    paths = []
    for file in configfiles:
        path = Path(os.path.abspath(base / file))
        paths.append(str(path.relative_to(base)) if path.is_relative_to(base) else str(path))
    key = "\n".join(paths)
    if overrides:
        key += "\n--config " + json.dumps(overrides, sort_keys=True, default=str)
    return key


def planned_files(targets: Iterable[str]) -> set[str]:
    """Every table and figure file (each format) of the registry rules whose targets are among a
    run's targets (rule all's), and the front page when it is one."""
    targets = set(map(str, targets))
    rules = {o.rule for o in OUTPUTS if o.target in targets}
    files = {str(path) for rule in rules for path in registry_files(rule).values()}
    files = {path for path in files if path.startswith(FOLDERS)}
    return files | ({FRONT_PAGE} & targets)


def left_by_its_job(persistence) -> Callable[[Path], bool]:
    """Whether a file is as the job that wrote it left it, by Snakemake's record of the job
    (`workflow.persistence`): the file's time is the one the record took when the job ended.
    The proof for a Parquet file, which has no hash entry; no record, or one that cannot be
    read, proves nothing."""
    from snakemake.io import IOFile

    def left(path: Path) -> bool:
        try:
            record = persistence.metadata(IOFile(str(path)))
            return record is not None and record.endtime == os.stat(path).st_mtime
        except Exception:  # noqa: BLE001 - Snakemake's record, of whatever backend
            return False
    return left


def _record_path(root: Path, key: str) -> Path:
    return root / RECORDS / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def _records(root: Path) -> dict[str, dict[str, dict]]:
    records = {}
    for path in sorted((root / RECORDS).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            records[record["config"]] = {name: dict(entry) for name, entry in
                                         record["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # an unreadable record lists nothing: none of its files is removed
    return records


def _ours(path: str) -> bool:
    """A path this module may remove: a table or figure file, or the front page."""
    return (path.startswith(FOLDERS) or path == FRONT_PAGE) and ".." not in Path(path).parts


def _as_written(file: Path, job_left: Callable[[Path], bool]) -> str | None:
    """The SHA-256 of FILE when it is as spudflow wrote it, else None."""
    if not file.is_file() or file.is_symlink():
        return None
    marked = self_marked(file)
    if marked is None:
        return written_hash(file)
    if "no spudflow" in marked or "unreadable" in marked or not job_left(file):
        return None
    return sha256_of(file)


def _entry(file: Path, digest: str) -> dict:
    info = file.stat()
    return {"sha256": digest, "size": info.st_size, "mtime_ns": info.st_mtime_ns}


def _recorded(file: Path, previous: dict | None, job_left: Callable[[Path], bool]) -> dict | None:
    """FILE's record entry: the previous one while the file's size and time are as recorded,
    else its hash where it is as spudflow wrote it; None where it is not (not recorded)."""
    info = file.stat()
    if previous and (previous.get("size"), previous.get("mtime_ns")) == (info.st_size,
                                                                         info.st_mtime_ns):
        return previous
    digest = _as_written(file, job_left)
    return None if digest is None else _entry(file, digest)


def settle_outputs(key: str, planned: Iterable[str], job_left: Callable[[Path], bool],
                   root: Path = Path(".")) -> tuple[list[Path], list[str]]:
    """After a successful run of the config KEY whose tables and figures are PLANNED (paths
    relative to ROOT): removes, with their marks, the files KEY's previous record lists that
    PLANNED does not, where each is as recorded, spudflow's and not listed as it is by another
    key's record; then records PLANNED. `job_left(file)`: whether a Parquet file is as the job
    that wrote it left it. Nothing happens while a planned file is missing (a run of a few
    targets). Returns (the files removed, a line for each file that could not be read or
    removed), never raising for a file."""
    planned = set(planned)
    if not all((root / path).is_file() for path in planned):
        return [], []
    records = _records(root)
    previous = records.pop(key, {})
    removed, problems = [], []
    for path, entry in sorted(previous.items()):
        if path in planned or not _ours(path):
            continue
        file = root / path
        try:
            digest = _as_written(file, lambda _: True)
            if digest is None or digest != entry.get("sha256") or not os.access(file, os.W_OK):
                continue
            if any(other.get(path, {}).get("sha256") == digest for other in records.values()):
                continue  # another config's run left it as it is: its table too
            file.unlink()
            (file.parent / MARK_DIR / f"{file.name}{ENTRY_SUFFIX}").unlink(missing_ok=True)
            removed.append(file)
        except OSError as error:
            problems.append(f"{path}: not removed ({error.strerror or error})")
    files = {}
    for path in sorted(planned):
        try:
            entry = _recorded(root / path, previous.get(path), job_left)
        except OSError as error:
            problems.append(f"{path}: not recorded ({error.strerror or error})")
            continue
        if entry is not None:
            files[path] = entry
    target = _record_path(root, key)
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"config": key, "files": files}, handle, indent=1, sort_keys=True)
        os.replace(tmp, target)
    except OSError as error:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        problems.append(f"{target}: the record of this run's tables and figures is not "
                        f"written ({error.strerror or error})")
    return removed, problems
