"""Loading transformers models and what every transformer scorer shares."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from spudflow.core.device_map import WHOLE_MODEL, Placement, execution_device
from spudflow.core.errors import InputError
from spudflow.core.model_source import ModelSource, check_model_files, loading_errors
from spudflow.core.slow_offsets import UnalignedToken
from spudflow.scoring.batching import BatchPolicy, BatchRunner
from spudflow.scoring.encoding import EncodedItem, encode_with_tokenizer
from spudflow.scoring.items import Item
from spudflow.scoring.methods import scoring_function
from spudflow.scoring.rows import Rows

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# Padded tokens per batch when --batch-tokens is not given.
DEFAULT_BATCH_TOKENS = {"cpu": 4096, "cuda": 16384}


def pick_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError("--device", None, f"{device} requested but CUDA is not available")
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise InputError("--device", None, str(error)) from None


def pick_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """`auto`: bfloat16 on a GPU that supports it, float32 otherwise."""
    if dtype == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    if dtype not in DTYPES:
        raise InputError("--dtype", None, f"unknown dtype {dtype!r} (auto, {', '.join(DTYPES)})")
    return DTYPES[dtype]


def auto_class(kind: str):
    import transformers

    return {"causal": transformers.AutoModelForCausalLM,
            "masked": transformers.AutoModelForMaskedLM,
            "electra": transformers.AutoModelForPreTraining}[kind]


def refuse_new_weights(name: str, what: str, loading: dict) -> None:
    """Bad input where transformers found no weights for some parameters of WHAT in the files
    (`missing_keys`): it initialises them at random, so an encoder without its MLM head would be
    scored with a random head, differently on every cold run."""
    missing = sorted(loading.get("missing_keys") or [])
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3
                                          else "")
        raise InputError(name, None, f"holds no weights for {shown} of {what}: they would be "
                         "randomly initialised (a model without the head this kind needs); "
                         "choose a model with that head or another --kind")


def load_pretrained(source: ModelSource, kind: str, dtype: torch.dtype, device: torch.device,
                    trust_remote_code: bool, placement: Placement = WHOLE_MODEL):
    """(tokenizer, model) of a source, on `device` or split across devices as `placement`
    says (core/device_map.py). A path that holds no model, or a hub id that cannot be found,
    is bad input (exit 2); any other failure propagates with its traceback."""
    from transformers import AutoTokenizer

    options = {"trust_remote_code": trust_remote_code, **source.loading_options()}
    name = str(Path(source.location) / source.gguf_file) if source.gguf_file and source.local \
        else source.describe()
    allow = None if trust_remote_code else (
        "--trust-remote-code (the config: the model's trust_remote_code: true) is not given, "
        "which allows it for a source you trust")
    check_model_files(source, name, remote_code=allow)
    with loading_errors(name, f"a {kind} model", gguf=bool(source.gguf_file),
                        remote_code=allow):
        tokenizer = AutoTokenizer.from_pretrained(source.location, **options)
        model, loading = auto_class(kind).from_pretrained(
            source.location, dtype=dtype, output_loading_info=True, **options,
            **placement.loading_options())
    if kind == "electra" and not hasattr(model, "discriminator_predictions"):
        raise InputError(name, None,
                         f"is not an ELECTRA discriminator ({type(model).__name__})")
    refuse_new_weights(name, f"a {kind} model", loading)
    if placement.mapped:  # accelerate has placed every layer
        return tokenizer, model.eval()
    return tokenizer, model.to(device).eval()


def max_input_length(model, tokenizer) -> int | None:
    """Longest input the model takes: its position table, or the tokenizer's limit if smaller
    (RoBERTa-style models reserve positions for padding)."""
    limits = []
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") \
        else model.config
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            limits.append(value)
            break
    if isinstance(tokenizer.model_max_length, int) and tokenizer.model_max_length < 1_000_000:
        limits.append(tokenizer.model_max_length)
    return min(limits) if limits else None


class TransformerScorer:
    """Shared part of the causal, masked and ELECTRA scorers: model, tokenizer, encoding,
    batching."""

    kind = ""
    # Each sentence in the tokenizer's special-token template (`[CLS] … [SEP]`), as masked and
    # ELECTRA models were trained; a causal model is given `prefix` instead.
    template = True
    prefix: tuple[int, ...] = ()  # ids put before each sentence's tokens (a causal model's BOS)

    def __init__(self, tokenizer, model, device: torch.device, batch_tokens: int | None):
        self.tokenizer = tokenizer
        self.model = model
        self.device = execution_device(model, device)  # a split model's first device
        device = self.device
        self.max_length = max_input_length(model, tokenizer)
        budget = batch_tokens or DEFAULT_BATCH_TOKENS.get(device.type, 4096)
        pad_id = tokenizer.pad_token_id
        if pad_id is None:  # padded positions are masked out, any id will do
            pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        sdpa = getattr(model.config, "_attn_implementation", None) == "sdpa"
        self.runner = BatchRunner(self.forward(), pad_id=pad_id,
                                  mask_id=tokenizer.mask_token_id, device=device,
                                  batch_tokens=budget,
                                  policy=BatchPolicy.for_device(device, sdpa=sdpa),
                                  causal=self.kind == "causal")

    def forward(self):
        raise NotImplementedError

    def encode(self, items: Sequence[Item]) -> list[EncodedItem]:
        """A slow tokenizer's token that its text cannot place is bad input (exit 2), named by
        model and item, never a guessed offset."""
        try:
            return encode_with_tokenizer(items, self.tokenizer, template=self.template,
                                         prefix=self.prefix, max_length=self.max_length)
        except UnalignedToken as error:
            raise InputError(self.model.name_or_path, None,
                             f"item {items[error.text_index].item_id}: {error}") from None

    def score(self, encoded: Sequence[EncodedItem], method: str,
              targets: Sequence[Sequence[int]], bar=None) -> list[np.ndarray]:
        """`method`'s log probabilities (its entry's function, core/scoring_methods.py)."""
        return scoring_function(method)(self, encoded, targets, bar)

    def method_key(self, method: str) -> str:
        """What the score cache keys `method`'s scores under (with any setting of the scorer that
        changes them)."""
        return method

    def describe(self) -> str:
        return (f"{type(self.model).__name__} on {self.device} in "
                f"{str(self.model.dtype).removeprefix('torch.')}, max input "
                f"{self.max_length} tokens, batches of up to {self.runner.batch_tokens} tokens")

    def run_rows(self, rows: Rows, sizes: list[int], bar) -> list[np.ndarray]:
        # accelerate's hooks on a split model's layers move weights and tensors between
        # devices, which torch.compile would trace through: a split model runs eagerly
        if self.runner.policy.compile and not getattr(self, "_compiled", False) and \
                not getattr(self.model, "hf_device_map", None):
            # the base model's forward only: the hook that gathers positions (heads.py), a new
            # closure every call, stays outside the compiled code
            base = self.model.base_model
            base.forward = torch.compile(base.forward, dynamic=False)
            self._compiled = True
        return self.runner.run(rows, sizes, bar)
