"""Tiny random models of a family, with a tokenizer of the family's type built with `tokenizers`
from the rehearsal's text, saved as a snapshot of the hub id in an offline hub cache.

Byte-level BPE is trained by `tokenizers`' trainer (deterministic over its fixed alphabet);
WordPiece's pieces are learned by the same BPE trainer (its own trainer breaks ties in hash-map
order); Unigram vocabularies are counted here (frequent words, then every character). The same
text must give the same snapshot commit, or a second rehearsal would rerun every scoring job."""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from pathlib import Path

from spudflow.core.hub_cache import add_snapshot
from spudflow.rehearse.families import Family

HIDDEN, HEADS, POSITIONS = 32, 2, 512
VOCAB_WORDS = 600  # whole words of the Unigram stand-in (beside its single characters)
# Learned subword vocabularies (WordPiece, byte-level BPE) of a real model's size: their tokens
# per word on the stand-in treebanks (1.3-1.8 for de, en, fr, ar, ru) are near a real model's,
# so a rehearsal's token counts, its cost and its "longer than the model" sentences are too.
# With 600 whole words and single characters (the Unigram stand-in still), a word outside them
# was spelt out (3-4.6 tokens per word): PPPL, quadratic in tokens, cost 6-8 times a real
# tokenizer's.
SUBWORD_VOCAB = 30_000
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
ENDOFTEXT = "<|endoftext|>"


def _words(texts: list[str]) -> Counter:
    return Counter(word for text in texts for word in text.split())


def _characters(texts: list[str]) -> list[str]:
    return sorted({ch for text in texts for ch in text if not ch.isspace()})


def _frequent(counts: Counter) -> list[str]:
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:VOCAB_WORDS]]


WORD_START = "\u2581"  # marks a word's first piece while the subwords are learned


def _learned_wordpieces(texts: list[str]) -> list[str]:
    """WordPiece's vocabulary learned as BPE merges over words marked at their start: a piece
    with the mark begins a word (`walk`), one without continues it (`##ing`). WordPieceTrainer
    gives its `##` pieces ids in hash-map order and, through ties, a different vocabulary in
    every process; BPE over a fixed, sorted alphabet gives the same one every time."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.BertPreTokenizer(),
        pre_tokenizers.Metaspace(replacement=WORD_START, prepend_scheme="always")])
    alphabet = {ch for text in texts for ch in tok.normalizer.normalize_str(text)
                if not ch.isspace()}
    tok.train_from_iterator(texts, trainer=trainers.BpeTrainer(
        vocab_size=SUBWORD_VOCAB, show_progress=False,
        initial_alphabet=sorted(alphabet | {WORD_START})))
    pieces = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    return [p.removeprefix(WORD_START) if p.startswith(WORD_START) else f"##{p}"
            for p in pieces if p != WORD_START]


def _wordpiece(texts: list[str], char_level: bool):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    chars = _characters(texts)
    # every character, alone and inside a word: no word of the text is [UNK]
    vocab = list(BERT_SPECIALS) + chars + [f"##{c}" for c in chars]
    if not char_level:
        vocab += _learned_wordpieces(texts)
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(dict.fromkeys(vocab))},
                                     unk_token="[UNK]", max_input_chars_per_word=200))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    if char_level:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex("."), "isolated")])
    else:
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok


def _unigram(texts: list[str], specials: list[str]):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    counts = _words(texts)
    pieces = Counter({f"▁{w}": c for w, c in counts.items() if w in set(_frequent(counts))})
    for text in texts:
        pieces.update(text.replace(" ", ""))
    pieces["▁"] += len(texts)
    total = sum(pieces.values())
    vocab = [(s, 0.0) for s in specials] + [
        (p, math.log(c / total)) for p, c in sorted(pieces.items(), key=lambda kv: (-kv[1], kv[0]))]
    tok = Tokenizer(models.Unigram(vocab, unk_id=specials.index(
        "<unk>" if "<unk>" in specials else "[UNK]"), byte_fallback=False))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tok


def _byte_bpe(texts: list[str], specials: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainer=trainers.BpeTrainer(
        vocab_size=SUBWORD_VOCAB, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def _wrap(tok, first: str, last: str) -> None:
    from tokenizers import processors

    tok.post_processor = processors.TemplateProcessing(
        single=f"{first} $A {last}", pair=f"{first} $A {last} $B:1 {last}:1",
        special_tokens=[(first, tok.token_to_id(first)), (last, tok.token_to_id(last))])


def _japanese_bert_tokenizer(texts: list[str], char_level: bool, **common):
    """transformers' BertJapaneseTokenizer, the class of the Japanese BERTs and ELECTRA on the
    hub, which has no fast version: a rehearsal scores through the slow tokenizers' path as the
    real models do. It splits words with its basic splitter (the real ones use MeCab, which
    needs a dictionary package), then WordPiece or characters over the same vocabulary."""
    import transformers as tf

    vocab = _wordpiece(texts, char_level).get_vocab()
    with tempfile.TemporaryDirectory(prefix="spudflow-vocab-") as tmp:
        vocab_file = Path(tmp) / "vocab.txt"
        vocab_file.write_text("".join(f"{t}\n" for t in sorted(vocab, key=vocab.get)),
                              encoding="utf-8")
        return tf.BertJapaneseTokenizer(
            str(vocab_file), do_lower_case=False, word_tokenizer_type="basic",
            subword_tokenizer_type="character" if char_level else "wordpiece", **common)


def build_tokenizer(family: Family, texts: list[str]):
    """The family's tokenizer class around a `tokenizers` tokenizer of its type (the Japanese
    BERTs': the slow class they have on the hub)."""
    import transformers as tf

    arch, tokenizer_type = family.architecture, family.tokenizer
    common = {"model_max_length": POSITIONS}
    if arch in ("roberta", "xlm-roberta"):
        tok = (_unigram(texts, ROBERTA_SPECIALS) if tokenizer_type == "unigram"
               else _byte_bpe(texts, ROBERTA_SPECIALS))
        _wrap(tok, "<s>", "</s>")
        cls = tf.XLMRobertaTokenizerFast if arch == "xlm-roberta" else tf.RobertaTokenizerFast
        return cls(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                   cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                   **common)
    if arch in ("bert", "electra") and tokenizer_type in ("wordpiece-ja", "char"):
        return _japanese_bert_tokenizer(texts, char_level=tokenizer_type == "char", **common)
    if arch in ("bert", "electra"):
        tok = _wordpiece(texts, char_level=tokenizer_type == "char")
        _wrap(tok, "[CLS]", "[SEP]")
        cls = tf.ElectraTokenizerFast if arch == "electra" else tf.BertTokenizerFast
        return cls(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", **common)
    # Causal models: GPT-2's byte-level BPE, or a SentencePiece-style Unigram (rinna's).
    if tokenizer_type == "unigram":
        tok = _unigram(texts, ["<pad>", "<s>", "</s>", "<unk>"])
        return tf.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>",
                                          eos_token="</s>", unk_token="<unk>",
                                          pad_token="<pad>", **common)
    tok = _byte_bpe(texts, [ENDOFTEXT])
    return tf.GPT2TokenizerFast(tokenizer_object=tok, bos_token=ENDOFTEXT, eos_token=ENDOFTEXT,
                                unk_token=ENDOFTEXT, **common)


