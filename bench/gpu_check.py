"""The GPU path of scoring and probe features, checked and timed on one CUDA machine.

What a researcher's run does on a GPU node, through the real commands (`spudflow score`,
`spudflow probe features`, in-process so torch is imported once), with every model loaded by its
hub id from an offline hub cache:

1. agreement: each tiny model of a rehearsal's hub cache scores the same sample on the CPU
   (float32, the reference) and on the GPU (float32, the presets' `dtype: float32`, and bfloat16,
   what `dtype: auto` picks there): largest |difference| of a sentence's log-probability, and the
   fraction of minimal pairs whose decision (the item with the higher log-probability) agrees with
   the CPU's; on the GPU, whether a smaller --batch-tokens gives the same bits; a second run
   through the score cache is all hits and writes the same bytes;
2. probe features of a treebank on the CPU and the GPU: largest |difference|;
3. throughput: real-size random models (the layer sizes and vocabularies of the Japanese preset's
   models, the tokenizers of the tiny ones) score a sample in float32 and bfloat16: items/s,
   tokens/s and peak GPU memory, extrapolated to the preset's full datasets.

    python bench/gpu_check.py --data DIR --out OUT [--device cuda] [--quick]

DIR: hub/ (`spudflow rehearse`'s DIR/hub), items/japanese_transitivity_{relative,base}.parquet,
ewt/dev (an ingested treebank). OUT gets gpu_check.md and gpu_check.json. `--device cpu --quick`
runs the same code here, on the CPU, as a check of the script. Results: docs/running.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

# The tiny models of the Japanese preset's rehearsal, by hub id: kind and methods as in
# config/papers/japanese_transitivity.yaml.
TINY = [
    ("bert-base-multilingual-uncased", "masked", "pppl,unmasked"),
    ("cl-tohoku/bert-base-japanese-whole-word-masking", "masked", "pppl,unmasked"),
    ("xlm-roberta-base", "masked", "pppl,unmasked"),
    ("izumi-lab/electra-base-japanese-discriminator", "electra", "electra"),
    ("rinna/japanese-gpt2-medium", "causal", "ppl"),
    ("yellowback/gpt-neo-japanese-1.3B", "causal", "ppl"),
]

# Real sizes of the preset's models (their config.json on the hub): the tiny model's config
# grown to these; vocabulary sizes too, so the output layer costs what the real one does.
BERT_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512)
REAL = [
    ("bert-base-multilingual-uncased", "masked", "pppl,unmasked",
     dict(BERT_BASE, vocab_size=105879)),
    ("cl-tohoku/bert-base-japanese-whole-word-masking", "masked", "pppl,unmasked",
     dict(BERT_BASE, vocab_size=32000)),
    ("cl-tohoku/bert-base-japanese-char", "masked", "pppl,unmasked",
     dict(BERT_BASE, vocab_size=4000)),
    ("xlm-roberta-base", "masked", "pppl,unmasked",
     dict(BERT_BASE, vocab_size=250002, max_position_embeddings=514)),
    ("izumi-lab/electra-base-japanese-discriminator", "electra", "electra",
     dict(BERT_BASE, embedding_size=768, vocab_size=32000)),
    ("rinna/japanese-gpt2-medium", "causal", "ppl",
     dict(n_embd=1024, n_layer=24, n_head=16, n_inner=4096, vocab_size=32000, n_positions=1024)),
    ("ClassCat/gpt2-base-japanese-v2", "causal", "ppl",
     dict(n_embd=768, n_layer=12, n_head=12, n_inner=3072, vocab_size=60000, n_positions=1024)),
    ("yellowback/gpt-neo-japanese-1.3B", "causal", "ppl",
     dict(hidden_size=2048, num_layers=24, num_heads=16, intermediate_size=8192,
          vocab_size=50000, attention_types=[[["global", "local"], 12]],
          max_position_embeddings=2048)),
]

BLOCK_LINE = re.compile(r"(\d+) items, (\d+) tokens in ([\d.]+) s")
LOADED_LINE = re.compile(r" loaded in ([\d.]+) s")


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def spudflow(argv: list[str]) -> list[str]:
    """Run one spudflow command in this process; its log lines (exit status must be 0)."""
    from spudflow.cli import main

    capture = Capture()
    root = logging.getLogger()
    root.addHandler(capture)
    try:
        status = main(argv)
    finally:
        root.removeHandler(capture)
    if status:
        raise SystemExit(f"spudflow {' '.join(argv)}: exit {status}")
    return capture.lines


def score(items: Path, model: str, kind: str, methods: str, out: Path, device: str, dtype: str,
          sample: int, extra: list[str] = ()) -> dict:
    import torch

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    lines = spudflow(["score", str(items), "--model", model, "--kind", kind, "--method", methods,
                      "--out", str(out), "--device", device, "--dtype", dtype,
                      "--sample", str(sample), *extra])
    wall = time.perf_counter() - start
    n_items = n_tokens = load = 0.0
    for line in lines:
        if (m := BLOCK_LINE.search(line)):
            n_items += int(m[1])
            n_tokens += int(m[2])
        if (m := LOADED_LINE.search(line)):
            load = float(m[1])
    n_items /= len(methods.split(","))       # each method logs the same items
    seconds = wall - load                    # reading items, scoring all methods, writing
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else None
    return dict(wall_s=wall, load_s=load, items=n_items, tokens=n_tokens, score_s=seconds,
                items_per_s=n_items / seconds, tokens_per_s=n_tokens / seconds,
                peak_gpu_mib=peak,
                cache=[line for line in lines if line.startswith("cache:")],
                loaded=[line for line in lines if " loaded in " in line])


def sentence_scores(out: Path):
    import polars as pl

    return (pl.read_parquet(out / "item_scores.parquet")
            .filter(pl.col("region").is_null())
            .select("item_id", "method", "logprob_sum"))


def compare(ref: Path, other: Path, items: Path) -> dict:
    """Largest |difference| of sentence log-probabilities; fraction of pairs decided alike."""
    import polars as pl

    a, b = sentence_scores(ref), sentence_scores(other)
    joined = a.join(b, on=["item_id", "method"], suffix="_b")
    diff = (joined["logprob_sum"] - joined["logprob_sum_b"]).abs()
    groups = pl.read_parquet(items).select("item_id", "group_id")

    def decisions(frame, column):
        return (frame.join(groups, on="item_id").sort("item_id")
                .group_by("group_id", "method", maintain_order=True)
                .agg(pl.col("item_id").sort_by(pl.col(column), descending=True).first()
                     .alias("preferred")))

    da = decisions(joined, "logprob_sum")
    db = decisions(joined, "logprob_sum_b")
    both = da.join(db, on=["group_id", "method"], suffix="_b")
    return dict(rows=joined.height, max_abs_diff=float(diff.max()),
                bit_identical=float((diff == 0).mean()),
                decisions_agree=float((both["preferred"] == both["preferred_b"]).mean()))


def agreement(data: Path, work: Path, device: str, sample: int) -> list[dict]:
    items = data / "items" / "japanese_transitivity_relative.parquet"
    rows = []
    for model, kind, methods in TINY:
        tag = model.replace("/", "--")
        runs = {
            "cpu": ("cpu", "float32", []),
            "gpu32": (device, "float32", []),
            "gpu32_small_batches": (device, "float32", ["--batch-tokens", "1024"]),
            "gpu_bf16": (device, "bfloat16", []),
            "gpu32_cache1": (device, "float32", ["--cache", str(work / "cache")]),
            "gpu32_cache2": (device, "float32", ["--cache", str(work / "cache")]),
        }
        timing = {}
        for name, (dev, dtype, extra) in runs.items():
            timing[name] = score(items, model, kind, methods, work / tag / name, dev, dtype,
                                 sample, extra)
        row = dict(model=model, methods=methods, sample_groups=sample,
                   gpu32_vs_cpu=compare(work / tag / "cpu", work / tag / "gpu32", items),
                   bf16_vs_cpu=compare(work / tag / "cpu", work / tag / "gpu_bf16", items),
                   small_batches_vs_gpu32=compare(work / tag / "gpu32",
                                                  work / tag / "gpu32_small_batches", items),
                   cache_second_run=timing["gpu32_cache2"]["cache"][-1:],
                   loaded={k: v["loaded"] for k, v in timing.items()},
                   cache_bytes_equal=all(
                       (work / tag / "gpu32_cache1" / f).read_bytes()
                       == (work / tag / "gpu32_cache2" / f).read_bytes()
                       for f in ("item_scores.parquet", "token_scores.parquet")),
                   cached_vs_uncached_equal=(work / tag / "gpu32_cache1" / "item_scores.parquet"
                                             ).read_bytes()
                   == (work / tag / "gpu32" / "item_scores.parquet").read_bytes(),
                   wall_s={k: round(v["wall_s"], 2) for k, v in timing.items()})
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def probe_features(data: Path, work: Path, device: str) -> dict:
    import numpy as np
    from safetensors.numpy import load_file

    treebank = data / "ewt" / "dev"
    walls = {}
    for dev in ("cpu", device):
        start = time.perf_counter()
        spudflow(["probe", "features", str(treebank), "--model", TINY[0][0],
                  "--baselines", "lm=0,1,2", "M0=0", "--device", dev,
                  "--out", str(work / "features" / dev)])
        walls[dev] = time.perf_counter() - start
    worst = 0.0
    for baseline in ("lm", "M0"):
        a = load_file(work / "features" / "cpu" / baseline / "orig.safetensors")
        b = load_file(work / "features" / device / baseline / "orig.safetensors")
        for key in a:
            if a[key].dtype.kind == "f":
                worst = max(worst, float(np.abs(a[key] - b[key]).max()))
    return dict(treebank="en_ewt dev", max_abs_diff=worst,
                wall_s={k: round(v, 2) for k, v in walls.items()})


def real_size_model(hub_snapshot: Path, grow: dict, kind: str, device: str,
                    dest: Path) -> tuple[Path, int]:
    """The tiny model's config grown to the real sizes, random weights (seed 0), its tokenizer."""
    import torch
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoModelForPreTraining,
    )

    config = AutoConfig.from_pretrained(hub_snapshot)
    for key, value in grow.items():
        setattr(config, key, value)
    if "attention_types" in grow:        # GPT-Neo derives attention_layers from it
        config.attention_layers = config.expand_attention_types_params(grow["attention_types"])
    auto = {"masked": AutoModelForMaskedLM, "causal": AutoModelForCausalLM,
            "electra": AutoModelForPreTraining}[kind]
    torch.manual_seed(0)
    with torch.device(device):
        model = auto.from_config(config)
    model.save_pretrained(dest)
    for file in hub_snapshot.iterdir():
        if "token" in file.name or file.suffix in (".model", ".txt"):
            shutil.copy(file, dest / file.name)
    n_params = sum(p.numel() for p in model.parameters())
    del model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return dest, n_params


