"""What drives a mode's choice of verb: penalised logistic regression on the pair's context
(Japanese transitivity thesis, §5.7, Tables 4-7).

Target: the mode prefers the transitive verb (1) or not (0). Predictors: the design R's
`model.matrix` builds for the thesis's formula, with its default treatment contrasts,

    ~ verb_pair_id + CO + adverbial + arg1_id * marker1 + arg2_id * marker2
      (+ relative_clause + relative_position in the relative-clause dataset)

§5.7 lists "the identity of the verb pair, the constituent order, the identity and marker of the
first and second argument, the adverbial used, and ... the position and type of relative
clause"; its tables rank marker main effects (`marker1w`), noun-with-marker interactions
(`arg1 id1.marker1g`, R's `arg1_id1:marker1g` as make.names prints it) and constituent orders
(`COwgav`), and its count, "181 coefficients", is this formula's with 50 verb pairs, 35 orders,
3 adverbials and the 11 nouns: 1 + 49 + 34 + 3 + 2 x (11 + 3 + 33). The factors:
- verb_pair_id: the pair's number, as the thesis's (`verb pair id286`): its place in the
  thesis's lexicon list (Kageyama & Jacobsen's 306 pairs and one added, §4.4.1), here its place
  among the lexicon file's pairs (the items' `pair_number`; the default lexicon lists its pairs
  by frequency, a lexicon in the thesis's list order gives the thesis's numbers);
- CO: the constituent order in the thesis's letters, each argument by its marker (g が, h は,
  w を), a the adverbial, v the verb: `wgav` is を-が-adverbial-verb;
- adverbial, relative_clause: the text; relative_position: the argument (1, 2) the clause
  modifies;
- arg1_id, arg2_id: the first and second argument in sentence order by the thesis's number of
  its noun (1-11, core JAPANESE_NOUNS, 私 = 1), 0 when absent; marker1, marker2 its marker.
The numbered factors' levels (verb pairs, nouns) are in numeric order, as R's factor() of
numbers: the lowest-numbered pair is the verb pair baseline.
A level `none` (an absent argument, marker, adverbial or clause) is each factor's baseline, as
the thesis's names show (`arg1_id1` and `marker1g` are not baselines); the other levels in code
point order (R's sort in the C locale; numbers by value), whose first is the baseline where a
factor has no `none` (in the relative-clause dataset every pair has a first argument). A
factor with one level is left out, with its interactions, as the thesis's base-dataset formula
has no relative clause (R's model.matrix refuses a one-level factor). As R, the design keeps
columns that are sums or copies of others and interaction columns no pair has; glmnet gives a
column without variance coefficient 0. The intercept column is left out: glmnet fits its own.

The thesis fits R's glmnet "by default" with ten-fold cross-validation: here its procedure
(spudflow.aggregate.glmnet: standardised predictors, the 100-lambda path, seeded folds, binomial
deviance) and coef()'s default, lambda.1se (lambda.min as an option). The coefficients of the fit
on all pairs at that lambda (convergence tight: solved again there to the optimum,
glmnet.refit; r_default: R's default fit's, as the thesis printed), the intercept among them
(as coef() lists it; Table 6 shows it first), give the largest positive and the largest
negative ones in separate tables, as Tables 4/6 (max.) and 5/7 (min.). A mode glmnet cannot
fit, or whose fit fails, is a row with its status and reason in each table (group_status),
never the end of the job.
"""

from __future__ import annotations

import re
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import sparse

from spudflow.aggregate.glmnet import LAMBDA_CHOICES, cv_glmnet, fold_ids, refit
from spudflow.aggregate.group_status import Skipped, computed
from spudflow.core.artifacts import JAPANESE_NOUNS, JAPANESE_PARTICLES
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.progress import progress
from spudflow.core.table_artifacts import TABLES

log = get_logger(__name__)

INTERCEPT = "(Intercept)"
NONE = "none"
# The thesis's letters of the constituents in CO; `adv` is the items' adverbial in `order`.
MARKERS = dict(zip(JAPANESE_PARTICLES, ("g", "h", "w"), strict=True))
ORDER_LETTERS = {**MARKERS, "adv": "a"}
# The formula's terms in R's column order (main effects in formula order, then the two-way
# interactions); a factor: its name, a term: one factor or two.
MAIN_EFFECTS = ("verb_pair_id", "CO", "adverbial", "arg1_id", "marker1", "arg2_id", "marker2",
                "relative_clause", "relative_position")
INTERACTIONS = (("arg1_id", "marker1"), ("arg2_id", "marker2"))
# Factors of numbers, whose levels R's factor() sorts by value.
NUMBERED = ("verb_pair_id", "arg1_id", "arg2_id")
FORMULA = ("~ verb_pair_id + CO + adverbial + arg1_id * marker1 + arg2_id * marker2 "
           "+ relative_clause + relative_position")
