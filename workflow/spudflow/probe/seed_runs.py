"""`spudflow probe train`: every seed's probe run of one (treebank, model, baseline, layer
pair), the features loaded once; each seed's folder OUT/seed{S}/ appears whole or not at all."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import torch

from spudflow.core.artifacts import PROBE_PREDICTIONS_FILE, PROBE_SENTENCES_FILE
from spudflow.core.atomic import atomic_outputs
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.probe.data import ProbeSet

if TYPE_CHECKING:
    from spudflow.probe.jobs import ProbeJob

log = get_logger("spudflow.probe")


def seed_dir(out: Path, seed: int) -> Path:
    return out / f"seed{seed}"


@dataclass
class ProbeData:
    """What every seed's run reads: selection and training sets, the eval sets (name, set,
    treebank directory) and the metrics columns that do not depend on the seed."""

    train: ProbeSet
    dev: ProbeSet
    evals: list[tuple[str, ProbeSet, Path]]
    run: dict                   # its seed filled in per seed
    training: dict


def cap(data: ProbeSet, n: int | None, seed: int, features: Path) -> ProbeSet:
    """The set, or a seeded sample of n of its sentences (after the short and too-long ones are
    left out): the DepProbe reference's data/split.py keeps at most 20,000 sentences of a
    training or dev split, even with --keep_all. Features of the sample alone (`probe features
    --max-sentences`) must be of this very sample."""
    from spudflow.probe.data import capped

    if data.cap is not None and (data.cap.max_sentences, data.cap.seed) != (n, seed):
        wanted = "reads every sentence" if n is None else f"caps this split at {n} (seed {seed})"
        raise InputError(features, None, f"holds a sample of at most {data.cap.max_sentences} "
                         f"sentences (seed {data.cap.seed}), but the probe {wanted}")
    kept = capped(data, n, seed)
    if n is not None:  # of a feature file's sample, the count it was drawn from
        drawn_from = len(data) if data.cap is None else len(data.cap.eligible)
        log.info("%s: %d of %d sentences kept (at most %d, seed %d)", data.name, len(kept),
                 drawn_from, n, seed)
    return kept


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _training_sentences(training: ProbeSet, treebank: Path) -> set[tuple]:
    """The training split's sentences as loaded, before any cap: of a file that holds the
    probe's sample only, those it was drawn from (its `eligible_index`), read from the
    treebank."""
    if training.cap is None:
        return {tuple(forms) for forms in training.words.forms}
    from spudflow.probe.words import read_words

    words = read_words(treebank, need_trees=False)
    drawn_from = np.isin(words.sent_index, training.cap.eligible)
    return {tuple(words.forms[i]) for i in np.flatnonzero(drawn_from)}


def _refuse_training_data(name: str, features: Path | None, treebank: Path, evaluated,
                          train_features: Path, trained: set[tuple]) -> None:
    """Bad input where an eval set is the training set (the same feature file, or sentences
    every one of which the training split holds): its scores would measure memory, not
    generalisation. Sentences are compared as loaded (a split's training share and its held-out
    rest are read from one treebank folder: different sentences)."""
    if features is not None and _same_file(features, train_features):
        raise InputError(features, None, f"eval set {name!r} is the training set (--train): a "
                         "probe is tested on sentences it did not train on")
    tested = {tuple(forms) for forms in evaluated.words.forms}
    if tested and tested <= trained:
        raise InputError(treebank, None, f"eval set {name!r}: every sentence of it is a "
                         f"sentence of the training set {train_features}: a probe is tested on "
                         "sentences it did not train on")


def load_probe_data(job: ProbeJob) -> ProbeData:
    """Every input read and checked before the first seed trains (bad input writes nothing)."""
    from spudflow.probe.data import features_set, load_set, split_off
    from spudflow.probe.run import extract_in_memory, read_sets

    given = job.inputs
    encoders: dict = {}  # one encoder for every set the job extracts
    # every extracted set's treebank read (and checked) before an encoder is built
    sets = {role: read_sets(extraction) for role, extraction in (
        ("train", given.train_extracted), ("dev", given.dev_extracted),
        ("eval", given.extracted)) if extraction is not None}

    def load(name, source, extraction):
        # One --min-words for training, selection and evaluation: the paper drops sentences
        # shorter than 4 words "from the data in all experiments" (App. C).
        features, treebank = source
        if extraction is None:
            return load_set(name, features, treebank, job.dist_layer, job.label_layer,
                            given.min_words)
        ((_, directory, extracted),) = extract_in_memory(extraction, encoders, sets[name])
        return features_set(name, extracted, directory, directory, job.dist_layer,
                            job.label_layer, given.min_words)

    train_split = load("train", given.train, given.train_extracted)
    train_source = _source_name(given.train)
    train = cap(train_split, given.max_train_sentences, given.max_sentences_seed, train_source)
    n_train_short = train.n_short
    if given.dev:
        dev = load("dev", given.dev, given.dev_extracted)
    else:
        if len(train) == 0:
            raise InputError(given.train[1], None, "no sentences to train or select on")
        train, dev = split_off(train, given.holdout, given.holdout_seed)
    dev = cap(dev, given.max_dev_sentences, given.max_sentences_seed,
              _source_name(given.dev) if given.dev else train_source)
    if len(train) == 0 or len(dev) == 0:
        raise InputError(given.train[1], None, "no sentences to train or select on")
    evals = _eval_sets(job, encoders, sets.get("eval"))
    encoders.clear()  # freed before training
    trained = _training_sentences(train_split, Path(given.train[1]))
    for (name, evaluated, treebank), features in zip(evals, _eval_sources(given), strict=True):
        if evaluated.cap is not None:
            raise InputError(features, None, f"eval set {name!r} holds a sample of its split "
                             "(probe features --max-sentences): a probe is tested on every "
                             "sentence")
        _refuse_training_data(name, features, Path(treebank), evaluated, train_source, trained)
    run = {"treebank": job.treebank, "model": job.model, "baseline": job.baseline,
           "seed": None, "dist_layer": job.dist_layer, "label_layer": job.label_layer,
           "auto_layers": job.auto_layers}
    # The training data, per metrics row; with --holdout, dev is drawn from the training split
    # after the filter, so all its short sentences count in n_train_short.
    training = {"n_train_sentences": len(train), "n_train_short": n_train_short,
                "n_dev_sentences": len(dev), "n_dev_short": dev.n_short if given.dev else 0}
    return ProbeData(train, dev, evals, run, training)


def _source_name(source: tuple[Path | None, Path]) -> Path:
    """What a training or selection split's messages name: its feature file, or its treebank
    directory when its features are extracted here."""
    features, treebank = source
    return Path(features if features is not None else treebank)


def _eval_sources(given) -> list[Path | None]:
    """Each eval set's feature file; None for one extracted here."""
    if given.extracted is not None:
        return [None] * len(given.extracted.dirs)
    return [Path(features) for _, features, _ in given.evals]


