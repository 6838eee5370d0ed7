"""The keys of a scoring job: what its `--shard` jobs share, and what its finished blocks may be
reused under when it is started again."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from spudflow import __version__
from spudflow.core.errors import InputError
from spudflow.core.model_source import PACKAGE_PREFIX, package_directory
from spudflow.core.scoring_methods import uses_l2r_words
from spudflow.core.shards import Shard
from spudflow.scoring.cache_setting import scoring_code_version


@dataclass(frozen=True)
class ScoreJob:
    """What a scoring job scores, with which model and settings: every value its keys hash
    (`spudflow score`'s options of the same names). How it runs (batch size, threads, cache,
    output folder) is not here; the device class is, because kernels differ between CPU and GPU."""
    input: Path                       # items .parquet or text file
    model: str                        # as given: a path, hub id or `pypi:PACKAGE`
    name: str                         # the model's name in the tables
    gguf_file: str | None
    revision: str | None              # of a hub model; None: the hub's main
    kind: str
    methods: tuple[str, ...]
    dtype: str                        # as loaded, `auto` resolved (n-gram: as given, unused)
    lang: str                         # of a text input
    languages: tuple[str, ...] | None  # None: every language
    sample: int | None                # groups sampled; None: all
    sample_seed: int
    block_size: int
    unigram: tuple[Path, ...]
    measures: str
    shard: Shard | None               # None: the whole job
    device_class: str = ""            # cpu | cuda ("" for an n-gram model)
    l2r_words: str = "tokenizer"      # pppl_l2r's words: tokenizer | items


def job_content_key(job: ScoreJob) -> str:
    """Hash of the job's input, model and settings, from contents and names only (no model
    files' modification times, no shard): the key the `--shard` jobs of one job share and write
    into their tables, so those tables depend only on contents."""
    return _hash(_job_state(job))


def resume_key(job: ScoreJob) -> str:
    """Hash of everything a finished block depends on: the job content key's state plus the
    model files' sizes and modification times, the shard, the device class and the scoring code,
    so that a resumed job reuses only blocks made from the same input, model, settings and code
    on the same kind of device (a job interrupted on a GPU and resumed on a CPU starts over)."""
    state = _job_state(job)
    if job.device_class:
        state["device_class"] = job.device_class
    state["model_files"] = model_file_stats(job.model)
    state["code"] = scoring_code_version()
    if job.shard is not None:
        state["shard"] = str(job.shard)
    return _hash(state)


def _job_state(job: ScoreJob) -> dict:
    def file_hash(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else str(path)

    # tuples are written as the lists the keys were first made from: the same bytes
    state = {"input": file_hash(job.input), "model": job.model, "name": job.name,
             "gguf": job.gguf_file, "kind": job.kind, "methods": job.methods, "dtype": job.dtype,
             "lang": job.lang, "languages": job.languages,
             "sample": [job.sample, job.sample_seed], "block_size": job.block_size,
             "unigram": [file_hash(p) for p in job.unigram], "measures": job.measures,
             "version": __version__}
    # only when given: a job without one keeps the key (and its finished blocks) it had
    if job.revision is not None:
        state["revision"] = job.revision
    # only for a job that scores pppl_l2r: the others' scores do not depend on it
    if uses_l2r_words(job.methods):
        state["l2r_words"] = job.l2r_words
    return state


def _hash(state: dict) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:16]


def model_file_stats(model: str) -> list:
    """Size and modification time of every file of a local model (or `pypi:` package), so that
    blocks of an interrupted job are not reused after the model was rebuilt."""
    try:
        root = (package_directory(model[len(PACKAGE_PREFIX):]) if model.startswith(PACKAGE_PREFIX)
                else Path(model))
    except InputError:
        return []
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file())
    else:  # a hub id
        files = []
    return [(p.name if p == root else p.relative_to(root).as_posix(), p.stat().st_size,
             p.stat().st_mtime_ns) for p in files]
