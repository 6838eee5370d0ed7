"""The networks of the control models, built from transformers configs with random weights."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("masked", "causal", "electra")


@dataclass(frozen=True)
class Size:
    """How big a control model is (the config's size keys)."""

    layers: int
    hidden: int
    heads: int
    max_length: int

    @property
    def intermediate(self) -> int:
        return 4 * self.hidden

    def generator(self) -> Size:
        """ELECTRA's generator: half the discriminator's width (Clark et al. found 1/4-1/2 best),
        as deep, with as many heads as still divide its width."""
        hidden = max(self.hidden // 2, 1)
        heads = next(h for h in range(min(self.heads, hidden), 0, -1) if hidden % h == 0)
        return Size(self.layers, hidden, heads, self.max_length)


def masked_lm(size: Size, tokenizer):
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(BertConfig(
        vocab_size=len(tokenizer), hidden_size=size.hidden, num_hidden_layers=size.layers,
        num_attention_heads=size.heads, intermediate_size=size.intermediate,
        max_position_embeddings=size.max_length, pad_token_id=tokenizer.pad_token_id))


def causal_lm(size: Size, tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(GPT2Config(
        vocab_size=len(tokenizer), n_embd=size.hidden, n_layer=size.layers, n_head=size.heads,
        n_inner=size.intermediate, n_positions=size.max_length,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id))


def electra_config(size: Size, tokenizer):
    from transformers import ElectraConfig

    return ElectraConfig(
        vocab_size=len(tokenizer), embedding_size=size.hidden, hidden_size=size.hidden,
        num_hidden_layers=size.layers, num_attention_heads=size.heads,
        intermediate_size=size.intermediate, max_position_embeddings=size.max_length,
        pad_token_id=tokenizer.pad_token_id)


def electra_discriminator(size: Size, tokenizer):
    from transformers import ElectraForPreTraining

    return ElectraForPreTraining(electra_config(size, tokenizer))


def electra_generator(size: Size, tokenizer):
    from transformers import ElectraForMaskedLM

    return ElectraForMaskedLM(electra_config(size.generator(), tokenizer))
