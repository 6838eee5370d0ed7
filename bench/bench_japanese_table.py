"""table_japanese's cost at the Japanese preset's shape, and where it goes.

    python bench/bench_japanese_table.py [--pairs 374750] [--datasets base,rare] [--jobs 2]
                                         [--profile] [--out DIR] [--items-only]
                                         [--without-regressions] [--before CHECKOUT]

Items of the preset (config/papers/japanese_transitivity.yaml): `--pairs` pairs of each dataset
drawn (seeded) from the 50 verb pairs x 7,495 contexts the items stage builds (base and rare:
all 374,750, 749,500 items); scores of the preset's modes, synthetic (seeded): four masked models
with `pppl` and `unmasked`, ELECTRA, three causal models, each on the whole sentence and the verb
(24 modes), the transitive verb's log probability shifted by the context. Runs
`japanese_tables` with the preset's regression settings (10 folds, 100 lambdas, lambda.1se,
alpha 1, top 10, kappa's bootstrap with 1,000 resamples) in `--jobs` threads, prints its wall and
CPU seconds and, with `--profile`, cProfile's largest cumulative entries; `--out` writes the
tables (to compare two checkouts' bytes). `--items-only` times what the per-item file adds to
the job instead (family_examples.japanese_items, one more pass over the scores, and its Parquet
written): in a fresh process, its wall and CPU seconds, the process's peak RSS beside the
same process's peak for the examples table alone (the pass over the scores every registered
table makes), and the file's size. `--before CHECKOUT` times the whole table command (`spudflow
table-japanese`, its options at their defaults, `--jobs`) of this code and of another checkout's
(e.g. a worktree of the commit before the intervals) on inputs each builds with its own items
code (items versions differ), the two commands at the same time, so that a machine whose speed
drifts weighs on both alike: wall and CPU seconds, each process's peak RSS (VmHWM) beside the
mem_mb this code's rule asks for those inputs (aggregate/plan.py), and what this code adds.

Measured at the preset's full size (base and rare, 749,500 items each, 24 modes; `--before` a
worktree of 933600b^, the commit before the intervals; `--jobs 1`, both commands at once beside
a clean clone's `make run` and `.ci/run` on a 2-core machine, so the wall times are long):

| code | wall s | CPU s | peak RSS MB | mem_mb asked |
|---|---:|---:|---:|---:|
| this code (85ecc37) | 5,331 | 3,777 | 8,753 | 18,833 |
| before the intervals | 5,575 | 3,428 | 7,248 | |

Wall -4.4 %, CPU +10.2 %. Between the two, besides the intervals, comparisons and examples:
the regressions' tight refit and their pipelining over models, and the per-item file
(japanese_transitivity_items, 17.6M rows, 559 MB), written in the last 4.5 minutes of the job.
The synthetic score files are twice the real ones' size (96 MB per masked model), so the rule
asks more than for the real preset.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
LEXICON = REPO / "config" / "lexicons" / "japanese_verb_pairs.tsv"
# (model, method) of the preset's models
MODES = [*((f"bert{k}", m) for k in range(4) for m in ("pppl", "unmasked")),
         ("electra", "electra"), *((f"gpt{k}", "ppl") for k in range(3))]


def items_of(variant: str, pairs: int, root: Path) -> pl.DataFrame:
    from spudflow.aggregate import columns
    from spudflow.aggregate.inputs import read_items
    from spudflow.core import artifacts
    from spudflow.core.contract import write_artifact
    from spudflow.items.japanese_transitivity import build_japanese_items

    sample = None if pairs >= 374_750 else pairs
    table = build_japanese_items(LEXICON, variant, f"japanese_{variant}", sample=sample, seed=0,
                                 min_count=0)  # the lexicon file counts a small corpus
    path = root / "results" / "items" / f"japanese_{variant}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_artifact(table, path, artifacts.ITEMS_JAPANESE)
    return read_items([path], artifacts.ITEMS_JAPANESE, columns.JAPANESE_ITEMS)


def scores_of(items: pl.DataFrame, seed: int, root: Path) -> list[Path]:
    """Each model's item_scores.parquet of the items' dataset under root/results/scores."""
    sys.path.insert(0, str(REPO / "tests"))
    from aggregate_inputs import score_path, scores_frame, write

    rng = np.random.default_rng(seed)
    ids = items["item_id"].to_list()
    transitive = (items["transitivity"] == "transitive").to_numpy()
    has_wo = items["order"].str.contains("を").fill_null(False).to_numpy()
    n_tokens = rng.integers(5, 15, len(ids))
    by_model: dict[str, list[pl.DataFrame]] = {}
    for k, (model, method) in enumerate(MODES):
        for region, verb_tokens in ((None, n_tokens), ("verb", np.full(len(ids), 2))):
            effect = 0.3 + 0.1 * k
            logprob = (-3.0 * verb_tokens + effect * transitive * (2 * has_wo - 0.5)
                       + rng.normal(0, 1.0, len(ids)))
            by_model.setdefault(model, []).append(
                scores_frame(ids, model, method, logprob, verb_tokens, region=region))
    dataset = items["dataset"][0]
    return [write(pl.concat(frames), score_path(root, dataset, model))
            for model, frames in sorted(by_model.items())]


def registered_cost(function: str, items: list[Path], scores: list[Path], out: Path) -> dict:
    """One registered Japanese table (`examples` or `items`) computed from the files and
    written, in this process: wall and CPU seconds, peak RSS (MB), the file's size (MB)."""
    import resource

    from spudflow.aggregate import columns, family_examples
    from spudflow.aggregate.inputs import ScoresByModel, read_items
    from spudflow.aggregate.outputs import Table, write_registry_table
    from spudflow.core import artifacts

    start, cpu = time.perf_counter(), time.process_time()
    frame = read_items(items, artifacts.ITEMS_JAPANESE, columns.JAPANESE_ITEMS)
    name = {"examples": "japanese_examples", "items": "japanese_transitivity_items"}[function]
    if function == "examples":
        table = family_examples.japanese(frame, ScoresByModel(scores), 5, 0, "perplexity")
    else:
        table = family_examples.japanese_items(frame, ScoresByModel(scores), "perplexity")
    write_registry_table(Table(name, table), out / name)
    rows = pl.scan_parquet(out / f"{name}.parquet").select(pl.len()).collect().item()
    return {"rows": rows, "wall_s": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "file_mb": (out / f"{name}.parquet").stat().st_size / 1e6}


