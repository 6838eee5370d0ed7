"""What a download rule (fetch_treebank, fetch_pairs_file) hands `spudflow fetch` for one URL,
from config `fetch:`. Treebank splits and items datasets' files (core/split_files.py,
core/pairs_files.py) are fetched alike, so a mirror or a checksum works for either."""

from __future__ import annotations

from pathlib import Path

from spudflow.core.split_files import mirrored_file


def fetch_source(config: dict, url: str) -> str:
    """The URL, or the file:// URI of its copy under fetch.mirror (URL prefix -> folder): how
    compute nodes without internet and `spudflow rehearse` get the file."""
    local = mirrored_file(config["fetch"]["mirror"], url)
    return url if local is None else Path(local).resolve().as_uri()


def fetch_inputs(config: dict, url: str) -> list[str]:
    """The mirrored copy, if any: the download's input, so that replacing it reruns what
    depends on it."""
    local = mirrored_file(config["fetch"]["mirror"], url)
    return [] if local is None else [local]


def sha256_option(config: dict, url: str) -> str:
    """` --sha256 HEX` where fetch.sha256 gives the URL's checksum, else nothing."""
    sha256 = config["fetch"].get("sha256", {}).get(url)
    return "" if sha256 is None else f" --sha256 {sha256}"
