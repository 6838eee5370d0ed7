"""Where a treebank split's CoNLL-U files are. A split is one local path or URL, or a list of
them read as one split in their order: UD ships some training sets in parts (German HDT
train-a-1 … train-b-2, Russian SynTagRus train-a/b/c). A URL is downloaded first, to
resources/downloads/{treebank}/{split}.conllu[.gz], or {split}.{N}.conllu[.gz] for the N-th
(1-based) file of a list. The rules' planning (spudflow/ingest/plan.py) and the overlap check
(core/overlap.py) both ask here, so the two agree on every file."""

from __future__ import annotations

from pathlib import Path

URL_SCHEMES = ("http", "https", "ftp", "file")


def is_url(location: str) -> bool:
    return location.split(":", 1)[0] in URL_SCHEMES


def split_locations(config: dict, treebank: str, split: str) -> list[str]:
    """The configured paths and URLs of a split, in order."""
    value = config["treebanks"][treebank]["splits"][split]
    return list(value) if isinstance(value, list) else [value]


def download_name(config: dict, treebank: str, split: str, index: int) -> str:
    """The name under resources/downloads/{treebank}/ (rule fetch_treebank's `download`
    wildcard) of the index-th (0-based) location of a split: `split`, or `split.N` in a list."""
    listed = isinstance(config["treebanks"][treebank]["splits"][split], list)
    return f"{split}.{index + 1}" if listed else split


def split_files(config: dict, treebank: str, split: str) -> list[str]:
    """The local CoNLL-U files of a split, in order: each path as given, each URL where it is
    downloaded."""
    files = []
    for index, location in enumerate(split_locations(config, treebank, split)):
        if is_url(location):
            suffix = ".conllu.gz" if location.endswith(".gz") else ".conllu"
            location = f"resources/downloads/{treebank}/"
            location += f"{download_name(config, treebank, split, index)}{suffix}"
        files.append(location)
    return files


def download_url(config: dict, treebank: str, download: str) -> str:
    """The URL of a download name (see download_name)."""
    split = download.partition(".")[0]
    locations = split_locations(config, treebank, split)
    for index, location in enumerate(locations):
        if download_name(config, treebank, split, index) == download and is_url(location):
            return location
    raise ValueError(f"config treebanks.{treebank}.splits.{split}: no URL downloads to {download}")


def mirrored_file(mirror: dict, url: str) -> str | None:
    """The local copy of a URL under a mirror (URL prefix -> folder; config fetch.mirror): the
    rest of the URL as the path inside the folder. None when no prefix matches."""
    for prefix, folder in mirror.items():
        if url.startswith(prefix):
            return str(Path(folder) / url[len(prefix):].lstrip("/"))
    return None
