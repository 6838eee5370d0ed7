"""The real run's probe feature bytes, projected from a config's plan (what `rehearsal.md`
estimates and bench/bench_probe_footprint.py prints): per feature job (a model's training or
selection split), per baseline, the split's words x the layers the baseline stores x the real
model's width x bytes per word, layer and unit measured on a feature file.

A split's words: its real sentences (UD 2.10's count of a URL's file, a local file's own), as
the probes cap them, times the mean length of the sentences kept. A capped split's sample
holds only sentences of probe.min_words words or more, longer than the split's mean (1.13
times in EWT train at min_words 4), so its words are counted over those; the lengths are the
treebanks a rehearsal cuts its stand-ins from (spudflow.rehearse.mirror.source_files), or a
local split's own file."""

from __future__ import annotations

import copy
import functools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from spudflow.core.model_source import is_local_path
from spudflow.core.split_files import is_url, split_locations
from spudflow.probe.plan import ProbePlan
from spudflow.rehearse.conllu_blocks import read_blocks
from spudflow.rehearse.families import FAMILIES, KNOWN_IDS
from spudflow.rehearse.mirror import REAL_SENTENCES, source_files, unique_blocks

# Sentences of the file the bytes per unit are measured on: the index arrays are a few bytes
# per word against 2 per unit, so a few hundred sentences give the rate to 1e-4.
RATE_SENTENCES = 500
RATE_WIDTH = 768
# Sentences and syntactic words of the real treebanks a rehearsal may have no file of (UD's
# treebank statistics pages; SynTagRus's as released up to UD 2.8). A URL split of one is
# counted with its language's sentence lengths at hand scaled to its real mean: Arabic PADT's
# sentences hold 36.8 words, the Arabic PUD's it would borrow 20.8.
REAL_WORDS = {"ar_padt": (7664, 282384), "de_hdt": (189928, 3399390),
              "ru_syntagrus": (61889, 1105849)}


@dataclass
class Projection:
    """Projected bytes per probe task's treebank, what could not be counted (with why) and
    the splits whose sentence lengths are another treebank's of their language."""
    per_treebank: dict[str, float] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)
    borrowed: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(self.per_treebank.values())


def filled(config: dict, repo: Path, workdir: Path | None = None) -> dict:
    """A copy of a config with the schema's defaults and the named entries filled in and its
    `workflow:` paths made the repository's, as the Snakefile plans with it in `workdir`
    (default: `repo`; elsewhere they are absolute)."""
    from spudflow.core.config import fill_named_entries, fill_schema_defaults
    from spudflow.core.workflow_paths import local_workflow_file, resolve_workflow_paths

    config = resolve_workflow_paths(copy.deepcopy(config),
                                    local_workflow_file(repo, workdir or repo))
    fill_schema_defaults(config, repo / "config" / "schema.yaml")
    fill_named_entries(config)
    return config


def block_lengths(blocks: list[str]) -> np.ndarray:
    """Syntactic words of each sentence block (integer IDs: no multiword ranges, no empty
    nodes)."""
    return np.array([sum(1 for line in block.splitlines()
                         if not line.startswith("#") and line.split("\t", 1)[0].isdigit())
                     for block in blocks], dtype=np.int64)


@functools.cache
def language_lengths(repo: Path, lang: str) -> np.ndarray:
    """Sentence lengths of the treebanks of `lang` a stand-in is cut from."""
    return block_lengths(unique_blocks(source_files(repo, lang)))


@functools.cache
def file_lengths(path: Path) -> np.ndarray:
    return block_lengths(read_blocks(path))


def split_sentences(config: dict, repo: Path, treebank: str,
                    split: str) -> tuple[float, np.ndarray] | str:
    """(real sentences, the lengths they are drawn like) of a configured split, or why they are
    not known."""
    count, lengths = 0, []
    for location in split_locations(config, treebank, split):
        if is_url(location):
            name = location.rsplit("/", 1)[-1].removesuffix(".gz")
            if name not in REAL_SENTENCES:
                return f"{treebank}/{split}: no real sentence count of {name}"
            count += REAL_SENTENCES[name]
            lengths.append(real_like(language_lengths(repo, config["treebanks"][treebank]["lang"]),
                                     treebank_code(name)))
        else:
            path = repo / location
            if not path.is_file():
                return f"{treebank}/{split}: {location} not found"
            lengths.append(file_lengths(path))
            count += len(lengths[-1])
    joined = np.concatenate(lengths)
    if not len(joined):
        return f"{treebank}/{split}: no sentences to measure"
    return float(count), joined


