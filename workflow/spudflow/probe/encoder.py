"""The frozen encoder whose layers the probe reads, and the baselines of App. F.3.

- none: the pretrained model;
- M0: its layer 0 (the embedding layer);
- MR: the same architecture with every weight random (AutoModel.from_config, seeded);
- MRC: random like MR except the whole embedding layer (App. F.3: "all parameters except the
  embedding layer"), copied from the pretrained model: for BERT the word, position and
  token-type embeddings and their LayerNorm.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import AutoConfig, AutoModel, AutoTokenizer
from transformers.utils import logging as transformers_logging

from spudflow.core.device_map import WHOLE_MODEL, Placement
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.model_source import check_model_files, loading_errors, resolve_source

log = get_logger(__name__)

# Architectures whose hidden state k does not depend on the layers above k (no final norm on the
# last state), so a model cut to the highest requested layer gives the same features, faster.
# hidden_states[L] is layer L's output and nothing follows the last layer: keep L layers.
CUT_AT_LAYER = {"bert", "roberta", "xlm-roberta", "electra", "camembert"}
# hidden_states[L] is the input of block L, but the last one has passed the final LayerNorm
# (ln_f): keep one block above L, so that hidden_states[L] stays that input.
CUT_ABOVE_LAYER = {"gpt2", "gpt_neo"}
# Architectures by the attention of their layers: every position (bidirectional) or only the
# earlier ones (causal); what the GPU feed's square masks must reproduce (core/gpu_feed.py).
BIDIRECTIONAL = {"bert", "roberta", "xlm-roberta", "electra", "camembert", "distilbert"}
CAUSAL = {"gpt2", "gpt_neo"}


def square_mask_direction(model: torch.nn.Module) -> bool | None:
    """Whether the model's square attention mask is causal (True) or not (False); None where
    the model cannot take one: attention other than SDPA, or an architecture not known here."""
    config = model.config
    if getattr(config, "_attn_implementation", None) != "sdpa":
        return None
    if config.model_type in BIDIRECTIONAL:
        return False
    return True if config.model_type in CAUSAL else None


@dataclass
class Encoder:
    model: torch.nn.Module
    tokenizer: object
    n_layers: int        # of the full model; valid layers are 0..n_layers
    max_length: int      # model input tokens, special tokens included


def _n_layers(config) -> int:
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if isinstance(getattr(config, key, None), int):
            return getattr(config, key)
    raise InputError(config.name_or_path, None, "cannot tell the model's number of layers")


def _max_length(config, tokenizer, given: int | None) -> int:
    if given is not None:
        return given
    limits = [getattr(config, "max_position_embeddings", None),
              getattr(config, "n_positions", None), tokenizer.model_max_length]
    return min(v for v in limits if isinstance(v, int) and 0 < v < 1_000_000)


def embedding_layer(model: torch.nn.Module, source: str) -> torch.nn.Module:
    """The module that holds the model's input embeddings (BertModel.embeddings: word, position,
    token-type embeddings and LayerNorm), found as the parent of get_input_embeddings(). Bad
    input when the input embeddings sit directly in the model (GPT-2's wte/wpe): there is no
    embedding layer to copy apart from the rest."""
    inputs = model.get_input_embeddings()
    name = next((n for n, m in model.named_modules() if m is inputs), None)
    parent = name.rpartition(".")[0] if name else ""
    if not parent:
        raise InputError(source, None, f"baseline MRC: {model.config.model_type} has no "
                         "embedding layer module (its input embeddings sit directly in the model)")
    return model.get_submodule(parent)


def log_hub_commit(repo_id: str, revision: str | None = None) -> None:
    """Which snapshot of the hub cache an encoder came from, as scoring jobs log theirs: a
    rehearsal (and a reader of a real run's log) sees every hub model's commit."""
    from spudflow.core.hub_cache import loaded_snapshot

    named = f" (revision {revision})" if revision else ""
    try:
        log.info("hub model %s at commit %s%s", repo_id,
                 loaded_snapshot(repo_id, revision).name, named)
    except LookupError as error:
        log.warning("hub model %s%s: no snapshot in the hub cache to name (%s)", repo_id, named,
                    error)


def _cut(config, top: int, n_layers: int) -> None:
    """Build only the layers that hidden_states[top] depends on (the same vectors, faster:
    mGPT's layer 12 of 24 needs 13 blocks). A model without any layer reports no hidden
    states at all, so at least one stays."""
    if config.model_type in CUT_AT_LAYER:
        config.num_hidden_layers = max(1, top)
    elif config.model_type in CUT_ABOVE_LAYER and top < n_layers:
        config.num_hidden_layers = top + 1


# Modules of a base model that no probe layer passes through: a checkpoint of a model with a
# language-model head (BertForMaskedLM) has no pooler, and AutoModel would build one at random.
OUTSIDE_THE_LAYERS = {"pooler"}


def new_encoder_weights(model: torch.nn.Module, missing_keys: list[str]) -> list[str]:
    """The parameters among transformers' `missing_keys` (no weights in the files: initialised
    at random) that the encoder's layers use, i.e. all but the pooler's."""
    prefix = f"{getattr(model, 'base_model_prefix', '')}."
    used = []
    for key in missing_keys:
        name = key[len(prefix):] if prefix != "." and key.startswith(prefix) else key
        if name.split(".")[0] not in OUTSIDE_THE_LAYERS:
            used.append(key)
    return sorted(used)


def _pretrained(source: str, location: str, config, options: dict,
                placement: Placement = WHOLE_MODEL) -> torch.nn.Module:
    """The pretrained encoder; bad input where the files lack weights of its layers (an
    embedding or a layer of a damaged or partial checkpoint), which transformers would draw at
    random: features of a random layer, differently on every run."""
    with loading_errors(source, "an encoder"):
        model, loading = AutoModel.from_pretrained(location, config=config, dtype=torch.float32,
                                                   output_loading_info=True, **options,
                                                   **placement.loading_options())
    missing = new_encoder_weights(model, loading.get("missing_keys") or [])
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3
                                          else "")
        raise InputError(source, None, f"holds no weights for {shown} of the encoder: they would "
                         "be randomly initialised; choose a complete checkpoint")
    return model


def load_encoder(source: str, layers: list[int], baseline: str | None, init_seed: int,
                 max_length: int | None, device: str, revision: str | None = None,
                 placement: Placement = WHOLE_MODEL) -> Encoder:
    """The encoder for `baseline` (a hub id at `revision`), cut above the highest layer needed
    where that is exact; the pretrained one (and M0) split across devices as `placement` says
    (core/device_map.py), the random baselines built whole. A layer outside 0..n_layers is bad
    input."""
    resolved = resolve_source(source, revision=revision)
    options = {"revision": resolved.revision} if resolved.revision else {}
    check_model_files(resolved, source, weights=baseline != "MR")  # MR: random weights
    location = resolved.location
    # The weights of layers cut off show up as "unexpected" in a long load report: keep it out.
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    with loading_errors(source, "an encoder"):
        config = AutoConfig.from_pretrained(location, **options)
        tokenizer = AutoTokenizer.from_pretrained(location, **options)
    if not resolved.local:
        log_hub_commit(location, revision)
    n_layers = _n_layers(config)
    outside = [layer for layer in layers if not 0 <= layer <= n_layers]
    if outside:
        raise InputError(source, None, f"layer {outside[0]} is outside the model "
                         f"(layers 0..{n_layers}, 0 = embeddings)")
    if baseline == "M0" and layers != [0]:
        raise InputError(source, None, "baseline M0 is layer 0 only (--layers 0)")
    _cut(config, max(layers), n_layers)
    # GPT-2 keeps every layer's keys and values by default, which features never read: 7% of
    # the stand-in mGPT's time in the full-size rehearsal, 2 x layers x tokens x hidden floats
    # of GPU memory in a real run
    config.use_cache = False
    if baseline in (None, "M0"):
        model = _pretrained(source, location, config, options, placement)
        if placement.mapped:  # accelerate has placed every layer
            return Encoder(model.eval(), tokenizer, n_layers,
                           _max_length(config, tokenizer, max_length))
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(init_seed)
            model = AutoModel.from_config(config, dtype=torch.float32)
        if baseline == "MRC":
            pretrained = _pretrained(source, location, config, options)
            # strict: the same architecture, so every parameter and buffer must match
            embedding_layer(model, source).load_state_dict(
                embedding_layer(pretrained, source).state_dict())
    return Encoder(model.eval().to(device), tokenizer, n_layers,
                   _max_length(config, tokenizer, max_length))
