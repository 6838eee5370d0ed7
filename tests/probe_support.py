"""A tiny random BERT encoder (a WordPiece tokenizer of the corpus's characters and words) for
the probe tests and the tiny workflow config, and small slices of the vendored EWT treebank."""

from __future__ import annotations

import gzip
import shutil
from collections import Counter
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

REPO = Path(__file__).resolve().parents[1]
EWT = REPO / "resources" / "ud" / "UD_English-EWT"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MAX_POSITIONS = 512
LAYERS = 2
VOCAB_SIZE = 600


def ewt_sentences(split: str, first: int, count: int) -> str:
    """`count` sentences of the vendored EWT split, from sentence `first` on, as CoNLL-U."""
    with gzip.open(EWT / f"en_ewt-ud-{split}.conllu.gz", "rt", encoding="utf-8") as handle:
        text = handle.read()
    blocks = [b for b in text.split("\n\n") if b.strip()]
    return "\n\n".join(blocks[first:first + count]) + "\n\n"


def save_tiny_encoder(directory: Path, corpus: list[str] | None = None,
                      pretrained_like: bool = False) -> Path:
    """A 2-layer BERT (hidden 32) with random seeded weights and a WordPiece tokenizer made
    from `corpus` (default: EWT dev text), saved with save_pretrained. `pretrained_like`: every
    weight moved off its initial value by seeded noise, as training would (fresh LayerNorms
    are all ones and biases all zeros, the same in any random model)."""
    if corpus is None:
        corpus = [line[len("# text = "):] for line in ewt_sentences("dev", 0, 400).splitlines()
                  if line.startswith("# text = ")]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    # Not tokenizers' WordPieceTrainer: it breaks ties between equally frequent merges in
    # hash-map order, a new vocabulary in every process. Every character (alone and inside a
    # word) and then the most frequent words, ties by spelling: one corpus is one encoder.
    words = Counter(word for text in corpus for word, _ in
                    tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text)))
    chars = sorted({char for word in words for char in word})
    vocab = list(dict.fromkeys([*SPECIALS, *chars, *(f"##{c}" for c in chars)]))
    frequent = sorted(words.items(), key=lambda item: (-item[1], item[0]))
    vocab += [w for w, _ in frequent if w not in vocab][:max(0, VOCAB_SIZE - len(vocab))]
    tok.model = models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]")
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=MAX_POSITIONS)
    with torch.random.fork_rng(devices=[]):
        # not seed 0: the MR baseline's default init seed would rebuild this very model
        torch.manual_seed(1234)
        model = BertModel(BertConfig(
            vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=LAYERS,
            num_attention_heads=2, intermediate_size=64, max_position_embeddings=MAX_POSITIONS))
        if pretrained_like:
            with torch.no_grad():
                for parameter in model.parameters():
                    parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def feature_file(directory: Path, model: Path, layers: str, out: Path, *extra,
                 baseline: str = "lm") -> int:
    """`probe features` of one treebank directory for one baseline, its one file
    (OUT/{baseline}/orig.safetensors of a call into a folder beside `out`) moved to `out`.
    Returns the exit status; nothing is moved on failure."""
    from spudflow.cli import main

    folder = out.with_name(f"{out.name}.features")
    code = main(["probe", "features", str(directory), "--model", str(model), "--baselines",
                 f"{baseline}={layers}", "--out", str(folder), *map(str, extra)])
    if code == 0:
        (folder / baseline / "orig.safetensors").replace(out)
        shutil.rmtree(folder)
    return code


def probe_sweep(root: Path, seeds=(1, 2), max_epochs: int = 3) -> dict:
    """Real probe runs on probe_inputs: one sweep job (distance and label on layer l) per
    layer, training every seed, tested on orig and spud/seed1. Returns the paths: conllu texts,
    treebank dirs, features, run dirs by (l, seed)."""
    from spudflow.cli import main

    conllu = probe_inputs(root)
    runs = {}
    for layer in range(LAYERS + 1):
        pair = root / "runs" / f"dist{layer}_label{layer}"  # one job: every seed
        assert main([*train_args(root, seeds, max_epochs), "--dist-layer", str(layer),
                     "--label-layer", str(layer), "--out", str(pair)]) == 0
        runs.update({(layer, seed): pair / f"seed{seed}" for seed in seeds})
    return {"root": root, "conllu": conllu, "runs": runs}


def probe_inputs(root: Path) -> dict[str, str]:
    """What `probe train` reads, from EWT slices and the tiny encoder: a train split (EWT dev,
    80 sentences), a test split (EWT test, 30) and its SPUD version, features of every layer
    (ROOT/{train,test,spud1}.safetensors). Returns the splits' CoNLL-U texts."""
    from spudflow.cli import main

    root.mkdir(parents=True, exist_ok=True)
    conllu = {"train": ewt_sentences("dev", 0, 80), "test": ewt_sentences("test", 0, 30)}
    for name, text in conllu.items():
        (root / f"{name}.conllu").write_text(text, encoding="utf-8")
        assert main(["ingest", str(root / f"{name}.conllu"), "--out", str(root / name)]) == 0
    assert main(["nonce", str(root / "test"), "--lang", "en", "--seed", "1", "--out",
                 str(root / "spud1")]) == 0
    model = save_tiny_encoder(root / "encoder")
    layers = ",".join(str(layer) for layer in range(LAYERS + 1))
    for split in ("train", "test", "spud1"):
        assert feature_file(root / split, model, layers, root / f"{split}.safetensors") == 0
    return conllu


def train_args(root: Path, seeds, max_epochs: int) -> list[str]:
    """`probe train` on probe_sweep's data, without layers and --out (the parent of one folder
    seed{S} per seed of `seeds`)."""
    return ["probe", "train", "--train", str(root / "train.safetensors"), str(root / "train"),
            "--eval", "orig", str(root / "test.safetensors"), str(root / "test"),
            "--eval", "spud/seed1", str(root / "spud1.safetensors"), str(root / "spud1"),
            "--seeds", *map(str, seeds), "--treebank", "ewt", "--model", "tiny",
            "--max-epochs", str(max_epochs), "--rank", "16", "--holdout", "0.25"]
