"""Downloading a treebank file, checked: a body that is not the length the server announced, or
not the configured SHA-256, is bad input.

urllib stops reading quietly when a connection closes before Content-Length bytes came, so a
download cut at a sentence boundary would ingest cleanly with sentences missing; the length is
therefore counted here, and the SHA-256 compared where the config gives one.
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


def download(url: str, path: Path, sha256: str | None = None) -> None:
    """Write URL's body to PATH (a temporary path: the caller renames it when this returns)."""
    digest, size = hashlib.sha256(), 0
    try:
        with urllib.request.urlopen(url, timeout=120) as response, open(path, "wb") as out:
            expected = _announced_length(response)
            for chunk in iter(lambda: response.read(CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
    except (OSError, http.client.HTTPException, ValueError) as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise InputError(url, None, f"download failed: {reason}") from None
    if expected is not None and size != expected:
        raise InputError(url, None, f"download failed: {size} bytes received, the server "
                         f"announced {expected} (Content-Length): cut short, nothing written")
    if size == 0:  # no input it fetches is empty: a failed download
        raise InputError(url, None, "download failed: no data (empty file)")
    if sha256 is not None and digest.hexdigest() != sha256:
        raise InputError(url, None, f"download failed: SHA-256 {digest.hexdigest()}, the "
                         f"config expects {sha256}: nothing written")