def items_only(root: Path, out: Path) -> None:
    """registered_cost of the examples table, then of the per-item file, each in a fresh
    process."""
    items = sorted(str(p) for p in (root / "results" / "items").glob("*.parquet"))
    scores = sorted(str(p) for p in (root / "results" / "scores").rglob("item_scores.parquet"))
    out.mkdir(parents=True, exist_ok=True)
    for function in ("examples", "items"):
        code = (f"import sys; sys.path.insert(0, {str(REPO / 'bench')!r}); import json; "
                "from pathlib import Path; from bench_japanese_table import registered_cost; "
                f"print(json.dumps(registered_cost({function!r}, {items!r}, {scores!r}, "
                f"Path({str(out)!r}))))")
        result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                text=True)
        cost = json.loads(result.stdout.strip().splitlines()[-1])
        print(f"{function}: {cost['rows']:,} rows, {cost['wall_s']:.1f} s wall, "
              f"{cost['cpu_s']:.1f} s CPU, peak RSS {cost['peak_rss_mb']:,.0f} MB, "
              f"Parquet {cost['file_mb']:.1f} MB")


def _items_stage_as_of() -> str:
    """Python that lets items_of import the items code of a checkout from before the items stage
    was renamed (then spudflow.pairs)."""
    return ("import sys\ntry:\n    import spudflow.items.japanese_transitivity\n"
            "except ModuleNotFoundError:\n"
            "    import spudflow.pairs.japanese_transitivity as old\n"
            "    sys.modules['spudflow.items'] = sys.modules['spudflow.pairs']\n"
            "    sys.modules['spudflow.items.japanese_transitivity'] = old\n")


def checkout_inputs(checkout: Path, root: Path, pairs: int, datasets: list[str]
                    ) -> tuple[list[str], list[str]]:
    """(items files, score files) built under ROOT by the checkout's items code, in a fresh
    process (PYTHONPATH=CHECKOUT/workflow): the items version that checkout reads."""
    code = (_items_stage_as_of()
            + f"sys.path.insert(0, {str(REPO / 'bench')!r})\nimport json\n"
            "from pathlib import Path\nfrom bench_japanese_table import items_of, scores_of\n"
            f"root = Path({str(root)!r})\nitems, scores = [], []\n"
            f"for k, variant in enumerate({datasets!r}):\n"
            f"    frame = items_of(variant, {pairs}, root)\n"
            "    items.append(str(root / 'results' / 'items' / f'japanese_{variant}.parquet'))\n"
            "    scores += [str(p) for p in scores_of(frame, k, root)]\n"
            "print(json.dumps([items, scores]))\n")
    env = {**os.environ, "PYTHONPATH": str(checkout / "workflow")}
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                            text=True, env=env)
    items, scores = json.loads(result.stdout.strip().splitlines()[-1])
    return items, scores