def treebank_code(file_name: str) -> str:
    """`ar_padt` of `ar_padt-ud-train.conllu`."""
    return file_name.split("-ud-")[0]


def real_mean(code: str) -> float | None:
    """Syntactic words per sentence of a real treebank (REAL_WORDS), or None."""
    sentences, words = REAL_WORDS.get(code, (0, 0))
    return words / sentences if sentences else None


def real_like(lengths: np.ndarray, code: str) -> np.ndarray:
    """`lengths` scaled to the real mean of treebank `code` where it is known."""
    mean = real_mean(code)
    return lengths if mean is None or not len(lengths) else lengths * (mean / lengths.mean())


def borrowed_lengths(config: dict, repo: Path, treebank: str, split: str) -> str | None:
    """Whose sentence lengths a URL split is counted with when none of its own treebank's files
    is at hand (the SPUD preset's Arabic PADT: Arabic PUD's), or None."""
    names = [treebank_code(p.name) for p in source_files(repo,
                                                           config["treebanks"][treebank]["lang"])]
    for location in split_locations(config, treebank, split):
        code = treebank_code(location.rsplit("/", 1)[-1])
        if is_url(location) and code not in names:
            mean = real_mean(code)
            scaled = "" if mean is None else f", scaled to its real {mean:.1f} words a sentence"
            return (f"{treebank}: sentence lengths of {', '.join(sorted(set(names)))} (no "
                    f"{code} file at hand{scaled})")
    return None


def stored_words(sentences: float, lengths: np.ndarray, cap: int | None, min_words: int,
                 sample: int | None) -> float:
    """Words a feature job stores of a split of `sentences` drawn like `lengths`: every
    sentence (of probe.sample's n, if set), or a capped sample of those of min_words or more."""
    if sample is not None:
        sentences = min(sentences, sample)
    if cap is None:
        return sentences * float(lengths.mean())
    eligible = lengths[lengths >= min_words]
    if not len(eligible):
        return 0.0
    return min(cap, sentences * len(eligible) / len(lengths)) * float(eligible.mean())


def split_words(config: dict, repo: Path, found, cap: int | None) -> float | str:
    """Stored words of a task's split (a ProbeTask's train, dev or test), or why unknown."""
    known = split_sentences(config, repo, found.treebank, found.split)
    if isinstance(known, str):
        return known
    sentences, lengths = known
    if found.part is not None:
        share = config["training_shares"][f"{found.treebank}/{found.split}"]["share"]
        sentences *= share if found.part == "train" else 1 - share
    probe = config["probe"]
    return stored_words(sentences, lengths, cap, probe["min_words"], probe["sample"]["n"])


def real_width(source: str, base: Path) -> int | str:
    """The hidden width of the model a probe's source names: a hub id the rehearsal knows
    (spudflow.rehearse.families), or the config.json of a local folder (relative to `base`, the
    run's directory) or a `pypi:` package's; or why unknown."""
    from spudflow.core.errors import InputError
    from spudflow.core.model_source import PACKAGE_PREFIX, resolve_source
    from spudflow.probe.model_shape import model_shape

    if source in KNOWN_IDS:
        return FAMILIES[KNOWN_IDS[source]].hidden
    if source.startswith(PACKAGE_PREFIX) or is_local_path(source):
        try:
            location = Path(resolve_source(source if source.startswith(PACKAGE_PREFIX)
                                           else str(base / Path(source).expanduser())).location)
        except InputError as error:
            return str(error)
        shape = model_shape(str(location))
        if shape is not None:
            return shape[0]
    return f"{source}: hidden width unknown"


def stored_layers(plan: ProbePlan, treebank: str, model: str, baseline: str,
                  sweeps_stored: bool = False) -> int:
    """Layers a baseline's feature files hold (ProbePlan.probe_feature_layers); `sweeps_stored`,
    as before a layer sweep's runs extracted their splits themselves: a swept model's `lm` held
    every layer."""
    layers = set(plan.probe_feature_layers(treebank, model, baseline).split(","))
    if sweeps_stored and baseline == "lm" and plan.probe_swept(treebank, model):
        layers |= set(map(str, plan.probe_sweep_layers(model)))
    return len(layers)


