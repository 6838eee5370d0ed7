"""Stand-ins for the German case paper's sentence files where a config fetches them by URL
(pairs.german_case.sentences, the German preset): the project's own templates written in the
paper's line layout into the rehearsal's mirror, so that the fetch rule reads them offline and
`pairs german-case --sentences` recovers templates from them as from the real files."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.split_files import is_url
from spudflow.rehearse.conllu_blocks import write_if_changed
from spudflow.rehearse.mirror import mirror_location
from spudflow.rehearse.standins import GERMAN_TEMPLATES, UserFile


def german_sentence_stand_ins(config: dict, repo: Path,
                              mirror: Path) -> tuple[dict[str, str], list[UserFile]]:
    """The `fetch.mirror` entries (URL prefix -> folder) and what stands in for each URL."""
    from spudflow.pairs.german_case import read_templates
    from spudflow.pairs.german_case_reference import reference_lines

    german = (config.get("pairs") or {}).get("german_case") or {}
    urls = {which: entry for which, entry in (german.get("sentences") or {}).items()
            if is_url(entry)} if german.get("enabled") else {}
    if not urls:
        return {}, []
    lines = reference_lines(read_templates(repo / GERMAN_TEMPLATES))
    prefixes, made = {}, []
    for which, url in sorted(urls.items()):
        prefix, file = mirror_location(mirror, url)
        prefixes[prefix] = str(file.parent)
        write_if_changed(file, "".join(line + "\n" for line in lines[which]))
        made.append(UserFile(url, f"pairs.german_case.sentences.{which}",
                             f"{len(lines[which])} lines: the project's own templates "
                             f"({GERMAN_TEMPLATES}) in the paper's line layout, not the paper's "
                             "sentences"))
    return prefixes, made
