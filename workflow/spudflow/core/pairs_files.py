"""Where an items dataset's input file is: a local path as given, or a URL downloaded first, to
resources/downloads/pairs/{family}/{the URL's file name} (rule fetch_pairs_file, through
config fetch.mirror and fetch.sha256 as a treebank's; the file name is kept because it names
what is in it: a CoLA phenomenon set's stem names the phenomenon, the German case paper's files
are grammatical_sentences.txt and ungrammatical_sentences.txt). The rules
(spudflow/items/plan.py), the overlap check (core/overlap.py) and the rehearsal's stand-ins
(rehearse/pairs_downloads.py) all ask here, so they agree on every file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from spudflow.core.split_files import is_url

DOWNLOADS = "resources/downloads/pairs"
# The config keys of each family whose entries may be URLs: a list of files, or a mapping of
# what each file is to the file.
URL_KEYS = {"cola": ("phenomena",), "german_case": ("sentences",)}


@dataclass(frozen=True)
class PairsDownload:
    url: str
    key: str  # the config key that names it: pairs.cola.phenomena
    role: str | None  # its name in a mapping (german_case.sentences: grammatical); None in a list


def url_file_name(url: str) -> str:
    return urlsplit(url).path.rsplit("/", 1)[-1]


def local_file(family: str, location: str) -> str:
    """The file a location of a family's input is read from."""
    return f"{DOWNLOADS}/{family}/{url_file_name(location)}" if is_url(location) else location


def _entries(section: dict, key: str):
    """(role, location) of every entry of a list or mapping config key."""
    value = section.get(key) or []
    return value.items() if isinstance(value, dict) else ((None, v) for v in value)


def family_downloads(config: dict, family: str) -> dict[str, PairsDownload]:
    """File name under DOWNLOADS/{family}/ -> what is downloaded there, for every URL of the
    family's config; two URLs of one file name would download to one file, a config error."""
    section = (config.get("pairs") or {}).get(family) or {}
    downloads: dict[str, PairsDownload] = {}
    for key in URL_KEYS.get(family, ()):
        for role, location in _entries(section, key):
            if not is_url(location):
                continue
            name = url_file_name(location)
            if name in downloads and downloads[name].url != location:
                raise ValueError(f"config pairs.{family}.{key}: {location} and "
                                 f"{downloads[name].url} both download to {name}")
            downloads[name] = PairsDownload(location, f"pairs.{family}.{key}", role)
    return downloads


def blimp_paradigm_files(section):
    """The paradigm files of a `pairs.blimp` section's paths; a directory stands for its *.jsonl
    files."""
    files = []
    for location in section["paths"]:
        path = Path(location)
        files += sorted(str(p) for p in path.glob("*.jsonl")) if path.is_dir() else [location]
    return files
