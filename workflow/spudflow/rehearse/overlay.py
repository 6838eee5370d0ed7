"""The overlay config of a rehearsal: it points the fetch rule at the mirror and, for
`--size small`, narrows existing size keys (samples, epochs); nothing else of the config
changes. The hub cache is pointed at by the environment (HF_HUB_CACHE, HF_HUB_OFFLINE=1)."""

from __future__ import annotations

from dataclasses import dataclass

from spudflow.core.dataset_families import BUILT_FAMILIES
from spudflow.core.model_source import is_local_path

# --size small: items per dataset variant, probe epochs, control epochs and sentences.
SMALL_ITEMS = 40
SMALL_EPOCHS = 2
SMALL_CONTROL_SENTENCES = 200


@dataclass(frozen=True)
class HubModel:
    hub_id: str
    kind: str           # masked | causal | electra (probe-only models: from the table)
    layers: int         # the most layers the config's probe reads (0: no probe)
    users: tuple[str, ...]
    revisions: tuple[str, ...] = ()  # the `revision:`s the config names for it


def _entry(found: dict, hub_id: str, kind: str | None, user: str, spec: dict) -> dict:
    entry = found.setdefault(hub_id, {"kind": kind, "layers": 0, "users": [], "revisions": []})
    entry["users"].append(user)
    if spec.get("revision") and spec["revision"] not in entry["revisions"]:
        entry["revisions"].append(spec["revision"])
    return entry


def hub_models(config: dict) -> list[HubModel]:
    """Every hub id the config loads (scoring models, probe encoders, the TTR tokenizer), in
    config order, with the revisions the config names for it."""
    found: dict[str, dict] = {}
    for name, spec in (config.get("models") or {}).items():
        if spec["kind"] == "ngram" or is_local_path(spec["source"]) \
                or spec["source"].startswith("pypi:"):
            continue
        _entry(found, spec["source"], spec["kind"], f"models.{name}", spec)
    probe = config.get("probe") or {}
    if probe.get("enabled"):
        for name, spec in (probe.get("models") or {}).items():
            if is_local_path(spec["source"]) or spec["source"].startswith("pypi:"):
                continue
            entry = _entry(found, spec["source"], None, f"probe.models.{name}", spec)
            numbers = [spec.get(k) for k in ("layers", "dist_layer", "label_layer")]
            entry["layers"] = max([entry["layers"]] + [n for n in numbers if isinstance(n, int)])
    tokenizer = (config.get("nonce") or {}).get("ttr_tokenizer")  # TTR in a model's tokens
    if tokenizer and not is_local_path(tokenizer) and not tokenizer.startswith("pypi:"):
        _entry(found, tokenizer, None, "nonce.ttr_tokenizer", {})
    return [HubModel(hub_id, e["kind"], e["layers"], tuple(e["users"]), tuple(e["revisions"]))
            for hub_id, e in found.items()]


def _small_sample(spec: dict) -> dict:
    return {"n": SMALL_ITEMS, "seed": (spec.get("sample") or {}).get("seed", 0)}


def small_sizes(config: dict) -> dict:
    """Existing size keys narrowed for a rehearsal that finishes in minutes."""
    overlay: dict = {}
    pairs = config.get("pairs") or {}
    for name in BUILT_FAMILIES:  # each one dataset with a `sample`
        if (pairs.get(name) or {}).get("enabled"):
            overlay.setdefault("pairs", {})[name] = {"sample": _small_sample(pairs[name])}
    japanese = pairs.get("japanese_transitivity") or {}
    if japanese.get("enabled"):
        samples = japanese.get("sample") or {}
        overlay.setdefault("pairs", {})["japanese_transitivity"] = {"sample": {
            variant: {"n": SMALL_ITEMS, "seed": (samples.get(variant) or {}).get("seed", 0)}
            for variant in japanese.get("datasets", ["base", "rare", "longer", "relative"])}}
    if (config.get("probe") or {}).get("enabled"):
        overlay["probe"] = {"max_epochs": SMALL_EPOCHS}
    for name in config.get("controls") or {}:
        overlay.setdefault("controls", {})[name] = {"epochs": 1,
                                                    "max_sentences": SMALL_CONTROL_SENTENCES}
    return overlay


def build_overlay(config: dict, mirror: dict, size: str) -> dict:
    overlay = small_sizes(config) if size == "small" else {}
    if mirror:
        overlay["fetch"] = {"mirror": dict(sorted(mirror.items()))}
        checksums = standin_checksums(config, mirror)
        if checksums:
            overlay["fetch"]["sha256"] = checksums
    return overlay


def standin_checksums(config: dict, mirror: dict) -> dict:
    """The SHA-256 of the stand-in each URL of config fetch.sha256 is answered with: the fetch
    job checks the mirrored file against it, and the real file's checksum (which Snakemake's
    config merge cannot remove) would fail every stand-in."""
    import hashlib
    from pathlib import Path

    from spudflow.core.split_files import mirrored_file

    found = {}
    for url in sorted((config.get("fetch") or {}).get("sha256") or {}):
        local = mirrored_file(mirror, url)
        if local is not None and Path(local).is_file():
            found[url] = hashlib.sha256(Path(local).read_bytes()).hexdigest()
    return found
