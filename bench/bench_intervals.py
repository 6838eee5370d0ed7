"""What the intervals and paired comparisons cost at a paper preset's size.

    python bench/bench_intervals.py [--functions 2] [--resamples 10000] [--before DIR]

1. The BLiMP table job (`spudflow table-blimp`, a fresh process each run) on 67 paradigms x
   1,000 pairs scored by --functions scoring functions: wall seconds and peak RSS with
   `--resamples 0` (the job without its bootstrap) and with --resamples; with --before, the
   same command run on the code of another checkout DIR (PYTHONPATH=DIR/workflow, this venv),
   e.g. the commit before the binomial fast path.
2. In one process, per call: BLiMP's paradigm-mean bootstrap (67 x 1,000 pairs) by
   scipy.stats.bootstrap as before and by the multinomial fast path; the Japanese accuracy
   intervals (Wilson and lm-eval's stderr) and the Japanese accuracy table at the preset's
   749,500 items (374,750 pairs) per dataset; the paired comparisons: accuracy difference with
   exact McNemar (Japanese pairs; BLiMP stratified by paradigm), Holm over 100 p-values, and a
   cluster bootstrap and permutation test of the median ratio at SPUD's size (1,000 originals
   of a PUD treebank, 5 nonce versions each).
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
PARADIGMS, PAIRS = 67, 1000
JAPANESE_ITEMS = 749_500
FIELDS = ("morphology", "syntax", "semantics", "syntax_semantics")


def blimp_inputs(root: Path, functions: int, seed: int = 0) -> list[str]:
    """Items and score files of 67 paradigms x 1,000 pairs (the released BLiMP's size)."""
    from spudflow.core import artifacts

    from aggregate_inputs import items_frame, score_path, scores_frame, write

    rows = []
    for p in range(PARADIGMS):
        field, uid = FIELDS[p % len(FIELDS)], f"paradigm_{p:02d}"
        for i in range(PAIRS):
            for label, kind in ((1, "good"), (0, "bad")):
                rows.append({"item_id": f"{uid}-{i}-{kind}", "group_id": f"{uid}-{i}",
                             "sentence": f"{kind} sentence {i}", "label": label,
                             "field": field, "linguistics_term": f"term_{p // 3}", "UID": uid,
                             "pairID": str(i)})
    items = items_frame(rows, "blimp", "en")
    items_path = write(items, root / "results" / "items" / "blimp.parquet",
                       artifacts.ITEMS_BLIMP)
    ids = items["item_id"].to_list()
    good = items["label"].to_numpy()
    rng = np.random.default_rng(seed)
    scores = []
    for f in range(functions):
        logprob = -30 + (0.5 + 0.3 * f) * good + rng.normal(0, 2.0, len(ids))
        scores.append(str(write(scores_frame(ids, f"lm{f}", "sum", logprob, np.full(len(ids), 6)),
                                score_path(root, "blimp", f"lm{f}"))))
    return ["--items", str(items_path), "--scores", *scores]


def table_job_rows(functions: int, resamples: int, before: Path | None, repeats: int) -> list:
    from bench_intervals_presets import timed_job  # the job's own peak RSS (VmHWM)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        inputs = blimp_inputs(Path(tmp), functions)
        runs = [("without the bootstrap (--resamples 0)", REPO / "workflow", 0),
                (f"with the bootstrap, this code ({resamples} resamples)", REPO / "workflow",
                 resamples)]
        if before is not None:
            runs.append((f"with the bootstrap, {before} ({resamples} resamples)",
                         before / "workflow", resamples))
        for label, path, n in runs:
            results = [timed_job(["table-blimp", *inputs, "--resamples", str(n),
                                  "--out-dir", str(Path(tmp) / f"out{n}-{i}")], path)
                       for i in range(repeats)]
            rows.append((label, min(r[0] for r in results), max(r[2] for r in results)))
    return rows


def best_of(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def scipy_stratified(groups, settings):
    """The paradigm-mean bootstrap as the table computed it before the fast path."""
    from scipy import stats

    def statistic(*samples, axis=-1):
        return np.mean([np.mean(s, axis=axis) for s in samples], axis=0)
    return stats.bootstrap(tuple(groups), statistic, n_resamples=settings.resamples,
                           method="BCa", vectorized=True,
                           rng=np.random.default_rng(settings.seed)).confidence_interval


def call_rows(resamples: int, with_scipy: bool) -> list:
    from spudflow.aggregate.comparison import (
        holm,
        paired_accuracy,
        paired_bootstrap,
        paired_permutation_test,
        weighted_quantile,
    )
    from spudflow.aggregate.japanese import accuracy_table
    from spudflow.aggregate.uncertainty import (
        Uncertainty,
        accuracy_stderr,
        stratified_mean_of_means,
        wilson,
    )

    settings = Uncertainty(resamples=resamples)
    rng = np.random.default_rng(0)
    groups = [(rng.random(PAIRS) < rng.uniform(0.5, 0.95)).astype(np.float64)
              for _ in range(PARADIGMS)]
    rows = []
    if with_scipy:
        rows.append(("BLiMP paradigm-mean bootstrap, scipy.stats.bootstrap (before)",
                     best_of(lambda: scipy_stratified(groups, settings), 1)))
    rows.append(("BLiMP paradigm-mean bootstrap, multinomial fast path",
                 best_of(lambda: stratified_mean_of_means(groups, settings))))

    n_pairs = JAPANESE_ITEMS // 2
    modes = 4
    pairs = pl.DataFrame({
        "dataset": "japanese_base", "model": np.repeat([f"m{i}" for i in range(modes)], n_pairs),
        "method": "ppl", "region": None,
        "condition": np.tile(np.where(np.arange(n_pairs) % 3 == 0, "ambiguous", "obligatory"),
                             modes),
        "prefers_transitive": rng.random(modes * n_pairs) < 0.7,
        "tie": np.zeros(modes * n_pairs, dtype=bool),
        "n_unseen": 0, "n_words": 8,
    })
    rows.append((f"Japanese accuracy table, {modes} modes x {n_pairs:,} pairs (all columns)",
                 best_of(lambda: accuracy_table(pairs))))
    k, n = rng.integers(0, 10**5, 1000), np.full(1000, 10**5)
    rows.append(("Japanese Wilson interval + lm-eval stderr, 1,000 table rows",
                 best_of(lambda: (wilson(k, n, 0.95), accuracy_stderr(k, n)))))

    a, b = rng.random(n_pairs) < 0.72, rng.random(n_pairs) < 0.70
    rows.append((f"paired accuracy + exact McNemar, {n_pairs:,} Japanese pairs",
                 best_of(lambda: paired_accuracy(a, b, settings))))
    strata = np.repeat(np.arange(PARADIGMS), PAIRS)
    a2, b2 = rng.random(len(strata)) < 0.8, rng.random(len(strata)) < 0.75
    rows.append(("paired paradigm-mean difference + McNemar, BLiMP 67 x 1,000",
                 best_of(lambda: paired_accuracy(a2, b2, settings, strata=strata))))
    p = rng.random(100)
    rows.append(("Holm over 100 p-values", best_of(lambda: holm(list(p)))))

    originals, versions = 1000, 5
    clusters = np.repeat(np.arange(originals), versions)
    x = rng.lognormal(0.3, 0.5, originals * versions)
    y = x * rng.lognormal(0.05, 0.2, originals * versions)
    median = weighted_quantile(0.5)
    rows.append((f"cluster bootstrap of the median ratio, {originals:,} originals x {versions}",
                 best_of(lambda: paired_bootstrap(median, x, y, settings, clusters=clusters), 1)))
    rows.append((f"paired permutation test of the median ratio, same ({resamples} swaps)",
                 best_of(lambda: paired_permutation_test(median, x, y, resamples, 0,
                                                         clusters=clusters), 1)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--before", type=Path, help="a checkout whose workflow/ to compare")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-scipy", action="store_true",
                        help="skip the scipy call (about 5 GB and 8 s per call at this size)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "workflow"))

    print(f"## table-blimp, {PARADIGMS} x {PAIRS:,} pairs, {args.functions} scoring functions\n")
    print("| run | wall s (best) | peak RSS MB |\n|---|---:|---:|")
    for label, wall, rss in table_job_rows(args.functions, args.resamples, args.before,
                                           args.repeats):
        print(f"| {label} | {wall:.2f} | {rss:.0f} |")
    print(f"\n## calls ({args.resamples} resamples)\n\n| call | seconds |\n|---|---:|")
    for label, seconds in call_rows(args.resamples, not args.no_scipy):
        print(f"| {label} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