def throughput(data: Path, work: Path, device: str, sample: int, full_items: int,
               quick: bool) -> list[dict]:
    from spudflow.core.hub_cache import loaded_snapshot

    items = data / "items" / "japanese_transitivity_base.parquet"
    rows = []
    for model_id, kind, methods, grow in REAL:
        if quick:       # two layers: the script's check, not a measurement
            grow = {**grow, **{k: 2 for k in ("num_hidden_layers", "n_layer", "num_layers")
                               if k in grow}}
            if "attention_types" in grow:
                grow["attention_types"] = [[["global", "local"], 1]]
        start = time.perf_counter()
        path, n_params = real_size_model(loaded_snapshot(model_id), grow, kind, device,
                                         work / "real" / model_id.replace("/", "--"))
        build = time.perf_counter() - start
        for dtype in ("float32", "bfloat16"):
            result = score(items, str(path), kind, methods, work / "real_scores" / path.name /
                           dtype, device, dtype, sample)
            row = dict(model=model_id, params_m=round(n_params / 1e6), methods=methods,
                       dtype=dtype, build_s=round(build, 1), **{
                           k: (round(v, 1) if isinstance(v, float) else v)
                           for k, v in result.items() if k not in ("cache", "loaded")},
                       full_dataset_hours=round(full_items * result["score_s"]
                                                / result["items"] / 3600, 2))
            rows.append(row)
            print(json.dumps(row), flush=True)
        shutil.rmtree(path)
    return rows


