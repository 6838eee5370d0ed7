"""Check: this tree's scorers give, on the CPU, the very bits another tree's gave.

A change to how rows are built or batched must not move a score (the score cache keeps the bits
of a cold run, and the invariance tests compare a tree with itself only). Each tree runs in a
fresh process of its own and scores the same EWT sentences with the same random-weight models
(small BERT, GPT-2 and ELECTRA configs; tokenizers trained once on EWT as in
bench_scoring_vs_minicons.py and shared), every method of each kind, under two token budgets;
the token log-probabilities are compared for exact equality.

    python bench/bench_scoring_same_bits.py [--base DIR | --base-rev REV] [--sentences N]

Prints one JSON line per (kind, method, budget) and exits 1 when any value differs.
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_scoring_host import base_tree

ROOT = Path(__file__).resolve().parents[1]
PLAN = [("masked", "pppl"), ("masked", "pppl_l2r"), ("masked", "unmasked"), ("causal", "ppl"),
        ("electra", "electra")]

CHILD = r"""
import pickle, sys, unittest.mock
tree, out, n, budgets, tokenizers = sys.argv[1:6]
n = int(n)
sys.path[:0] = [tree + "/workflow", tree + "/bench"]
try:
    import polars  # noqa: F401
except ImportError:
    sys.modules["polars"] = unittest.mock.MagicMock()
import torch
torch.set_num_threads(2)
import bench_scoring_vs_minicons as B
from transformers import (BertConfig, BertForMaskedLM, ElectraConfig, ElectraForPreTraining,
                          GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast)
from spudflow.scoring.causal import CausalScorer
from spudflow.scoring.electra import ElectraScorer
from spudflow.scoring.masked import MaskedScorer
sentences = B.sample_sentences(n, 3) + ["A", "  Spaces around  ", "Type [MASK] here."]
wordpiece, bpe = (PreTrainedTokenizerFast.from_pretrained(tokenizers + name)
                  for name in ("/masked", "/causal"))
small = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256)
models = {
    "masked": (MaskedScorer, wordpiece, B.random_model(
        BertForMaskedLM, BertConfig(vocab_size=30_000, **small), 1)),
    "electra": (ElectraScorer, wordpiece, B.random_model(
        ElectraForPreTraining, ElectraConfig(vocab_size=30_000, embedding_size=128, **small), 1)),
    "causal": (CausalScorer, bpe, B.random_model(GPT2LMHeadModel, GPT2Config(
        vocab_size=30_000, n_embd=128, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0), 1)),
}
results = {}
for kind, method in PLAN:
    scorer_class, tokenizer, model = models[kind]
    items = B.items_of(sentences, tokenizer)
    for budget in map(int, budgets.split(",")):
        scorer = scorer_class(tokenizer, model, torch.device("cpu"), budget)
        encoded = scorer.encode(items)
        # every token of even items, every other token of odd ones: rows of several shapes
        targets = [list(range(e.n_tokens))[:: 1 + i % 2] for i, e in enumerate(encoded)]
        results[(kind, method, budget)] = [s.tobytes() for s in
                                           scorer.score(encoded, method, targets)]
with open(out, "wb") as f:
    pickle.dump(results, f)
""".replace("PLAN", repr(PLAN))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="folder of the tree to compare with")
    parser.add_argument("--base-rev", default="79eb7f5")
    parser.add_argument("--sentences", type=int, default=150)
    parser.add_argument("--budgets", default="512,4096")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        # trained once: WordPiece numbers tied tokens in a new order in every process
        import bench_scoring_vs_minicons as B

        texts = B.ewt_texts("dev") + B.ewt_texts("test")
        B.wordpiece_tokenizer(texts).save_pretrained(scratch / "masked")
        B.byte_bpe_tokenizer(texts).save_pretrained(scratch / "causal")
        scores = {}
        for name, tree in (("base", base_tree(args, scratch)), ("this", ROOT)):
            out = scratch / f"{name}.pickle"
            subprocess.run([sys.executable, "-c", CHILD, str(tree), str(out),
                            str(args.sentences), args.budgets, str(scratch)], check=True)
            scores[name] = pickle.loads(out.read_bytes())
    same = True
    for key, base in scores["base"].items():
        this = scores["this"][key]
        equal = sum(a == b for a, b in zip(base, this, strict=True))
        same &= equal == len(base)
        gap = max((float(np.abs(np.frombuffer(a) - np.frombuffer(b)).max())
                   for a, b in zip(base, this, strict=True) if a != b), default=0.0)
        print(json.dumps({"kind": key[0], "method": key[1], "batch_tokens": key[2],
                          "items": len(base), "bit_identical_items": equal,
                          "max_abs_diff": gap}), flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
