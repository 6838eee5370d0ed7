"""Dequantized GGUF weights, kept so that a model is dequantized once, not on every load.

transformers reads a GGUF file by dequantizing every tensor in numpy (SmolLM2-135M's Q4_1 file:
20-37 s of each scoring job on two cores). The first job that loads a GGUF with a score cache
(`score --cache DIR`) saves the loaded model and tokenizer with save_pretrained under

    DIR/gguf-weights/<key>/            config.json, model.safetensors, tokenizer files, ...
    DIR/gguf-weights/<key>/entry.json  what the key hashes, and the SHA-256 of every file above
    DIR/gguf-weights/<key>/names/      one marker per model name that used the entry (prune)

and later jobs load those safetensors instead, which gives the same tensors bit for bit.

The key hashes everything that makes the loaded weights: the contents (and names) of the GGUF
and of the tokenizer files beside it that transformers reads (model_files.loader_files, hashed
through the score cache's file-hash memo), the kind (which Auto class), the dtype, whether
remote code is allowed, the versions of torch, transformers, tokenizers, gguf, safetensors and
numpy, and FORMAT (raise it when the way this module loads or saves changes). Any of them
changed is a miss: stale weights are never served.

An entry is written in a `.tmp-*` folder beside the entries, synced and renamed into place
whole: a killed job leaves only a `.tmp-*` folder (prune removes those older than an hour), and
of two jobs that fill the same entry at once the second rename fails and that job keeps using
its own loaded model. Every file's SHA-256 is checked on every load (about 0.3 s for SmolLM2's
540 MB in float32): a file that does not match (or is missing, or one not listed) makes the
entry a miss, and it is removed. Nothing here is a reason for a job to fail: an entry that
cannot be written is a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.logs import get_logger
from spudflow.core.model_source import ModelSource
from spudflow.scoring.cache_files import TMP_PREFIX, fsync_dir, write_atomically
from spudflow.scoring.file_hashes import MEMO_FILE, FileHashes, file_sha256

log = get_logger("spudflow.scoring")

FOLDER = "gguf-weights"
ENTRY_FILE = "entry.json"
NAMES_DIR = "names"
FORMAT = 1
# Beyond cache_setting.library_versions: the libraries that write and read the saved tensors
# and that gguf dequantizes with.
MORE_LIBRARIES = ("safetensors", "numpy")


@dataclass(frozen=True)
class GgufCache:
    """Where dequantized GGUF weights are kept: the score cache folder `root`; `name`: the
    model's name in the tables, by which `cache prune --keep-models` keeps an entry."""
    root: Path
    name: str

    def entry(self, source: ModelSource, kind: str, dtype, trust_remote_code: bool
              ) -> Entry | None:
        """The entry of a GGUF source loaded as `kind` in `dtype`; None for a source whose
        files cannot be found before loading (a hub GGUF not yet downloaded)."""
        if ggml_kernels():
            log.info("gguf cache: off, the `kernels` package is installed: transformers may "
                     "keep the GGUF's weights packed or graft ggml's layers, which a dense "
                     "copy would not reproduce")
            return None
        fields = key_fields(self.root, source, kind, dtype, trust_remote_code)
        if fields is None:
            return None
        return Entry(Path(self.root) / FOLDER, key_of(fields), fields, self.name)


def ggml_kernels() -> bool:
    """Whether transformers can use ggml's kernels: then a GGUF model may compute with packed
    weights and grafted layers, not as the plain dense model an entry holds."""
    from transformers.utils.import_utils import is_kernels_available

    return is_kernels_available()


def key_fields(root: Path, source: ModelSource, kind: str, dtype, trust_remote_code: bool
               ) -> dict | None:
    from spudflow.scoring.cache_setting import _version, files_fingerprint, library_versions
    from spudflow.scoring.cache_setting import model_files as find_model_files

    found = find_model_files(source.location, source.gguf_file, source.revision)
    if found is None:
        return None
    fingerprint = files_fingerprint(found.root, found.files,
                                    FileHashes(Path(root) / MEMO_FILE))
    return {"format": FORMAT, "source": found.source,
            "files": [p.relative_to(found.root).as_posix() for p in found.files],
            "fingerprint": fingerprint, "kind": kind,
            "dtype": str(dtype).removeprefix("torch."),
            "trust_remote_code": trust_remote_code,
            "libraries": [*library_versions(True),
                          *(f"{name} {_version(name)}" for name in MORE_LIBRARIES)]}


def key_of(fields: dict) -> str:
    """The entry's folder name: the hash of its fields but the source (a moved model hits)."""
    state = {k: v for k, v in fields.items() if k != "source"}
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:32]


