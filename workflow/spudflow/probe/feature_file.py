"""The feature file: one vector per syntactic word and layer, with an index by sentence.

A safetensors file (docs/probe.md) holding
- `layer{L}`: float16 (n_words, hidden) for every extracted layer L,
- `sent_index`: int64 (n_sentences,) the treebank sentences it covers, in order,
- `word_offsets`: int64 (n_sentences + 1,) sentence i's words are rows offsets[i]:offsets[i+1],
and string metadata (model, baseline, layers, sentences left out as too long). The file of a
training or selection split the probe caps (`probe features --max-sentences`) holds only the
probe's sample and says so: CAP_KEYS, the cap, its seed, the minimum words and how many
sentences were left out as shorter (those too long are in `too_long`, as in any file), and
- `eligible_index`: int64 the sentences the sample was drawn from (what `probe train` compares
  its eval sets with: none may be the training set).

One feature job writes the files of every baseline and eval set of a split (the original and
its nonce versions) into one directory: `{baseline}/{eval set}.safetensors`
(`lm/orig.safetensors`, `MR/spud/seed1.safetensors`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from spudflow.core.atomic import atomic_outputs
from spudflow.core.errors import InputError
from spudflow.core.input_files import require_file

FORMAT = "spudflow-probe-features/1"
CAP_KEYS = ("max_sentences", "max_sentences_seed", "min_words", "n_short")
ELIGIBLE = "eligible_index"
METADATA_KEY = "spudflow"
SUFFIX = ".safetensors"


def eval_set_file(directory: str | Path, eval_set: str) -> str:
    """The file of one eval set (`orig`, `spud/seed1`) in a baseline's feature folder."""
    return f"{directory}/{eval_set}{SUFFIX}"


def eval_sets_in(directory: Path) -> list[str]:
    """The files a feature directory holds, without the suffix, sorted: eval sets in a
    baseline's folder, `{baseline}/{eval set}` in a job's directory."""
    return sorted(p.relative_to(directory).as_posix().removesuffix(SUFFIX)
                  for p in directory.rglob(f"*{SUFFIX}") if not p.name.startswith("."))


@dataclass
class Features:
    layers: dict[int, np.ndarray]          # layer -> float16 (n_words, hidden)
    sent_index: np.ndarray                 # int64 (n_sentences,)
    word_offsets: np.ndarray               # int64 (n_sentences + 1,)
    too_long: list[int] = field(default_factory=list)  # sent_index values left out
    info: dict[str, str] = field(default_factory=dict)  # model, baseline, n_layers, ...
    eligible: np.ndarray | None = None     # a capped file's: what its sample was drawn from

    def sentence(self, layer: int, i: int) -> np.ndarray:
        return self.layers[layer][self.word_offsets[i]:self.word_offsets[i + 1]]


def write_features(path: str | Path, features: Features) -> None:
    tensors = {f"layer{layer}": np.ascontiguousarray(values, dtype=np.float16)
               for layer, values in sorted(features.layers.items())}
    tensors["sent_index"] = features.sent_index.astype(np.int64)
    tensors["word_offsets"] = features.word_offsets.astype(np.int64)
    if features.eligible is not None:
        tensors[ELIGIBLE] = features.eligible.astype(np.int64)
    metadata = {**features.info, "format": FORMAT,
                "layers": ",".join(map(str, sorted(features.layers))),
                "too_long": json.dumps(sorted(features.too_long))}
    # One metadata key: safetensors writes several keys in hash order, which would make the
    # bytes of equal files differ.
    with atomic_outputs() as out:
        save_file(tensors, str(out.path(path)),
                  metadata={METADATA_KEY: json.dumps(metadata, sort_keys=True)})


def _metadata(path: Path) -> dict:
    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = handle.metadata() or {}
    except SafetensorError as error:
        raise InputError(path, None, f"not a probe feature file ({FORMAT}): {error}") from None
    try:
        metadata = json.loads(metadata[METADATA_KEY])
    except (KeyError, ValueError):
        metadata = {}
    if metadata.get("format") != FORMAT:
        raise InputError(path, None, f"not a probe feature file ({FORMAT})")
    return metadata


def too_long_of(path: str | Path) -> list[int]:
    """The sent_index values a feature file left out as too long (read from its metadata)."""
    return json.loads(_metadata(require_file(path, "a probe feature file"))["too_long"])


def is_feature_folder(directory: Path) -> bool:
    """A feature job's folder: probe feature files and nothing else (but hidden files)."""
    files = [p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return bool(files) and all(p.suffix == SUFFIX and _is_feature_file(p) for p in files)


def _is_feature_file(path: Path) -> bool:
    try:
        _metadata(path)
    except InputError:
        return False
    return True


def read_features(path: str | Path, layers: list[int] | None = None) -> Features:
    """The file's index and the requested layers (all when None); a layer it lacks is bad
    input."""
    path = require_file(path, "a probe feature file")
    metadata = _metadata(path)
    available = [int(v) for v in metadata["layers"].split(",")]
    wanted = available if layers is None else layers
    missing = [layer for layer in wanted if layer not in available]
    if missing:
        raise InputError(path, None, f"has no layer {missing[0]} (layers {available})")
    # Only the wanted layers are read: a file of a model with an `auto` layer holds every layer.
    with safe_open(str(path), framework="numpy") as f:
        arrays = {layer: f.get_tensor(f"layer{layer}") for layer in wanted}
        sent_index, word_offsets = f.get_tensor("sent_index"), f.get_tensor("word_offsets")
        eligible = f.get_tensor(ELIGIBLE) if ELIGIBLE in f.keys() else None  # noqa: SIM118
    info = {k: v for k, v in metadata.items() if k not in ("format", "layers", "too_long")}
    return Features(arrays, sent_index, word_offsets, json.loads(metadata["too_long"]), info,
                    eligible)


@dataclass(frozen=True)
class FileCap:
    """A capped file's sample: at most `max_sentences` of its split's sentences with at least
    `min_words` words (`eligible`), drawn with `seed`; `n_short` shorter ones were left out and
    counted."""
    max_sentences: int
    seed: int
    min_words: int
    n_short: int
    eligible: np.ndarray = field(compare=False)


def cap_of(features: Features, path: str | Path) -> FileCap | None:
    """The cap the sentences of the feature file at `path` were drawn under; None: every
    sentence."""
    if CAP_KEYS[0] not in features.info:
        return None
    if features.eligible is None or any(key not in features.info for key in CAP_KEYS):
        raise InputError(path, None, f"a capped feature file needs {', '.join(CAP_KEYS)} and "
                         f"{ELIGIBLE}")
    return FileCap(*(int(features.info[key]) for key in CAP_KEYS), features.eligible)


def concatenate(parts: list[Features]) -> Features:
    """Shards in order -> one Features (the unsharded file's content)."""
    layers = sorted(parts[0].layers)
    offsets = [np.zeros(1, dtype=np.int64)]
    total = 0
    for part in parts:
        offsets.append(part.word_offsets[1:] + total)
        total += int(part.word_offsets[-1])
    info = {k: v for k, v in parts[0].info.items() if k != "shard"}
    return Features(
        {layer: np.concatenate([p.layers[layer] for p in parts]) for layer in layers},
        np.concatenate([p.sent_index for p in parts]), np.concatenate(offsets),
        # a capped split's shards each name all its too-long sentences (drawn before the cut)
        sorted({i for p in parts for i in p.too_long}), info, parts[0].eligible)
