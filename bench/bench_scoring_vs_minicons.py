"""Bench: spudflow's scorers against minicons 0.3.39 on the same models and sentences.

Checks that per-token log probabilities agree (fp32, within 1e-4) and measures the throughput
ratio, for
  - PPPL (and PPPL-l2r) with a BERT-base-sized masked LM (12 layers, hidden 768) with a
    120,000-token output vocabulary, and
  - causal PPL with a GPT-2-small-sized LM (12 layers, hidden 768, vocabulary 50,257),
both with random weights from a config (no download) and tokenizers trained with `tokenizers` on
UD English-EWT text. The sentences are a seeded sample of the vendored EWT dev split.
Targets (CPU): PPPL >= 3x minicons, causal PPL >= 1.5x.

minicons 0.3.39 calls `batch_encode_plus`, which transformers 5 removed; it is shimmed here. Its
IncrementalLMScorer needs bos_token=True to score the first token. Keep minicons out of the
project venv: make a venv that sees the project's packages and add minicons to it alone:

    python3.11 -m venv /tmp/mc
    /work/main/.venv/bin/python -c "import site; print(site.getsitepackages()[0])" \
        > /tmp/mc/lib/python3.11/site-packages/project-venv.pth
    /tmp/mc/bin/pip install --no-deps minicons==0.3.39 wonderwords==2.2.0
    PYTHONPATH=workflow /tmp/mc/bin/python bench/bench_scoring_vs_minicons.py

(or a self-contained venv: /tmp/mc/bin/pip install torch==2.13.0 minicons==0.3.39
transformers==5.23.0). Add `--device cuda` on a GPU machine. Figures go to stdout as JSON lines.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
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
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
)

from spudflow.scoring.causal import CausalScorer
from spudflow.scoring.items import Item
from spudflow.scoring.masked import MaskedScorer

ROOT = Path(__file__).resolve().parents[1]
EWT = ROOT / "resources/ud/UD_English-EWT"
TOLERANCE = 1e-4


def ewt_texts(split: str) -> list[str]:
    with gzip.open(EWT / f"en_ewt-ud-{split}.conllu.gz", "rt", encoding="utf-8") as handle:
        return [line[len("# text = "):].rstrip("\n") for line in handle
                if line.startswith("# text = ")]


def sample_sentences(n: int, seed: int) -> list[str]:
    texts = [t for t in ewt_texts("dev") if 3 <= len(t.split()) <= 40]
    return random.Random(seed).sample(texts, n)


def wordpiece_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=30_000,
                                                             special_tokens=specials))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   model_max_length=512)


def byte_bpe_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=30_000, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", model_max_length=1024)


def random_model(model_class, config, seed: int):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return model_class(config).eval()


def items_of(sentences: list[str], tokenizer) -> list[Item]:
    """Items whose words are the tokenizer's pre-tokenizer words, the units minicons's
    within-word l2r uses. pppl_l2r's default words are the tokenizer's whatever the items'
    words are (docs/scoring.md, "pppl_l2r's words"), so both tools mask the same tokens either
    way; with these items `--l2r-words items` would too."""
    items = []
    for i, sentence in enumerate(sentences):
        words = tokenizer.backend_tokenizer.pre_tokenizer.pre_tokenize_str(sentence)
        items.append(Item(str(i), sentence, tuple(w for w, _ in words),
                          tuple(s for _, (s, _) in words), tuple(e for _, (_, e) in words),
                          (), "en"))
    return items


class Timer:
    """Wall-clock and process CPU seconds. On a machine shared with other jobs, CPU seconds (with
    --threads 1) measure the work done; wall seconds include time spent waiting for a core."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def time_ours(scorer, items, method):
    with Timer() as timer:
        encoded = scorer.encode(items)
        scores = scorer.score(encoded, method, [list(range(e.n_tokens)) for e in encoded])
    return timer, scores


def time_minicons(scorer, sentences, batch_size, **options):
    scores = []
    with Timer() as timer:
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start:start + batch_size]
            scores += [s.double().numpy() for s in scorer.compute_stats(
                scorer.prepare_text(batch, **options), return_tensors=True)]
    return timer, scores


