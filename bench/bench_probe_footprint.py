"""Projected bytes of a config's probe features at the real models' widths, from its plan.

    python bench/bench_probe_footprint.py [CONFIG] [--rehearsal DIR]

Bytes per word, layer and hidden unit are measured on feature files the probe stage writes:
a full rehearsal's (`--rehearsal DIR`: its results/probe/features, the 32-wide stand-ins) or,
without one, files written here by spudflow.probe.feature_file for EWT test's sentences at
768 wide. The plan is the config's own (spudflow.probe.plan.ProbePlan): per feature job
(model, treebank, split trained or selected on), per baseline, the layers it stores; a test
split's eval sets are never stored (each probe job extracts them in memory). The words of a
split are the real split's sentences (spudflow.rehearse.mirror.REAL_SENTENCES, UD 2.10) times
the mean words per sentence of the treebanks a rehearsal grows its stand-in from (the basis of
the rehearsal's own estimate); the width is the real model's (spudflow.rehearse.families).

Prints the projection with `probe.layer_sweep` as the config has it, false, [en_ewt] and true,
per treebank: now the same bytes, as a sweep's run of a layer outside the task's pair extracts
its training and selection splits itself (`probe train --train-extract`); then the same
settings as before that, when a swept model's feature files held every layer, and earlier
plans. Last, what the sweep costs instead: its runs that extract their splits, and the words
they run through the encoder.

Measured on the SPUD preset (the shared treebanks' words per sentence, 2.0009 bytes per word,
layer and unit): 29.8 GB with its sweep of mBERT and mGPT on EWT (55.4 GB when the sweep's
layers were stored; 62.9 with `[en_ewt]`, 257.5 with `true`, now all 29.8); the sweep's 35
runs outside the pairs (mBERT 11 layers, mGPT 24) extract EWT train and dev, 7.8M words.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import sys
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from spudflow.core.split_files import split_locations  # noqa: E402
from spudflow.probe.feature_file import Features, write_features  # noqa: E402
from spudflow.probe.plan import ProbePlan  # noqa: E402
from spudflow.rehearse.families import FAMILIES, KNOWN_IDS  # noqa: E402
from spudflow.rehearse.mirror import REAL_SENTENCES, source_files  # noqa: E402

SCHEMA = REPO / "config" / "schema.yaml"
EWT_TEST = REPO / "resources" / "ud" / "UD_English-EWT" / "en_ewt-ud-test.conllu.gz"


def sentence_words(path: Path) -> list[int]:
    """Syntactic words (integer IDs: no multiword ranges, no empty nodes) per sentence."""
    opener = gzip.open if path.suffix == ".gz" else open
    counts, n = [], 0
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                if n:
                    counts.append(n)
                n = 0
            elif not line.startswith("#") and line.split("\t", 1)[0].isdigit():
                n += 1
    return counts + ([n] if n else [])


def measured_rate(rehearsal: Path | None) -> tuple[float, str]:
    """Bytes per (word x layer x hidden unit) of feature files: a rehearsal's, else files
    written here (EWT test, 768 wide, 2 layers)."""
    from safetensors import safe_open

    if rehearsal is not None:
        files = sorted((rehearsal / "results" / "probe" / "features").rglob("*.safetensors"))
        if not files:
            raise SystemExit(f"{rehearsal}: no results/probe/features/**/*.safetensors")
        size = units = 0
        for path in files:
            size += path.stat().st_size
            with safe_open(str(path), framework="numpy") as f:
                units += sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys()  # noqa: SIM118
                             if k.startswith("layer"))
        return size / units, f"{len(files)} feature files of {rehearsal}"
    path = EWT_TEST
    words = sentence_words(path)
    offsets = np.concatenate([[0], np.cumsum(words)]).astype(np.int64)
    rng = np.random.default_rng(0)
    layers = {layer: rng.standard_normal((int(offsets[-1]), 768)).astype(np.float16)
              for layer in (6, 7)}
    features = Features(layers, np.arange(len(words), dtype=np.int64), offsets)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "orig.safetensors"
        write_features(out, features)
        size = out.stat().st_size
    return size / (int(offsets[-1]) * 2 * 768), f"a file written here ({path.name}, 768 x 2)"


@cache
def words_per_sentence(lang: str) -> float:
    counts = [n for path in source_files(REPO, lang) for n in sentence_words(path)]
    if not counts:
        raise SystemExit(f"no treebank of language {lang} under resources/ud or ../shared/data")
    return sum(counts) / len(counts)


def split_words(config: dict, treebank: str, split: str, part: str | None,
                cap: int | None = None) -> float:
    """Words of a split (or share), of at most `cap` sentences."""
    sentences = 0
    for location in split_locations(config, treebank, split):
        name = location.rsplit("/", 1)[-1].removesuffix(".gz")
        if name not in REAL_SENTENCES:
            raise SystemExit(f"{treebank}/{split}: no real sentence count for {name}")
        sentences += REAL_SENTENCES[name]
    if part is not None:
        share = config["training_shares"][f"{treebank}/{split}"]["share"]
        sentences *= share if part == "train" else 1 - share
    sample = config["probe"]["sample"]["n"]
    for most in (sample, cap):
        if most is not None:
            sentences = min(sentences, most)
    return sentences * words_per_sentence(config["treebanks"][treebank]["lang"])


def hidden_width(source: str) -> int:
    if source not in KNOWN_IDS:
        raise SystemExit(f"{source}: width unknown (spudflow.rehearse.families.KNOWN_IDS)")
    return FAMILIES[KNOWN_IDS[source]].hidden


def stored_layers(plan: ProbePlan, treebank: str, model: str, baseline: str,
                  sweeps_stored: bool) -> int:
    """Layers a baseline's feature files hold (ProbePlan.probe_feature_layers); `sweeps_stored`,
    as before the sweep's runs extracted their splits themselves: a swept model's `lm` held
    every layer."""
    layers = set(plan.probe_feature_layers(treebank, model, baseline).split(","))
    if sweeps_stored and baseline == "lm" and plan.probe_swept(treebank, model):
        layers |= set(map(str, plan.probe_sweep_layers(model)))
    return len(layers)


def projected(config: dict, rate: float, every_sentence: bool = False,
              stored_tests: bool = False, sweeps_stored: bool = False) -> dict[str, float]:
    """Bytes per treebank of every planned feature job's files: words x (layers of each
    baseline) x width x rate, for each split trained or selected on (a test split's eval sets
    are extracted by the probe jobs, in memory). A training or selection split the probes cap
    (probe.max_train_sentences, max_dev_sentences) holds as many sentences as they read of it
    (ProbePlan.probe_feature_cap). Before: `sweeps_stored`, a swept model's every layer
    (stored_layers); `every_sentence`, as its feature job extracted before it was capped,
    every sentence; `stored_tests`, a feature job per test split too, storing every eval set
    (the original and its nonce versions)."""
    plan = ProbePlan(config, REPO / "workflow")
    per_treebank: dict[str, float] = {}
    seen = set()
    for treebank, task in plan.probe_tasks().items():
        for model in task.models:
            width = hidden_width(plan.probe_model_config(model)["source"])
            splits = (task.train, task.dev, task.test) if stored_tests else (task.train, task.dev)
            for found in (f for f in splits if f is not None):
                key = (model, found.treebank, found.dir_name)
                if key in seen:
                    continue
                seen.add(key)
                eval_sets = len(plan.probe_eval_sets()) if found is task.test else 1
                layers = sum(stored_layers(plan, treebank, model, b, sweeps_stored)
                             for b in plan.probe_baselines(model))
                cap = None if every_sentence else plan.probe_feature_cap(*key[1:])
                words = split_words(config, found.treebank, found.split, found.part, cap)
                per_treebank[treebank] = per_treebank.get(treebank, 0.0) + (
                    words * eval_sets * layers * width * rate)
    return per_treebank


def sweep_extractions(config: dict) -> tuple[int, float]:
    """(probe_train jobs, words) of the layer sweep's runs that extract their training and
    selection splits themselves (ProbePlan.probe_extracts_splits): the encoder's forward passes
    that replace the sweep's stored layers, each job's train and dev words (as capped)."""
    from types import SimpleNamespace

    plan = ProbePlan(config, REPO / "workflow")
    jobs, words = 0, 0.0
    for treebank, task in plan.probe_tasks().items():
        for model in task.models:
            for dist, label in plan.probe_layer_pairs(treebank, model, "lm"):
                wildcards = SimpleNamespace(treebank=treebank, probe_model=model, baseline="lm",
                                            dist=str(dist), label=str(label))
                if not plan.probe_extracts_splits(wildcards):
                    continue
                jobs += 1
                words += sum(split_words(config, found.treebank, found.split, found.part,
                                         plan.probe_feature_cap(found.treebank, found.dir_name))
                             for found in (task.train, task.dev) if found is not None)
    return jobs, words


def filled(path: Path) -> dict:
    from snakemake.utils import validate

    from spudflow.core.config import fill_named_entries

    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    validate(config, str(SCHEMA), set_default=True)
    fill_named_entries(config)
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path, nargs="?",
                        default=REPO / "config" / "papers" / "spud.yaml")
    parser.add_argument("--rehearsal", type=Path, help="a full rehearsal's folder")
    args = parser.parse_args()
    rate, measured_on = measured_rate(args.rehearsal)
    config = filled(args.config)
    print(f"{args.config}: {rate:.4f} bytes per word x layer x hidden unit, measured on "
          f"{measured_on}")
    sweep = config["probe"]["layer_sweep"]
    settings = {f"layer_sweep: {sweep}": sweep, "layer_sweep: false": False,
                "layer_sweep: [en_ewt]": ["en_ewt"], "layer_sweep: true": True}
    rows, extractions = {}, {}
    for label, value in settings.items():
        changed = copy.deepcopy(config)
        changed["probe"]["layer_sweep"] = value
        rows[label] = projected(changed, rate)
        extractions[label] = sweep_extractions(changed)
    for label, value in settings.items():
        if value is not False:
            changed = copy.deepcopy(config)
            changed["probe"]["layer_sweep"] = value
            rows[f"{label}, the sweep's layers stored (before)"] = projected(
                changed, rate, sweeps_stored=True)
    rows[f"layer_sweep: {sweep}, sweep's layers and test splits' eval sets stored (before "
         "that)"] = projected(config, rate, stored_tests=True, sweeps_stored=True)
    rows[f"layer_sweep: {sweep}, those stored, every sentence of the capped splits "
         "extracted (before that)"] = projected(config, rate, every_sentence=True,
                                                 stored_tests=True, sweeps_stored=True)
    treebanks = list(config["probe"]["tasks"])
    print("| setting | " + " | ".join(treebanks) + " | total |")
    print("|---" * (len(treebanks) + 2) + "|")
    for label, per in rows.items():
        cells = [f"{per.get(tb, 0) / 1e9:.1f}" for tb in treebanks]
        print(f"| {label} | " + " | ".join(cells) + f" | {sum(per.values()) / 1e9:.1f} GB |")
    print("\nThe sweep's runs that extract their training and selection splits themselves "
          "(each the split's words through the encoder once more, for one layer):")
    for label, (jobs, words) in extractions.items():
        print(f"- {label}: {jobs} probe_train jobs, {words / 1e6:.1f}M words")


if __name__ == "__main__":
    main()
