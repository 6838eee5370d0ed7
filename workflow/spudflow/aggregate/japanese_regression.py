"""What drives a mode's choice of verb: penalised logistic regression on the pair's context
(Japanese transitivity thesis, §5.7, Tables 4-7).

Target: the mode prefers the transitive verb (1) or not (0). Predictors as the thesis lists them,
one-hot (every level): verb pair, constituent order, adverbial, relative-clause type and
position, and the first and the second argument (sentence order) as noun with marker
(`arg1.marker1=猫を`, the thesis's `arg1 id.marker1`). Without aliases: the constituent order
fixes each argument's marker, the noun with marker fixes the noun, so separate marker and noun
columns would only duplicate them, and an L1 penalty splits weight between duplicates
arbitrarily; any column equal to an earlier one is dropped as well.

The thesis fits R's glmnet "by default" with ten-fold cross-validation: here its procedure
(spudflow.aggregate.glmnet: standardised predictors, the 100-lambda path, seeded folds, binomial
deviance) and coef()'s default, lambda.1se (lambda.min as an option). The coefficients of the fit
on all pairs at that lambda, the intercept among them (as coef() lists it; Table 6 shows it
first), give the largest positive and the largest negative ones in separate tables, as Tables
4/6 (max.) and 5/7 (min.). A mode glmnet cannot fit, or whose fit fails, is a row with its
status and reason in each table (group_status), never the end of the job.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
from scipy import sparse
from sklearn.preprocessing import OneHotEncoder

from spudflow.aggregate.glmnet import LAMBDA_CHOICES, cv_glmnet, fold_ids
from spudflow.aggregate.group_status import Skipped, computed
from spudflow.core.artifacts import JAPANESE_PARTICLES
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.table_artifacts import TABLES

log = get_logger(__name__)

CATEGORICAL = ("verb_pair", "order", "adverbial", "relative_clause", "relative_position")
# The first and second argument's predictor (§5.7): noun with marker.
POSITIONAL = ("arg1.marker1", "arg2.marker2")
INTERCEPT = "(Intercept)"
MODE = ["model", "method", "region"]
KEYS = ["dataset", *MODE]
FIT_SCHEMA = TABLES["japanese_regression"].polars_schema()
COEFFICIENT_SCHEMA = TABLES["japanese_regression_max"].polars_schema()  # = _min's


def _arguments(value) -> list[str]:
    """args: a list of argument+particle strings, or one string of them separated by spaces or
    commas."""
    if value is None:
        return []
    if isinstance(value, str):
        return [a for a in re.split(r"[\s,、]+", value) if a]
    return [str(a) for a in value]


def _split(argument: str) -> tuple[str, str]:
    """(noun, marker) of `noun + particle`; the pairs stage's particles are one character."""
    if len(argument) < 2 or argument[-1] not in JAPANESE_PARTICLES:
        raise InputError("--items", None, f"argument {argument!r} is not a noun followed by one "
                         f"of the particles {', '.join(JAPANESE_PARTICLES)}")
    return argument[:-1], argument[-1]


def positional_arguments(pairs: pl.DataFrame) -> pl.DataFrame:
    """The POSITIONAL columns of each pair (null where the context has fewer arguments)."""
    rows = []
    for value in pairs["args"].to_list():
        arguments = _arguments(value)
        if len(arguments) > 2:
            raise InputError("--items", None, f"{len(arguments)} arguments {arguments}: the "
                             "thesis's contexts have at most two")
        row = dict.fromkeys(POSITIONAL)
        for k, argument in enumerate(arguments, start=1):
            _split(argument)
            row[f"arg{k}.marker{k}"] = argument
        rows.append(row)
    return pl.DataFrame(rows, schema=dict.fromkeys(POSITIONAL, pl.String))


def design_matrix(pairs: pl.DataFrame) -> tuple[sparse.csr_matrix, list[str]]:
    """One-hot predictors (sparse: the full Japanese sets have 374,750 pairs), constant columns
    and columns equal to an earlier one left out. A missing context column is the level `none`
    (no adverbial, no relative clause); the arguments have no `none` level (the order carries
    how many there are)."""
    frame = pl.concat([pairs.select(CATEGORICAL), positional_arguments(pairs)],
                      how="horizontal")
    parts, names = [], []
    for column in (*CATEGORICAL, *POSITIONAL):
        values = frame[column].cast(pl.String).fill_null("none").to_numpy().reshape(-1, 1)
        encoder = OneHotEncoder(dtype=float).fit(values)
        categories = list(encoder.categories_[0])
        if len(categories) < 2:
            continue
        keep = [i for i, v in enumerate(categories)
                if not (v == "none" and column.startswith("arg"))]
        parts.append(encoder.transform(values)[:, keep])
        names += [f"{column}={categories[i]}" for i in keep]
    if not parts:
        return sparse.csr_matrix((pairs.height, 0)), names
    matrix = sparse.hstack(parts, format="csc")
    matrix.sort_indices()
    seen: dict[bytes, str] = {}
    kept = []
    for j, name in enumerate(names):
        key = matrix.indices[matrix.indptr[j]:matrix.indptr[j + 1]].tobytes()
        if key in seen:
            log.info("predictor %s equals %s: left out", name, seen[key])
            continue
        seen[key] = name
        kept.append(j)
    return matrix[:, kept].tocsr(), [names[j] for j in kept]


