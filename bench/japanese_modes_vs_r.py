"""The Japanese regression of a finished run against R's glmnet, mode by mode (thesis §5.7).

    python bench/japanese_modes_vs_r.py --run DIR [--folds 10] [--seed 0] [--decision perplexity]

For each (dataset, model, method, region) mode of DIR's Japanese transitivity scores (a finished
run: results/items and results/scores, e.g. `make run`'s), the pairs the table job fits are
rebuilt with its own functions (aggregate/japanese.py: thesis_modes, preferences), and the
mode is fitted twice by spudflow's cv_glmnet, with `--convergence r_default` (the Japanese
preset's: R's default stopping rule) and `tight` (the default config's), on the table job's
fold ids. R (Rscript with glmnet, as tests/test_japanese_design.py calls it) fits R's own
model.matrix of the thesis's formula with those fold ids and cv.glmnet's defaults otherwise
(its own lambdas, each fold's own path, `thresh` 1e-7): the script prints, per mode, the rows
and predictors, R's lambda.1se against ours and the largest coefficient difference at
lambda.1se for each convergence. A mode the table skips (too few pairs of one class for the
folds) is listed as skipped.

Measured on the default run (`make run` at 24b7577, R glmnet 4.1-6): of its 16 modes, 5 are
skipped as the table skips them (add-k's pairs nearly all of one choice) and in the 11 fitted
ones lambda.1se is R's and `r_default`'s coefficients are R's to 2.6e-13 at worst; `tight`'s
differ by up to 0.73 (relative/addk), 0.088 (relative/kn@verb) and 3.5e-3 (kn).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from spudflow.aggregate import columns  # noqa: E402
from spudflow.aggregate.glmnet import cv_glmnet, fold_ids  # noqa: E402
from spudflow.aggregate.inputs import read_items, scored_items, scores_by_model  # noqa: E402
from spudflow.aggregate.japanese import (  # noqa: E402
    dataset_items,
    preferences,
    thesis_modes,
)
from spudflow.aggregate.japanese_regression import (  # noqa: E402
    FORMULA,
    KEYS,
    design_matrix,
    factor_values,
    skip_reason,
)
from spudflow.core import artifacts  # noqa: E402

R_PROGRAM = """suppressMessages(library(glmnet)); setwd("{tmp}");
d <- read.csv("f.csv", colClasses = "character", encoding = "UTF-8"); {factors};
x <- model.matrix(~ {terms}, d)[, -1];
y <- scan("y.csv", quiet = TRUE); foldid <- scan("folds.csv", quiet = TRUE);
cv <- cv.glmnet(x, y, family = "binomial", foldid = foldid);
cat(sprintf("%.17g", c(cv$lambda.1se, as.numeric(coef(cv, s = "lambda.1se")))), sep = "\\n")
"""


def r_fit(frame: pl.DataFrame, target: np.ndarray, folds: np.ndarray, tmp: Path) -> np.ndarray:
    """R's lambda.1se and its coefficients (intercept first) for the mode's pairs."""
    design = design_matrix(frame)
    values = factor_values(frame)
    pl.DataFrame({name: values[name] for name in design.levels}).write_csv(tmp / "f.csv")
    np.savetxt(tmp / "y.csv", target, fmt="%d")
    np.savetxt(tmp / "folds.csv", folds + 1, fmt="%d")
    factors = "; ".join(
        f"d${name} <- factor(d${name}, levels = c({', '.join(repr(v) for v in levels)}))"
        for name, levels in design.levels.items())
    terms = [t for t in FORMULA.removeprefix("~ ").split(" + ")
             if all(f in design.levels for f in t.split(" * "))]
    done = subprocess.run(
        ["Rscript", "-e", R_PROGRAM.format(tmp=tmp, factors=factors, terms=" + ".join(terms))],
        capture_output=True, text=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return np.array([float(v) for v in done.stdout.split()])


def mode_pairs(run: Path, decision: str):
    """(mode key, its pairs sorted by group) as the table job fits them."""
    items_paths = sorted((run / "results" / "items").glob("japanese_transitivity*.parquet"))
    score_paths = sorted((run / "results" / "scores").glob(
        "japanese_transitivity*/*/item_scores.parquet"))
    items = read_items(items_paths, artifacts.ITEMS_JAPANESE, columns.JAPANESE_ITEMS)
    for dataset, model_scores in scores_by_model(score_paths):
        own = dataset_items(items, dataset)
        pairs = preferences(thesis_modes(scored_items(own, model_scores, all_regions=True)),
                            decision)
        for key, group in sorted(pairs.partition_by(KEYS, as_dict=True).items(), key=str):
            yield "/".join(map(str, key)), group.sort("group_id")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a finished run's folder")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decision", default="perplexity")
    args = parser.parse_args()
    print("| mode | pairs | predictors | lambda.1se R / ours (r_default) | max abs coefficient "
          "difference, r_default | same, tight |\n|---|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for mode, group in mode_pairs(args.run, args.decision):
            design = design_matrix(group)
            target = group["prefers_transitive"].cast(pl.Int64).to_numpy()
            n, width = len(target), len(design.names)
            reason = skip_reason(target, width, args.folds, args.seed)
            if reason:
                print(f"| {mode} | {n} | {width} | skipped: {reason} | | |")
                continue
            differences, reference = {}, None
            for convergence in ("r_default", "tight"):
                cv = cv_glmnet(design.matrix, target, args.folds, args.seed,
                               convergence=convergence)
                chosen = cv.index("lambda.1se")
                ours = np.concatenate([[cv.path.intercepts[chosen]],
                                       cv.path.coefficients[chosen]])
                if reference is None:
                    reference = r_fit(group, target, fold_ids(n, args.folds, args.seed),
                                      Path(scratch))
                    lambda_ours = cv.lambda_1se
                differences[convergence] = float(np.max(np.abs(ours - reference[1:])))
            print(f"| {mode} | {n} | {width} | {reference[0]:.6g} / {lambda_ours:.6g} | "
                  f"{differences['r_default']:.2e} | {differences['tight']:.2e} |")


if __name__ == "__main__":
    main()
