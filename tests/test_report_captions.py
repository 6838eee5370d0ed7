"""Every report caption renders with the names its rule gives it: Snakemake renders captions with
jinja2's lenient Undefined, so a name the rule does not pass prints as nothing ("( of each)").
Here undefined names are errors."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
from workflow_helpers import REPO, copy_workflow


class _Names(SimpleNamespace):
    """A rule's named inputs or params."""


def _value(value):
    """A param's value as the rule gives it; a function of the job (or an input) stands in as
    a one-element list, which the filters the captions use (join, length) accept."""
    return ["x"] if callable(value) or isinstance(value, str) and "{" in value else value


def _captioned_outputs(workdir: Path):
    """(rule, caption path, config) of every report output of the workflow at WORKDIR: a file
    under report/, or a table's NAME.caption.rst that its command writes (not there yet)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, Quietness, ResourceSettings

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(resource_settings=ResourceSettings(cores=1),
                                    snakefile=workdir / "Snakefile", workdir=workdir)
        workflow = workflow_api._workflow
        found = []
        for rule in workflow.rules:
            for output in rule.output:
                report = output.flags.get("report")
                if report and report.caption:
                    caption = Path(rule.snakefile).parent / str(report.caption)
                    found.append((rule, caption.resolve(), workflow.config))
        return found


@pytest.fixture(scope="module")
def captions(tmp_path_factory):
    return _captioned_outputs(copy_workflow(tmp_path_factory.mktemp("captions") / "repo",
                                            overlay="every_table.yaml"))


def test_every_caption_is_used_by_a_rule(captions):
    used = {caption.name for _, caption, _ in captions if caption.parent.name == "report"}
    assert used == {p.name for p in (REPO / "report").glob("*.rst")} - {"workflow.rst"}


def test_a_table_with_its_caption_in_the_registry_is_captioned_by_the_file_written_with_it(
        captions):
    """The report caption of such a table is results/tables/NAME.caption.rst (its command
    writes it from the registry's caption); no report/NAME.rst says it a second time."""
    from spudflow.core.outputs_registry import TABLE, TABLE_OUTPUTS

    generated = {caption.name for _, caption, _ in captions if caption.parent.name == "tables"}
    registered = {f"{o.name}.caption.rst" for o in TABLE_OUTPUTS.values()
                  if o.output_type == TABLE and o.caption}
    assert generated == registered
    assert not {f"{o.name}.rst" for o in TABLE_OUTPUTS.values()
                if o.output_type == TABLE and o.caption} & {
        p.name for p in (REPO / "report").glob("*.rst")}


def _caption_text(caption: Path) -> str:
    """A caption file's text: report/'s, or what a table's command writes as NAME.caption.rst
    (its registry caption, fields filled with stand-ins, and the line on its data)."""
    if caption.parent.name == "report":
        return caption.read_text(encoding="utf-8")
    from string import Formatter

    from spudflow.core.outputs_registry import TABLE_OUTPUTS, report_caption_text

    entry = TABLE_OUTPUTS[caption.name.removesuffix(".caption.rst")]
    fields = {name: 1 for _, name, _, _ in Formatter().parse(entry.caption) if name}
    return report_caption_text(entry, entry.caption_text(**fields))


def test_every_caption_renders_with_no_undefined_name(captions):
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    failures = []
    for rule, caption, config in captions:
        params = _Names(**{name: _value(value) for name, value in rule.params.items()})
        inputs = _Names(**{name: ["x"] for name, _ in rule.input.items()})
        snakemake = SimpleNamespace(params=params, input=inputs, config=config,
                                    wildcards=_Names(), output=_Names())
        try:
            environment.from_string(_caption_text(caption)).render(snakemake=snakemake)
        except jinja2.UndefinedError as error:
            failures.append(f"{caption.name} (rule {rule.name}): {error}")
    assert not failures, failures


def test_no_caption_or_registry_text_names_a_plain_text_paper_label():
    """The report captions, the registry's captions and descriptions, the table definitions and
    the table writers' captions say which of the paper's tables or figures they reproduce in
    words a reader of the published paper can follow, never by the plain-text copy's labels
    (FIGREF16, TABREF18, …); only docs/ keeps those, beside a description."""
    label = re.compile("(FIG|TAB)" + "REF[0-9]+")
    from spudflow.core.outputs_registry import OUTPUTS
    from spudflow.core.table_artifacts import ALL_ARTIFACTS

    texts = {f"report/{p.name}": p.read_text(encoding="utf-8")
             for p in sorted((REPO / "report").glob("*.rst"))}
    texts |= {f"registry {o.name}": f"{o.reproduces} {o.what} {o.shows} {o.caption}"
              for o in OUTPUTS}
    texts |= {f"artifact {a.name}": " ".join([a.doc, *(c.doc for c in a.columns + a.extra)])
              for a in ALL_ARTIFACTS}
    package = REPO / "workflow" / "spudflow"
    texts |= {str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
              for p in sorted(package.rglob("*.py"))}
    texts |= {f"config/{p.name}": p.read_text(encoding="utf-8")
              for p in sorted((REPO / "config").rglob("*")) if p.is_file()}
    assert not [where for where, text in texts.items() if label.search(text)]