MODE = ["model", "method", "region"]
KEYS = ["dataset", *MODE]
FIT_SCHEMA = TABLES["japanese_regression"].polars_schema()
COEFFICIENT_SCHEMA = TABLES["japanese_regression_max"].polars_schema()  # = _min's
# Coefficients this close are tied in the ranking: the tolerance to which the thesis's R fits are
# reproduced (convergence r_default) and 45 times the refit's distance from R glmnet's optimum
# on the default run (convergence tight), within which their order is not determined
TIE = 1e-4


def _arguments(value) -> list[str]:
    """args: a list of argument+particle strings, or one string of them separated by spaces or
    commas."""
    if value is None:
        return []
    if isinstance(value, str):
        return [a for a in re.split(r"[\s,、]+", value) if a]
    return [str(a) for a in value]


def _split(argument: str) -> tuple[str, str]:
    """(noun, marker) of `noun + particle`; the items stage's particles are one character."""
    if len(argument) < 2 or argument[-1] not in JAPANESE_PARTICLES:
        raise InputError("--items", None, f"argument {argument!r} is not a noun followed by one "
                         f"of the particles {', '.join(JAPANESE_PARTICLES)}")
    return argument[:-1], argument[-1]


def _noun_id(noun: str) -> str:
    if noun not in JAPANESE_NOUNS:
        raise InputError("--items", None, f"noun {noun!r} is not one of the thesis's nouns "
                         f"({', '.join(JAPANESE_NOUNS)}), which the regression numbers")
    return str(JAPANESE_NOUNS.index(noun) + 1)


def _constituent_order(order: str | None) -> str:
    """The items' `order` (`が-adv-を`, empty when none) in the thesis's letters (`gawv`)."""
    tokens = [t for t in (order or "").split("-") if t]
    unknown = [t for t in tokens if t not in ORDER_LETTERS]
    if unknown:
        raise InputError("--items", None, f"order {order!r}: {unknown[0]!r} is not a particle "
                         f"({', '.join(JAPANESE_PARTICLES)}) or `adv`")
    return "".join(ORDER_LETTERS[t] for t in tokens) + "v"


CONTEXT_COLUMNS = ("order", "adverbial", "args", "relative_clause", "relative_position")


def _context_values(row: dict) -> dict[str, str]:
    """The factors of one context (the pair's columns but its verb pair), as strings (`none`
    for an absent constituent)."""
    arguments = _arguments(row["args"])
    if len(arguments) > 2:
        raise InputError("--items", None, f"{len(arguments)} arguments {arguments}: the "
                         "thesis's contexts have at most two")
    values = {"CO": _constituent_order(row["order"]),
              "adverbial": NONE if row["adverbial"] is None else str(row["adverbial"])}
    for k in (1, 2):
        noun, marker = _split(arguments[k - 1]) if k <= len(arguments) else (None, None)
        values[f"arg{k}_id"] = "0" if noun is None else _noun_id(noun)
        values[f"marker{k}"] = NONE if marker is None else MARKERS[marker]
    clause, position = row["relative_clause"], row["relative_position"]
    values["relative_clause"] = NONE if clause is None else str(clause)
    values["relative_position"] = NONE if position is None else str(int(position) + 1)
    return values


def factor_values(pairs: pl.DataFrame) -> dict[str, list[str]]:
    """The formula's factors per pair, as strings (`none` for an absent constituent). A dataset's
    pairs share a few thousand contexts (7,495 in base and rare's 374,750 pairs): each distinct
    context is coded once and its codes given to its pairs."""
    contexts = pairs.select(CONTEXT_COLUMNS).unique(maintain_order=True).with_row_index("context")
    index = pairs.select(CONTEXT_COLUMNS).join(
        contexts, on=list(CONTEXT_COLUMNS), how="left", nulls_equal=True,
        maintain_order="left")["context"].to_numpy()
    coded = [_context_values(row) for row in contexts.drop("context").iter_rows(named=True)]
    values = {"verb_pair_id": pairs["pair_number"].cast(pl.Int64).cast(pl.String).to_list()}
    for name in MAIN_EFFECTS[1:]:
        per_context = np.array([c[name] for c in coded] or [""], dtype=object)
        values[name] = per_context[index].tolist()
    return values


def levels(name: str, values: list[str]) -> list[str]:
    """A factor's levels, its reference level first (`none`, or noun id 0), then the rest in
    code point order (noun and verb pair numbers by value)."""
    present = set(values)
    if name in NUMBERED:
        return sorted(present, key=int)
    return [NONE] * (NONE in present) + sorted(present - {NONE})


