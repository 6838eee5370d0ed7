"""The feature commands' work: loading, extracting, writing (atomically), for a FeatureJob the
CLI built and checked; `probe train`'s is in seed_runs.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from spudflow.core.artifacts import LM_BASELINE
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.probe.feature_file import CAP_KEYS, Features, eval_set_file, write_features

if TYPE_CHECKING:
    from spudflow.probe.jobs import FeatureJob

log = get_logger("spudflow.probe")


def _device(name: str) -> str:
    if name == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def restrict_to_share(words, directory: Path, share_dir: Path):
    """The sentences of `words` that are in the share (by sent_index, which nonce versions
    keep); every share sentence must be there, so the original and nonce sets stay equal."""
    import numpy as np

    from spudflow.core.artifacts import TREEBANK_SENTENCES
    from spudflow.core.contract import read_artifact

    path = share_dir / "sentences.parquet"
    wanted = read_artifact(path, TREEBANK_SENTENCES, ["sent_index"]).get_column("sent_index")
    present = set(words.sent_index.tolist())
    missing = [int(i) for i in wanted if int(i) not in present]
    if missing:
        raise InputError(path, None, f"sentence {missing[0]} of the share is not in {directory} "
                         f"({len(missing)} missing): a share of another split?")
    keep = set(wanted.to_list())
    return words.subset(np.array([i for i, s in enumerate(words.sent_index.tolist())
                                  if s in keep], dtype=np.int64))


@contextlib.contextmanager
def all_or_none() -> Iterator[list[Path]]:
    """Files appended to the yielded list are removed when the block fails: a command that
    writes several files one by one (each atomically, to keep one set in memory) leaves none."""
    written: list[Path] = []
    try:
        yield written
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise


def _words_of(directory: Path, job: FeatureJob):
    from spudflow.probe.words import read_words

    words = read_words(directory, need_trees=False)
    if job.sentences is not None:
        words = restrict_to_share(words, directory, job.sentences)
    if job.sample is not None:
        words = words.sample(job.sample, job.sample_seed)
    return words


def features_command(job: FeatureJob) -> int:
    """Features of every treebank directory (a split's eval sets) for every baseline, one
    encoder in memory at a time, into OUT/{baseline}/ (OUT renamed into place when complete)."""
    import torch  # here, not at the top: `probe gather` needs no torch

    from spudflow.core.atomic import atomic_outputs
    from spudflow.core.progress import progress
    from spudflow.probe.feature_file import is_feature_folder

    torch.set_num_threads(job.threads)
    # Every treebank is read (and checked) before a model loads and anything is written.
    sets = read_sets(job)
    steps = [(baseline, list(layers), *found) for baseline, layers in job.baselines
             for found in sets]
    built = None  # (baseline, its encoder): the encoders are built one after the other
    # a capped split's sample, drawn once: every baseline's encoder has the model's tokenizer,
    # so only its max_length could draw another
    samples: dict[int, ProbeSample] = {}
    with atomic_outputs() as out:
        folder = out.dir(job.out, "a probe feature folder", is_feature_folder)
        for baseline, layers, name, directory, words in progress(
                steps, "probe features (baseline x eval set)", unit="set"):
            if built is None or built[0] != baseline:
                built = None  # the previous encoder is freed before the next one is built
                built = (baseline, _baseline_encoder(job, baseline, layers))
            features = _extract(job, built[1], baseline, layers, directory, words, samples)
            write_features(eval_set_file(folder / baseline, name), features)
            log.info("%s: %d sentences, %d words, layers %s -> %s/%s", baseline,
                     len(features.sent_index), int(features.word_offsets[-1]), layers,
                     baseline, name)
            del features  # one set's features in memory at a time
    return 0


def read_sets(job: FeatureJob) -> list[tuple[str, Path, object]]:
    """(name, treebank directory, words) of every eval set of a job, read and checked."""
    return [(name, directory, _words_of(directory, job))
            for name, directory in zip(job.eval_sets, job.dirs, strict=True)]


def extract_in_memory(job: FeatureJob, encoders: dict | None = None, sets: list | None = None
                      ) -> list[tuple[str, Path, Features]]:
    """(name, treebank directory, features) of every eval set of a job of one baseline, held
    in memory: what `probe features` would write for them (its encoder, batches and float16
    values), for `probe train --eval-extract` (and --train-extract, --dev-extract). An encoder
    built for a job is kept in `encoders` for the next job that builds the same one; `sets`:
    the job's read_sets, when read already."""
    from spudflow.core.progress import progress

    ((baseline, layers),) = job.baselines
    sets = read_sets(job) if sets is None else sets
    encoders = {} if encoders is None else encoders
    key = (job.model, job.revision, baseline, layers, job.init_seed, job.encoder_top,
           job.max_length, job.device, repr(job.placement))
    if key not in encoders:
        encoders[key] = _baseline_encoder(job, baseline, list(layers))
    encoder = encoders[key]
    extracted = []
    for name, directory, words in progress(sets, "features extracted here", unit="set"):
        features = _extract(job, encoder, baseline, list(layers), directory, words, {})
        log.info("%s (%s): %d sentences, %d words, layers %s extracted", name, directory,
                 len(features.sent_index), int(features.word_offsets[-1]), list(layers))
        extracted.append((name, directory, features))
    return extracted


def _baseline_encoder(job: FeatureJob, baseline: str, layers: list[int]):
    from spudflow.probe.encoder import load_encoder

    # MR/MRC weights come from --init-seed and the model built, up to its highest layer
    # (load_encoder forks the RNG): a baseline's encoder is the same whichever baselines were
    # built before it, and a probe job's (job.encoder_top) the same as its feature job's.
    if job.encoder_top is not None:
        layers = sorted({*layers, job.encoder_top})
    return load_encoder(job.model, layers, None if baseline == LM_BASELINE else baseline,
                        job.init_seed, job.max_length, _device(job.device), job.revision,
                        job.placement)


def _extract(job: FeatureJob, encoder, baseline: str, layers: list[int], directory: Path,
             words, samples: dict):
    """One eval set's features for one baseline; its metadata names the baseline. Of a capped
    split, the probe's sample (kept in `samples` by max_length for the other baselines)."""
    from spudflow.core.shards import shard_range
    from spudflow.probe.features import extract, leading_space

    capped = None
    if job.max_sentences is not None:
        if encoder.max_length not in samples:
            samples[encoder.max_length] = probe_sample(job, encoder, words)
        capped = samples[encoder.max_length]
        words = capped.words
    positions = range(*shard_range(len(words), job.shard, job.block_size))
    features = extract(encoder, words, positions, layers, job.block_size, job.batch_tokens)
    features.info = {"model": job.model, "baseline": baseline,
                     "init_seed": str(job.init_seed) if baseline in ("MR", "MRC") else "",
                     "n_layers": str(encoder.n_layers), "max_length": str(encoder.max_length),
                     "block_size": str(job.block_size)}
    if capped is not None:  # absent otherwise: the files of an uncapped split stay as they were
        features.too_long, features.eligible = capped.too_long, capped.eligible
        features.info.update(capped.info(job))
    if job.revision is not None:  # absent when none: the files of a config without one stay
        features.info["revision"] = job.revision
    if leading_space(encoder.tokenizer):  # absent otherwise: those files stay as they were
        features.info["leading_space"] = "true"
    if job.shard.count > 1:
        features.info["shard"] = str(job.shard)
    if features.too_long:
        log.warning("%s: %d sentence(s) longer than %d tokens left out", directory,
                    len(features.too_long), encoder.max_length)
    return features


@dataclass
class ProbeSample:
    """The sentences of a capped split the probe reads, and what it leaves out and counts."""
    words: object          # SentenceWords of the sample, in treebank order
    too_long: list[int]    # sent_index values too long for the model
    n_short: int           # sentences under --min-words (and not too long)
    eligible: np.ndarray   # sent_index values of the rest, the sample's population

    def info(self, job: FeatureJob) -> dict[str, str]:
        return {CAP_KEYS[0]: str(job.max_sentences), CAP_KEYS[1]: str(job.max_sentences_seed),
                CAP_KEYS[2]: str(job.min_words), CAP_KEYS[3]: str(self.n_short)}


def probe_sample(job: FeatureJob, encoder, words) -> ProbeSample:
    """The sentences `probe train` keeps of this split and then samples (probe/data.py
    load_set, then capped): too long for the model first, then short, then a seeded sample of
    the rest in treebank order. Drawn over the same sentences in the same order, it is the
    probe's own sample, so the file holds exactly the sentences it reads."""
    from spudflow.core.sampling import sample_indices
    from spudflow.probe.features import encoded_sentences

    lengths = [len(ids) for ids, _ in encoded_sentences(encoder, words, range(len(words)))]
    too_long = [i for i, n in enumerate(lengths) if n > encoder.max_length]
    left = set(too_long)
    short = [i for i in range(len(words)) if i not in left and len(words.forms[i]) < job.min_words]
    left.update(short)
    eligible = np.array([i for i in range(len(words)) if i not in left], dtype=np.int64)
    picks = eligible[sample_indices(len(eligible), job.max_sentences, job.max_sentences_seed)]
    return ProbeSample(words.subset(picks), [int(words.sent_index[i]) for i in too_long],
                       len(short), np.asarray(words.sent_index)[eligible].astype(np.int64))


def gather_command(shards: list[Path], out: Path) -> int:
    """Shard files -> the unsharded file OUT; shard directories -> the unsharded directory OUT,
    file by file ({baseline}/{eval set}; each shard must hold the same files)."""
    from spudflow.core.input_files import require_file
    from spudflow.probe.feature_file import concatenate, eval_sets_in

    if not all(shard.is_dir() for shard in shards):
        for shard in shards:
            require_file(shard, "a probe feature file")
        write_features(out, concatenate(_read_shards(shards)))
        return 0
    names = eval_sets_in(shards[0])
    if not names:
        raise InputError(shards[0], None, "holds no probe feature file")
    for shard in shards[1:]:
        if eval_sets_in(shard) != names:
            raise InputError(shard, None, f"holds eval sets {eval_sets_in(shard)}, "
                             f"{shards[0]} {names}: shards of different jobs?")
    with all_or_none() as written:
        for name in names:
            path = Path(eval_set_file(out, name))
            written.append(path)
            write_features(path, concatenate(_read_shards(
                [Path(eval_set_file(shard, name)) for shard in shards])))
    return 0


def _read_shards(paths: list[Path]) -> list:
    """The shards' features; a sentence in two of them (a shard given twice) is bad input."""
    import polars as pl

    from spudflow.core.distinct_inputs import one_source_per
    from spudflow.probe.feature_file import read_features

    parts = [read_features(p) for p in paths]
    one_source_per(pl.DataFrame({
        "sent_index": [int(i) for part in parts for i in part.sent_index],
        "source_file": [str(path) for path, part in zip(paths, parts, strict=True)
                        for _ in part.sent_index]}), ["sent_index"], "the features of")
    return parts
