"""Which files of a model folder the loader reads, so that the score cache hashes those and
nothing else (a README, `__pycache__` or a training log beside the weights changes no score).

A transformers folder (save_pretrained, a hub snapshot, a `pypi:` package): the configs, every
weight file of either format (and the shards their indexes name), the tokenizer files under the
names transformers looks for, sentencepiece/tiktoken vocabularies (`*.model`, `*.spm`,
`*.tiktoken`) and the model's own Python code (`*.py`, run with --trust-remote-code).

A GGUF file: transformers 5 takes the config and weights from the `.gguf` alone, but its
tokenizer reads `tokenizer_config.json` and, when present, `tokenizer.json` (which then *replaces*
the GGUF's vocabulary) and `tokenizer.model` beside it (seen with strace loading SmolLM2;
tests/test_cache_setting.py checks it on every run where the package is installed).
"""

from __future__ import annotations

import json
from pathlib import Path

CONFIG_FILES = ("config.json", "generation_config.json")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt")
VOCABULARY_SUFFIXES = (".model", ".spm", ".tiktoken")
CODE_SUFFIX = ".py"
GGUF_SIDE_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


def loader_files(folder: Path, gguf_file: str | None = None) -> list[Path]:
    """The files of `folder` the loader reads (those present), sorted by name."""
    folder = Path(folder)
    if gguf_file:
        names = {gguf_file, *GGUF_SIDE_FILES}
        return sorted((folder / n for n in names if (folder / n).is_file()), key=_name)
    present = {p.name: p for p in folder.iterdir() if p.is_file()}
    wanted = {*CONFIG_FILES, *WEIGHT_FILES, *WEIGHT_INDEXES, *TOKENIZER_FILES}
    for index in WEIGHT_INDEXES:
        if index in present:
            wanted |= _shards(present[index])
    wanted |= {n for n in present if n.endswith((*VOCABULARY_SUFFIXES, CODE_SUFFIX))}
    return sorted((present[n] for n in wanted if n in present), key=_name)


def _shards(index: Path) -> set[str]:
    """Weight shards a `*.index.json` names; an unreadable index names none (loading it fails)."""
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {})
        return {str(name) for name in weight_map.values()}
    except (OSError, ValueError, AttributeError):
        return set()


def _name(path: Path) -> str:
    return path.name
