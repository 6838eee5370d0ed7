"""Stand-ins in the rehearsal's mirror for every items dataset file a config names by URL
(core/pairs_files.py), so that rule fetch_pairs_file reads them offline through fetch.mirror as
it would read a real mirror: the CoLA phenomenon sets as stand-in sentences in their format, the
German case paper's sentence files as the project's own templates laid out line for line as the
paper's files, which `pairs german-case --sentences` recovers templates from as from the real
ones."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.pairs_files import PairsDownload, family_downloads
from spudflow.rehearse.conllu_blocks import write_if_changed
from spudflow.rehearse.mirror import mirror_location
from spudflow.rehearse.standins import GERMAN_TEMPLATES, UserFile, cola_row_count, cola_rows


def _cola(download: PairsDownload, name: str, repo: Path, taken: set[str],
          size: str) -> tuple[str, str]:
    rows, what = cola_rows(repo, name, taken, cola_row_count(name, size), source="")
    return rows, f"{what}; empty source column"


def _german_case(download: PairsDownload, name: str, repo: Path, taken: set[str],
                 size: str) -> tuple[str, str]:
    from spudflow.items.german_case import read_templates
    from spudflow.items.german_case_reference import reference_lines

    lines = reference_lines(read_templates(repo / GERMAN_TEMPLATES))[download.role]
    return "".join(line + "\n" for line in lines), (
        f"{len(lines)} lines: the project's own templates ({GERMAN_TEMPLATES}) in the paper's "
        "line layout, not the paper's sentences")


# family -> (download, its file name, repo, treebank sentences taken, size) -> (text, what)
STAND_INS = {"cola": _cola, "german_case": _german_case}


def mirror_pairs_files(config: dict, repo: Path, mirror: Path, taken: set[str],
                       size: str = "small") -> tuple[dict[str, str], list[UserFile]]:
    """A stand-in in MIRROR for every items dataset file an enabled family of the config names
    by URL: the `fetch.mirror` entries (URL prefix -> folder) that answer them, and what stands
    in for each."""
    prefixes: dict[str, str] = {}
    made = []
    for family, stand_in in STAND_INS.items():
        if not ((config.get("pairs") or {}).get(family) or {}).get("enabled"):
            continue
        for name, download in sorted(family_downloads(config, family).items()):
            prefix, file = mirror_location(mirror, download.url)
            prefixes[prefix] = str(file.parent)
            text, what = stand_in(download, name, repo, taken, size)
            write_if_changed(file, text)
            key = download.key if download.role is None else f"{download.key}.{download.role}"
            made.append(UserFile(download.url, key, what))
    return prefixes, made
