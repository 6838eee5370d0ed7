"""The model setting that keys the score cache: everything that can change a token's log-prob.

A setting folder's id hashes:
- the content of the files the loader reads (scoring/model_files.py): configs, weights,
  tokenizer files, the model's own code; a `.gguf` with its tokenizer side files; the n-gram
  file. A hub model is the snapshot transformers loaded from huggingface_hub's cache: the one
  its `revision` (branch, tag or commit; `main` when none) resolves to, so two revisions share
  entries exactly when they are the same files;
- kind, dtype actually loaded, device class (cpu | cuda) and, off CPU, the device's name;
- the attention implementation in use and --trust-remote-code;
- the versions of torch, transformers and tokenizers (and gguf for a GGUF model);
- the spudflow code that scores: `code_version(package, "scoring")`, the hash the rules'
  `params.code` uses, so any edit of the scoring stage or core invalidates;
- for a slow tokenizer (no fast version, e.g. BertJapaneseTokenizer): its class and the
  versions of the word splitters and dictionaries it may call (MeCab's, Sudachi's, ...), which
  choose its ids and are not files of the model; a fast tokenizer's setting has no such field,
  so a slow and a fast load of the same files never share entries;
- for an n-gram model, whether `</s>` is scored too (`--measures lau`): each item then has one
  more token score.
The n-gram model needs only its file, that choice and the code hash. The model's name, where
its files were and which files were hashed are shown in model.json, not hashed (a moved model
still hits).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from spudflow.core.logs import get_logger
from spudflow.scoring.file_hashes import FileHashes
from spudflow.scoring.model_files import loader_files

log = get_logger("spudflow.scoring")

LIBRARIES = ("torch", "transformers", "tokenizers")
# What a slow tokenizer may call to split words (BertJapaneseTokenizer: MeCab through fugashi
# with its dictionary, Sudachi with its, Juman++ through rhoknp) or into pieces: outside the
# model's files, yet they choose its tokens.
SLOW_TOKENIZER_LIBRARIES = ("fugashi", "mecab-python3", "ipadic", "unidic-lite", "unidic",
                            "sudachipy", "sudachidict-core", "sudachidict-small",
                            "sudachidict-full", "rhoknp", "sentencepiece")
# Shown in model.json and `cache stats`, left out of the id.
NOT_HASHED = ("name", "source", "files")


@dataclass(frozen=True)
class Setting:
    """A model setting whose scores the cache may share between jobs."""
    name: str                  # the model's name in the tables
    source: str                # a path, or `hub ORG/NAME@commit` (` (revision R)` when named)
    files: tuple[str, ...]     # the hashed files, relative to the model folder
    fingerprint: str           # SHA-256 over those files' names and contents
    kind: str
    dtype: str
    device_class: str          # cpu | cuda: kernels differ between them
    device_name: str           # the GPU model off CPU ("" on CPU): kernels differ between them
    attn_implementation: str   # eager | sdpa | flash_attention_2 … ("" for n-grams)
    trust_remote_code: bool
    libraries: tuple[str, ...]  # "torch 2.6.0", …
    code: str                  # code_version(spudflow package, "scoring")
    sentence_end: bool = False  # an n-gram model also scores `</s>` (--measures lau)
    tokenizer: str = ""        # a slow tokenizer: its class and libraries ("": a fast one)

    def id(self) -> str:
        state = {k: v for k, v in asdict(self).items() if k not in NOT_HASHED}
        if not state["tokenizer"]:  # a fast tokenizer's setting: the fields it always had
            del state["tokenizer"]
        return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:24]


def files_fingerprint(root: Path, files: list[Path], hashes: FileHashes) -> str:
    """SHA-256 over the names (relative to root) and content hashes of files."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashes.sha256(path).encode() + b"\0")
    return digest.hexdigest()


