"""`spudflow rehearse CONFIG --workdir DIR`: the config's whole run, offline, on tiny stand-ins."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.output_paths import output_dir

REPO = Path(__file__).resolve().parents[3]
# Repository resources a rehearsal reads as they are; the rest (downloads, the user's corpora
# and CoLA files) are the rehearsal's own.
OWN_RESOURCES = ("downloads", "corpora", "cola")
MIN_LAYERS = 2


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "rehearse", help="run a config offline on tiny stand-in models and data",
        description="Rehearse CONFIG before spending GPU hours: every hub model becomes a tiny "
        "random model of its family in an offline hub cache (DIR/hub), every treebank URL (and "
        "dataset file URL) is answered from a mirror of stand-ins (DIR/mirror, config "
        "fetch.mirror), the "
        "files a user supplies get labelled stand-ins, and the real Snakefile runs in DIR "
        "(DIR/results) with HF_HUB_OFFLINE=1. Writes DIR/rehearsal.md.")
    p.add_argument("config", type=Path, help="a config file (e.g. config/papers/spud.yaml)")
    p.add_argument("--workdir", type=output_dir, required=True, help="the rehearsal's folder")
    p.add_argument("--size", choices=("small", "full"), default="small",
                   help="small: sampled treebanks and datasets (minutes); full: the config's "
                   "own sizes, stand-in treebanks grown to the real ones' sentence counts")
    p.add_argument("--cores", type=int, default=2, help="Snakemake --cores (default: 2)")
    p.add_argument("--family", action="append", default=[], metavar="HUB_ID=FAMILY",
                   help="the family of a hub id the table does not know (spudflow.rehearse."
                   "families); repeatable")
    p.add_argument("--snakemake-args", default="", help="more Snakemake options, e.g. "
                   "'--dry-run' or '--until ingest'")
    p.set_defaults(handler=run_rehearse)


@dataclass(frozen=True)
class HubStandIn:
    hub_id: str
    family: object
    how: str
    users: tuple[str, ...]
    layers: int
    commit: str
    revisions: tuple[str, ...] = ()  # each resolves to `commit` in the hub cache


@dataclass(frozen=True)
class RunResult:
    returncode: int
    wall_s: float
    log: str

    @property
    def nothing_to_do(self) -> bool:
        return "Nothing to be done" in self.log


def _families(pairs: list[str]) -> dict[str, str]:
    """--family HUB_ID=FAMILY pairs, checked before the rehearsal writes anything."""
    from spudflow.rehearse.families import FAMILIES

    families = {}
    for pair in pairs:
        hub_id, sep, family = pair.partition("=")
        if not sep:
            raise InputError("--family", None, f"{pair!r} is not HUB_ID=FAMILY")
        if family not in FAMILIES:
            raise InputError("--family", None, f"unknown family {family!r} for {hub_id} "
                             f"(known: {', '.join(sorted(FAMILIES))})")
        families[hub_id] = family
    return families


def prepare_workdir(workdir: Path) -> None:
    """DIR as a working directory of the pipeline: the repository's config/ (templates,
    lexicons) and vendored resources linked in, the rest the rehearsal's own."""
    (workdir / "resources").mkdir(parents=True, exist_ok=True)
    links = [(workdir / "config", REPO / "config")] + [
        (workdir / "resources" / e.name, e) for e in sorted((REPO / "resources").iterdir())
        if e.name not in OWN_RESOURCES]
    for link, target in links:
        if not link.is_symlink() and not link.exists():
            link.symlink_to(target)


def stand_in_layers(probe_layers: int) -> int:
    """A stand-in's depth: the most layers the config's probe reads (they must exist), else
    MIN_LAYERS. Not the real model's: scoring reads no layer, and a scoring job of a 12-layer
    stand-in costs six times one of 2 layers (PPPL on 2 cores: minutes). Even, for GPT-Neo's
    alternating attention."""
    return max(MIN_LAYERS, probe_layers + probe_layers % 2)


def builder_version() -> str:
    """SHA-256 of the code that builds a stand-in (its families, tokenizer and model): a
    stand-in built by other code is built again, never reused."""
    digest = hashlib.sha256()
    for name in ("families.py", "tiny_models.py"):
        digest.update(hashlib.sha256((Path(__file__).parent / name).read_bytes()).digest())
    return digest.hexdigest()


def build_hub(config: dict, workdir: Path, families: dict[str, str]) -> list[HubStandIn]:
    """A tiny model per hub id in DIR/hub; an unchanged one (same family, layers, text and
    builder code) is left alone so that a second rehearsal reruns nothing."""
    from spudflow.core.hub_cache import register_revision
    from spudflow.rehearse.families import choose_family
    from spudflow.rehearse.overlay import hub_models
    from spudflow.rehearse.standins import TEXT_SENTENCES, config_languages, language_text
    from spudflow.rehearse.tiny_models import add_tiny_model

    models = hub_models(config)
    if not models:
        return []
    texts = [t for lang in config_languages(config)
             for t in language_text(REPO, lang)[:TEXT_SENTENCES]]
    text_sha = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    manifest_path = workdir / "rehearsal" / "hub.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    builder = builder_version()
    built = []
    for model in models:
        kind = model.kind or "masked"
        # --family names: checked by _families before the rehearsal wrote anything
        choice = choose_family(model.hub_id, kind, families.get(model.hub_id))
        family = dataclasses.replace(choice.family, layers=stand_in_layers(model.layers))
        how = choice.how if model.kind or choice.how != "generic for kind masked (unknown id)" \
            else "generic BERT (unknown id of a probe model)"
        key = {"family": family.name, "layers": family.layers, "text": text_sha,
               "builder": builder}
        known = manifest.get(model.hub_id, {})
        snapshot = workdir / "hub" / ("models--" + model.hub_id.replace("/", "--")) / \
            "snapshots" / known.get("commit", "-")
        if {k: known.get(k) for k in key} == key and snapshot.is_dir():
            commit = known["commit"]
        else:
            seed = int(hashlib.sha256(model.hub_id.encode()).hexdigest()[:8], 16)
            commit = add_tiny_model(workdir / "hub", model.hub_id, family, texts, seed)
            manifest[model.hub_id] = {**key, "commit": commit}
        # the config's pinned revisions (a paper's commits) resolve to the stand-in too, offline
        for revision in model.revisions:
            register_revision(workdir / "hub", model.hub_id, commit, revision)
        pinned = f", also as revision {', '.join(model.revisions)}" if model.revisions else ""
        print(f"rehearse: {model.hub_id}: tiny {family.name} ({how}) at {commit[:12]}{pinned}",
              file=sys.stderr)
        built.append(HubStandIn(model.hub_id, family, how, model.users, model.layers, commit,
                                model.revisions))
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return built


