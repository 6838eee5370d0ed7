"""The keys of a scoring job: what its `--shard` jobs share, and what its finished blocks may be
reused under when it is started again."""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from spudflow.core.errors import InputError


def job_content_key(args: argparse.Namespace, name: str, methods: list[str]) -> str:
    """Hash of the job's input, model and settings, from contents and names only (no model
    files' modification times, no shard): the key the `--shard` jobs of one job share and write
    into their tables, so those tables depend only on contents."""
    return _hash(_job_state(args, name, methods))


def resume_key(args: argparse.Namespace, name: str, methods: list[str]) -> str:
    """Hash of everything a finished block depends on: the job content key's state plus the
    model files' sizes and modification times, the shard and the scoring code, so that a
    resumed job reuses only blocks made from the same input, model, settings and code."""
    from spudflow.scoring.cache_setting import scoring_code_version

    state = _job_state(args, name, methods)
    state["model_files"] = model_file_stats(args.model)
    state["code"] = scoring_code_version()
    if args.shard:
        from spudflow.core.shards import parse_shard

        state["shard"] = str(parse_shard(args.shard))
    return _hash(state)


def _job_state(args: argparse.Namespace, name: str, methods: list[str]) -> dict:
    from spudflow import __version__

    def file_hash(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else str(path)

    state = {"input": file_hash(args.input), "model": args.model, "name": name,
             "gguf": args.gguf_file, "kind": args.kind, "methods": methods, "dtype": args.dtype,
             "lang": args.lang, "languages": args.languages,
             "sample": [args.sample, args.sample_seed], "block_size": args.block_size,
             "unigram": [file_hash(p) for p in args.unigram], "measures": args.measures,
             "version": __version__}
    # only when given: a job without one keeps the key (and its finished blocks) it had
    if args.revision is not None:
        state["revision"] = args.revision
    return state


def _hash(state: dict) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:16]


def model_file_stats(model: str) -> list:
    """Size and modification time of every file of a local model (or `pypi:` package), so that
    blocks of an interrupted job are not reused after the model was rebuilt."""
    from spudflow.core.model_source import PACKAGE_PREFIX, package_directory

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
