"""Model outputs at chosen positions only.

A language-model head is a position-wise map from the last hidden state to the vocabulary. The
base model (`model.base_model`: `bert`, `transformer`, `model`, `electra`, ...) runs on the whole
batch; a forward hook on it replaces its last hidden state by the states at the positions we
need, flattened to (1, N, hidden), so the head's matrix product — the full vocabulary — runs on
those N positions alone (one per masked copy for PPPL) instead of at every position. This works
for any *ForMaskedLM / *ForCausalLM / ELECTRA discriminator whose head is applied position-wise
to the base model's output, whatever the head module is called.
"""

from __future__ import annotations

import torch

# Vocabulary rows turned into log probabilities at a time: bounds the fp32 copy of the logits.
LOGSUMEXP_CHUNK = 1024
# The head runs on the gathered positions padded to a multiple of this many rows: a matrix
# product with one row takes another kernel (matrix-vector) whose results differ in the last
# bits, so without it a position's value would depend on how many others its batch gathers.
HEAD_ROWS = 8


def outputs_at(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               flat_positions: torch.Tensor) -> torch.Tensor:
    """The model's logits at the flat positions (row * length + column): (N, vocab) for LM heads,
    (N,) for an ELECTRA discriminator."""
    base = model.base_model
    if base is model:  # no separate head: compute everywhere, then pick
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
        logits = logits.to(flat_positions.device)
        return logits.reshape(-1, *logits.shape[2:]).index_select(0, flat_positions)

    n = flat_positions.shape[0]
    padded = torch.nn.functional.pad(flat_positions, (0, -n % HEAD_ROWS))  # extra rows: row 0

    def gather_hidden(module, args, output):
        hidden = output[0]
        # a model split across GPUs ends its base model on another device than its inputs
        gathered = hidden.reshape(-1, hidden.shape[-1]).index_select(0, padded.to(hidden.device))
        gathered = gathered.unsqueeze(0)
        if isinstance(output, tuple):
            return (gathered, *output[1:])
        output.last_hidden_state = gathered
        return output

    handle = base.register_forward_hook(gather_hidden)
    try:
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    finally:
        handle.remove()
    return logits[0, :n].to(flat_positions.device)  # a split model's head: maybe another GPU


def target_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log softmax(logits)[target] per row, computed in fp32 whatever the model's dtype."""
    out = torch.empty(logits.shape[0], dtype=torch.float32, device=logits.device)
    for start in range(0, logits.shape[0], LOGSUMEXP_CHUNK):
        part = logits[start:start + LOGSUMEXP_CHUNK].float()
        picked = part.gather(1, targets[start:start + LOGSUMEXP_CHUNK, None]).squeeze(1)
        out[start:start + LOGSUMEXP_CHUNK] = picked - part.logsumexp(-1)
    return out


def lm_forward(model: torch.nn.Module):
    """BatchRunner forward: log P(target) at each gathered position under an LM head."""

    def forward(input_ids, attention_mask, flat_positions, targets):
        return target_logprobs(outputs_at(model, input_ids, attention_mask, flat_positions),
                               targets)

    return forward


def discriminator_forward(model: torch.nn.Module):
    """BatchRunner forward: log P(original) = log sigmoid(-logit) of an ELECTRA discriminator,
    whose logit is positive for tokens it thinks were replaced."""

    def forward(input_ids, attention_mask, flat_positions, targets):
        logits = outputs_at(model, input_ids, attention_mask, flat_positions)
        return torch.nn.functional.logsigmoid(-logits.float())

    return forward
