"""Training a control model from scratch: seeded, deterministic data order, loss logged.

Objectives: masked - BERT's masked LM (loss on the chosen tokens only, the LM head applied
there alone); causal - next-token prediction; electra - ELECTRA's joint objective, a generator
half as wide fills the masked positions with samples and the discriminator learns which tokens
were replaced (loss = generator MLM + 50 x replaced-token detection, Clark et al. 2020)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from transformers import get_linear_schedule_with_warmup, set_seed

from spudflow.controls import architectures
from spudflow.controls.data import encode, mask_tokens
from spudflow.core.batching import length_bucketed_batches, pad_rows
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress_bar

log = get_logger(__name__)

MASK_PROBABILITY = 0.15
DISCRIMINATOR_WEIGHT = 50.0
WARMUP_FRACTION = 0.06
MAX_GRAD_NORM = 1.0
# Sentences of similar length are batched together within pools of this many batches.
POOL_BATCHES = 50


@dataclass(frozen=True)
class Schedule:
    epochs: int
    batch_size: int
    learning_rate: float
    seed: int


@dataclass
class Trained:
    model: torch.nn.Module  # what is saved: BERT, GPT-2, or the ELECTRA discriminator
    losses: list[dict]  # one row per step: epoch, step, loss, generator_loss, discriminator_loss
    n_tokens: int


class Objective:
    """One training step's loss for a kind of control model."""

    def __init__(self, kind: str, size: architectures.Size, tokenizer, generator: torch.Generator):
        self.kind = kind
        self.tokenizer = tokenizer
        self.rng = generator
        self.special_ids = sorted(set(tokenizer.all_special_ids))
        if kind == "masked":
            self.model = architectures.masked_lm(size, tokenizer)
            self.networks = [self.model]
        elif kind == "causal":
            self.model = architectures.causal_lm(size, tokenizer)
            self.networks = [self.model]
        else:
            self.model = architectures.electra_discriminator(size, tokenizer)
            self.generator = architectures.electra_generator(size, tokenizer)
            self.networks = [self.model, self.generator]

    def parameters(self):
        return [p for network in self.networks for p in network.parameters()]

    def train(self) -> None:
        for network in self.networks:
            network.train()

    def loss(self, ids: torch.Tensor, attention: torch.Tensor) -> tuple[torch.Tensor, dict]:
        if self.kind == "causal":
            labels = ids.masked_fill(attention == 0, -100)
            return self.model(input_ids=ids, attention_mask=attention, labels=labels).loss, {}
        corrupted, chosen = mask_tokens(ids, attention, self.special_ids,
                                        self.tokenizer.mask_token_id, len(self.tokenizer),
                                        MASK_PROBABILITY, self.rng)
        if self.kind == "masked":
            hidden = self.model.bert(input_ids=corrupted, attention_mask=attention)[0]
            logits = self.model.cls(hidden[chosen])
            return F.cross_entropy(logits, ids[chosen]), {}
        generator = self.generator
        hidden = generator.electra(input_ids=corrupted, attention_mask=attention)[0]
        logits = generator.generator_lm_head(generator.generator_predictions(hidden[chosen]))
        generator_loss = F.cross_entropy(logits, ids[chosen])
        with torch.no_grad():
            sampled = torch.multinomial(F.softmax(logits.float(), dim=-1), 1,
                                        generator=self.rng).squeeze(1)
        replaced_input = ids.clone()
        replaced_input[chosen] = sampled
        replaced = (replaced_input != ids).float()
        scores = self.model(input_ids=replaced_input, attention_mask=attention).logits
        real = attention.bool()
        discriminator_loss = F.binary_cross_entropy_with_logits(scores[real], replaced[real])
        loss = generator_loss + DISCRIMINATOR_WEIGHT * discriminator_loss
        return loss, {"generator_loss": generator_loss.item(),
                      "discriminator_loss": discriminator_loss.item()}


def train(kind: str, texts: list[str], tokenizer, size: architectures.Size,
          schedule: Schedule) -> Trained:
    set_seed(schedule.seed)
    rng = torch.Generator().manual_seed(schedule.seed)
    rows = encode(tokenizer, texts, kind, size.max_length)
    lengths = [len(r) for r in rows]
    objective = Objective(kind, size, tokenizer, rng)
    optimizer = torch.optim.AdamW(objective.parameters(), lr=schedule.learning_rate,
                                  weight_decay=0.01)
    steps_per_epoch = -(-len(rows) // schedule.batch_size)
    total = schedule.epochs * steps_per_epoch
    warmup = max(1, round(WARMUP_FRACTION * total))
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup, total)
    n_params = sum(p.numel() for p in objective.model.parameters())
    log.info("training a %s control (%d parameters) on %d sentences, %d tokens: %d epochs of "
             "%d steps", kind, n_params, len(rows), sum(lengths), schedule.epochs,
             steps_per_epoch)
    objective.train()
    losses, step = [], 0
    bar = progress_bar(total, desc=f"train {kind}", unit="step")
    for epoch in range(1, schedule.epochs + 1):
        epoch_losses = []
        for batch in length_bucketed_batches(lengths, schedule.batch_size, POOL_BATCHES, rng):
            ids, attention = pad_rows([rows[i] for i in batch], tokenizer.pad_token_id)
            loss, parts = objective.loss(ids, attention)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(objective.parameters(), MAX_GRAD_NORM)
            optimizer.step()
            scheduler.step()
            step += 1
            losses.append({"epoch": epoch, "step": step, "loss": loss.item(),
                           "generator_loss": parts.get("generator_loss"),
                           "discriminator_loss": parts.get("discriminator_loss")})
            epoch_losses.append(loss.item())
            bar.set_postfix(epoch=epoch, loss=f"{loss.item():.3f}", refresh=False)
            bar.update(1)
        log.info("epoch %d: mean loss %.4f", epoch, float(np.mean(epoch_losses)))
    bar.close()
    objective.model.eval()
    return Trained(objective.model, losses, sum(lengths))
