"""Tokenizers of the control models, trained by `tokenizers` on the training text: WordPiece
for the BERT and ELECTRA controls, byte-level BPE for the GPT-2 control."""

from __future__ import annotations

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import PreTrainedTokenizerFast

WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# GPT-2's one special token: begins (the scorer's BOS prefix) and ends every sentence, and pads.
ENDOFTEXT = "<|endoftext|>"


def wordpiece_tokenizer(texts: list[str], vocab_size: int,
                        max_length: int) -> PreTrainedTokenizerFast:
    """BERT-style: cased, CJK ideographs split apart, [CLS] sentence [SEP]."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False,
                                                handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(texts, trainer=trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=WORDPIECE_SPECIALS, show_progress=False))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)


def byte_bpe_tokenizer(texts: list[str], vocab_size: int,
                       max_length: int) -> PreTrainedTokenizerFast:
    """GPT-2-style byte-level BPE: every string encodes, nothing is unknown; no special tokens
    are added by encoding (the causal scorer puts the BOS prefix in itself)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainer=trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[ENDOFTEXT], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=ENDOFTEXT, eos_token=ENDOFTEXT,
        pad_token=ENDOFTEXT, model_max_length=max_length)


def train_tokenizer(kind: str, texts: list[str], vocab_size: int,
                    max_length: int) -> PreTrainedTokenizerFast:
    if kind == "causal":
        return byte_bpe_tokenizer(texts, vocab_size, max_length)
    return wordpiece_tokenizer(texts, vocab_size, max_length)