def before_after(before: Path, pairs: int, datasets: list[str], jobs: int) -> None:
    """The table command of this code and of BEFORE, each on its own inputs, at the same time."""
    from bench_intervals_presets import timed_job

    from spudflow.aggregate.plan import AggregatePlan

    checkouts = {"this code": REPO, str(before): before}
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(2) as pool:
        roots = {name: Path(scratch) / f"checkout-{k}" for k, name in enumerate(checkouts)}
        inputs = dict(zip(checkouts, pool.map(
            lambda name: checkout_inputs(checkouts[name], roots[name], pairs, datasets),
            checkouts), strict=True))
        commands = {name: ["table-japanese", "--items", *inputs[name][0], "--scores",
                           *inputs[name][1], "--jobs", str(jobs),
                           "--out-dir", str(roots[name] / "tables")] for name in checkouts}
        runs = dict(zip(checkouts, pool.map(
            lambda name: timed_job(commands[name], checkouts[name] / "workflow"), checkouts),
            strict=True))
        asked = {name: AggregatePlan.japanese_table_memory(
            None, None, SimpleNamespace(item_files=inputs[name][0], score_files=inputs[name][1]))
            for name in checkouts}
    print("| code | wall s | CPU s | peak RSS MB | mem_mb asked |\n|---|---:|---:|---:|---:|")
    for name, (wall, cpu, peak) in runs.items():
        print(f"| {name} | {wall:.0f} | {cpu:.0f} | {peak:,.0f} | {asked[name]:,} |")
    (now_wall, now_cpu, _), (old_wall, old_cpu, _) = runs.values()
    print(f"this code against {before}: wall {100 * (now_wall / old_wall - 1):+.1f} %, "
          f"CPU {100 * (now_cpu / old_cpu - 1):+.1f} %")


def without_regressions() -> None:
    """japanese_tables with each model's regressions replaced by empty tables of their
    schemas."""
    from spudflow.aggregate import japanese
    from spudflow.aggregate.japanese_regression import COEFFICIENT_SCHEMA, FIT_SCHEMA

    def no_regressions(*args, **kwargs):
        return (pl.DataFrame(schema=FIT_SCHEMA), pl.DataFrame(schema=COEFFICIENT_SCHEMA),
                pl.DataFrame(schema=COEFFICIENT_SCHEMA))
    japanese.regression_tables = no_regressions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=374_750)
    parser.add_argument("--datasets", default="base,rare")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--items-only", action="store_true",
                        help="time the per-item file alone (japanese_transitivity_items)")
    parser.add_argument("--without-regressions", action="store_true",
                        help="time the main thread's part alone: the regressions left out")
    parser.add_argument("--before", type=Path,
                        help="a checkout whose table command to time beside this code's")
    args = parser.parse_args()
    if args.before is not None:
        before_after(args.before, args.pairs, args.datasets.split(","), args.jobs)
        return
    from spudflow.aggregate.inputs import scores_by_model
    from spudflow.aggregate.japanese import japanese_tables
    from spudflow.aggregate.outputs import write_tables
    from spudflow.aggregate.uncertainty import Uncertainty

    start = time.perf_counter()
    root = Path(tempfile.mkdtemp())
    items = [items_of(v, args.pairs, root) for v in args.datasets.split(",")]
    scores = [path for k, i in enumerate(items) for path in scores_of(i, k, root)]
    all_items = pl.concat(items, how="diagonal_relaxed")
    rows = sum(pl.scan_parquet(p).select(pl.len()).collect().item() for p in scores)
    print(f"{all_items.height:,} items, {rows:,} score rows, "
          f"{len(MODES) * 2} modes (made in {time.perf_counter() - start:.0f} s)")
    if args.items_only:
        items_only(root, args.out or root / "tables")
        return
    settings = Uncertainty(0.95, args.resamples, 0)
    if args.without_regressions:
        without_regressions()

    def tables():
        return japanese_tables(all_items, scores_by_model(scores), 10, 0, "lambda.1se", 1.0, 10,
                               10_000, 100, "perplexity", (), args.jobs, 0.95, settings)

    profiler = cProfile.Profile() if args.profile else None
    start, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    made = tables()
    if profiler:
        profiler.disable()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"japanese_tables: {wall:.1f} s wall, {cpu:.1f} s CPU, {args.jobs} jobs")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    if args.out:
        write_tables(made, args.out)


if __name__ == "__main__":
    main()
