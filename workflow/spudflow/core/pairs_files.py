"""Where a pairs dataset's input file is: a local path as given, or a URL downloaded first, to
resources/downloads/pairs/{family}/{the URL's file name} (rule fetch_pairs_file; the file name
is kept because it names what is in it: a CoLA phenomenon set's stem names the phenomenon). The
rules (rules/plumbing/pairs.smk) and the overlap check (core/overlap.py) both ask here, so the
two agree on every file."""

from __future__ import annotations

from urllib.parse import urlsplit

from spudflow.core.split_files import is_url

DOWNLOADS = "resources/downloads/pairs"
# The config keys of each family whose entries may be URLs.
URL_KEYS = {"cola": ("phenomena",)}


def url_file_name(url: str) -> str:
    return urlsplit(url).path.rsplit("/", 1)[-1]


def local_file(family: str, location: str) -> str:
    """The file a location of a family's input is read from."""
    return f"{DOWNLOADS}/{family}/{url_file_name(location)}" if is_url(location) else location


def family_urls(config: dict, family: str) -> dict[str, str]:
    """File name under DOWNLOADS/{family}/ -> its URL, for every URL of the family's config;
    two URLs of one file name would download to one file, a config error."""
    section = (config.get("pairs") or {}).get(family) or {}
    urls: dict[str, str] = {}
    for key in URL_KEYS.get(family, ()):
        for location in section.get(key) or []:
            if not is_url(location):
                continue
            name = url_file_name(location)
            if name in urls and urls[name] != location:
                raise ValueError(f"config pairs.{family}.{key}: {location} and {urls[name]} "
                                 f"both download to {name}")
            urls[name] = location
    return urls
