"""Tables and figures of an earlier config: removed only where spudflow wrote them, unchanged,
and only once everything the config plans is there (aggregate/stale_outputs.py). A model taken
out of a finished run's config: tests/test_incremental.py."""

from __future__ import annotations

from pathlib import Path

from spudflow.aggregate.stale_outputs import remove_stale_outputs
from spudflow.core.outputs_registry import rule_outputs
from spudflow.core.plan_base import registry_files
from spudflow.core.written_files import ENTRY_SUFFIX, MARK_DIR, mark, sha256_of

PLANNED = "table_treebank_stats"   # the config's: its files are the targets' rule's
EARLIER = "figure_probe_layers"    # an earlier config's figure


def written(root: Path, path: str, text: str) -> Path:
    """A file as spudflow writes it: its bytes, and their hash in the marks beside it."""
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)
    mark(file, [sha256_of(file)])
    return file


def targets() -> list[str]:
    """The run's targets, as rule all's: each output's registry target."""
    return [o.target for o in rule_outputs(PLANNED)]


def test_an_earlier_configs_figure_is_removed_with_its_marks(tmp_path):
    planned = [written(tmp_path, path, "now\n") for path in registry_files(PLANNED).values()]
    svg, png = (written(tmp_path, registry_files(EARLIER)[k], "then\n") for k in ("svg", "png"))
    user = tmp_path / "results" / "figures" / "my_sketch.svg"
    user.write_text("mine\n")

    assert remove_stale_outputs(targets(), tmp_path) == sorted([svg, png])
    assert not svg.exists() and not png.exists()
    assert not (svg.parent / MARK_DIR / f"{svg.name}{ENTRY_SUFFIX}").exists()
    assert all(path.is_file() for path in planned)
    assert user.read_text() == "mine\n"
    assert remove_stale_outputs(targets(), tmp_path) == []


def test_a_file_changed_since_spudflow_wrote_it_or_never_marked_stays(tmp_path):
    for path in registry_files(PLANNED).values():
        written(tmp_path, path, "now\n")
    edited = written(tmp_path, registry_files(EARLIER)["svg"], "then\n")
    edited.write_text("then, and a note by hand\n")
    unmarked = tmp_path / registry_files(EARLIER)["png"]
    unmarked.write_text("a file of the same name, not spudflow's\n")

    assert remove_stale_outputs(targets(), tmp_path) == []
    assert edited.is_file() and unmarked.is_file()


def test_nothing_is_removed_while_a_planned_output_is_missing(tmp_path):
    paths = list(registry_files(PLANNED).values())
    for path in paths[1:]:  # one file missing: a run of a few targets, or a failed job
        written(tmp_path, path, "now\n")
    stale = written(tmp_path, registry_files(EARLIER)["svg"], "then\n")

    assert remove_stale_outputs(targets(), tmp_path) == []
    assert stale.is_file()