@dataclass(frozen=True)
class Design:
    matrix: sparse.csr_matrix   # pairs x columns, no intercept column
    names: list[str]            # R's column names: `COwgav`, `arg1_id1:marker1g`
    levels: dict[str, list[str]]  # the factors in the design, baseline first


def design_matrix(pairs: pl.DataFrame) -> Design:
    """R's `model.matrix(FORMULA)[, -1]` of the pairs (sparse: the full Japanese sets have
    374,750 pairs), the factors coded as `levels` says."""
    values = factor_values(pairs)
    factors = {}
    for name in MAIN_EFFECTS:
        factor_levels = levels(name, values[name])
        if len(factor_levels) > 1:
            codes = pl.Series(values[name], dtype=pl.String).replace_strict(
                factor_levels, range(len(factor_levels)), return_dtype=pl.Int64)
            factors[name] = (factor_levels, codes.to_numpy())
    rows = np.arange(pairs.height)
    blocks, names = [], []
    for name, (factor_levels, codes) in factors.items():
        chosen = codes > 0  # treatment contrasts: the baseline has no column
        blocks.append(sparse.csr_matrix(
            (np.ones(chosen.sum()), (rows[chosen], codes[chosen] - 1)),
            shape=(pairs.height, len(factor_levels) - 1)))
        names += [f"{name}{level}" for level in factor_levels[1:]]
    for first, second in INTERACTIONS:
        if first not in factors or second not in factors:
            continue
        (levels_a, a), (levels_b, b) = factors[first], factors[second]
        chosen = (a > 0) & (b > 0)
        width = len(levels_a) - 1
        # R's order: the first factor's levels vary fastest
        blocks.append(sparse.csr_matrix(
            (np.ones(chosen.sum()), (rows[chosen], (a[chosen] - 1) + (b[chosen] - 1) * width)),
            shape=(pairs.height, width * (len(levels_b) - 1))))
        names += [f"{first}{la}:{second}{lb}" for lb in levels_b[1:] for la in levels_a[1:]]
    matrix = (sparse.hstack(blocks, format="csr") if blocks
              else sparse.csr_matrix((pairs.height, 0)))
    return Design(matrix, names, {name: lv for name, (lv, _) in factors.items()})


def _ranked(coefficients: np.ndarray, names: list[str], sign: int, top: int
            ) -> list[tuple[int, bool]]:
    """(index, tied with the next) of the `top` largest coefficients of one sign (sign *
    coefficient > 0): tied where the next of that sign, listed or not, is within TIE of it."""
    chosen = sorted((i for i in range(len(names)) if sign * coefficients[i] > 0),
                    key=lambda i: (-sign * coefficients[i], names[i]))
    return [(i, k + 1 < len(chosen) and abs(coefficients[i] - coefficients[chosen[k + 1]]) <= TIE)
            for k, i in enumerate(chosen[:top])]


def smaller_class(target: np.ndarray, folds: int, seed: int) -> int:
    """The fewest pairs of one choice among all pairs and each fold's training pairs (the same
    folds as cv_glmnet's): glmnet refuses a fit with fewer than 2 of a class."""
    ids = fold_ids(len(target), folds, seed)
    sets = [target, *(target[ids != k] for k in range(folds))]
    return min(int(min(t.sum(), len(t) - t.sum())) for t in sets)


def skip_reason(target: np.ndarray, n_features: int, folds: int, seed: int) -> str | None:
    """Why glmnet cannot fit a mode of these choices and predictors (None: it can)."""
    return _skip_reason(len(target), n_features, smaller_class(target, folds, seed), folds)


def _skip_reason(n_pairs: int, n_features: int, minority: int, folds: int) -> str | None:
    if not n_features:
        return "no predictor varies"
    if n_pairs < 2 * folds:
        return f"{n_pairs} pairs, fewer than 2 per fold of {folds}"
    if minority < 2:
        return (f"one choice has {minority} of the pairs (all pairs, or a fold's training "
                "pairs): glmnet refuses a fit with fewer than 2 of a class")
    return None


