"""Bench: the host side of scoring, today's code against another tree's, in the same run.

The model is a stub that returns zeros, so what is timed is what the CPU does around it:
tokenizing EWT test (2,077 sentences), building the rows (27,830 masked copies for PPPL) and
cutting, padding and handing over the batches. Each tree runs in a fresh process of its own with
the same tokenizer (a WordPiece or byte-level BPE trained on EWT, as bench_scoring_vs_minicons.py
does); the trees take turns, and each figure is the best of --repeat calls after a warm-up.

    python bench/bench_scoring_host.py                       # this tree against 79eb7f5
    python bench/bench_scoring_host.py --base DIR --device cuda

--base is a folder holding another tree's workflow/ and bench/ (default: `git archive` of
--base-rev into a temporary folder). Target: this tree >= 5x the base on EWT test PPPL.
Figures go to stdout as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time, unittest.mock
tree, tokenizer_dir, kind, method, device, budget, repeat, quick = sys.argv[1:9]
sys.path[:0] = [tree + "/workflow", tree + "/bench"]
try:
    import polars  # noqa: F401
except ImportError:  # the scorers never use it; GPU images may lack it
    sys.modules["polars"] = unittest.mock.MagicMock()
import torch
import bench_scoring_vs_minicons as B
from transformers import (BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel,
                          PreTrainedTokenizerFast)
tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
texts = [t for t in B.ewt_texts("test") if t.split()][: 100 if quick == "1" else None]
items = B.items_of(texts, tokenizer)
dev = torch.device(device)
if kind == "masked":
    from spudflow.scoring.masked import MaskedScorer as Scorer
    model = BertForMaskedLM(BertConfig(vocab_size=64, hidden_size=8, num_hidden_layers=1,
                                       num_attention_heads=1, intermediate_size=8))
else:
    from spudflow.scoring.causal import CausalScorer as Scorer
    model = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=8, n_layer=1, n_head=1,
                                       bos_token_id=0, eos_token_id=0))
scorer = Scorer(tokenizer, model.eval(), dev, int(budget) or None)
scorer.runner.forward = lambda ids, mask, flat, targets: torch.zeros(
    flat.shape[0], device=ids.device)
def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()
def timed(fn):
    sync()
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    sync()
    return value, time.perf_counter() - wall, time.process_time() - cpu
best = {}
for attempt in range(int(repeat) + 1):  # the first is a warm-up
    encoded, enc_wall, enc_cpu = timed(lambda: scorer.encode(items))
    targets = [list(range(e.n_tokens)) for e in encoded]
    scores, score_wall, score_cpu = timed(lambda: scorer.score(encoded, method, targets))
    if attempt:
        for name, value in (("encode_s", enc_wall), ("rows_and_batches_s", score_wall),
                            ("total_s", enc_wall + score_wall), ("encode_cpu_s", enc_cpu),
                            ("rows_and_batches_cpu_s", score_cpu),
                            ("total_cpu_s", enc_cpu + score_cpu)):
            best[name] = min(best.get(name, value), value)
print(json.dumps({"sentences": len(items), "tokens": sum(len(s) for s in scores),
                  "batches": scorer.runner.stats.batches // (int(repeat) + 1),
                  **{k: round(v, 4) for k, v in best.items()}}))
"""


def train_tokenizer(kind: str, directory: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_scoring_vs_minicons as B

    texts = B.ewt_texts("dev") + B.ewt_texts("test")
    tokenizer = B.wordpiece_tokenizer(texts) if kind == "masked" else B.byte_bpe_tokenizer(texts)
    tokenizer.save_pretrained(directory)


def base_tree(args, scratch: Path) -> Path:
    if args.base:
        return Path(args.base).resolve()
    tree = scratch / "base"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base_rev, "workflow",
                              "bench", "resources/ud/UD_English-EWT"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def run_child(tree: Path, tokenizer_dir: Path, args) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), str(tokenizer_dir), args.kind, args.method,
         args.device, str(args.batch_tokens or 0), str(args.repeat), "1" if args.quick else "0"],
        capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="folder of the tree to compare with")
    parser.add_argument("--base-rev", default="79eb7f5",
                        help="commit to compare with when --base is not given")
    parser.add_argument("--kind", choices=["masked", "causal"], default="masked")
    parser.add_argument("--method", default=None, help="default: pppl (masked), ppl (causal)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-tokens", type=int, default=None,
                        help="token budget (default: the scorer's own for the device)")
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per process")
    parser.add_argument("--rounds", type=int, default=2,
                        help="processes per tree, taking turns (the best is kept)")
    parser.add_argument("--quick", action="store_true", help="100 sentences, to check the script")
    args = parser.parse_args()
    args.method = args.method or ("pppl" if args.kind == "masked" else "ppl")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        train_tokenizer(args.kind, scratch / "tokenizer")
        trees = {"base": base_tree(args, scratch), "this": ROOT}
        best: dict[str, dict] = {}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                result = run_child(tree, scratch / "tokenizer", args)
                kept = best.setdefault(name, result)
                for key, value in result.items():
                    if key.endswith("_s"):
                        kept[key] = min(kept[key], value)
        for name, result in best.items():
            print(json.dumps({"bench": "scoring host side, stub model", "tree": name,
                              "path": str(trees[name]), "kind": args.kind, "method": args.method,
                              "device": args.device, **result}), flush=True)
        ratio = {key: round(best["base"][key] / max(best["this"][key], 1e-9), 2)
                 for key in best["this"] if key.endswith("_s")}
        print(json.dumps({"bench": "scoring host side, stub model", "speedup_vs_base": ratio,
                          "same_tokens": best["base"]["tokens"] == best["this"]["tokens"]}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