def build_model(family: Family, tokenizer, seed: int):
    import torch
    import transformers as tf

    vocab, layers = len(tokenizer), family.layers
    encoder = dict(vocab_size=vocab, hidden_size=HIDDEN, num_hidden_layers=layers,
                   num_attention_heads=HEADS, intermediate_size=4 * HIDDEN,
                   pad_token_id=tokenizer.pad_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        arch = family.architecture
        if arch == "bert":
            return tf.BertForMaskedLM(tf.BertConfig(max_position_embeddings=POSITIONS, **encoder))
        if arch in ("roberta", "xlm-roberta"):
            config_cls = tf.XLMRobertaConfig if arch == "xlm-roberta" else tf.RobertaConfig
            model_cls = (tf.XLMRobertaForMaskedLM if arch == "xlm-roberta"
                         else tf.RobertaForMaskedLM)
            return model_cls(config_cls(
                max_position_embeddings=POSITIONS + 2, bos_token_id=tokenizer.bos_token_id,
                eos_token_id=tokenizer.eos_token_id, **encoder))
        if arch == "electra":
            return tf.ElectraForPreTraining(tf.ElectraConfig(
                embedding_size=HIDDEN, max_position_embeddings=POSITIONS, **encoder))
        if arch == "gpt-neo":
            return tf.GPTNeoForCausalLM(tf.GPTNeoConfig(
                vocab_size=vocab, hidden_size=HIDDEN, num_layers=layers, num_heads=HEADS,
                attention_types=[[["global", "local"], layers // 2]],
                max_position_embeddings=POSITIONS, window_size=256,
                bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id))
        return tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=vocab, n_embd=HIDDEN, n_layer=layers, n_head=HEADS,
            n_inner=4 * HIDDEN, n_positions=POSITIONS, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id))


def add_tiny_model(cache: Path, hub_id: str, family: Family, texts: list[str],
                   seed: int) -> str:
    """Build the stand-in of `hub_id` and add it to the hub cache; returns the commit."""
    tokenizer = build_tokenizer(family, texts)
    model = build_model(family, tokenizer, seed).eval()
    with tempfile.TemporaryDirectory(prefix="spudflow-tiny-") as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        return add_snapshot(cache, hub_id, Path(tmp))
