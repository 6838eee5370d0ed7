"""Tables and figures of an earlier config that the current one no longer makes.

Snakemake leaves the outputs of jobs that are no longer in the plan where they are. For a
removed model's scores or a treebank's probe runs that is harmless (no job reads them, and they
serve again when the config names them again), but a table or figure of an earlier config left
in results/tables or results/figures beside the current ones is what a researcher copies into a
paper: after a successful run, each registry output (core/outputs_registry.py) whose rule the
config no longer plans is removed, so that those folders hold what a fresh run of the config
would make. Only files spudflow wrote and nobody changed since go (core/written_files.py: a
Parquet file of a spudflow artifact, any other file by the hash beside it), with their marks; a
file of the user's, or one edited by hand, stays. Nothing is removed while some output the
config plans is missing (a run of a few targets, or one whose jobs failed).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from spudflow.core.output_formats import self_marked
from spudflow.core.outputs_registry import OUTPUTS
from spudflow.core.plan_base import registry_files
from spudflow.core.written_files import ENTRY_SUFFIX, MARK_DIR, written_hash


def registry_paths(rules: Iterable[str]) -> set[Path]:
    """Every file the registry gives these rules (each format of each of their outputs)."""
    return {Path(str(path)) for rule in set(rules) for path in registry_files(rule).values()}


def planned_rules(targets: Iterable[str]) -> set[str]:
    """The registry rules whose outputs are among a run's targets (rule all's inputs)."""
    targets = set(map(str, targets))
    return {o.rule for o in OUTPUTS if o.target in targets}


def stale_outputs(targets: Iterable[str], root: Path = Path(".")) -> list[Path]:
    """Files under ROOT of registry rules the targets do not plan, written by spudflow and
    unchanged since; none while a file of a planned rule is missing."""
    planned = registry_paths(planned_rules(targets))
    if not all((root / path).is_file() for path in planned):
        return []
    others = registry_paths({o.rule for o in OUTPUTS}) - planned
    return sorted(root / path for path in others if _spudflows(root / path))


def _spudflows(path: Path) -> bool:
    if not path.is_file() or path.is_symlink():
        return False
    marked = self_marked(path)
    if marked is not None:
        return "no spudflow" not in marked and "unreadable" not in marked
    return written_hash(path) is not None


def remove_stale_outputs(targets: Iterable[str], root: Path = Path(".")) -> list[Path]:
    """Removes stale_outputs() and their marks; returns the files removed."""
    removed = stale_outputs(targets, root)
    for path in removed:
        path.unlink()
        (path.parent / MARK_DIR / f"{path.name}{ENTRY_SUFFIX}").unlink(missing_ok=True)
    return removed
