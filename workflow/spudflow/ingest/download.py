"""Downloading a treebank file, checked: a body that is not the length the server announced
(shorter or longer), larger than the size cap, or not the configured SHA-256, is bad input.

urllib stops reading quietly when a connection closes before Content-Length bytes came, so a
download cut at a sentence boundary would ingest cleanly with sentences missing; and http.client
stops at Content-Length bytes, so a body longer than announced would be cut there silently. The
body is therefore read to the end of the connection (urllib asks the server to close it) and
counted here, and the SHA-256 compared where the config gives one. The cap (config
fetch.max_bytes) stops a runaway source (`file:///dev/zero`, a wrong URL serving a disk image)
while it streams.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import re
import urllib.request
from pathlib import Path

from spudflow.core.errors import InputError

CHUNK = 1 << 20
# config fetch.max_bytes' default: UD treebanks and BLiMP live on GitHub, which refuses files over
# 100 MB (so UD ships large training sets in parts); 1 GiB leaves a tenfold margin.
MAX_BYTES = 1 << 30
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(text: str) -> str:
    """argparse type: a SHA-256 as 64 hex digits (either case, kept lower-case)."""
    if not SHA256_HEX.match(text.lower()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a SHA-256 (64 hex digits)")
    return text.lower()


def _announced_length(response) -> int | None:
    value = response.headers.get("Content-Length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def download(url: str, path: Path, sha256: str | None = None,
             max_bytes: int = MAX_BYTES) -> None:
    """Write URL's body to PATH (a temporary path: the caller renames it when this returns)."""
    digest, size = hashlib.sha256(), 0
    try:
        with urllib.request.urlopen(url, timeout=120) as response, open(path, "wb") as out:
            expected = _announced_length(response)
            if expected is not None and expected > max_bytes:
                raise InputError(url, None, f"download refused: the server announces {expected} "
                                 f"bytes, more than fetch.max_bytes ({max_bytes}): nothing written")
            if isinstance(response, http.client.HTTPResponse) and not response.chunked:
                response.length = None  # read past Content-Length: a longer body is an error
            for chunk in iter(lambda: response.read(CHUNK), b""):
                size += len(chunk)
                if size > max_bytes:
                    raise InputError(url, None, f"download stopped: more than fetch.max_bytes "
                                     f"({max_bytes}) bytes: nothing written")
                digest.update(chunk)
                out.write(chunk)
    except (OSError, http.client.HTTPException, ValueError) as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise InputError(url, None, f"download failed: {reason}") from None
    if expected is not None and size != expected:
        what = "cut short" if size < expected else "longer than announced"
        raise InputError(url, None, f"download failed: {size} bytes received, the server "
                         f"announced {expected} (Content-Length): {what}, nothing written")
    if size == 0:  # no input it fetches is empty: a failed download
        raise InputError(url, None, "download failed: no data (empty file)")
    if sha256 is not None and digest.hexdigest() != sha256:
        raise InputError(url, None, f"download failed: SHA-256 {digest.hexdigest()}, the "
                         f"config expects {sha256}: nothing written")