def _ranked(coefficients: np.ndarray, names: list[str], sign: int, top: int) -> list[int]:
    """Indices of the `top` largest coefficients of one sign (sign * coefficient > 0)."""
    chosen = [i for i in range(len(names)) if sign * coefficients[i] > 0]
    return sorted(chosen, key=lambda i: (-sign * coefficients[i], names[i]))[:top]


def smaller_class(target: np.ndarray, folds: int, seed: int) -> int:
    """The fewest pairs of one choice among all pairs and each fold's training pairs (the same
    folds as cv_glmnet's): glmnet refuses a fit with fewer than 2 of a class."""
    ids = fold_ids(len(target), folds, seed)
    sets = [target, *(target[ids != k] for k in range(folds))]
    return min(int(min(t.sum(), len(t) - t.sum())) for t in sets)


def _skip_reason(n_pairs: int, n_features: int, minority: int, folds: int) -> str | None:
    """Why glmnet cannot fit the mode (None: it can)."""
    if not n_features:
        return "no predictor varies"
    if n_pairs < 2 * folds:
        return f"{n_pairs} pairs, fewer than 2 per fold of {folds}"
    if minority < 2:
        return (f"{minority} pairs of one choice among all pairs or a fold's training pairs: "
                "glmnet refuses a fit with fewer than 2 of a class")
    return None


def regression_tables(pairs: pl.DataFrame, folds: int, seed: int, lambda_choice: str,
                      l1_ratio: float, top: int, max_iter: int, n_lambda: int = 100,
                      decision: str = "perplexity", jobs: int = 1
                      ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(fits, largest positive coefficients, largest negative coefficients): one fit per
    (dataset, mode), its cross-validation folds in `jobs` threads. A fit without a coefficient
    of a sign has one row with null rank, feature and coefficient in that sign's table; a mode
    glmnet cannot fit (group_status: `skipped`) or whose fit fails (`failed`) has one row with
    its status and reason in each table, its numbers null."""
    if lambda_choice not in LAMBDA_CHOICES:
        raise InputError("--lambda-choice", None,
                         f"{lambda_choice!r} is not one of {', '.join(LAMBDA_CHOICES)}")
    fits, largest = [], {1: [], -1: []}
    groups = pairs.partition_by(KEYS, as_dict=True)
    for key in progress(sorted(groups, key=str), desc="glmnet", unit="mode"):
        group = groups[key].sort("group_id")
        features, names = design_matrix(group)
        target = group["prefers_transitive"].cast(pl.Int64).to_numpy()
        mode = "/".join(map(str, key))

        def fit(features=features, target=target, names=names):
            reason = _skip_reason(len(target), len(names), smaller_class(target, folds, seed),
                                  folds)
            if reason:
                raise Skipped(reason)
            return cv_glmnet(features, target, folds, seed, l1_ratio, n_lambda,
                             max_iter=max_iter, jobs=jobs)

        cv, status = computed(f"glmnet {mode}", fit)
        labels = {**dict(zip(KEYS, key, strict=True)), "decision": decision, **status}
        row = {**labels, "n_pairs": len(target), "n_features": len(names),
               "lambda_choice": lambda_choice}
        if cv is None:
            fits.append(row)
            for rows in largest.values():
                rows.append({**labels, "rank": None, "feature": None, "coefficient": None})
            continue
        log.info("glmnet %s: paths ended early: %s", mode, cv.stops())
        chosen = cv.index(lambda_choice)
        accuracy = cv.cv_accuracy[:, chosen]
        intercept = float(cv.path.intercepts[chosen])
        fits.append({**row, "n_lambdas": len(cv.path.lambdas), "path_end": cv.path.stopped,
                     "lambda": float(cv.path.lambdas[chosen]),
                     "lambda_min": cv.lambda_min, "lambda_1se": cv.lambda_1se,
                     "cv_deviance": float(cv.cv_mean[chosen]),
                     "cv_deviance_se": float(cv.cv_sd[chosen]),
                     "cv_accuracy_mean": float(np.mean(accuracy)),
                     "cv_accuracy_sd": float(np.std(accuracy, ddof=1)),
                     "intercept": intercept})
        # coef() lists the intercept with the predictors; the thesis's Table 6 ranks it first
        coefficients = np.concatenate([[intercept], cv.path.coefficients[chosen]])
        all_names = [INTERCEPT, *names]
        for sign, rows in largest.items():
            ranked = _ranked(coefficients, all_names, sign, top)
            for rank, i in enumerate(ranked, start=1) if ranked else [(None, None)]:
                rows.append({**labels, "rank": rank,
                             "feature": None if i is None else all_names[i],
                             "coefficient": None if i is None else float(coefficients[i])})
    order = {"by": [*KEYS, "rank"], "nulls_last": False}
    return (pl.DataFrame(fits, schema=FIT_SCHEMA).sort(KEYS, nulls_last=False),
            pl.DataFrame(largest[1], schema=COEFFICIENT_SCHEMA).sort(**order),
            pl.DataFrame(largest[-1], schema=COEFFICIENT_SCHEMA).sort(**order))