def _eval_sets(job: ProbeJob, encoders: dict, sets: list | None
               ) -> list[tuple[str, ProbeSet, Path]]:
    """(name, set, treebank directory) of every eval set: read from its feature file, or
    extracted here with the job's encoder (--eval-extract; the same features, never
    written; `encoders` and `sets`, its read_sets, as extract_in_memory's)."""
    from spudflow.probe.data import features_set
    from spudflow.probe.feature_file import read_features

    given = job.inputs
    layers = sorted({job.dist_layer, job.label_layer})
    if given.extracted is not None:
        from spudflow.probe.run import extract_in_memory

        found = [(name, directory, features, directory)
                 for name, directory, features in extract_in_memory(given.extracted,
                                                                     encoders, sets)]
    else:
        found = [(name, Path(treebank), read_features(features, layers), features)
                 for name, features, treebank in given.evals]
    # A sentence too long for the model in any version (a nonce version can have more tokens
    # than its original) leaves every eval set: Δ = orig − nonce compares the same sentences.
    too_long = frozenset(i for _, _, features, _ in found for i in features.too_long)
    return [(name, features_set(name, features, source, treebank, job.dist_layer,
                                job.label_layer, given.min_words, too_long), treebank)
            for name, treebank, features, source in found]


def train_seed(data: ProbeData, settings, punct: bool, out: Path) -> None:
    """One seed's run into the folder `out` (a temporary one, renamed by the caller): the probe,
    its history, metrics.parquet and predictions/{eval set}.conllu. train_probe reseeds every
    RNG from settings.seed, so a seed's files do not depend on the seeds trained before it."""
    from spudflow.probe.outputs import (
        prediction_conllu,
        prediction_rows,
        write_history,
        write_metrics,
        write_predictions,
        write_probe,
        write_sentences,
    )
    from spudflow.probe.train import evaluate, predict, train_probe

    trained = train_probe(data.train, data.dev, settings)
    run = {**data.run, "seed": settings.seed}
    # The selected probe on the selection data: what the layer sweep chooses by (App. F.6).
    dev_scores = evaluate(data.dev, predict(trained.probe, data.dev, settings), settings,
                          punct=punct)
    training = {**data.training,
                **{f"dev_{m}": dev_scores[m] for m in ("uas", "las", "relacc", "root_acc")}}
    rows, sentences, predicted = [], [], []
    for name, eval_set, treebank in data.evals:
        predictions = predict(trained.probe, eval_set, settings)
        scores = evaluate(eval_set, predictions, settings, punct=punct)
        sentences.append(sentence_rows(name, eval_set, predictions, settings, punct, scores)
                         .with_columns(*[pl.lit(run[k]).alias(k) for k in SENTENCE_RUN]))
        rows.append({**run, "eval_set": name, **scores, "n_too_long": eval_set.n_too_long,
                     "n_short": eval_set.n_short, **training, "best_epoch": trained.best_epoch})
        predicted.append(prediction_rows(name, eval_set, predictions))
        path = out / "predictions" / f"{name}.conllu"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(prediction_conllu(treebank, eval_set, predictions), encoding="utf-8",
                        newline="\n")
        log.info("seed %d, %s: UAS %.3f LAS %.3f RelAcc %.3f (%d words)", settings.seed, name,
                 scores["uas"], scores["las"], scores["relacc"], scores["n_words"])
    write_sentences(out / PROBE_SENTENCES_FILE, sentences)
    write_predictions(out / PROBE_PREDICTIONS_FILE, predicted)
    write_metrics(out / "metrics.parquet", rows)
    write_history(out / "history.parquet", trained.history)
    write_probe(out / "probe.safetensors", trained.probe, settings.labels,
                {k: str(v) for k, v in run.items()})