def regression_tables(pairs: pl.DataFrame, folds: int, seed: int, lambda_choice: str,
                      l1_ratio: float, top: int, max_iter: int, n_lambda: int = 100,
                      decision: str = "perplexity", jobs: int = 1, convergence: str = "tight",
                      fits: Executor | None = None
                      ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(fits, largest positive coefficients, largest negative coefficients): one fit per
    (dataset, mode), every mode's folds in `fits` (threads shared with other regressions) or
    else in `jobs` threads of their own. A fit without a coefficient of a sign has one row with
    null rank, feature and coefficient in that sign's table; a mode glmnet cannot fit
    (group_status: `skipped`) or whose fit fails (`failed`) has one row with its status and
    reason in each table, its numbers null."""
    if lambda_choice not in LAMBDA_CHOICES:
        raise InputError("--lambda-choice", None,
                         f"{lambda_choice!r} is not one of {', '.join(LAMBDA_CHOICES)}")
    if fits is None:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as own:
            return regression_tables(pairs, folds, seed, lambda_choice, l1_ratio, top, max_iter,
                                     n_lambda, decision, jobs, convergence, own)
    fit_rows, largest = [], {1: [], -1: []}
    groups = pairs.partition_by(KEYS, as_dict=True)
    keys = sorted(groups, key=str)
    # Every path of every mode (the pairs' and each fold's) is a task of `fits` (glmnet's solver
    # releases the GIL), so that no thread waits while another mode's folds are left: each fit
    # is the same computation whatever the threads, so the tables do not depend on them.

    def one_mode(key):
        group = groups[key].sort("group_id")
        design = design_matrix(group)
        target = group["prefers_transitive"].cast(pl.Int64).to_numpy()

        def fit(features=design.matrix, target=target, names=design.names):
            reason = skip_reason(target, len(names), folds, seed)
            if reason:
                raise Skipped(reason)
            cv = cv_glmnet(features, target, folds, seed, l1_ratio, n_lambda,
                           max_iter=max_iter, convergence=convergence, pool=fits)
            chosen = cv.index(lambda_choice)
            if convergence == "r_default":  # R's default fit, as the thesis printed it
                return cv, float(cv.path.intercepts[chosen]), cv.path.coefficients[chosen]
            return cv, *fits.submit(refit, features, target, cv.path, chosen, l1_ratio,
                                    max_iter).result()

        return design, target, computed(f"glmnet {'/'.join(map(str, key))}", fit)

    # each mode waits for its paths in a thread of its own, outside `fits` (whose threads only
    # fit), and combines the folds' deviances there; the bar names its dataset and model, as
    # two models' bars can be under way at once
    whose = " ".join(dict.fromkeys("/".join(map(str, key[:2])) for key in keys))
    with ThreadPoolExecutor(max_workers=max(1, len(keys))) as modes:
        fitted = list(progress(modes.map(one_mode, keys), desc=f"glmnet {whose}".strip(),
                               total=len(keys), unit="mode"))
    for key, (design, target, (solved, status)) in zip(keys, fitted, strict=True):
        cv, intercept, chosen_coefficients = solved or (None, None, None)
        names = design.names
        mode = "/".join(map(str, key))
        labels = {**dict(zip(KEYS, key, strict=True)), "decision": decision, **status}
        row = {**labels, "n_pairs": len(target), "n_features": len(names),
               "lambda_choice": lambda_choice}
        if cv is None:
            fit_rows.append(row)
            for rows in largest.values():
                rows.append({**labels, "rank": None, "feature": None, "coefficient": None,
                             "tied_with_next": None})
            continue
        log.info("glmnet %s: paths ended early: %s", mode, cv.stops())
        chosen = cv.index(lambda_choice)
        accuracy = cv.cv_accuracy[:, chosen]
        fit_rows.append({**row, "n_lambdas": len(cv.path.lambdas),
                         "path_end": cv.path.stopped, "lambda": float(cv.path.lambdas[chosen]),
                         "lambda_min": cv.lambda_min, "lambda_1se": cv.lambda_1se,
                         "cv_deviance": float(cv.cv_mean[chosen]),
                         "cv_deviance_se": float(cv.cv_sd[chosen]),
                         "cv_accuracy_mean": float(np.mean(accuracy)),
                         "cv_accuracy_sd": float(np.std(accuracy, ddof=1)),
                         "intercept": intercept})
        # coef() lists the intercept with the predictors; the thesis's Table 6 ranks it first
        coefficients = np.concatenate([[intercept], chosen_coefficients])
        all_names = [INTERCEPT, *names]
        for sign, rows in largest.items():
            ranked = _ranked(coefficients, all_names, sign, top)
            for rank, (i, tied) in (enumerate(ranked, start=1) if ranked
                                    else [(None, (None, None))]):
                rows.append({**labels, "rank": rank,
                             "feature": None if i is None else all_names[i],
                             "coefficient": None if i is None else float(coefficients[i]),
                             "tied_with_next": tied})
    order = {"by": [*KEYS, "rank"], "nulls_last": False}
    return (pl.DataFrame(fit_rows, schema=FIT_SCHEMA).sort(KEYS, nulls_last=False),
            pl.DataFrame(largest[1], schema=COEFFICIENT_SCHEMA).sort(**order),
            pl.DataFrame(largest[-1], schema=COEFFICIENT_SCHEMA).sort(**order))