def projected(config: dict, repo: Path, rate: float,
              width: Callable[[str], int | str] | None = None, *, every_sentence: bool = False,
              stored_tests: bool = False, sweeps_stored: bool = False) -> Projection:
    """Bytes per treebank of every planned feature job's files (config filled with the
    schema's defaults), for each split trained or selected on: a test split's eval sets are
    extracted by the probe jobs, in memory. A split the probes cap (probe.max_train_sentences,
    max_dev_sentences) holds the sample they read of it (ProbePlan.probe_feature_cap). Earlier
    plans, for the bench: `sweeps_stored` (stored_layers); `every_sentence`, capped splits
    extracted whole; `stored_tests`, a feature job per test split too, storing every eval set
    (the original and its nonce versions). `width`: a source's real width, or why unknown
    (real_width, local paths relative to `repo`)."""
    plan = ProbePlan(config, repo / "workflow")
    width = width or (lambda source: real_width(source, repo))
    result, seen = Projection(), set()
    for treebank, task in plan.probe_tasks().items():
        for model in task.models:
            wide = width(plan.probe_model_config(model)["source"])
            if isinstance(wide, str):
                result.left_out.append(f"{treebank}/{model}: {wide}")
                continue
            splits = (task.train, task.dev, task.test) if stored_tests else (task.train, task.dev)
            for found in (f for f in splits if f is not None):
                key = (model, found.treebank, found.dir_name)
                if key in seen:
                    continue
                seen.add(key)
                cap = None if every_sentence else plan.probe_feature_cap(*key[1:])
                words = split_words(config, repo, found, cap)
                if isinstance(words, str):
                    result.left_out.append(f"{treebank}/{model}: {words}")
                    continue
                borrowed = borrowed_lengths(config, repo, found.treebank, found.split)
                if borrowed is not None and borrowed not in result.borrowed:
                    result.borrowed.append(borrowed)
                eval_sets = len(plan.probe_eval_sets()) if found is task.test else 1
                layers = sum(stored_layers(plan, treebank, model, baseline, sweeps_stored)
                             for baseline in plan.probe_baselines(model))
                result.per_treebank[treebank] = result.per_treebank.get(treebank, 0.0) + (
                    words * eval_sets * layers * wide * rate)
    return result


def sweep_extractions(config: dict, repo: Path) -> tuple[int, float]:
    """(probe_train jobs, words) of the layer sweep's runs that extract their training and
    selection splits themselves (ProbePlan.probe_extracts_splits): the encoder's forward passes
    that replace the sweep's stored layers, each job's train and dev words (as capped)."""
    plan = ProbePlan(config, repo / "workflow")
    jobs, words = 0, 0.0
    for treebank, task in plan.probe_tasks().items():
        for model in task.models:
            for dist, label in plan.probe_layer_pairs(treebank, model, "lm"):
                wildcards = SimpleNamespace(treebank=treebank, probe_model=model, baseline="lm",
                                            dist=str(dist), label=str(label))
                if not plan.probe_extracts_splits(wildcards):
                    continue
                jobs += 1
                for found in (task.train, task.dev):
                    if found is not None:
                        counted = split_words(config, repo, found, plan.probe_feature_cap(
                            found.treebank, found.dir_name))
                        words += 0.0 if isinstance(counted, str) else counted
    return jobs, words


def measured_rate(repo: Path) -> float:
    """Bytes per (word x layer x hidden unit) of a feature file the probe stage writes: EWT
    test's first RATE_SENTENCES sentences, RATE_WIDTH wide, two layers."""
    from spudflow.probe.feature_file import Features, write_features

    path = repo / "resources" / "ud" / "UD_English-EWT" / "en_ewt-ud-test.conllu.gz"
    lengths = file_lengths(path)[:RATE_SENTENCES]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rng = np.random.default_rng(0)
    layers = {layer: rng.standard_normal((int(offsets[-1]), RATE_WIDTH)).astype(np.float16)
              for layer in (6, 7)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "orig.safetensors"
        write_features(out, Features(layers, np.arange(len(lengths), dtype=np.int64), offsets))
        size = out.stat().st_size
    return size / (int(offsets[-1]) * 2 * RATE_WIDTH)
