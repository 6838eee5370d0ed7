"""What drives a mode's choice of verb: elastic-net logistic regression on the pair's context.

Target: the mode prefers the transitive verb (1) or not (0). Features, one-hot: verb pair,
constituent order, adverbial, relative-clause type and position, and one indicator per argument
with its particle (e.g. `args=猫を`). sklearn's LogisticRegression with the saga solver and an
elastic-net penalty; accuracy by stratified K-fold cross-validation (seeded), coefficients from a
fit on all pairs.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.preprocessing import MultiLabelBinarizer, OneHotEncoder

from spudflow.core.logs import get_logger
from spudflow.core.progress import progress

log = get_logger(__name__)

CATEGORICAL = ("verb_pair", "order", "adverbial", "relative_clause", "relative_position")
MODE = ["model", "method", "region"]
SCHEMA = {"dataset": pl.String, "model": pl.String, "method": pl.String, "region": pl.String,
          "decision": pl.String, "n_pairs": pl.Int64, "cv_accuracy_mean": pl.Float64,
          "cv_accuracy_sd": pl.Float64, "rank": pl.Int64, "feature": pl.String,
          "coefficient": pl.Float64}


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


def design_matrix(pairs: pl.DataFrame) -> tuple[sparse.csr_matrix, list[str]]:
    """One-hot features of the pairs' contexts (sparse: the full Japanese sets have 374,750
    pairs); constant columns are left out."""
    parts, names = [], []
    for column in CATEGORICAL:
        values = pairs[column].cast(pl.String).fill_null("none").to_numpy().reshape(-1, 1)
        encoder = OneHotEncoder(dtype=float).fit(values)
        if len(encoder.categories_[0]) < 2:
            continue
        parts.append(encoder.transform(values))
        names += [f"{column}={category}" for category in encoder.categories_[0]]
    binarizer = MultiLabelBinarizer(sparse_output=True)
    args = binarizer.fit_transform([_arguments(v) for v in pairs["args"].to_list()]).tocsc()
    counts = np.asarray(args.sum(axis=0)).ravel()
    varying = (counts > 0) & (counts < pairs.height)
    parts.append(args[:, varying].astype(float))
    names += [f"args={a}" for a, keep in zip(binarizer.classes_, varying, strict=True) if keep]
    return sparse.hstack(parts, format="csr"), names


def regression_table(pairs: pl.DataFrame, folds: int, seed: int, c: float, l1_ratio: float,
                     top: int, max_iter: int, jobs: int = 1,
                     decision: str = "perplexity") -> pl.DataFrame:
    """One fit per (dataset, mode); `decision` (the rule behind `prefers_transitive`) is written
    in each row."""
    rows = []
    groups = pairs.partition_by(["dataset", *MODE], as_dict=True)
    for key in progress(sorted(groups, key=str), desc="elastic net", unit="mode"):
        group = groups[key].sort("group_id")
        features, names = design_matrix(group)
        target = group["prefers_transitive"].cast(pl.Int64).to_numpy()
        minority = int(min(target.sum(), len(target) - target.sum()))
        if minority < 2 or not names:
            log.warning("%s: no regression (%d pairs, %d in the smaller class, %d features)",
                        "/".join(map(str, key)), len(target), minority, len(names))
            continue
        model = elastic_net(c, l1_ratio, max_iter, seed)
        cv = StratifiedKFold(n_splits=min(folds, minority), shuffle=True, random_state=seed)
        accuracy = cross_val_score(model, features, target, cv=cv, scoring="accuracy",
                                   n_jobs=jobs)
        coefficients = model.fit(features, target).coef_[0]
        order = sorted(range(len(names)), key=lambda i: (-abs(coefficients[i]), names[i]))
        chosen = [i for i in order if coefficients[i] != 0][:top]
        fit = {**dict(zip(["dataset", *MODE], key, strict=True)), "decision": decision,
               "n_pairs": len(target),
               "cv_accuracy_mean": float(np.mean(accuracy)),
               "cv_accuracy_sd": float(np.std(accuracy, ddof=1)) if len(accuracy) > 1 else None}
        # A fit whose coefficients are all zero still reports its accuracy, in a featureless row.
        for rank, i in enumerate(chosen, start=1) if chosen else [(None, None)]:
            rows.append({**fit, "rank": rank, "feature": None if i is None else names[i],
                         "coefficient": None if i is None else float(coefficients[i])})
    return pl.DataFrame(rows, schema=SCHEMA).sort(["dataset", *MODE, "rank"], nulls_last=False)
