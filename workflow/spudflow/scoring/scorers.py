"""One scorer object per model kind, all with the same interface:

    scorer.encode(items) -> list[EncodedItem]             tokens, offsets, words, skip reasons
    scorer.score(encoded, method, targets, bar) -> list[np.ndarray]
        natural-log probability of each wanted token (targets[i]: token indices of sentence i)
    scorer.describe() -> str                              for the job log
    scorer.method_key(method) -> str                      what the score cache keys a method's
                                                          scores under

and, n-gram scorers only (run.py asks with getattr), `unseen(encoded)`: per token, whether the
model never saw its word in training; `order1_logprobs(encoded, method)` and
`padded_length(encoded)`: the terms of Lau et al.'s measures.

so run.py, the reductions and the output tables do not depend on the kind of model.
"""

from __future__ import annotations

from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.model_source import resolve_source


def load_scorer(kind: str, model: str, *, gguf_file: str | None = None, device: str = "auto",
                dtype: str = "auto", batch_tokens: int | None = None,
                trust_remote_code: bool = False, sentence_end: bool = False,
                revision: str | None = None, l2r_words: str = "tokenizer", placement=None):
    """The scorer for a model (a hub id at `revision`); anything that cannot be loaded raises
    InputError (exit 2). `sentence_end`: an n-gram model also scores `</s>` (Lau et al.'s
    measures). `l2r_words`: a masked model's pppl_l2r words (masked.py). `placement`: a
    transformer split across devices (core/device_map.py), None for one device."""
    source = resolve_source(model, gguf_file, revision)
    if kind == "ngram":
        from spudflow.scoring.ngram_scorer import NgramScorer

        if not source.local or source.gguf_file or not Path(source.location).is_file():
            raise InputError(model, None, "an ngram model is a file written by "
                                          "`spudflow ngram-train`")
        return NgramScorer(source.location, sentence_end)

    from spudflow.scoring.causal import CausalScorer
    from spudflow.scoring.electra import ElectraScorer
    from spudflow.scoring.masked import MaskedScorer
    from spudflow.scoring.transformer import load_pretrained, pick_device, pick_dtype

    torch_device = pick_device(device)
    torch_dtype = pick_dtype(dtype, torch_device)
    from spudflow.core.device_map import Placement

    tokenizer, network = load_pretrained(source, kind, torch_dtype, torch_device,
                                         trust_remote_code, placement or Placement())
    if kind == "masked":
        return MaskedScorer(tokenizer, network, torch_device, batch_tokens, l2r_words)
    scorer_class = {"causal": CausalScorer, "electra": ElectraScorer}[kind]
    return scorer_class(tokenizer, network, torch_device, batch_tokens)
