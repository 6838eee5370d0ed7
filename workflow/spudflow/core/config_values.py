"""Config values that pass the schema and name something, but would fail in the job that uses
them, hours later: a GGUF file the model folder lacks, a score cache that is a file or the
results folder, a probe layer the model does not have, more human-evaluation sentences than the
split holds, a hub model that cannot be loaded offline. Each is checked here, before any job,
where it can be told without loading a model or reaching the network: one `config key …` line
per problem (core/config_references.py gathers them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from spudflow.core.model_source import PACKAGE_PREFIX, is_local_path, package_directory

RESULTS = "results"
CACHE_ROOT = "results/cache"


def _gguf_files(config: dict, exists: Callable[[str], bool]) -> list[str]:
    errors = []
    for name, spec in (config.get("models") or {}).items():
        gguf = spec.get("gguf_file")
        source = str(spec.get("source", ""))
        if not gguf or source.startswith(PACKAGE_PREFIX) or not is_local_path(source):
            continue
        folder = Path(source).expanduser()
        if folder.suffix == ".gguf" or not exists(str(folder)):
            continue  # a GGUF file itself, or a missing folder (its own message)
        if not exists(str(folder / gguf)):
            errors.append(f"config key models.{name}.gguf_file: {gguf!r}: no such file in "
                          f"{source}")
    return errors


def _score_cache(config: dict) -> list[str]:
    """scoring.cache: a folder of its own. Not "" (the working folder), not a file, not the
    results folder or one of the stages' folders in it (results/cache/... is the place)."""
    scoring = config.get("scoring") or {}
    if "cache" not in scoring or scoring["cache"] is None:
        return []
    cache = str(scoring["cache"])
    key = "config key scoring.cache"
    if not cache.strip():
        return [f"{key}: empty: the working folder would become the score cache; null turns "
                "the cache off"]
    path = Path(os.path.normpath(Path(cache).expanduser()))
    if path.exists() and not path.is_dir():
        return [f"{key}: {cache!r} is a file; the score cache is a folder"]
    if path == Path(".") or path.is_absolute() and path == Path.cwd():
        return [f"{key}: {cache!r} is the working folder; the score cache needs a folder of "
                "its own (e.g. results/cache/scores)"]
    relative = Path(os.path.relpath(path.resolve() if path.is_absolute() else path))
    parts = relative.parts
    if parts and parts[0] == RESULTS and relative != Path(CACHE_ROOT) and \
            not relative.is_relative_to(CACHE_ROOT):
        return [f"{key}: {cache!r} is a pipeline output folder (results/ holds the stages' "
                f"outputs); put the score cache in {CACHE_ROOT}/ or outside results/"]
    if Path(RESULTS).resolve().is_relative_to(path.resolve()):
        return [f"{key}: {cache!r} holds the results folder; the score cache needs a folder "
                "of its own (e.g. results/cache/scores)"]
    return []


def _split_files(spec) -> list[str] | None:
    """The local files of a split (None: one is a URL, which cannot be counted here)."""
    files = spec if isinstance(spec, list) else [spec]
    if any(not isinstance(f, str) or "://" in f for f in files):
        return None
    return files


def count_sentences(path: str) -> int:
    """Sentences of a CoNLL-U file, counted cheaply: each has one word with ID 1."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        return sum(1 for line in handle if line.startswith(b"1\t"))


def _human_eval(config: dict, exists: Callable[[str], bool]) -> list[str]:
    kit = config.get("human_eval")
    if not kit or "nonce" not in config or not isinstance(kit.get("n"), int):
        return []
    treebank, _, split = str(kit.get("split", "")).partition("/")
    spec = (config["treebanks"].get(treebank) or {}).get("splits", {}).get(split)
    files = _split_files(spec) if spec is not None else None
    if not files or not all(exists(f) for f in files):
        return []
    try:
        size = sum(count_sentences(f) for f in files)
    except (OSError, EOFError):
        return []  # unreadable: the ingest job says so
    if kit["n"] > size:
        return [f"config key human_eval.n: {kit['n']} sentences, but {kit['split']} holds "
                f"{size}"]
    return []


def _local_settings(source: str) -> dict | None:
    """config.json of a model found without loading it or the network: a local folder, a
    `pypi:` package's, or a hub id's snapshot in the hub cache. None: not found."""
    try:
        if source.startswith(PACKAGE_PREFIX):
            package, _, sub = source[len(PACKAGE_PREFIX):].partition("/")
            folder = package_directory(package) / sub
        elif is_local_path(source):
            folder = Path(source).expanduser()
        else:
            from spudflow.core.hub_cache import loaded_snapshot

            folder = loaded_snapshot(source)
        return json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - whatever hides it, the job loads the model and says
        return None


def model_layers(spec: dict) -> int | None:
    if isinstance(spec.get("layers"), int):
        return spec["layers"]
    settings = _local_settings(str(spec.get("source", ""))) or {}
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if isinstance(settings.get(key), int):
            return settings[key]
    return None


def _probe_layers(config: dict) -> list[str]:
    probe = config.get("probe") or {}
    if not probe.get("enabled", True):
        return []
    errors = []
    for name, spec in (probe.get("models") or {}).items():
        asked = [(k, spec[k]) for k in ("dist_layer", "label_layer")
                 if isinstance(spec.get(k), int)]
        if not asked:
            continue
        layers = model_layers(spec)
        errors += [f"config key probe.models.{name}.{key}: layer {layer}, but the model has "
                   f"{layers} layers (0 is the embeddings, {layers} the last)"
                   for key, layer in asked if layers is not None and layer > layers]
    return errors


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _hub_ids(config: dict) -> list[tuple[str, str, str | None]]:
    """(config key, hub id, revision) of every model and tokenizer named by a hub id."""
    found = []
    for name, spec in (config.get("models") or {}).items():
        found.append((f"models.{name}.source", spec.get("source"), spec.get("revision")))
    probe = config.get("probe") or {}
    if probe.get("enabled", True):
        for name, spec in (probe.get("models") or {}).items():
            found.append((f"probe.models.{name}.source", spec.get("source"),
                          spec.get("revision")))
    tokenizer = (config.get("nonce") or {}).get("ttr_tokenizer")
    found.append(("nonce.ttr_tokenizer", tokenizer, None))
    return [(key, source, revision) for key, source, revision in found
            if isinstance(source, str) and source and not source.startswith(PACKAGE_PREFIX)
            and not is_local_path(source)]


def _offline_hub(config: dict) -> list[str]:
    """With HF_HUB_OFFLINE set, a hub id must be in the hub cache: the job cannot fetch it."""
    if not offline():
        return []
    from spudflow.core.hub_cache import loaded_snapshot

    errors = []
    for key, hub_id, revision in _hub_ids(config):
        try:
            loaded_snapshot(hub_id, revision)
        except LookupError:
            at = f" at revision {revision}" if revision else ""
            errors.append(f"config key {key}: {hub_id!r}{at} is not in the Hugging Face hub "
                          "cache, and HF_HUB_OFFLINE is set: download it first (or unset "
                          "HF_HUB_OFFLINE)")
    return errors


def value_errors(config: dict, exists: Callable[[str], bool]) -> list[str]:
    """One `config key …` line per value that would fail in its job."""
    return (_gguf_files(config, exists) + _score_cache(config) + _human_eval(config, exists)
            + _probe_layers(config) + _offline_hub(config))
