"""Training and evaluation of one probe run.

AdamW (lr 1e-3), batches of 32 sentences, ReduceLROnPlateau (factor 0.1, patience 0) on the
selection loss, at most 30 epochs, keep the best epoch, stop 3 epochs after the first epoch of
the lowest selection loss. As the DepProbe reference's train.py: any decrease is an improvement
(no threshold), and an epoch whose loss ties the lowest becomes the kept one (it saves the best
checkpoint on `loss <= min(losses)`) while the count towards stopping still runs from the first.

Batches (`batches`): `buckets` (the default) cuts each epoch into batches of similar length and
selects on the mean loss per sentence of the selection data in order; `reference` draws batches as
the reference's DepSpaceDataset does (a uniform sample without replacement, so a seeded
permutation cut into batches), for training and selection alike, and selects on the mean of the
selection batches' losses (its `np.mean` of the epoch's batch losses).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass

import numpy as np
import torch

from spudflow.core.batching import length_bucketed_batches
from spudflow.core.progress import progress
from spudflow.probe.data import ProbeSet, make_batch
from spudflow.probe.decode import decode
from spudflow.probe.labels import ROOT, as_reference_writes, label_of
from spudflow.probe.loss import probe_loss
from spudflow.probe.metrics import attachment_scores
from spudflow.probe.model import DepProbe


@dataclass
class TrainSettings:
    labels: list[str]
    subtypes: bool = False
    squared: bool = True
    rank: int = 128
    lr: float = 1e-3
    batch_size: int = 32
    max_epochs: int = 30
    patience: int = 3
    seed: int = 1
    batches: str = "buckets"     # buckets | reference (the module's docstring)
    # predicted `acl` written (and scored) as `UNK`, as the reference's predict.py (labels.py)
    acl_predicted_as_unk: bool = False


@dataclass
class Trained:
    probe: DepProbe
    history: list[dict]          # per epoch: epoch, train_loss, dev_loss, lr
    best_epoch: int


# Training batches are drawn from pools of this many batches' sentences sorted by length, so a
# batch holds sentences of similar length (less padding; the distance part costs words²).
POOL_BATCHES = 16
BATCHES = ("buckets", "reference")


def _batches(lengths: np.ndarray, size: int, generator: torch.Generator | None,
             how: str = "buckets") -> list[np.ndarray]:
    """Batches of `size` sentences: in order without a generator; else shuffled and, with
    `buckets`, bucketed by length inside shuffled pools, in shuffled order (core/batching.py);
    with `reference`, a seeded permutation cut into batches (uniform draws without
    replacement, as the DepProbe reference's DepSpaceDataset.__next__)."""
    n = len(lengths)
    if generator is None:
        return [np.arange(i, min(i + size, n)) for i in range(0, n, size)]
    if how == "reference":
        order = torch.randperm(n, generator=generator).numpy().astype(np.int64)
        return [order[i:i + size] for i in range(0, n, size)]
    return [np.asarray(batch, dtype=np.int64)
            for batch in length_bucketed_batches(lengths, size, POOL_BATCHES, generator)]


def _mean_loss(probe: DepProbe, data: ProbeSet, settings: TrainSettings, index,
               generator: torch.Generator | None = None) -> float:
    """The selection loss: per sentence over batches in order (`buckets`), or the mean of the
    batch losses over uniformly drawn batches (`reference`, drawn from `generator`)."""
    reference = settings.batches == "reference"
    picked = _batches(data.lengths, settings.batch_size, generator if reference else None,
                      settings.batches)
    total, weight = 0.0, 0
    with torch.no_grad():
        for picks in picked:
            batch = make_batch(data, picks, index, settings.subtypes)
            loss, _, _ = probe_loss(*probe(batch.dist, batch.label), batch.gold_distances,
                                    batch.gold_labels, batch.lengths)
            share = 1 if reference else len(picks)
            total += float(loss) * share
            weight += share
    return total / max(weight, 1)


def seed_everything(seed: int) -> None:
    """What transformers' set_seed does on any device (torch.manual_seed seeds every device),
    without importing transformers: 0.8 s of a probe job that needs none of it."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train_probe(train: ProbeSet, dev: ProbeSet, settings: TrainSettings) -> Trained:
    if settings.batches not in BATCHES:
        raise ValueError(f"batches must be one of {BATCHES}, not {settings.batches!r}")
    seed_everything(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    index = {label: i for i, label in enumerate(settings.labels)}
    probe = DepProbe(train.dist.shape[1], train.label.shape[1], len(settings.labels),
                     settings.rank, settings.squared)
    optimizer = torch.optim.AdamW(probe.parameters(), lr=settings.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.1, patience=0)
    best_loss, best_state, best_epoch, first_best, history = float("inf"), None, 0, 0, []
    for epoch in progress(range(1, settings.max_epochs + 1),
                          f"probe epochs, seed {settings.seed}", unit="epoch"):
        probe.train()
        total, weight = 0.0, 0
        for picks in _batches(train.lengths, settings.batch_size, generator, settings.batches):
            batch = make_batch(train, picks, index, settings.subtypes)
            loss, _, _ = probe_loss(*probe(batch.dist, batch.label), batch.gold_distances,
                                    batch.gold_labels, batch.lengths)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(picks)
            weight += len(picks)
        probe.eval()
        dev_loss = _mean_loss(probe, dev, settings, index, generator)
        history.append({"epoch": epoch, "train_loss": total / weight, "dev_loss": dev_loss,
                        "lr": optimizer.param_groups[0]["lr"]})
        scheduler.step(dev_loss)
        if dev_loss <= best_loss:  # a tie: the later epoch is kept
            best_state, best_epoch = copy.deepcopy(probe.state_dict()), epoch
        if dev_loss < best_loss:
            best_loss, first_best = dev_loss, epoch
        if epoch - first_best >= settings.patience:
            break
    probe.load_state_dict(best_state)
    return Trained(probe.eval(), history, best_epoch)


@dataclass
class Predictions:
    heads: list[np.ndarray]
    labels: list[list[str]]


def predict(probe: DepProbe, data: ProbeSet, settings: TrainSettings) -> Predictions:
    root = settings.labels.index(ROOT)
    written = (as_reference_writes if settings.acl_predicted_as_unk
               else lambda label: label)
    heads, labels = [], []
    with torch.no_grad():
        for picks in _batches(data.lengths, settings.batch_size, None):
            batch = make_batch(data, picks, None, settings.subtypes)
            distances, logits = probe(batch.dist, batch.label)
            log_probs = torch.log_softmax(logits, dim=-1).numpy()
            distances = distances.numpy()
            for b, n in enumerate(batch.lengths.tolist()):
                h, lab = decode(distances[b, :n, :n], log_probs[b, :n], root)
                heads.append(h)
                labels.append([written(settings.labels[k]) for k in lab])
    return Predictions(heads, labels)


def evaluate(data: ProbeSet, predictions: Predictions, settings: TrainSettings,
             punct: bool = True) -> dict:
    gold_labels = [[label_of(d, settings.subtypes) for d in s] for s in data.words.deprels]
    counted = None if punct else [np.asarray(u) != "PUNCT" for u in data.words.upos]
    return attachment_scores(data.words.heads, gold_labels, predictions.heads,
                             predictions.labels, counted)
