"""What the intervals add to each table job at a paper preset's size: the job with
`--resamples 0` (no bootstrap) and with --resamples (default 10,000), wall seconds and peak RSS.

    python bench/bench_intervals_presets.py --tiny-run DIR [--families spud blimp german_case]
                                            [--repeats 3] [--resamples 10000] [--before DIR]

Inputs are synthetic items and scores of the real shapes: a finished tiny run's items file of
the family (DIR/results/items, e.g. from tests/workflow_helpers.finished_tiny_run) with its
groups copied under new ids up to the preset's size, and seeded random scores for each scoring
function (nonce sentences and bad sentences less probable, so every statistic has something to
find):

- spud: the SPUD preset (config/papers/spud.yaml): each treebank's UD 2.10 test sentences as
  originals with one nonce version (pairs.spud: methods [spud], seeds [1]), scored by its
  language's scoring functions (models x methods: ar 6, de 3, en 6, fr 3, ru 3);
- blimp: 67 paradigms x 1,000 pairs (bench_intervals.blimp_inputs), 2 scoring functions;
- german_case: 7,200 sentences (the paper's templates x orders), 2 scoring functions;
- cola: CoLA's 8,551 + 527 + 516 sentences, 2 scoring functions.

Each job runs in a fresh process, the runs round by round (every other round in reverse). The
medians of --repeats runs' wall and CPU seconds are printed, with the job process's own peak
RSS (VmHWM) beside the job's mem_mb (aggregate/plan.py), and for a job with resamples the
median over rounds of the wall time it adds to the same round's resamples-0 run of the same
code; CPU seconds count polars' threads. With --before,
the jobs also run on another checkout's code (PYTHONPATH=DIR/workflow; code without --resamples,
from before the intervals, runs once per round as it is, and the table says what this code
at --resamples adds to it); with --keep, the inputs
and tables stay under KEEP/FAMILY (out-R-I: run R of the table above, repeat I), so that `cmp`
shows two checkouts' tables identical (where both have the same tables: not so against code from
before the intervals).

Measured (CPU seconds of one run each, the job's peak RSS in MB; a 2-core machine shared with
other jobs, so about +-1 s; "before": main at e6571cb, "after": the comparisons' counted MCC,
closed-form median jackknife and one-pass quantile search; every table of both runs
byte-identical before and after, `cmp`):

| table job | resamples 0, before -> after | 10,000, before -> after | peak RSS at 10,000 | mem_mb |
|---|---:|---:|---:|---:|
| table-blimp (67 x 1,000 pairs) | 3.7 -> 3.8 | 3.9 -> 3.9 | 613 -> 610 | 2000 |
| table-german-case (50 x 144) | 7.7 -> 8.2 | 7.9 -> 8.2 | 420 -> 414 | 2000 |
| table-cola (9,594 sentences) | 4.4 -> 3.9 | 36.0 -> 9.7 | 615 -> 459 | 2000 |
| table-spud-scores (5 treebanks) | 4.1 -> 4.3 | 156.2 -> 46.4 | 860 -> 850 | 4000 |

Then SPUD's comparisons resample each scoring function once (b4683c3 -> after, medians of 3
runs; all 57 files of the three runs byte-identical to b4683c3's): every comparison of a
language's original sentences draws the same resamples, so its functions' medians over them
are computed once, in one draw (comparison.resample_sides), and summed in int32:

| table job | resamples 0, before -> after | 10,000, before -> after | peak RSS at 10,000 | mem_mb |
|---|---:|---:|---:|---:|
| table-spud-scores (5 treebanks) | 4.4 -> 4.6 | 44.1 -> 14.2 | 849 -> 787 | 4000 |

Then SPUD's medians drawn jointly in bands (aggregate/joint_quantiles.py: a count for the
originals near some function's middle rank, one per group of the others; one draw per
dataset and nonce method) instead of index draws (2199d68 -> after, medians of 3 runs; 28 of
the 32 files byte-identical, the four of spud_comparison moved within Monte Carlo error, see
docs/aggregate.md):

| table job | resamples 0, before -> after | 10,000, before -> after | peak RSS at 10,000 | mem_mb |
|---|---:|---:|---:|---:|
| table-spud-scores (5 treebanks) | 4.7 -> 4.6 | 15.1 -> 5.8 | 789 -> 626 | 4000 |

And CoLA's comparisons drawing each resample's counts of the (label, prediction a, prediction
b) categories (a multinomial) and each swap test's swapped sentences per category (binomials)
instead of index draws and swapped rows (2199d68 -> after, medians of 3 runs; 23 of the 27
files byte-identical, the four of cola_comparison moved within Monte Carlo error):

| table job | resamples 0, before -> after | 10,000, before -> after | peak RSS at 10,000 | mem_mb |
|---|---:|---:|---:|---:|
| table-cola (9,594 sentences) | 4.2 -> 4.0 | 9.9 -> 5.5 | 463 -> 384 | 2000 |

Then CoLA's samples of at most 128 sentences drawing scipy's own index matrix, shared per
sample size (uncertainty.indices_below), the larger ones' tables drawn as their rows' totals,
shared by the tables of one sample, and each row's split (uncertainty.split_table_draws); the
quartiles' jackknife as three values and their counts, each set of equal observations' interval
computed once (a seed's rows and `all`'s, with one nonce seed), cubes by multiplying (numpy's
u ** 3 calls pow()) and the normal distribution from the standard library, which spares SPUD's
job the import of scipy.special (9742301 -> after, 7 rounds; spud_ratio_summary's intervals
moved by at most 9e-16, cola's within Monte Carlo error):

| table job | resamples 0, before -> after | 10,000, before -> after | wall added |
|---|---:|---:|---:|
| table-spud-scores | 3.01 / 3.84 -> 3.15 / 4.00 | 3.96 / 5.47 -> 3.90 / 5.45 | +30 % -> +24 % |
| table-cola | 3.66 / 3.96 -> 3.25 / 3.55 | 4.95 / 5.27 -> 4.08 / 4.39 | +36 % -> +19 % |

(The resamples-0 runs of both checkouts take the same time, 3.1-3.4 s, alternated six times;
the 3.66 above is this run's drift.)

What SPUD's and CoLA's resampling still adds is mostly drawing, near its floor in numpy:
SPUD's joint draws of the comparisons' medians (0.7 s: about 5,000 units' counts per resample in
some ranking's band, where an order statistic of some function can fall, and their cumulative
sums); CoLA's 159 tables of the sources and splits of more than 128 sentences (0.25 s: two
binomials per confusion matrix, about 65 ns each) and its comparisons (0.2 s).

The tables above compare a job with its own resamples-0 run, which still makes the comparisons'
point estimates and tests, the examples and the per-item data. With --before on code from before
the intervals (933600b^, which has no --resamples), the job is timed as it was then. Measured
so (medians of 3 rounds, German case 2; this code at 10,000 resamples; "before" is 933600b^):
the table commands had joined the items with their scores, fitted CoLA's thresholds and hashed
the items' text once per table that needed them, four times in BLiMP's job and three in CoLA's
and SPUD's; now once per command (aggregate/derived_once.py), and CoLA's MCC and accuracy are
computed from the 2 x 2 table with sklearn's arithmetic (every table file byte-identical):

| table job | before (no intervals) | resamples 0 | 10,000 | 10,000 against before (per round) |
|---|---:|---:|---:|---:|
| table-spud-scores | 4.49 | 5.33 | 6.96 | +58 % |
| table-cola | 5.48 | 3.86 | 4.75 | -10 % |
| table-blimp | 2.55 | 3.58 | 4.23 | +52 % |
| table-german-case | 15.94 | 15.32 | 14.90 | -7 % |

(wall seconds; before this change, two or three alternated rounds of before -> 10,000: SPUD
4.61-6.41 -> 7.85-10.46 s, CoLA 4.70-5.37 -> 7.98-9.43 s, BLiMP 2.30-2.40 -> 5.84-6.33 s.)
What BLiMP's and SPUD's jobs still add: the comparisons (BLiMP: exact McNemar through
scipy.special, whose import is 0.2 s, and the paradigm means' stratified bootstrap; SPUD:
the joint draws above), the quartiles' intervals, and the tables more to write (comparison,
examples, per-item data).

Not here: Japanese (749,500 items per dataset), whose table job fits cross-validated regressions
for 35 minutes at that size (its intervals, Wilson, lm-eval's stderr and kappa's multinomial
tables, cost the same at any size and are timed per call by bench/bench_intervals.py); and the
DepProbe table, whose inputs are probe runs' metrics and per-sentence counts
(probe_intervals.configuration_intervals is what its intervals cost, per configuration).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "workflow"))

# UD 2.10 test sets of the SPUD preset: sentences (the originals, before min_words) and the
# scoring functions of their language (config/papers/spud.yaml's models x methods)
SPUD_TREEBANKS = {"ar_padt": (680, 6), "de_hdt": (18_459, 3), "en_ewt": (2_077, 6),
                  "fr_gsd": (416, 3), "ru_syntagrus": (6_491, 3)}
GERMAN_SENTENCES = 7_200
COLA_SPLITS = {"in_domain_train": 8_551, "in_domain_dev": 527, "out_of_domain_dev": 516}
# each job's mem_mb (aggregate/plan.py family_tables)
MEM_MB = {"spud": 4000, "blimp": 2000, "german_case": 2000, "cola": 2000}


def copied_groups(items: pl.DataFrame, groups: int, dataset: str) -> pl.DataFrame:
    """`items` with its groups copied under new ids (`~k`) until it has `groups` groups."""
    have = items["group_id"].unique(maintain_order=True)
    copies = -(-groups // len(have))
    frames = []
    for k in range(copies):
        suffix = f"~{k}"
        frame = items.with_columns(
            (f"{dataset}:" + pl.col("item_id") + suffix).alias("item_id"),
            (f"{dataset}:" + pl.col("group_id") + suffix).alias("group_id"),
            pl.lit(dataset).alias("dataset"))
        if "sent_index" in items.columns:
            frame = frame.with_columns(pl.col("sent_index") + k * (int(items["sent_index"].max())
                                                                   + 1))
        if "sent_id" in items.columns:
            frame = frame.with_columns(pl.col("sent_id") + suffix)
        if "template" in items.columns:  # German case: a copy is a template of its own
            frame = frame.with_columns(pl.col("template") + suffix)
        frames.append(frame)
    out = pl.concat(frames)
    keep = out["group_id"].unique(maintain_order=True).head(groups)
    return out.filter(pl.col("group_id").is_in(keep.implode()))


def write_scores(root: Path, dataset: str, items: pl.DataFrame, functions: int, worse,
                 seed: int) -> list[str]:
    """One score file per model (two methods each, the last model one if `functions` is odd):
    logprob = -3 per word, `worse` per word less for the items it marks, plus noise."""
    from spudflow.core import artifacts

    from aggregate_inputs import score_path, scores_frame, write

    rng = np.random.default_rng(seed)
    ids = items["item_id"].to_list()
    words = np.maximum(items["words"].list.len().to_numpy(), 1)
    penalty = worse(items)
    paths = []
    for m in range(-(-functions // 2)):
        methods = ["ppl", "pppl"][:min(2, functions - 2 * m)]
        frames = [scores_frame(ids, f"lm{m}", method,
                               -(3 + (0.2 + 0.1 * m) * penalty + rng.normal(0, 0.3, len(ids)))
                               * words, words) for method in methods]
        paths.append(str(write(pl.concat(frames), score_path(root, dataset, f"lm{m}"),
                               artifacts.ITEM_SCORES)))
    return paths


def spud_inputs(root: Path, tiny: Path) -> list[str]:
    from spudflow.core import artifacts

    from aggregate_inputs import write

    source = pl.concat([pl.read_parquet(p) for p in sorted((tiny / "results" / "items")
                                                           .glob("spud_*.parquet"))])
    source = source.filter(pl.col("method").is_in(["orig", "spud"]))
    items, scores = [], []
    for s, (treebank, (originals, functions)) in enumerate(SPUD_TREEBANKS.items()):
        dataset = f"spud_{treebank}_test"
        frame = copied_groups(source, originals, dataset).with_columns(
            pl.lit(treebank.split("_")[0]).alias("language"))
        path = write(frame, root / "results" / "items" / f"{dataset}.parquet", artifacts.ITEMS_SPUD)
        items.append(str(path))
        scores += write_scores(root, dataset, frame, functions,
                               lambda f: (f["method"] == "spud").to_numpy().astype(float), s)
    return ["--items", *items, "--scores", *scores]


def german_inputs(root: Path, tiny: Path) -> list[str]:
    from spudflow.core import artifacts

    from aggregate_inputs import write

    source = pl.read_parquet(tiny / "results" / "items" / "german_case.parquet")
    per_group = source.group_by("group_id").len()["len"].max()
    frame = copied_groups(source, GERMAN_SENTENCES // per_group, "german_case")
    path = write(frame, root / "results" / "items" / "german_case.parquet",
                 artifacts.ITEMS_GERMAN_CASE)
    scores = write_scores(root, "german_case", frame, 2,
                          lambda f: (~f["grammatical"]).to_numpy().astype(float), 7)
    return ["--items", str(path), "--scores", *scores, "--animacy", "positions"]


def cola_inputs(root: Path, tiny: Path) -> list[str]:
    """CoLA's three files (in_domain_train 8,551, in_domain_dev 527, out_of_domain_dev 516
    sentences, about 70 % acceptable), scored by 2 scoring functions with unigram
    log-probabilities (SLOR, NormLP, Word-LP Min-1)."""
    from spudflow.core import artifacts

    from aggregate_inputs import items_frame, score_path, scores_frame, write

    rng = np.random.default_rng(3)
    rows = [{"item_id": f"{split}-{i}", "group_id": f"{split}-{i}",
             "sentence": f"sentence number {i} of {split}", "label": int(rng.random() < 0.7),
             "split": split, "source": f"src{i % 17}", "phenomenon_set": False, "line": i + 1}
            for split, n in COLA_SPLITS.items() for i in range(n)]
    items = items_frame(rows, "cola", "en")
    path = write(items, root / "results" / "items" / "cola.parquet", artifacts.ITEMS_COLA)
    ids, labels = items["item_id"].to_list(), items["label"].to_numpy()
    scores = []
    for m in range(2):
        n_tokens = rng.integers(4, 15, len(ids))
        logprob = -n_tokens * (4.0 - (0.5 + 0.2 * m) * labels + rng.normal(0, 0.6, len(ids)))
        unigram = -n_tokens * (6.0 + rng.normal(0, 0.3, len(ids)))
        scores.append(str(write(scores_frame(ids, f"lm{m}", "ppl", logprob, n_tokens,
                                             unigram=unigram), score_path(root, "cola", f"lm{m}"))))
    return ["--items", str(path), "--scores", *scores]


def blimp_job_inputs(root: Path, tiny: Path) -> list[str]:
    from bench_intervals import blimp_inputs

    return blimp_inputs(root, 2)


FAMILIES = {"spud": ("table-spud-scores", spud_inputs),
            "blimp": ("table-blimp", blimp_job_inputs),
            "german_case": ("table-german-case", german_inputs),
            "cola": ("table-cola", cola_inputs)}


def timed_job(args: list[str], pythonpath: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one `spudflow` command in a fresh process;
    CPU time is the steadier figure on a shared machine."""
    # the peak RSS the job's own process reached (VmHWM, counted from its exec): wait4's
    # ru_maxrss also counts the memory of this process, forked before the exec
    with tempfile.NamedTemporaryFile("r") as peak:
        code = (f"import sys\nfrom spudflow.cli import main\nstatus = main({args!r})\n"
                f"open({peak.name!r}, 'w').write(next(line for line in open('/proc/self/status')"
                " if line.startswith('VmHWM:')).split()[1])\nsys.exit(status)")
        env = {**os.environ, "PYTHONPATH": str(pythonpath)}
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c", code], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{args[0]} failed: {process.stderr.read().decode()[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime, int(peak.read()) / 1024


