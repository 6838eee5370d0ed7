"""Tokenizers of the control models: byte-level BPE trained by `tokenizers` on the training text
(GPT-2's and RoBERTa's scheme: any string encodes, nothing is unknown, every script works).

Byte-level BPE rather than WordPiece (BERT's) or Unigram: with tokenizers 0.23 their trainers
break ties between equally frequent merges in hash-map order, so two runs on the same text give
different vocabularies; byte-level BPE training gives the same tokenizer every time, which the
pipeline's determinism needs (same text and seed => identical model directory)."""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

# Masked LM and ELECTRA: BERT's special tokens, `[CLS] sentence [SEP]` as input.
ENCODER_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# GPT-2's one special token: begins (the scorer's BOS prefix) and ends every sentence, and pads.
ENDOFTEXT = "<|endoftext|>"


def _byte_bpe(texts: list[str], vocab_size: int, specials: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainer=trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def encoder_tokenizer(texts: list[str], vocab_size: int,
                      max_length: int) -> PreTrainedTokenizerFast:
    """For the masked LM and ELECTRA: [CLS] sentence [SEP], with a [MASK] token."""
    tok = _byte_bpe(texts, vocab_size, ENCODER_SPECIALS)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)


def causal_tokenizer(texts: list[str], vocab_size: int,
                     max_length: int) -> PreTrainedTokenizerFast:
    """For GPT-2: no special tokens added by encoding (the causal scorer puts the BOS prefix in
    itself)."""
    tok = _byte_bpe(texts, vocab_size, [ENDOFTEXT])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=ENDOFTEXT, eos_token=ENDOFTEXT, pad_token=ENDOFTEXT,
        model_max_length=max_length)


def train_tokenizer(kind: str, texts: list[str], vocab_size: int,
                    max_length: int) -> PreTrainedTokenizerFast:
    if kind == "causal":
        return causal_tokenizer(texts, vocab_size, max_length)
    return encoder_tokenizer(texts, vocab_size, max_length)