SENTENCE_RUN = ("treebank", "model", "baseline", "seed", "dist_layer", "label_layer")


def sentence_rows(name: str, eval_set, predictions, settings, punct: bool,
                  scores: dict) -> pl.DataFrame:
    """The eval set's counts per sentence (sentence_counts.parquet): they must sum to its
    scores."""
    from spudflow.probe.labels import label_of
    from spudflow.probe.metrics import sentence_counts

    gold_labels = [[label_of(d, settings.subtypes) for d in s] for s in eval_set.words.deprels]
    counted = None if punct else [np.asarray(u) != "PUNCT" for u in eval_set.words.upos]
    counts = sentence_counts(eval_set.words.heads, gold_labels, predictions.heads,
                             predictions.labels, counted)
    n = int(counts["n_words"].sum())
    if n != scores["n_words"] or any(
            abs(int(counts[f"n_{m}"].sum()) / max(n, 1) - scores[m]) > 1e-12
            for m in ("uas", "las", "relacc")):
        raise AssertionError(f"{name}: the per-sentence counts do not sum to the metrics")
    return pl.DataFrame({"eval_set": name,
                         "sent_index": np.asarray(eval_set.words.sent_index, dtype=np.int64),
                         **counts})


def is_probe_run(folder: Path) -> bool:
    """A seed's folder `probe train` wrote: its metrics or its history say so. Either is
    enough: Snakemake removes metrics.parquet (the rule's declared output) before it reruns the
    job, or when the job was killed, and leaves the rest of the folder."""
    from spudflow.core.artifacts import PROBE_HISTORY, PROBE_METRICS
    from spudflow.core.contract import artifact_of

    marked = (("metrics.parquet", PROBE_METRICS), ("history.parquet", PROBE_HISTORY))
    return any((folder / name).is_file() and artifact_of(folder / name) == artifact.name
               for name, artifact in marked)


def train_command(job: ProbeJob) -> int:
    from spudflow.probe.labels import label_set
    from spudflow.probe.train import TrainSettings

    torch.set_num_threads(job.threads)
    data = load_probe_data(job)
    how = job.training
    settings = TrainSettings(labels=label_set(data.train.words.deprels, how.subtypes),
                             subtypes=how.subtypes, squared=how.squared, rank=how.rank,
                             lr=how.lr, batch_size=how.batch_size, max_epochs=how.max_epochs,
                             patience=how.patience,
                             acl_predicted_as_unk=how.acl_predicted_as_unk,
                             batches=how.batches)
    log.info("training on %d sentences, selecting on %d; seeds %s", len(data.train),
             len(data.dev), " ".join(map(str, how.seeds)))
    for seed in progress(how.seeds, "probe seeds", unit="seed"):
        # One rename per seed: a job stopped during seed 3 keeps seeds 1-2 and no part of 3.
        with atomic_outputs() as out:
            train_seed(data, replace(settings, seed=seed), how.punct,
                       out.dir(seed_dir(job.out, seed), "a probe run", is_probe_run))
    return 0