def environment(device: str) -> dict:
    import polars
    import torch
    import transformers

    env = dict(python=sys.version.split()[0], torch=torch.__version__,
               transformers=transformers.__version__, polars=polars.__version__,
               device=device)
    if device.startswith("cuda"):
        env["gpu"] = torch.cuda.get_device_name(0)
        env["cuda"] = torch.version.cuda
    return env


def markdown(report: dict) -> str:
    lines = ["# GPU check", "", "```", json.dumps(report["environment"]), "```"]
    if "agreement" in report:
        lines += ["", "## Agreement with the CPU (tiny models by hub id)", "",
                  "| model | GPU fp32 max Δ | fp32 pairs agree | bf16 max Δ | bf16 pairs agree |"
                  " small batches bit-identical | cache 2nd run | cached = uncached bytes |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in report["agreement"]:
            fp32, bf16 = r["gpu32_vs_cpu"], r["bf16_vs_cpu"]
            lines.append(
                f"| {r['model']} | {fp32['max_abs_diff']:.2e} | {fp32['decisions_agree']:.4f} | "
                f"{bf16['max_abs_diff']:.2e} | {bf16['decisions_agree']:.4f} | "
                f"{r['small_batches_vs_gpu32']['bit_identical']:.4f} | "
                f"{'; '.join(r['cache_second_run'])} | {r['cached_vs_uncached_equal']} |")
    if "probe_features" in report:
        p = report["probe_features"]
        lines += ["", f"Probe features ({p['treebank']}): max |Δ| GPU vs CPU "
                  f"{p['max_abs_diff']:.2e}; wall {p['wall_s']}"]
    if "throughput" in report:
        lines += ["", "## Real-size random models (Japanese preset sizes), base dataset sample",
                  "", "| model | params (M) | methods | dtype | items/s | tokens/s | peak GPU MiB"
                  " | hours for the full dataset |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in report["throughput"]:
            lines.append(f"| {r['model']} | {r['params_m']} | {r['methods']} | {r['dtype']} | "
                         f"{r['items_per_s']} | {r['tokens_per_s']} | {r['peak_gpu_mib']} | "
                         f"{r['full_dataset_hours']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true",
                        help="small samples and two-layer models (a check of the script)")
    parser.add_argument("--stages", nargs="*", help="run only these (default: all)")
    parser.add_argument("--full-items", type=int, default=749_500,
                        help="items of the full dataset the hours are extrapolated to (the "
                             "preset's base: 374,750 pairs)")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,   # spudflow's log lines, captured
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.update(HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(args.data.resolve() / "hub"),
                      TOKENIZERS_PARALLELISM="false")
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    report = dict(environment=environment(args.device))
    stages = [("agreement", lambda: agreement(args.data, work, args.device,
                                              20 if args.quick else 500)),
              ("probe_features", lambda: probe_features(args.data, work, args.device)),
              ("throughput", lambda: throughput(args.data, work, args.device,
                                                5 if args.quick else 2500, args.full_items,
                                                args.quick))]
    args.out.mkdir(parents=True, exist_ok=True)
    for name, stage in stages:
        if args.stages and name not in args.stages:
            continue
        start = time.perf_counter()
        report[name] = stage()
        report.setdefault("stage_wall_s", {})[name] = round(time.perf_counter() - start, 1)
        (args.out / "gpu_check.json").write_text(json.dumps(report, indent=1))
    (args.out / "gpu_check.md").write_text(text := markdown(report))
    print(text)
    print("stage wall:", report["stage_wall_s"])
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
