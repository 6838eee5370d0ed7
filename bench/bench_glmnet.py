"""cv_glmnet's cost on a sparse one-hot design of the Japanese regression's width (thesis §5.7).

    python bench/bench_glmnet.py [--sizes 2000,20000,200000] [--folds 10] [--n-lambda 100]

A synthetic design, not the thesis's coding: seven factors of 40, 6, 8, 4, 2, 60 and 60 levels,
every level a column (180 predictors, one nonzero per factor and row), where the real design
(aggregate/japanese_regression.py `design_matrix`) is R's model.matrix with treatment contrasts and
noun-by-marker interactions, also about 180 columns for 50 verb pairs; the choice drawn from a
logistic model of the columns (seeded). What it measures is the solver's cost per row and column,
which the coding does not change. Each size runs in a fresh process (`--one N`), so its peak RSS is
its own; prints one Markdown table: rows, predictors, nonzeros, wall and CPU seconds for cv_glmnet
(the path on all rows and one per fold: `--folds` + 1 fits of up to `--n-lambda` lambdas, each
ended early as glmnet's; CPU seconds are the steadier figure on a shared machine), peak RSS, the
lambdas on the path, lambda.1se and the number of nonzero coefficients there. The first call's
numba compilation is excluded (a warm-up fit on a tiny design).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse

# levels per factor: verb pair, order, adverbial, relative clause, relative position, arg1, arg2
LEVELS = (40, 6, 8, 4, 2, 60, 60)


def design(n: int, seed: int = 0) -> tuple[sparse.csr_matrix, np.ndarray]:
    """One-hot rows (one level per factor, levels drawn unevenly) and a logistic target."""
    rng = np.random.default_rng(seed)
    blocks, offset = [], 0
    for k in LEVELS:
        fractions = rng.dirichlet(np.full(k, 0.7))
        blocks.append(offset + rng.choice(k, size=n, p=fractions))
        offset += k
    columns = np.stack(blocks, axis=1).ravel()
    rows = np.repeat(np.arange(n), len(LEVELS))
    x = sparse.csr_matrix((np.ones(len(columns)), (rows, columns)), shape=(n, offset))
    effect = rng.normal(0.0, 0.6, offset) * (rng.random(offset) < 0.3)
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ effect - 0.2)))).astype(float)
    return x, y


def one(n: int, folds: int, n_lambda: int) -> dict:
    from spudflow.aggregate.glmnet import cv_glmnet

    warm_x, warm_y = design(200, seed=1)
    cv_glmnet(warm_x, warm_y, folds=3, n_lambda=5)  # numba compilation, not timed
    x, y = design(n)
    start, cpu = time.perf_counter(), time.process_time()
    cv = cv_glmnet(x, y, folds=folds, seed=0, n_lambda=n_lambda)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    chosen = cv.index("lambda.1se")
    return {"rows": n, "predictors": x.shape[1], "nonzeros": int(x.nnz), "seconds": seconds,
            "cpu_seconds": cpu,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "lambdas": len(cv.path.lambdas), "lambda_1se": cv.lambda_1se,
            "nonzero_at_1se": int(np.count_nonzero(cv.path.coefficients[chosen]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000,200000")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--n-lambda", type=int, default=100)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.folds, args.n_lambda)))
        return
    print(f"cv_glmnet, {args.folds} folds, {args.n_lambda} lambdas\n")
    print("| rows | predictors | nonzeros | seconds | CPU seconds | peak RSS MiB | lambdas "
          "| lambda.1se | nonzero b |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", str(n),
                               "--folds", str(args.folds), "--n-lambda", str(args.n_lambda)],
                              capture_output=True, text=True, check=True)
        r = json.loads(done.stdout.splitlines()[-1])
        print(f"| {r['rows']:,} | {r['predictors']} | {r['nonzeros']:,} | {r['seconds']:.2f} | "
              f"{r['cpu_seconds']:.2f} | {r['peak_rss_mib']:.0f} | {r.get('lambdas', '–')} | "
              f"{r['lambda_1se']:.6g} | "
              f"{r['nonzero_at_1se']} |",
              flush=True)


if __name__ == "__main__":
    main()
