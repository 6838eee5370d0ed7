"""Tiny BERT / GPT-2 / ELECTRA models with WordPiece, byte-level BPE and Metaspace tokenizers.

Trained with `tokenizers` and built from configs (random weights, fixed seed), saved with
save_pretrained and reloaded by the code under test, so no download is needed. Used by the
tests/test_scoring_*.py files.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import torch
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import (
    BertConfig,
    BertForMaskedLM,
    ElectraConfig,
    ElectraForPreTraining,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
)

# Models this small run fastest on one thread (and several threads on a busy machine spin).
torch.set_num_threads(1)

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TOKENIZER_KINDS = ("wordpiece", "bytebpe", "metaspace")
MODEL_KINDS = ("masked", "causal", "electra")
MAX_POSITIONS = 48

CORPUS = [
    "The cat sat on the mat.",
    "The dogs were barking loudly at the postman yesterday.",
    "A linguist studies the structure of languages.",
    "Colourless green ideas sleep furiously.",
    "She doesn't think that they'll arrive on time!",
    "Transformers tokenise words into subword units, e.g. un-believ-able.",
    "The quick brown fox jumps over the lazy dog.",
    "Who did you say that Mary saw?",
    "Les chats dorment sur le canapé.",
    "Die Katze schläft auf dem Sofa.",
    "猫がマットの上に座った。",
    "東京は日本の首都です。",
    "I love pizza 🍕 and sushi 🍣!",
]


def train_tokenizer(kind: str) -> Tokenizer:
    """A tiny tokenizer of the given family, with [CLS] $A [SEP] post-processing."""
    if kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=False)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=260, special_tokens=SPECIALS)
    elif kind == "bytebpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=SPECIALS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    elif kind == "metaspace":
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=SPECIALS,
                                          unk_token="[UNK]")
    else:
        raise ValueError(kind)
    tok.train_from_iterator(CORPUS * 3, trainer=trainer)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    return tok


def hf_tokenizer(kind: str) -> PreTrainedTokenizerFast:
    # The byte-level tokenizer has no BOS token: causal scoring must fall back to EOS.
    bos = None if kind == "bytebpe" else "[CLS]"
    return PreTrainedTokenizerFast(
        tokenizer_object=train_tokenizer(kind), unk_token="[UNK]", pad_token="[PAD]",
        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", bos_token=bos,
        eos_token="[SEP]", model_max_length=MAX_POSITIONS)


def build_model(model_kind: str, vocab_size: int, bos_id: int, eos_id: int,
                seed: int = 0) -> torch.nn.Module:
    # A large initializer range makes the output distributions peaked, so that a wrong context
    # (a token left unmasked, a position off by one) changes the scores visibly.
    common = dict(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                  num_attention_heads=2, intermediate_size=64, initializer_range=0.4,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if model_kind == "masked":
            model = BertForMaskedLM(BertConfig(max_position_embeddings=MAX_POSITIONS, **common))
        elif model_kind == "electra":
            model = ElectraForPreTraining(ElectraConfig(
                embedding_size=32, max_position_embeddings=MAX_POSITIONS, **common))
        elif model_kind == "causal":
            model = GPT2LMHeadModel(GPT2Config(
                vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=2, n_positions=MAX_POSITIONS,
                initializer_range=0.4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                bos_token_id=bos_id, eos_token_id=eos_id))
        else:
            raise ValueError(model_kind)
    return model.eval()


def save_tiny_model(root: Path, model_kind: str, tokenizer_kind: str) -> Path:
    """Build, save and return the directory of one tiny model."""
    directory = root / f"{model_kind}-{tokenizer_kind}"
    tokenizer = hf_tokenizer(tokenizer_kind)
    model = build_model(model_kind, len(tokenizer), tokenizer.cls_token_id,
                        tokenizer.sep_token_id)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@functools.cache
def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="spudflow-tiny-models-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@functools.cache
def tiny_model_dir(model_kind: str, tokenizer_kind: str) -> Path:
    """The saved tiny model, built once per test session (shared by every test file)."""
    return save_tiny_model(_root(), model_kind, tokenizer_kind)


def make_item(item_id: str, sentence: str, words: list[str],
              regions: list[tuple[str, str]] = (), language: str = "en"):
    """An Item whose word (and region) offsets are found left to right in the sentence; a region
    is (name, substring)."""
    from spudflow.scoring.items import Item, Region

    starts, ends, position = [], [], 0
    for word in words:
        start = sentence.index(word, position)
        starts.append(start)
        ends.append(start + len(word))
        position = start + len(word)
    spans = []
    for name, text in regions:
        start = sentence.index(text)
        spans.append(Region(name, start, start + len(text)))
    return Item(item_id, sentence, tuple(words), tuple(starts), tuple(ends), tuple(spans),
                language)


# Sentences with the edge cases the scorers must handle, and their words.
EDGE_CASES = [
    ("plain", "The cat sat on the mat.", ["The", "cat", "sat", "on", "the", "mat", "."]),
    ("one-token", "A", ["A"]),
    ("many-subwords", "Supercalifragilistic postmen!", ["Supercalifragilistic", "postmen", "!"]),
    ("punctuation", "Hello, world! (Really?)",
     ["Hello", ",", "world", "!", "(", "Really", "?", ")"]),
    ("cjk", "東京は日本の首都です。", ["東京", "は", "日本", "の", "首都", "です", "。"]),
    ("emoji", "I love pizza 🍕🍣!", ["I", "love", "pizza", "🍕", "🍣", "!"]),
    ("spaces", "  Leading and trailing spaces  ", ["Leading", "and", "trailing", "spaces"]),
    ("special-looking", "Type [MASK] here.", ["Type", "[", "MASK", "]", "here", "."]),
]


def edge_case_items():
    return [make_item(name, sentence, words) for name, sentence, words in EDGE_CASES]


def changed_weights(tmp_path: Path) -> Path:
    """A copy of the tiny byte-BPE GPT-2 with its first weight matrix moved by 0.01: same files,
    other scores (the score cache must miss)."""
    from transformers import AutoModelForCausalLM

    copy = tmp_path / "changed-weights"
    shutil.copytree(tiny_model_dir("causal", "bytebpe"), copy)
    model = AutoModelForCausalLM.from_pretrained(copy)
    with torch.no_grad():
        next(model.parameters()).add_(0.01)
    model.save_pretrained(copy)
    return copy


# The llama hyperparameters of small_gguf's copy: one block of width 64 (4 heads of 16, 2 KV
# heads), where SmolLM2-135M has 30 of width 576.
SMALL_LLAMA = {"llama.block_count": 1, "llama.embedding_length": 64,
               "llama.feed_forward_length": 128, "llama.attention.head_count": 4,
               "llama.attention.head_count_kv": 2, "llama.rope.dimension_count": 16}


def _small_fields(source: Path, vocab: int) -> dict[str, tuple[object, list]]:
    """Each metadata field of the GGUF `source` (name -> its value and GGUF types) with
    SMALL_LLAMA's shapes and the first `vocab` tokens and their merges: read once per process
    and version of the file (parsing SmolLM2's 49k tokens and merges takes seconds; each small
    copy reuses them)."""
    info = source.stat()
    return _fields_of_version(source, info.st_size, info.st_mtime_ns, vocab)


@functools.lru_cache(maxsize=4)
def _fields_of_version(source: Path, size: int, mtime_ns: int, vocab: int
                       ) -> dict[str, tuple[object, list]]:
    from gguf import GGUFReader

    reader = GGUFReader(source)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()[:vocab]
    kept = set(tokens)
    small = {**SMALL_LLAMA, "llama.vocab_size": vocab, "tokenizer.ggml.tokens": tokens,
             "tokenizer.ggml.token_type":
                 reader.fields["tokenizer.ggml.token_type"].contents()[:vocab],
             "tokenizer.ggml.merges": [
                 m for m in reader.fields["tokenizer.ggml.merges"].contents()
                 if {*m.split(" "), m.replace(" ", "")} <= kept]}
    return {name: (small.get(name, field.contents()), list(field.types))
            for name, field in reader.fields.items()}


def small_gguf(source: Path, dest: Path, vocab: int = 4000, seed: int = 0,
               quantized: bool = False) -> Path:
    """A GGUF with every metadata field of `source` (a llama GGUF such as SmolLM2's: tokenizer
    model, special tokens, chat template, names) but SMALL_LLAMA's shapes, the first `vocab`
    tokens (and the merges among them) and seeded float32 weights: transformers reads it as it
    reads `source` (the same loader, config mapping and tokenizer fields) in a fraction of the
    time (no 30 blocks to dequantize, no 49k-entry arrays to parse). `quantized`: the matrices
    in Q4_1, as SmolLM2's file has them, so that loading dequantizes."""
    import numpy as np
    from gguf import GGUFValueType, GGUFWriter

    fields = _small_fields(Path(source), vocab)
    writer = GGUFWriter(dest, fields["general.architecture"][0])
    for name, (value, types) in fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue  # the writer's own
        if types[0] == GGUFValueType.ARRAY:
            writer.add_key_value(name, value, GGUFValueType.ARRAY, sub_type=types[-1])
        else:
            writer.add_key_value(name, value, types[0])
    width = SMALL_LLAMA["llama.embedding_length"]
    ffn = SMALL_LLAMA["llama.feed_forward_length"]
    kv = (width // SMALL_LLAMA["llama.attention.head_count"]
          * SMALL_LLAMA["llama.attention.head_count_kv"])
    shapes = {"token_embd.weight": (vocab, width), "output_norm.weight": (width,),
              "blk.0.attn_norm.weight": (width,), "blk.0.ffn_norm.weight": (width,),
              "blk.0.attn_q.weight": (width, width), "blk.0.attn_k.weight": (kv, width),
              "blk.0.attn_v.weight": (kv, width), "blk.0.attn_output.weight": (width, width),
              "blk.0.ffn_gate.weight": (ffn, width), "blk.0.ffn_up.weight": (ffn, width),
              "blk.0.ffn_down.weight": (width, ffn)}
    rng = np.random.default_rng(seed)
    for name, shape in shapes.items():
        weights = rng.normal(0, 0.02, shape).astype(np.float32)
        if quantized and len(shape) == 2:
            from gguf.quants import GGMLQuantizationType, quantize

            kind = GGMLQuantizationType.Q4_1
            writer.add_tensor(name, quantize(weights, kind), raw_dtype=kind)
        else:
            writer.add_tensor(name, weights)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dest
