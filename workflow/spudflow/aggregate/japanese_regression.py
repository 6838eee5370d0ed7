"""What drives a mode's choice of verb: elastic-net logistic regression on the pair's context
(Japanese transitivity thesis, §5.7, Tables 4-7).

Target: the mode prefers the transitive verb (1) or not (0). Predictors as the thesis lists them,
one-hot: verb pair, constituent order, adverbial, relative-clause type and position, and the first
and the second argument (sentence order) kept apart: each one's noun (`arg1=猫`), marker
(`marker1=を`) and noun with marker (`arg1.marker1=猫を`, the thesis's `arg1 id.marker1`).

The thesis fits glmnet with ten-fold cross-validation choosing the penalty; here sklearn's
LogisticRegression (saga, elastic net) under GridSearchCV over the configured C grid, on seeded
stratified folds, C chosen by the mean held-out log loss (glmnet's default measure, the binomial
deviance). The fit on all pairs at that C gives the coefficients; the largest positive and the
largest negative ones are separate tables, as Tables 4/6 (max.) and 5/7 (min.).
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import OneHotEncoder

from spudflow.core.artifacts import JAPANESE_PARTICLES
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.table_artifacts import TABLES

log = get_logger(__name__)

CATEGORICAL = ("verb_pair", "order", "adverbial", "relative_clause", "relative_position")
# The first and second argument's predictors (§5.7): noun, marker, and noun with marker.
POSITIONAL = ("arg1", "marker1", "arg1.marker1", "arg2", "marker2", "arg2.marker2")
MODE = ["model", "method", "region"]
KEYS = ["dataset", *MODE]
FIT_SCHEMA = TABLES["japanese_regression"].polars_schema()
COEFFICIENT_SCHEMA = TABLES["japanese_regression_max"].polars_schema()  # = _min's


def elastic_net(c: float, l1_ratio: float, max_iter: int, seed: int) -> LogisticRegression:
    kwargs = {"solver": "saga", "C": c, "l1_ratio": l1_ratio, "max_iter": max_iter,
              "random_state": seed}
    # scikit-learn >= 1.8 infers the elastic-net penalty from 0 < l1_ratio < 1 and deprecates
    # `penalty`; older versions ignore l1_ratio unless the penalty is named.
    if LogisticRegression().get_params()["penalty"] != "deprecated":
        kwargs["penalty"] = "elasticnet"
    return LogisticRegression(**kwargs)


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
            noun, marker = _split(argument)
            row |= {f"arg{k}": noun, f"marker{k}": marker, f"arg{k}.marker{k}": argument}
        rows.append(row)
    return pl.DataFrame(rows, schema=dict.fromkeys(POSITIONAL, pl.String))


def design_matrix(pairs: pl.DataFrame) -> tuple[sparse.csr_matrix, list[str]]:
    """One-hot predictors (sparse: the full Japanese sets have 374,750 pairs), constant columns
    left out. A missing context column is the level `none` (no adverbial, no second argument's
    marker); the nouns have no `none` level (the marker's carries it)."""
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
    return sparse.hstack(parts, format="csr"), names


def fit_mode(features, target: np.ndarray, folds: int, seed: int, c_grid: list[float],
             l1_ratio: float, max_iter: int, jobs: int = 1) -> GridSearchCV:
    """C by cross-validated log loss on stratified, seeded folds; refit on all pairs."""
    minority = int(min(target.sum(), len(target) - target.sum()))
    cv = StratifiedKFold(n_splits=min(folds, minority), shuffle=True, random_state=seed)
    search = GridSearchCV(elastic_net(c_grid[0], l1_ratio, max_iter, seed),
                          {"C": sorted(c_grid)}, cv=cv, n_jobs=jobs, refit="log_loss",
                          scoring={"log_loss": "neg_log_loss", "accuracy": "accuracy"})
    return search.fit(features, target)


def _ranked(coefficients: np.ndarray, names: list[str], sign: int, top: int) -> list[int]:
    """Indices of the `top` largest coefficients of one sign (sign * coefficient > 0)."""
    chosen = [i for i in range(len(names)) if sign * coefficients[i] > 0]
    return sorted(chosen, key=lambda i: (-sign * coefficients[i], names[i]))[:top]


def regression_tables(pairs: pl.DataFrame, folds: int, seed: int, c_grid: list[float],
                      l1_ratio: float, top: int, max_iter: int, jobs: int = 1,
                      decision: str = "perplexity"
                      ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(fits, largest positive coefficients, largest negative coefficients): one fit per
    (dataset, mode). A fit without a coefficient of a sign has one row with null rank, feature
    and coefficient in that sign's table."""
    fits, largest = [], {1: [], -1: []}
    groups = pairs.partition_by(KEYS, as_dict=True)
    for key in progress(sorted(groups, key=str), desc="elastic net", unit="mode"):
        group = groups[key].sort("group_id")
        features, names = design_matrix(group)
        target = group["prefers_transitive"].cast(pl.Int64).to_numpy()
        minority = int(min(target.sum(), len(target) - target.sum()))
        if minority < 2 or not names:
            log.warning("%s: no regression (%d pairs, %d in the smaller class, %d features)",
                        "/".join(map(str, key)), len(target), minority, len(names))
            continue
        search = fit_mode(features, target, folds, seed, c_grid, l1_ratio, max_iter, jobs)
        best = search.best_index_
        accuracy = [search.cv_results_[f"split{k}_test_accuracy"][best]
                    for k in range(search.n_splits_)]
        model = search.best_estimator_
        labels = {**dict(zip(KEYS, key, strict=True)), "decision": decision}
        fits.append({**labels, "n_pairs": len(target), "n_features": len(names),
                     "c": float(search.best_params_["C"]),
                     "cv_log_loss": float(-search.cv_results_["mean_test_log_loss"][best]),
                     "cv_accuracy_mean": float(np.mean(accuracy)),
                     "cv_accuracy_sd": float(np.std(accuracy, ddof=1)),
                     "intercept": float(model.intercept_[0])})
        coefficients = model.coef_[0]
        for sign, rows in largest.items():
            chosen = _ranked(coefficients, names, sign, top)
            for rank, i in enumerate(chosen, start=1) if chosen else [(None, None)]:
                rows.append({**labels, "rank": rank, "feature": None if i is None else names[i],
                             "coefficient": None if i is None else float(coefficients[i])})
    order = {"by": [*KEYS, "rank"], "nulls_last": False}
    return (pl.DataFrame(fits, schema=FIT_SCHEMA).sort(KEYS, nulls_last=False),
            pl.DataFrame(largest[1], schema=COEFFICIENT_SCHEMA).sort(**order),
            pl.DataFrame(largest[-1], schema=COEFFICIENT_SCHEMA).sort(**order))