def _knows_resamples(checkout: Path) -> bool:
    """Whether a checkout's table commands take --resamples (code before the intervals does
    not)."""
    return "--resamples" in (checkout / "workflow/spudflow/aggregate/cli.py").read_text()


def _added(runs: list, base: list) -> str:
    """The median over rounds of what `runs` took more than `base` in the same round."""
    added = statistics.median((x[0] - b[0]) / b[0] for x, b in zip(runs, base, strict=True))
    return f"{100 * added:+.0f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny-run", type=Path, required=True,
                        help="a finished tiny run (its results/items give the shapes)")
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout whose workflow/ to compare")
    parser.add_argument("--keep", type=Path, help="write the inputs and every run's tables "
                        "under KEEP/FAMILY (kept), e.g. to `cmp` two checkouts' tables")
    args = parser.parse_args()

    print("| table job | run | wall s (median) | CPU s (median) | peak RSS MB (max) | mem_mb "
          "| wall added (median of rounds) |\n|---|---|---:|---:|---:|---:|---:|")
    for family in args.families:
        command, inputs = FAMILIES[family]
        with tempfile.TemporaryDirectory() as scratch:
            tmp = scratch if args.keep is None else args.keep / family
            given = inputs(Path(tmp), args.tiny_run)
            runs = [("--resamples 0", REPO / "workflow", 0),
                    (f"--resamples {args.resamples}", REPO / "workflow", args.resamples)]
            if args.before is not None and _knows_resamples(args.before):
                runs += [(f"--resamples {n}, {args.before}", args.before / "workflow", n)
                         for n in (0, args.resamples)]
            elif args.before is not None:  # code from before the intervals: its job as it was
                runs.append((f"{args.before} (no intervals)", args.before / "workflow", None))
            # round by round, every other round in reverse: a machine whose speed drifts
            # weighs on every run alike, and each round pairs a job with its resamples-0 run
            results: list[list] = [[] for _ in runs]
            for i in range(args.repeats):
                order = list(enumerate(runs))
                for r, (_, code, n) in (order if i % 2 == 0 else order[::-1]):
                    resamples = [] if n is None else ["--resamples", str(n)]
                    results[r].append(timed_job([command, *given, *resamples,
                                                 "--out-dir", str(Path(tmp) / f"out-{r}-{i}")],
                                                code))
            for r, (label, _, n) in enumerate(runs):
                wall = statistics.median(x[0] for x in results[r])
                cpu = statistics.median(x[1] for x in results[r])
                added = ""
                if n:  # against the resamples-0 run of the same code, round by round
                    added = _added(results[r], results[r - 1])
                if n is None:  # the job before the intervals: what today's adds to it
                    added = (f"{_added(results[1], results[r])} (this code at --resamples "
                             f"{args.resamples} against it)")
                print(f"| {command} | {label} | {wall:.2f} | {cpu:.2f} "
                      f"| {max(x[2] for x in results[r]):.0f} | {MEM_MB[family]} | {added} |",
                      flush=True)

if __name__ == "__main__":
    main()