def compare(name, ours, theirs, ours_time, theirs_time, n_sentences, extra):
    diffs = [np.abs(a - b).max() for a, b in zip(ours, theirs, strict=True)
             if len(a) == len(b)]
    mismatched = sum(len(a) != len(b) for a, b in zip(ours, theirs, strict=True))
    n_tokens = sum(len(a) for a in ours)
    result = {
        "bench": name, "sentences": n_sentences, "tokens": n_tokens,
        "max_abs_diff": float(max(diffs)), "length_mismatches": mismatched,
        "equal_within_1e-4": bool(max(diffs) <= TOLERANCE and not mismatched),
        "spudflow_s": round(ours_time.wall, 2), "minicons_s": round(theirs_time.wall, 2),
        "spudflow_sent_per_s": round(n_sentences / ours_time.wall, 3),
        "minicons_sent_per_s": round(n_sentences / theirs_time.wall, 3),
        "speedup": round(theirs_time.wall / ours_time.wall, 2),
        "spudflow_cpu_s": round(ours_time.cpu, 2), "minicons_cpu_s": round(theirs_time.cpu, 2),
        "speedup_cpu": round(theirs_time.cpu / ours_time.cpu, 2), **extra}
    print(json.dumps(result), flush=True)
    return result


def bench_masked(args, texts, device):
    from minicons.scorer import MaskedLMScorer

    tokenizer = wordpiece_tokenizer(texts)
    config = BertConfig(vocab_size=120_000, hidden_size=768, num_hidden_layers=12,
                        num_attention_heads=12, intermediate_size=3072)
    model = random_model(BertForMaskedLM, config, args.seed).to(device)
    sentences = sample_sentences(args.masked_sentences, args.seed)
    items = items_of(sentences, tokenizer)
    ours = MaskedScorer(tokenizer, model, device, args.batch_tokens)
    theirs = MaskedLMScorer(model, device=str(device), tokenizer=tokenizer)
    time_ours(ours, items[:2], "pppl")  # warm-up
    methods = [("pppl", "original"), ("pppl_l2r", "within_word_l2r")][:2 if args.l2r else 1]
    results = []
    for method, metric in methods:
        ours_s, ours_scores = time_ours(ours, items, method)
        for batch in args.minicons_batch:
            theirs_s, theirs_scores = time_minicons(theirs, sentences, batch,
                                                    PLL_metric=metric)
            results.append(compare(
                f"masked {method}", ours_scores, theirs_scores, ours_s, theirs_s,
                len(sentences),
                {"vocab": 120_000, "model": "BERT-base config, random weights",
                 "minicons_batch_sentences": batch,
                 "spudflow_batch_tokens": ours.runner.batch_tokens, "device": str(device),
                 "threads": torch.get_num_threads()}))
    return results


def bench_causal(args, texts, device):
    from minicons.scorer import IncrementalLMScorer

    tokenizer = byte_bpe_tokenizer(texts)
    model = random_model(GPT2LMHeadModel, GPT2Config(vocab_size=50_257, bos_token_id=0,
                                                     eos_token_id=0), args.seed).to(device)
    sentences = sample_sentences(args.causal_sentences, args.seed)
    items = items_of(sentences, tokenizer)
    ours = CausalScorer(tokenizer, model, device, args.batch_tokens)
    theirs = IncrementalLMScorer(model, device=str(device), tokenizer=tokenizer)
    time_ours(ours, items[:2], "ppl")  # warm-up
    ours_s, ours_scores = time_ours(ours, items, "ppl")
    results = []
    for batch in args.minicons_batch:
        theirs_s, theirs_scores = time_minicons(theirs, sentences, batch, bos_token=True)
        results.append(compare(
            "causal ppl", ours_scores, theirs_scores, ours_s, theirs_s, len(sentences),
            {"vocab": 50_257, "model": "GPT-2-small config, random weights",
             "minicons_batch_sentences": batch,
             "spudflow_batch_tokens": ours.runner.batch_tokens, "device": str(device),
             "threads": torch.get_num_threads()}))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--masked-sentences", type=int, default=100)
    parser.add_argument("--causal-sentences", type=int, default=200)
    parser.add_argument("--minicons-batch", default="1,4",
                        type=lambda text: [int(b) for b in text.split(",")],
                        help="sentences per minicons call, comma-separated to time several "
                             "(default 1,4); all masked copies of a call go through the model "
                             "in one pass, with full-vocabulary logits at every position")
    parser.add_argument("--batch-tokens", type=int, default=None,
                        help="spudflow's token budget (default: its own)")
    parser.add_argument("--l2r", action="store_true", help="also bench pppl_l2r")
    parser.add_argument("--only", choices=["masked", "causal"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    PreTrainedTokenizerBase.batch_encode_plus = lambda self, *a, **k: self(*a, **k)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    texts = ewt_texts("dev") + ewt_texts("test")
    results = []
    if args.only in (None, "causal"):
        results += bench_causal(args, texts, device)
    if args.only in (None, "masked"):
        results += bench_masked(args, texts, device)
    return 0 if all(r["equal_within_1e-4"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
