"""How cost grows: every stage of the workflow on 1x, 4x (and 16x) EWT train.

    python bench/bench_scale.py [--factors 1,4,16] [--cores 1] [--keep DIR] [--no-neural]

EWT train (204k words) is written k times under new sent_ids (`-rK` appended; 3.3M words at
16x) as the one split `ewt/train` of a config that runs every stage on it: ingest, the nonce
version (spud, seed 1), the SPUD items, an n-gram trained on the split, scoring with that n-gram
and with a tiny causal transformer (tests/scoring_models.py), probe features and training with a
tiny encoder (tests/probe_support.py; the split's training share against the rest), aggregation
and the front page. The real Snakemake workflow runs it (`--cores`, one job at a time by
default), and each rule's `benchmark:` file gives its wall seconds, CPU seconds and peak RSS.
Prints one Markdown table: per stage and size the sums over its jobs (RSS: the largest job),
and the fitted exponent b of time ~ size^b (least squares on log-log). Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
EWT_TRAIN = next((p / "shared" / "data" / "ud" / "UD_English-EWT" / "en_ewt-ud-train.conllu.gz"
                  for p in REPO.parents if (p / "shared" / "data").is_dir()), Path("missing"))
# A benchmark file's folder under results/benchmarks/ -> the stage row it counts in.
STAGES = {
    "ingest": "ingest", "nonce": "nonce", "items_spud": "items", "ngram_train": "n-gram training",
    "score/ngram": "scoring, n-gram", "score/tiny_causal": "scoring, tiny transformer",
    "probe_features": "probe features", "probe_train": "probe training",
    "aggregate": "aggregation", "front_page": "front page",
}


def stage_of(benchmark: Path) -> str | None:
    """The stage row of a benchmark file (relative to results/benchmarks/)."""
    folder = benchmark.parts[0]
    if benchmark.stem.startswith(("table_", "figure_")):
        return "aggregation"  # also the nonce stage's replacement tables
    if benchmark.stem == "front_page":
        return "front page"
    if folder == "score":
        folder = f"score/{benchmark.stem}"
    return STAGES.get(folder)


def scaled_treebank(dest: Path, factor: int) -> int:
    """EWT train `factor` times, sent_ids made unique; returns the number of words."""
    text = gzip.decompress(EWT_TRAIN.read_bytes()).decode("utf-8")
    words = sum(1 for line in text.splitlines() if line[:1].isdigit()
                and line.split("\t", 1)[0].isdigit())
    with dest.open("w", encoding="utf-8") as out:
        for copy in range(factor):
            out.write(text.replace("# sent_id = ", f"# sent_id = r{copy}-") if copy
                      else text)
    return words * factor


def bench_config(workdir: Path, conllu: Path, neural: bool = True) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    config.update(
        treebanks={"ewt": {"lang": "en", "splits": {"train": str(conllu)}}},
        nonce={**config["nonce"], "methods": ["spud"], "seeds": [1]},
        training_shares={"ewt/train": {"share": 0.5, "seed": 0}},
        ngrams={"ngram": {"lang": "en", "text": ["ewt/train@train"]}},
        controls={},
        scoring={**config["scoring"], "unigram": ["ngram"], "cache": None},
    )
    config.pop("human_eval", None)
    pairs = config["pairs"]
    config["pairs"] = {"spud": {**pairs["spud"], "treebanks": None}}
    config["models"] = {
        "ngram": {"source": "results/ngram/ngram.parquet", "kind": "ngram",
                  "methods": ["kn"], "allow_training_overlap": True},  # cost only
        "tiny_causal": {"source": str(workdir / "tiny" / "causal-bytebpe"), "kind": "causal",
                        "methods": ["ppl"], "device": "cpu"},
    }
    probe = config["probe"]
    probe.update(models={"tiny": {**probe["models"]["minilm"], "source":
                                  str(workdir / "tiny" / "encoder"), "layers": 2,
                                  "dist_layer": 1, "label_layer": 2, "baselines": [],
                                  "device": "cpu"}},
                 tasks={"ewt": {"train": "train@train", "dev": None, "test": "train@heldout",
                                "layers": {}}},
                 seeds=[1], sample={"n": None, "seed": 0}, max_epochs=2, rank=16)
    if not neural:  # --no-neural: the stages whose cost is not a forward pass per sentence
        config["models"].pop("tiny_causal")
        probe["enabled"] = False
    return config


def prepare(workdir: Path, conllu: Path, neural: bool) -> None:
    for name in ("Snakefile", "rules", "config", "envs", "profiles", "workflow", "report"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, workdir / name)
    (workdir / "resources").mkdir()
    sys.path.insert(0, str(REPO / "tests"))
    from probe_support import save_tiny_encoder
    from scoring_models import save_tiny_model

    save_tiny_model(workdir / "tiny", "causal", "bytebpe")
    save_tiny_encoder(workdir / "tiny" / "encoder")
    config = bench_config(workdir, conllu, neural)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def run(workdir: Path, cores: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), "--quiet"],
                   cwd=workdir, env=env, check=True)


def measured(workdir: Path) -> dict[str, list[dict]]:
    """Stage -> its jobs' {s, cpu_time, max_rss} (Snakemake's benchmark files)."""
    jobs = defaultdict(list)
    for tsv in sorted((workdir / "results" / "benchmarks").rglob("*.tsv")):
        header, values = tsv.read_text().splitlines()[:2]
        row = dict(zip(header.split("\t"), values.split("\t"), strict=True))
        stage = stage_of(tsv.relative_to(workdir / "results" / "benchmarks"))
        if stage:
            jobs[stage].append({k: float(row[k]) for k in ("s", "cpu_time", "max_rss")
                                if row.get(k, "NA") not in ("NA", "-")})
    return jobs


def exponent(sizes: list[float], times: list[float]) -> float:
    xs, ys = [math.log(s) for s in sizes], [math.log(max(t, 1e-3)) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factors", default="1,4,16")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep the work folders here")
    parser.add_argument("--no-neural", action="store_true",
                        help="above 1x, leave out the tiny transformer's scoring and the probes "
                        "(a forward pass per sentence: the slow part on a CPU)")
    parser.add_argument("--table-from", type=Path,
                        help="only print the table of the runs kept in this folder")
    args = parser.parse_args()
    if not EWT_TRAIN.is_file():
        sys.exit(f"{EWT_TRAIN}: not found (the benchmark needs ../shared/data); skipped")
    factors = [int(f) for f in args.factors.split(",")]
    results, words = {}, {}
    root = Path(args.keep or tempfile.mkdtemp(prefix="spudflow-bench-scale-"))
    root = args.table_from or root
    for factor in factors:
        workdir = root / f"x{factor}"
        conllu = workdir / "ewt-train.conllu"
        if args.table_from:
            words[factor] = scaled_words(factor)
        else:
            workdir.mkdir(parents=True)
            words[factor] = scaled_treebank(conllu, factor)
            prepare(workdir, conllu, not args.no_neural or factor == 1)
            run(workdir, args.cores)
            print(f"{factor}x ({words[factor]:,} words) done", file=sys.stderr, flush=True)
        results[factor] = measured(workdir)
    print_table(factors, words, results)
    if not (args.keep or args.table_from):
        shutil.rmtree(root, ignore_errors=True)


def scaled_words(factor: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        return scaled_treebank(Path(tmp) / "x.conllu", 1) * factor


def print_table(factors: list[int], words: dict[int, int],
                results: dict[int, dict[str, list[dict]]]) -> None:
    """Per stage and size: wall and CPU seconds summed over its jobs, the largest job's peak RSS;
    the exponents of wall and CPU time against words."""
    sizes = [words[f] for f in factors]
    head = " | ".join(f"{f}x ({words[f] / 1e6:.2f}M words): wall s / CPU s / peak MB"
                      for f in factors)
    print(f"| stage | {head} | exponent wall | exponent CPU |")
    print(f"|---|{'---|' * len(factors)}---|---|")
    for stage in dict.fromkeys(STAGES.values()):
        rows = [results[f].get(stage, []) for f in factors]
        if not all(rows):
            continue
        walls = [sum(j["s"] for j in r) for r in rows]
        cpus = [sum(j.get("cpu_time", 0) for j in r) for r in rows]
        cells = [f"{w:.1f} / {c:.1f} / {max(j.get('max_rss', 0) for j in r):.0f}"
                 for w, c, r in zip(walls, cpus, rows, strict=True)]
        fits = [f"{exponent(sizes, t):.2f}" if len(sizes) > 1 else "-" for t in (walls, cpus)]
        print(f"| {stage} | {' | '.join(cells)} | {' | '.join(fits)} |")


if __name__ == "__main__":
    main()