def scoring_code_version() -> str:
    """The hash the rules put in `params.code` for the scoring stage, of the imported package."""
    import spudflow
    from spudflow.core.rules_support import code_version

    return code_version(Path(spudflow.__file__).resolve().parent, "scoring")


def library_versions(gguf: bool) -> tuple[str, ...]:
    names = (*LIBRARIES, "gguf") if gguf else LIBRARIES
    return tuple(f"{name} {_version(name)}" for name in names)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


@dataclass(frozen=True)
class ModelFiles:
    source: str         # a path, or `hub ORG/NAME@commit` (` (revision R)` when named)
    root: Path          # the folder the files are named relative to
    files: list[Path]   # the files the loader reads
    gguf: bool


def model_files(model: str, gguf_file: str | None,
                revision: str | None = None) -> ModelFiles | None:
    """The files of a model as loaded (a hub id: of the snapshot `revision` resolves to); None
    for a hub id missing from huggingface_hub's cache (logged)."""
    from spudflow.core.model_source import resolve_source

    source = resolve_source(model, gguf_file, revision)
    gguf = source.gguf_file is not None
    if source.local:
        location = Path(source.location)
        if location.is_file():  # an n-gram model
            return ModelFiles(str(location), location.parent, [location], gguf)
        return ModelFiles(source.describe(), location,
                          loader_files(location, source.gguf_file), gguf)
    snapshot = hub_snapshot(source.location, revision)
    if snapshot is None:
        return None
    named = f" (revision {revision})" if revision else ""
    log.info("cache: hub model %s at commit %s%s", source.location, snapshot.name, named)
    return ModelFiles(f"hub {source.location}@{snapshot.name}{named}", snapshot,
                      loader_files(snapshot, source.gguf_file), gguf)


def hub_snapshot(repo_id: str, revision: str | None = None) -> Path | None:
    """The snapshot folder `revision` (None: `main`) points at in huggingface_hub's cache (what
    transformers just loaded), or None with a warning."""
    from spudflow.core.hub_cache import loaded_snapshot

    try:
        return loaded_snapshot(repo_id, revision)
    except LookupError as error:
        log.warning("cache: off, hub model %s not found in the hub cache to fingerprint (%s)",
                    repo_id, error)
        return None


def build_setting(scorer, *, model: str, gguf_file: str | None, kind: str, name: str,
                  trust_remote_code: bool, hashes: FileHashes,
                  sentence_end: bool = False, revision: str | None = None) -> Setting | None:
    """The setting of a loaded scorer, or None when its files cannot be found."""
    found = model_files(model, gguf_file, revision)
    if found is None:
        return None
    fingerprint = files_fingerprint(found.root, found.files, hashes)
    names = tuple(p.relative_to(found.root).as_posix() for p in found.files)
    if kind == "ngram":
        return Setting(name, found.source, names, fingerprint, kind, "float64", "cpu", "", "",
                       False, (), scoring_code_version(), sentence_end)
    return Setting(name, found.source, names, fingerprint, kind,
                   str(scorer.model.dtype).removeprefix("torch."), scorer.device.type,
                   device_name(scorer.device), attention_implementation(scorer.model),
                   trust_remote_code, library_versions(found.gguf), scoring_code_version(),
                   tokenizer=slow_tokenizer(scorer.tokenizer))


def slow_tokenizer(tokenizer) -> str:
    """"" for a fast tokenizer; else its class and SLOW_TOKENIZER_LIBRARIES' versions."""
    if getattr(tokenizer, "is_fast", False):
        return ""
    versions = ", ".join(f"{name} {_version(name)}" for name in SLOW_TOKENIZER_LIBRARIES)
    return f"slow {type(tokenizer).__name__} ({versions})"


def device_name(device) -> str:
    if device.type != "cuda":
        return ""
    import torch

    return torch.cuda.get_device_name(device)


def attention_implementation(model) -> str:
    config = model.config
    return str(getattr(config, "_attn_implementation", None) or
               getattr(config, "attn_implementation", None) or "")

