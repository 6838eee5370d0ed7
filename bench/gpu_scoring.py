"""Bench: scoring on one GPU, this tree against another (today's main) in the same call, and
both against minicons 0.3.39.

Models with the real layer sizes and random weights: masked PPPL with an mBERT-sized BERT
(12 x 768, vocabulary 119,547) and causal PPL with a GPT-2-small-sized model (vocabulary 50,257);
tokenizers trained on EWT text (bench_scoring_vs_minicons.py's helpers), saved once and shared by
every process. Stages, each tree in fresh processes of its own (first calls are real first
calls: a job is mostly one):

1. host: the host side alone (bench_scoring_host.py: a stub model returning zeros), both trees,
   EWT test PPPL, on the CPU and handing batches to the GPU;
2. full, per tree, float32 then bfloat16: the whole EWT test split (2,077 sentences), first call
   (after a 4-item warm-up, as a job's first block) and later call; model TFLOP/s (2 x encoder
   parameters x input tokens per model input, plus the output layer at each scored position);
   the GPU's busy share of a profiled call (torch.profiler: kernel and copy time / wall); rows
   bit-identical between 16,384- and 1,024-token batches (float32, a dev sample). This tree's
   process also times minicons on a dev sample (300 sentences masked, 600 causal) at batch 1
   and 8 (masked) or 16 (causal) sentences, against ours on the same sample: ratio and max
   |difference| per token;
3. variants, bfloat16, masked then causal, first and later call, a fresh process each: both
   trees as they are; this tree with torch's own SDPA choice (cuDNN) instead of anything but
   cuDNN (core/gpu_feed.py), the base tree with SDPA kept off cuDNN (how much of the gain that
   alone makes); this tree's BatchPolicy without the prefetch thread
   and pinned copies, with same-shape filling, with 65,536-token batches, and (time left)
   torch.compile of the base model.

    python bench/gpu_scoring.py --out OUT [--base DIR] [--device cuda] [--quick]

--base: the other tree's root (with workflow/ and bench/; default .base). minicons and wonderwords
must be importable (on the GPU machine: carried wheels); without them the minicons rows are
skipped. `--device cpu --quick` (tiny models, 12 sentences, three variants) checks the script
on a laptop in a minute or two. JSON lines go to stdout and OUT/gpu_scoring.jsonl as they come;
a summary table to OUT/gpu_scoring.md at the end. Stages that would start after --stop-after
seconds (default 240) are skipped, a process still running 90 s past it is stopped, and so is
the torch.compile variant after 90 s (each says so).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent

# bfloat16 runs in fresh processes, most telling first (stages past --stop-after are skipped):
# (tree, name, this tree's batch policy fields, token budget or None, SDPA kept off cuDNN
# around the calls: for the base tree, which has no batch policy)
VARIANTS = [
    ("this", "default", {}, None, False),
    ("base", "default", {}, None, False),
    ("this", "no square masks", {"square_mask": False}, None, False),
    ("this", "budget 65,536", {}, 65536, False),
    ("this", "sdpa auto (cuDNN)", {"attention": "auto"}, None, False),
    ("base", "sdpa off cuDNN", {}, None, True),
    ("this", "no prefetch, no pinned copies", {"prefetch": 0, "pinned": False}, None, False),
    ("this", "same-shape filling", {"same_shape": True}, None, False),
    ("this", "torch.compile", {"compile": True}, None, False),
]


# ----------------------------------------------------------------------------- child process

def child(spec: dict) -> None:
    """One process: the runs of `spec` on one tree, JSON lines on stdout."""
    import unittest.mock

    sys.path[:0] = [spec["tree"] + "/workflow", str(BENCH)]
    try:
        import polars  # noqa: F401
    except ImportError:  # the scorers never use it; the GPU image has none
        sys.modules["polars"] = unittest.mock.MagicMock()
    import contextlib
    import dataclasses

    import bench_scoring_vs_minicons as B
    import numpy as np
    import torch
    import transformers as T

    from spudflow.scoring.causal import CausalScorer
    from spudflow.scoring.masked import MaskedScorer

    T.PreTrainedTokenizerBase.batch_encode_plus = lambda self, *a, **k: self(*a, **k)
    device = torch.device(spec["device"])
    quick = spec["quick"]
    cuda = device.type == "cuda"
    base_record = {"tree": spec["name"], "variant": spec.get("variant")}

    def emit(**record):
        print(json.dumps({**base_record, **record}), flush=True)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def timed(fn, *args, **options):
        sync()
        start = time.perf_counter()
        value = fn(*args, **options)
        sync()
        return time.perf_counter() - start, value

    def attention():
        if not spec.get("wrap_attention") or not cuda:
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel

        # what core/gpu_feed.py's `flash` allows: anything but cuDNN
        return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                            SDPBackend.MATH])

    def scorer_for(cls, tokenizer, model, budget):
        scorer = cls(tokenizer, model, device, budget)
        policy = getattr(scorer.runner, "policy", None)
        if spec.get("policy"):
            if policy is None:
                raise SystemExit("this tree has no batch policy")
            scorer.runner.policy = dataclasses.replace(policy, **spec["policy"])
        return scorer

    def score(scorer, items, method):
        with attention():
            encoded = scorer.encode(items)
            return scorer.score(encoded, method, [list(range(e.n_tokens)) for e in encoded])

    def busy_share(fn, *args):
        from torch.profiler import ProfilerActivity, profile

        sync()
        start = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn(*args)
            sync()
        wall = time.perf_counter() - start
        busy = sum(getattr(e, "self_device_time_total", 0) for e in prof.key_averages()) / 1e6
        return round(busy / wall, 3), round(busy, 3), round(wall, 3)

    def diff(a, b):
        if any(len(x) != len(y) for x, y in zip(a, b, strict=True)):
            return None
        return float(max(np.abs(x - y).max() for x, y in zip(a, b, strict=True) if len(x)))

    def minicons(scorer, sentences, batch, **options):
        values = []
        for start in range(0, len(sentences), batch):
            values += [v.double().cpu().numpy() for v in scorer.compute_stats(
                scorer.prepare_text(sentences[start:start + batch], **options),
                return_tensors=True)]
        return values

    tokenizers = Path(spec["tokenizers"])
    test = [t for t in B.ewt_texts("test") if t.split()][: 12 if quick else None]
    if not cuda:  # a check of the script on a shared machine: one thread spins least
        torch.set_num_threads(1)
    kinds = spec["kinds"]
    dtypes = [{"float32": torch.float32, "bfloat16": torch.bfloat16}[d] for d in spec["dtypes"]]
    if cuda:
        props = torch.cuda.get_device_properties(0)
        emit(what="device", name=props.name, torch=torch.__version__,
             transformers=__import__("transformers").__version__)
    for kind in kinds:
        tokenizer = T.PreTrainedTokenizerFast.from_pretrained(tokenizers / kind)
        torch.manual_seed(1)
        with torch.device(device):
            if kind == "masked":
                vocab = 30_000 if quick else 119_547
                config = (T.BertConfig(vocab_size=vocab, hidden_size=64, num_hidden_layers=2,
                                       num_attention_heads=2, intermediate_size=128) if quick
                          else T.BertConfig(vocab_size=vocab))
                model = T.BertForMaskedLM(config).eval()
                blocks = "bert.encoder."
                hidden = config.hidden_size
                cls, method, n_sample, minicons_batches = MaskedScorer, "pppl", 300, (1, 8)
            else:
                vocab = 50_257
                config = T.GPT2Config(vocab_size=vocab, bos_token_id=0, eos_token_id=0,
                                      **(dict(n_embd=64, n_layer=2, n_head=2) if quick else {}))
                model = T.GPT2LMHeadModel(config).eval()
                blocks = "transformer.h."
                hidden = config.n_embd
                cls, method, n_sample, minicons_batches = CausalScorer, "ppl", 600, (1, 16)
        block_params = sum(p.numel() for n, p in model.named_parameters() if n.startswith(blocks))
        head_flops = 2 * hidden * vocab + (2 * hidden * hidden if kind == "masked" else 0)
        items = B.items_of(test, tokenizer)
        sample = B.sample_sentences(8 if quick else n_sample, 1 if kind == "masked" else 2)
        sample_items = B.items_of(sample, tokenizer)
        reference = None
        for dtype in dtypes:
            model = model.to(dtype)
            scorer = scorer_for(cls, tokenizer, model, spec.get("batch_tokens"))
            score(scorer, items[:4], method)  # warm-up, as a job's model load does
            encoded = scorer.encode(items)
            if kind == "masked":
                flops = sum(e.n_tokens * (2 * block_params * len(e.input_ids) + head_flops)
                            for e in encoded)
            else:
                flops = sum(2 * block_params * len(e.input_ids) + e.n_tokens * head_flops
                            for e in encoded)
            before = dataclasses.replace(scorer.runner.stats)
            first, _ = timed(score, scorer, items, method)
            cut = scorer.runner.stats.since(before).describe()
            later, _ = timed(score, scorer, items, method)
            record = dict(what=f"{kind} {method}, EWT test", dtype=str(dtype)[6:],
                          sentences=len(items), tokens=sum(e.n_tokens for e in encoded),
                          batch_tokens=scorer.runner.batch_tokens, first_s=round(first, 3),
                          later_s=round(later, 3), pflop=round(flops / 1e15, 4),
                          tflops_first=round(flops / first / 1e12, 1),
                          tflops_later=round(flops / later / 1e12, 1), batches=cut)
            if cuda and spec.get("profile"):
                record["busy_share"], record["busy_s"], record["profiled_wall_s"] = busy_share(
                    score, scorer, items, method)
            emit(**record)
            if spec.get("policy", {}).get("compile"):
                continue
            ours_s, ours = timed(score, scorer, sample_items, method)
            if dtype == torch.float32:
                reference = ours
            if spec.get("invariance") and dtype == torch.float32:
                small = scorer_for(cls, tokenizer, model, 1024)
                other = score(small, sample_items, method)
                same = sum(a.tobytes() == b.tobytes() for a, b in zip(ours, other, strict=True))
                emit(what=f"{kind} {method}, dev sample, 1,024 vs {scorer.runner.batch_tokens}"
                          "-token batches", dtype=str(dtype)[6:], items=len(ours),
                     bit_identical_share=round(same / len(ours), 3),
                     max_abs_diff=diff(ours, other))
            if not spec.get("minicons"):
                continue
            try:
                from minicons.scorer import IncrementalLMScorer, MaskedLMScorer
            except ImportError as error:
                emit(what="minicons", skipped=str(error))
                continue
            if kind == "masked":
                theirs = MaskedLMScorer(model, device=str(device), tokenizer=tokenizer)
                options = {"PLL_metric": "original"}
            else:
                theirs = IncrementalLMScorer(model, device=str(device), tokenizer=tokenizer)
                options = {"bos_token": True}
            minicons(theirs, sample[:2], 1, **options)  # warm-up
            for batch in minicons_batches:
                try:
                    theirs_s, values = timed(minicons, theirs, sample, batch, **options)
                except torch.cuda.OutOfMemoryError as error:
                    emit(what=f"{kind} {method}, dev sample, minicons", dtype=str(dtype)[6:],
                         minicons_batch=batch, error=f"out of memory: {str(error)[:80]}")
                    torch.cuda.empty_cache()
                    continue
                emit(what=f"{kind} {method}, dev sample vs minicons", dtype=str(dtype)[6:],
                     sentences=len(sample), minicons_batch=batch, spudflow_s=round(ours_s, 3),
                     minicons_s=round(theirs_s, 3), speedup=round(theirs_s / ours_s, 2),
                     max_abs_diff_vs_minicons=diff(ours, values),
                     ours_max_abs_diff_vs_ours_fp32=diff(ours, reference),
                     minicons_max_abs_diff_vs_ours_fp32=diff(values, reference))
            del theirs
            if cuda:
                torch.cuda.empty_cache()
        del model
        if cuda:
            torch.cuda.empty_cache()


# ---------------------------------------------------------------------------- parent process

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=False)
    parser.add_argument("--base", default=str(ROOT / ".base"))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--stop-after", type=float, default=240,
                        help="seconds after which the remaining stages are skipped")
    parser.add_argument("--skip-base", action="store_true",
                        help="this tree alone (the base's figures from an earlier call on the "
                        "same kind of GPU)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return 0
    if not args.out:
        parser.error("--out is required")
    started = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (out / "gpu_scoring.jsonl").open("a")
    records: list[dict] = []

    def emit(record: dict) -> None:
        records.append(record)
        line = json.dumps(record)
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    def time_left(stage: str) -> bool:
        spent = time.perf_counter() - started
        if spent > args.stop_after:
            emit({"what": "skipped", "stage": stage, "after_s": round(spent)})
            return False
        return True

    trees = {"base": str(Path(args.base).resolve()), "this": str(ROOT)}
    if args.skip_base:
        del trees["base"]
    for name, tree in trees.items():
        if not (Path(tree) / "workflow/spudflow").is_dir():
            raise SystemExit(f"{name} tree {tree}: no workflow/spudflow")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        sys.path[:0] = [str(ROOT / "workflow"), str(BENCH)]
        try:
            import polars  # noqa: F401
        except ImportError:  # the helpers' imports need it by name only
            import unittest.mock

            sys.modules["polars"] = unittest.mock.MagicMock()
        import bench_scoring_vs_minicons as B

        texts = B.ewt_texts("dev") + B.ewt_texts("test")
        B.wordpiece_tokenizer(texts).save_pretrained(scratch / "masked")
        B.byte_bpe_tokenizer(texts).save_pretrained(scratch / "causal")

        def run_child(name: str, longest: float | None = None, **spec) -> None:
            spec = {"name": name, "tree": trees[name], "device": args.device,
                    "quick": args.quick, "tokenizers": str(scratch), **spec}
            begun = time.perf_counter()
            limit = max(30.0, args.stop_after + 90 - (begun - started))
            limit = min(limit, longest or limit)
            try:
                done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                                      capture_output=True, text=True, timeout=limit)
            except subprocess.TimeoutExpired as timeout:
                done = subprocess.CompletedProcess(timeout.cmd, 124, _text(timeout.stdout),
                                                   f"stopped after {limit:.0f} s")
            for line in done.stdout.splitlines():
                if line.startswith("{"):
                    emit(json.loads(line))
            if done.returncode:
                emit({"tree": name, "variant": spec.get("variant"), "error":
                      done.stderr.strip().splitlines()[-3:]})
            emit({"tree": name, "variant": spec.get("variant"), "what": "process",
                  "seconds": round(time.perf_counter() - begun, 1)})

        # 1. host side alone
        from bench_scoring_host import CHILD as HOST_CHILD

        for device in dict.fromkeys(["cpu", args.device]):
            for name, tree in trees.items():
                done = subprocess.run(
                    [sys.executable, "-c", HOST_CHILD, tree, str(scratch / "masked"), "masked",
                     "pppl", device, "0", "3", "1" if args.quick else "0"],
                    capture_output=True, text=True)
                result = (json.loads(done.stdout.strip().splitlines()[-1]) if not done.returncode
                          else {"error": done.stderr.strip().splitlines()[-3:]})
                emit({"what": "host side, stub model, masked pppl, EWT test", "tree": name,
                      "device": device, **result})
        # 2. full runs
        for name in trees:
            if time_left(f"full {name}"):
                run_child(name, kinds=["masked", "causal"], dtypes=["float32", "bfloat16"],
                          profile=True, invariance=True, minicons=name == "this")
        # 3. variants, bfloat16
        for name, variant, policy, budget, wrap in VARIANTS[:3] if args.quick else VARIANTS:
            if name not in trees or policy.get("compile") and args.device == "cpu":
                continue
            if time_left(f"variant {name} {variant}"):
                # compiling takes a while per shape: a first call past 90 s says enough
                run_child(name, longest=90 if policy.get("compile") else None, variant=variant,
                          policy=policy, batch_tokens=budget, wrap_attention=wrap,
                          kinds=["masked", "causal"], dtypes=["bfloat16"], profile=False)
    emit({"what": "done", "seconds": round(time.perf_counter() - started, 1)})
    (out / "gpu_scoring.md").write_text(summary(records))
    print(summary(records))
    return 0


def _g(value) -> str:
    return "" if value is None else f"{value:.2g}"


def _text(output) -> str:
    return output.decode() if isinstance(output, bytes) else output or ""


def summary(records: list[dict]) -> str:
    """The figures side by side: base | this for the full runs, then the variants."""
    lines = ["| what | dtype | base | this |", "|---|---|---|---|"]

    def find(tree, what, dtype=None, variant=None, **match):
        for r in records:
            if (r.get("tree") == tree and r.get("what") == what and r.get("variant") == variant
                    and (dtype is None or r.get("dtype") == dtype)
                    and all(r.get(k) == v for k, v in match.items())):
                return r
        return {}

    for kind, method in (("masked", "pppl"), ("causal", "ppl")):
        what = f"{kind} {method}, EWT test"
        for dtype in ("float32", "bfloat16"):
            b, t = find("base", what, dtype), find("this", what, dtype)
            for key in ("first_s", "later_s", "tflops_first", "tflops_later", "busy_share"):
                lines.append(f"| {what}: {key} | {dtype} | {b.get(key, '')} | {t.get(key, '')} |")
        what = (f"{kind} {method}, dev sample, 1,024 vs 16384-token batches")
        b, t = find("base", what, "float32"), find("this", what, "float32")
        lines.append(f"| {kind}: rows bit-identical, 1,024 vs 16,384 | float32 | "
                     f"{b.get('bit_identical_share', '')} | {t.get('bit_identical_share', '')} |")
    for r in records:
        if r.get("what", "").endswith("vs minicons"):
            lines.append(
                f"| {r['what']}, minicons batch {r['minicons_batch']}: speedup; max |Δ| per "
                "token vs minicons; ours vs ours fp32; minicons vs ours fp32 | "
                f"{r['dtype']} | | {r['speedup']}; {_g(r['max_abs_diff_vs_minicons'])}; "
                f"{_g(r['ours_max_abs_diff_vs_ours_fp32'])}; "
                f"{_g(r['minicons_max_abs_diff_vs_ours_fp32'])} |")
    for r in records:
        if r.get("what", "").startswith("host side"):
            lines.append(f"| {r['what']} on {r['device']}: total s | | "
                         f"{'' if r['tree'] != 'base' else r.get('total_s')} | "
                         f"{'' if r['tree'] != 'this' else r.get('total_s')} |")
    lines += ["", "| variant (bfloat16) | tree | masked first / later s | causal first / later s |",
              "|---|---|---|---|"]
    for r in records:
        if r.get("variant") and r.get("what") == "masked pppl, EWT test":
            c = find(r["tree"], "causal ppl, EWT test", variant=r["variant"])
            lines.append(f"| {r['variant']} | {r['tree']} | {r['first_s']} / {r['later_s']} | "
                         f"{c.get('first_s', '')} / {c.get('later_s', '')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