def offline_hub_env(workdir: Path) -> dict[str, str]:
    """What the rehearsal's jobs have in their environment beside the caller's: the hub cache of
    stand-ins, offline."""
    return {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(workdir / "hub"),
            "TRANSFORMERS_OFFLINE": "1"}


def jobs_search_path() -> str:
    """PATH for Snakemake and its jobs: `snakemake` and `spudflow` of this interpreter first,
    activated or not (.venv/bin/...)."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def run_snakemake(config_path: Path, overlay_path: Path, workdir: Path, cores: int,
                  extra: str, size: str) -> RunResult:
    env = dict(os.environ, **offline_hub_env(workdir), PATH=jobs_search_path())
    # A small rehearsal's models are tiny and keep one core busy at most: one thread a job runs
    # `cores` jobs side by side where the rules' 2-4 threads would run them one at a time.
    # (--snakemake-args comes after, so a user's --max-threads wins.)
    threads = ["--max-threads", "1"] if size == "small" else []
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
               "--directory", str(workdir), "--configfile", str(config_path), str(overlay_path),
               "--cores", str(cores), *threads, *extra.split()]
    started = time.perf_counter()
    log_path = workdir / "rehearsal" / "snakemake.log"
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        for line in process.stdout:
            sys.stderr.write(line)
            log.write(line)
        returncode = process.wait()
    return RunResult(returncode, time.perf_counter() - started,
                     log_path.read_text(encoding="utf-8"))


def run_rehearse(args: argparse.Namespace) -> int:
    import yaml

    from spudflow.core.config import duplicate_keys
    from spudflow.core.workflow_paths import local_workflow_file, resolve_workflow_paths
    from spudflow.rehearse.conllu_blocks import write_if_changed
    from spudflow.rehearse.mirror import fill_mirror
    from spudflow.rehearse.overlay import build_overlay
    from spudflow.rehearse.pairs_downloads import mirror_pairs_files
    from spudflow.rehearse.report import write_report
    from spudflow.rehearse.standins import check_user_files, make_user_files

    config_path = args.config.resolve()
    if not config_path.is_file():
        raise InputError(args.config, None, "no such config file")
    try:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        line = getattr(getattr(error, "problem_mark", None), "line", None)
        raise InputError(args.config, None if line is None else line + 1,
                         f"not a YAML config ({' '.join(str(error).split())[:200]})") from None
    if not isinstance(config, dict) or not isinstance(config.get("treebanks"), dict):
        raise InputError(args.config, None, "not a spudflow config (no treebanks: mapping)")
    for line, key, first in duplicate_keys(config_path)[:1]:  # YAML kept the last silently
        raise InputError(args.config, line, f"config key {key}: given twice (first on line "
                         f"{first}); only the last would count")
    families = _families(args.family)
    # the config check the Snakefile makes, before the rehearsal's folder is made
    from spudflow.core.config import config_errors

    errors = config_errors(config, REPO / "config" / "schema.yaml")
    if errors:
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise InputError(args.config, None, f"{errors[0]}{more}")
    try:  # the config's `workflow:` files, as paths of this repository (stand-ins avoid them)
        config = resolve_workflow_paths(config, local_workflow_file(REPO, REPO))
    except ValueError as error:
        raise InputError(args.config, None, str(error)) from None
    try:  # every check before the first file is written
        check_user_files(config)
    except ValueError as error:
        raise InputError(args.config, None, str(error)) from None
    workdir = args.workdir.resolve()
    prepare_workdir(workdir)
    mirror, stand_ins, taken = fill_mirror(config, REPO, workdir / "mirror", args.size)
    try:
        user_files = make_user_files(config, REPO, workdir, taken, args.size)
        # Dataset files given by URL are answered from the mirror as treebanks are.
        pairs_mirror, downloads = mirror_pairs_files(config, REPO, workdir / "mirror", taken,
                                                     args.size)
    except ValueError as error:
        raise InputError(args.config, None, str(error)) from None
    mirror = {**mirror, **pairs_mirror}
    user_files += downloads
    hub = build_hub(config, workdir, families)
    overlay = build_overlay(config, mirror, args.size)
    overlay_path = workdir / "rehearsal" / "overlay.yaml"
    write_if_changed(overlay_path, yaml.safe_dump(overlay, sort_keys=True, allow_unicode=True))
    run = run_snakemake(config_path, overlay_path, workdir, args.cores, args.snakemake_args,
                        args.size)
    write_report(workdir / "rehearsal.md", repo=REPO, config_path=config_path, size=args.size,
                 run=run, hub=hub, stand_ins=stand_ins, user_files=user_files, overlay=overlay)
    print(f"rehearse: {workdir / 'rehearsal.md'}", file=sys.stderr)
    return run.returncode