@dataclass
class Entry:
    folder: Path   # DIR/gguf-weights
    key: str
    fields: dict
    name: str
    hit: bool = False

    @property
    def path(self) -> Path:
        return self.folder / self.key

    def usable(self) -> bool:
        """Whether the entry is there, whole and unchanged (each file's SHA-256 checked); a
        damaged one is removed with a warning."""
        if not (self.path / ENTRY_FILE).is_file():
            return False
        problem = entry_problem(self.path)
        if problem is None:
            self.hit = True
            return True
        log.warning("gguf cache: %s %s; removed, the GGUF is dequantized again", self.path,
                    problem)
        _discard(self.path)
        return False

    def keep(self, tokenizer, model, location: str) -> None:
        """After loading: a hit names the model and tokenizer by the GGUF's folder as an
        uncached load does (messages name it, not the cache) and marks the entry used by this
        job's model name; a miss stores them."""
        if not self.hit:
            self.store(tokenizer, model)
            return
        model.name_or_path = location
        tokenizer.name_or_path = location
        log.info("gguf cache: dequantized weights read from %s", self.path)
        self.register()

    def register(self) -> None:
        """A marker for this job's model name (prune keeps the entry for every name that
        used it; each name its own file, so concurrent jobs lose none)."""
        digest = hashlib.sha256(self.name.encode()).hexdigest()[:24]
        marker = self.path / NAMES_DIR / f"{digest}.json"
        if marker.is_file():
            return
        try:
            marker.parent.mkdir(exist_ok=True)
            write_atomically(marker, json.dumps({"name": self.name}).encode() + b"\n",
                             self.path)
        except OSError as error:
            log.warning("gguf cache: cannot mark %s as used by %s (%s)", self.path, self.name,
                        error)

    def store(self, tokenizer, model) -> None:
        """Save the loaded tokenizer and model as this entry: whole or not at all."""
        from spudflow.scoring.cache_marker import mark

        quantizer = getattr(model, "hf_quantizer", None)
        if quantizer is not None and getattr(quantizer, "packed_modules", None):
            log.info("gguf cache: %s keeps packed GGUF weights: not kept", self.name)
            return
        tmp = self.folder / f"{TMP_PREFIX}{uuid.uuid4().hex}"
        try:
            if quantizer is not None:  # dense weights, which save_pretrained refuses while
                quantizer.remove_quantization_config(model)  # the GGUF quantizer is attached
            mark(self.folder.parent)
            self.folder.mkdir(exist_ok=True)
            tmp.mkdir()
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            files = {p.name: file_sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
            text = json.dumps({**self.fields, "key": self.key, "saved": files}, indent=1,
                              sort_keys=True)
            (tmp / ENTRY_FILE).write_text(text + "\n", encoding="utf-8")
            for path in tmp.iterdir():
                with path.open("rb") as handle:
                    os.fsync(handle.fileno())
            fsync_dir(tmp)
            try:
                os.rename(tmp, self.path)
            except OSError:
                if not self.path.is_dir():
                    raise
                log.info("gguf cache: another job stored %s meanwhile", self.path)
            else:
                fsync_dir(self.folder)
                log.info("gguf cache: dequantized weights kept in %s", self.path)
            self.register()
        except OSError as error:
            log.warning("gguf cache: cannot keep the dequantized weights in %s (%s); the next "
                        "job dequantizes the GGUF again", self.folder, error)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def entry_problem(path: Path) -> str | None:
    """What is wrong with the entry folder PATH (None: nothing): unreadable entry.json, a file
    missing, changed or not listed."""
    try:
        saved = json.loads((path / ENTRY_FILE).read_text(encoding="utf-8"))["saved"]
        if not isinstance(saved, dict):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        return "has no readable entry.json"
    try:
        present = {p.name for p in path.iterdir() if p.is_file()
                   and p.name != ENTRY_FILE and not p.name.startswith(TMP_PREFIX)}
    except OSError as error:
        return f"cannot be listed ({error})"
    if present != set(saved):
        return f"holds other files than it was saved with ({sorted(present ^ set(saved))})"
    for name, sha256 in saved.items():
        try:
            if file_sha256(path / name) != sha256:
                return f"has {name} changed since it was saved (its SHA-256 differs)"
        except OSError as error:
            return f"cannot read {name} ({error})"
    return None


def _discard(path: Path) -> None:
    """Remove an entry folder: renamed out of the way first, so no job loads it half removed."""
    gone = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}"
    with contextlib.suppress(OSError):
        os.rename(path, gone)
        shutil.rmtree(gone, ignore_errors=True)


def entry_names(path: Path) -> set[str]:
    names = set()
    for marker in (path / NAMES_DIR).glob("*.json"):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            name = json.loads(marker.read_text(encoding="utf-8")).get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def prune_entries(root: Path, keep_models, stale_seconds: float) -> list[str]:
    """`cache prune`'s part for DIR/gguf-weights: remove every entry none of whose model names
    (nor its key) is kept, and `.tmp-*` leftovers older than `stale_seconds` (a killed job's).
    Returns the removed keys."""
    import time

    folder = Path(root) / FOLDER
    if not folder.is_dir() or folder.is_symlink():
        return []
    removed = []
    for path in sorted(folder.iterdir()):
        if path.is_symlink():
            continue
        if path.name.startswith(TMP_PREFIX):
            if time.time() - path.lstat().st_mtime > stale_seconds:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()
            continue
        if path.is_dir() and path.name not in keep_models and \
                not entry_names(path) & set(keep_models):
            _discard(path)
            removed.append(path.name)
    return removed


def verify_entries(root: Path) -> list[Path]:
    """`cache verify`'s part: remove (and return) the entries whose files do not match what
    they were saved with; loads would skip them anyway."""
    folder = Path(root) / FOLDER
    if not folder.is_dir() or folder.is_symlink():
        return []
    removed = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(TMP_PREFIX) or path.is_symlink() or not path.is_dir():
            continue
        problem = entry_problem(path)
        if problem is not None:
            log.warning("gguf cache: %s %s; removed", path, problem)
            _discard(path)
            removed.append(path)
    return removed
