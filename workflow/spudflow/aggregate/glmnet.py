"""Penalised logistic regression as R's glmnet fits it (Friedman, Hastie, Tibshirani 2010), which
the Japanese thesis uses (§5.7): `cv.glmnet(x, y, family = "binomial")` with its defaults
(glmnet 4.1: R/cv.glmnet.raw.R, R/buildPredmat.default.R, R/lambda.interp.R, R/cvstats.R and
the C++ path solver, elnet_path/base.hpp and binomial_base.hpp).

glmnet minimises  -loglik/n + lambda * (alpha * |b|_1 + (1 - alpha) / 2 * |b|_2^2)  over the
coefficients b of the standardised predictors (population sd, weights 1/n), the intercept
unpenalised, and reports b on the original scale. Its own path: up to 100 lambdas, log-spaced
from lambda_max (the smallest lambda with every b = 0, max_j |x_j' (y - mean y)| / (n alpha))
down to 1e-4 lambda_max (1e-2 lambda_max when n < p), the first solved at an infinite penalty
(the intercept-only model). Each lambda is solved by iteratively reweighted least squares, the
weighted quadratic by cyclic coordinate descent, warm-started along the path, each to glmnet's
`thresh` (1e-7) times the null deviance. As glmnet (`glmnet.control()$pmin`, 1e-9), a linear
predictor beyond +-log(1/pmin - 1) counts as a fitted probability of exactly 1 or 0, with IRLS
weight 0, so that a separated level's coefficient stops growing there; a response whose mean is
within pmin of 0 or 1 is an error.

The path ends early, as glmnet's (`glmnet.control()` defaults; the first two checks only from
the `mnlam` = 5th lambda on, and only on glmnet's own path, not on lambdas given): once the
fraction of the null deviance explained passes `devmax` (0.999), or grows by less than `fdev`
(1e-5) from the previous lambda; and once every fitted probability is 0 or 1 (the IRLS weights'
mean at `vmin`: a saturated fit, which a design that separates the choices reaches). The lambdas
fitted so far are the path, the last one included: a separable design gives a shorter path, not
an error. An IRLS that does not converge within `max_iter` steps (it can cycle, having no step
control, where one or two choices nearly separate a rare level) ends the path before that
lambda, as glmnet's runs out of passes there ("solutions for larger lambdas returned"); a path
of its own with fewer than 3 lambdas keeps glmnet's `big` (9.9e35) as its first (fix.lam needs
three to extrapolate it), against which predict() interpolates.

cv.glmnet: the path on all pairs gives the lambdas; each of `nfolds` folds is its own glmnet fit
on the other folds (its own lambda_max and early end: cv.glmnet passes its `lambda` argument,
NULL by default, to the folds), predicted at the full path's lambdas by `predict(fit, s =
lambda)`: coefficients interpolated linearly in lambda between the fold's two nearest lambdas
and held at its first or last solution beyond its ends. The binomial deviance (probabilities
clipped at 1e-5) is averaged per fold (grouped; per pair instead when there are fewer than 3
pairs a fold, as cv.glmnet warns), lambda.min is the lambda with the lowest mean, lambda.1se
the largest lambda whose mean is within one standard error (the folds' weighted sd over
sqrt(nfolds - 1)) of it; coef() defaults to lambda.1se.

Centring does not change b (the intercept absorbs it), so the sparse one-hot design is only
scaled. Each lambda stops where its solver's `thresh` rule says (fit_path's `convergence`):
"tight" profiles the quadratic's intercept out with weighted means and lands nearer the optimum
than R, and `refit` solves the chosen lambda again to the optimum itself (REFIT_THRESH);
"r_default" is R glmnet's own solver (the intercept a coordinate of its own, centring carried as
offsets), whose coefficients are R's default fit's. The path is one numba-compiled call over
the CSC arrays of that design, with glmnet's "naive" updates (a working residual updated per
coordinate over its column's nonzeros, the centring carried as one offset): no Gram matrix and
no densified column, so the cost grows with the nonzeros.
"""

from __future__ import annotations

from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import sparse
from scipy.special import expit

LAMBDA_CHOICES = ("lambda.1se", "lambda.min")
# cv.glmnet clips held-out probabilities at 1e-5 in the deviance; glmnet's IRLS treats a fitted
# probability within `pmin` (glmnet.control(), 1e-9) of 0 or 1 as 0 or 1.
DEVIANCE_FLOOR = 1e-5
PMIN = 1e-9
LINEAR_PREDICTOR_MAX = float(np.log(1.0 / PMIN - 1.0))
# glmnet's vmin: where the IRLS weights' mean falls to it (a saturated fit), glmnet ends the path
WEIGHT_FLOOR = (1.0 + PMIN) * PMIN * (1.0 - PMIN)
# glmnet.control()'s rules that end its own path early: from the MIN_LAMBDAS-th lambda on, once
# the fraction of null deviance explained passes DEVIANCE_EXPLAINED_MAX or grows by less than
# DEVIANCE_CHANGE_MIN
DEVIANCE_EXPLAINED_MAX = 0.999
DEVIANCE_CHANGE_MIN = 1e-5
MIN_LAMBDAS = 5
# why a path ended before its last lambda (Path.stopped), by _irls_path's code
STOPS = (None, "saturated", "devmax", "fdev", "maxit")
# glmnet's `big`: the first lambda of its own path when the path has fewer than 3 (fix.lam
# needs two more to extrapolate it), which predict() interpolates against
BIG = 9.9e35
# how a path's lambdas are solved (fit_path): "tight", ours, nearer the optimum (and refit to
# it); "r_default", R glmnet's solver step for step, which stops where R's default fit stops
CONVERGENCE = ("tight", "r_default")
# glmnet.control()'s maxit: coordinate passes over a whole path before glmnet gives up
GLMNET_MAXIT = 100_000
# the thresh of a "tight" fit's reported coefficients (refit). At glmnet's 1e-7 a nearly separated
# design stops its coordinates up to 0.45 from the optimum, where the objective is flat along
# them (8.6e-7 of the null deviance above it), enough to reorder the largest coefficients; at
# 1e-18 they are within 2.2e-6 of R glmnet's at thresh 1e-24 (the default run's relative/addk
# mode), for a fifth of the cross-validations' time over the default run's modes
REFIT_THRESH = 1e-18


def scales(x) -> np.ndarray:
    """Population sd of each column (glmnet's weights 1/n); 0 for a constant column."""
    x = sparse.csr_matrix(x, dtype=float)
    mean = np.asarray(x.mean(axis=0)).ravel()
    square = np.asarray(x.multiply(x).mean(axis=0)).ravel()
    return np.sqrt(np.maximum(square - mean**2, 0.0))


def lambda_path(x, y: np.ndarray, alpha: float = 1.0, n_lambda: int = 100,
                min_ratio: float | None = None) -> np.ndarray:
    """glmnet's lambda sequence for a binomial fit of the standardised x (lambda.min.ratio
    `ifelse(nobs < nvars, 1e-2, 1e-4)`)."""
    n, p = x.shape
    sd = scales(x)
    gradient = np.abs(sparse.csr_matrix(x).T @ (y - y.mean())) / np.where(sd > 0, sd, np.inf)
    top = float(np.max(gradient)) / n / max(alpha, 1e-3)
    ratio = min_ratio if min_ratio is not None else (1e-2 if n < p else 1e-4)
    return top * np.exp(np.linspace(0.0, np.log(ratio), n_lambda))


@dataclass(frozen=True)
class Path:
    lambdas: np.ndarray
    intercepts: np.ndarray     # one per lambda
    coefficients: np.ndarray   # lambdas x predictors, original scale
    dev_ratio: np.ndarray      # fraction of the null deviance explained, per lambda
    stopped: str | None = None  # why the path ended before the lambdas asked for (STOPS)

    def predict(self, x) -> np.ndarray:
        """Linear predictor, one column per lambda."""
        return sparse.csr_matrix(x) @ self.coefficients.T + self.intercepts

    def at(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(intercepts, coefficients) at the penalties s, as glmnet's `predict(fit, s = s)`
        (lambda.interp): linear in lambda between the path's two nearest lambdas, the first or
        last solution beyond its ends (a fold's path that ended early predicts with its last
        solution at the smaller lambdas of the full path)."""
        lam = self.lambdas
        s = np.asarray(s, dtype=float)
        if len(lam) == 1:
            left = right = np.zeros(len(s), dtype=np.int64)
            weight = np.ones(len(s))
        else:
            span = lam[0] - lam[-1]
            position = (lam[0] - lam) / span  # 0 to 1 along the path
            where = np.clip((lam[0] - s) / span, position.min(), position.max())
            coordinate = np.interp(where, position, np.arange(len(lam), dtype=float))
            left = np.floor(coordinate).astype(np.int64)
            right = np.ceil(coordinate).astype(np.int64)
            with np.errstate(divide="ignore", invalid="ignore"):
                weight = (where - position[right]) / (position[left] - position[right])
            weight[left == right] = 1.0
            weight[np.abs(lam[left] - lam[right]) < np.finfo(float).eps] = 1.0
        intercepts = weight * self.intercepts[left] + (1 - weight) * self.intercepts[right]
        coefficients = (weight[:, None] * self.coefficients[left]
                        + (1 - weight)[:, None] * self.coefficients[right])
        return intercepts, coefficients

    def predict_at(self, x, s: np.ndarray) -> np.ndarray:
        """Linear predictor at the penalties s (`at`), one column per penalty."""
        intercepts, coefficients = self.at(s)
        return sparse.csr_matrix(x) @ coefficients.T + intercepts


# cache=True: compiled once per machine, not in every table-japanese-transitivity job (8.5 s
# each). numba keys
# the cache on this file's stamp and the CPU, so an edit recompiles; where the package folder is
# read-only it uses its user-wide cache folder (NUMBA_CACHE_DIR). nogil: cv_glmnet's folds run in
# threads.
@njit(cache=True, nogil=True)
def _coordinate_descent(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                        weighted: np.ndarray, residual: np.ndarray, total: float,
                        x_mean: np.ndarray, variance: np.ndarray, offset: float, beta: np.ndarray,
                        l1: float, l2: float, tol: float, max_sweeps: int) -> None:
    """One IRLS step's weighted quadratic (intercept profiled out: columns centred on their
    weighted means m) by cyclic coordinate descent on beta in place; after a full sweep, only
    the nonzero coordinates until they settle (glmnet's active set). glmnet's "naive" updates:
    the weighted residual r = w (z - z_mean - (X - m) b) is kept as residual + w * offset, so
    that a coordinate costs its column's nonzeros (sum(r) = 0 drops the centring from the
    gradient, and a step d moves offset by m_j d)."""
    n = len(residual)
    everything = np.flatnonzero(variance > 0)
    for _ in range(max_sweeps):
        change = 0.0
        for full_sweep in (True, False):
            # a column whose rows all have IRLS weight 0 (fitted probability 0 or 1) has no
            # curvature: it keeps its coefficient, in the active set as in the full sweep
            coordinates = everything if full_sweep else np.flatnonzero((beta != 0) & (variance > 0))
            for _inner in range(max_sweeps):
                inner_change = 0.0
                for j in coordinates:
                    start, stop = indptr[j], indptr[j + 1]
                    gradient = 0.0
                    for a in range(start, stop):
                        gradient += data[a] * residual[indices[a]]
                    gradient = (gradient + offset * total * x_mean[j]) / n
                    old = beta[j]
                    r = gradient + variance[j] * old
                    new = np.sign(r) * max(abs(r) - l1, 0.0) / (variance[j] + l2)
                    if new != old:
                        beta[j] = new
                        step = new - old
                        for a in range(start, stop):
                            residual[indices[a]] -= weighted[a] * step
                        offset += x_mean[j] * step
                        inner_change = max(inner_change, variance[j] * step ** 2)
                change = max(change, inner_change)
                if inner_change < tol or full_sweep:
                    break
        if change < tol:
            break


@njit(cache=True, nogil=True)
def _linear_predictor(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                      beta: np.ndarray, intercept: float, eta: np.ndarray) -> None:
    """eta = intercept + X beta, X given by its CSC arrays, over the nonzero coefficients."""
    eta[:] = intercept
    for j in range(len(indptr) - 1):
        if beta[j] != 0.0:
            for a in range(indptr[j], indptr[j + 1]):
                eta[indices[a]] += data[a] * beta[j]


@njit(cache=True, nogil=True)
def _fitted_probability(eta: float) -> float:
    """The logistic of a linear predictor, exactly 0 or 1 past glmnet's pmin bound."""
    if eta > LINEAR_PREDICTOR_MAX:
        return 1.0
    if eta < -LINEAR_PREDICTOR_MAX:
        return 0.0
    return 1.0 / (1.0 + np.exp(-eta))


@njit(cache=True, nogil=True)
def _deviance_explained(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                        y: np.ndarray, beta: np.ndarray, intercept: float,
                        null: float) -> float:
    """glmnet's dev.ratio, 1 - deviance / null deviance: fitted probabilities 0 or 1 past the
    linear predictor's bound (as in IRLS), clipped at pmin in the logarithms."""
    n = len(y)
    eta = np.empty(n)
    _linear_predictor(indptr, indices, data, beta, intercept, eta)
    loss = 0.0
    for i in range(n):
        prob = min(max(_fitted_probability(eta[i]), PMIN), 1.0 - PMIN)
        loss -= y[i] * np.log(prob) + (1.0 - y[i]) * np.log(1.0 - prob)
    return (null - loss / n) / null


@njit(cache=True, nogil=True)
def _irls_path(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, y: np.ndarray,
               lambdas: np.ndarray, alpha: float, intercept: float, tol: float,
               max_iter: int, own_path: bool, null: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(intercepts, coefficients on the standardised scale, deviance explained, lambdas fitted,
    STOPS code) along the lambdas, X given by its CSC arrays: iteratively reweighted least
    squares, each quadratic solved by _coordinate_descent, warm-started along the path. The
    whole path is one compiled call, and an IRLS step costs a few passes over the nonzeros: no
    Gram matrix, no per-call overhead. `own_path`: glmnet's own path, its first lambda solved
    at an infinite penalty and its early end by deviance explained (MIN_LAMBDAS); a saturated
    fit ends any path."""
    n = len(y)
    p = len(indptr) - 1
    beta = np.zeros(p)
    previous = np.zeros(p)
    eta = np.empty(n)
    weight = np.empty(n)
    residual = np.empty(n)
    weighted = np.empty(len(data))  # w_i x_ij, in data's order
    x_mean = np.empty(p)
    variance = np.empty(p)
    intercepts = np.empty(len(lambdas))
    coefficients = np.zeros((len(lambdas), p))
    dev_ratio = np.zeros(len(lambdas))
    for k in range(len(lambdas)):
        if own_path and k == 0:
            # the intercept-only model (the starting point), as glmnet's infinite penalty
            intercepts[0] = intercept
            continue
        lam = lambdas[k]
        saturated = False
        converged = False
        steps = 0
        for _ in range(max_iter):
            _linear_predictor(indptr, indices, data, beta, intercept, eta)
            total = 0.0
            weighted_z = 0.0
            for i in range(n):
                prob = _fitted_probability(eta[i])
                weight[i] = prob * (1.0 - prob)
                # w z for the working response z = eta + (y - prob) / w, which a weight of 0
                # leaves undefined: only w z and w (z - z_mean - (eta - intercept)) are used
                residual[i] = y[i] - prob
                total += weight[i]
                weighted_z += weight[i] * eta[i] + residual[i]
            if total / n <= WEIGHT_FLOOR:
                saturated = True
                break
            steps += 1
            z_mean = weighted_z / total
            for i in range(n):
                residual[i] += weight[i] * (intercept - z_mean)
            offset = 0.0
            for j in range(p):
                first = 0.0
                second = 0.0
                for a in range(indptr[j], indptr[j + 1]):
                    weighted[a] = weight[indices[a]] * data[a]
                    first += weighted[a]
                    second += weighted[a] * data[a]
                x_mean[j] = first / total
                variance[j] = (second - total * x_mean[j] ** 2) / n
                offset += x_mean[j] * beta[j]
            previous[:] = beta
            _coordinate_descent(indptr, indices, data, weighted, residual, total, x_mean,
                                variance, offset, beta, lam * alpha, lam * (1 - alpha), tol,
                                max_iter)
            new_intercept = z_mean
            for j in range(p):  # a loop, not BLAS's dot: the same sums in the same order
                new_intercept -= x_mean[j] * beta[j]
            moved = total / n * (new_intercept - intercept) ** 2
            for j in range(p):
                moved = max(moved, variance[j] * (beta[j] - previous[j]) ** 2)
            intercept = new_intercept
            if moved < tol:
                converged = True
                break
        if saturated and steps == 0:
            # the previous lambda's fit left every probability at 0 or 1: the path ends there
            return intercepts, coefficients, dev_ratio, k, 1
        if not converged and not saturated:
            # IRLS without step control can cycle (a level nearly separated by one or two
            # choices, just below lambda_max): glmnet runs out of passes there and returns
            # the solutions of the larger lambdas
            return intercepts, coefficients, dev_ratio, k, 4
        intercepts[k] = intercept
        coefficients[k] = beta
        dev_ratio[k] = _deviance_explained(indptr, indices, data, y, beta, intercept, null)
        # glmnet's order: its deviance rules, then saturation (glmnet goes on past a saturated
        # lambda given, or one before the 5th, where its coordinates, without curvature, fall
        # to 0: degenerate, so that ends the path here as well)
        if own_path and k + 1 >= MIN_LAMBDAS:
            if dev_ratio[k] > DEVIANCE_EXPLAINED_MAX:
                return intercepts, coefficients, dev_ratio, k + 1, 2
            if dev_ratio[k] - dev_ratio[k - 1] < DEVIANCE_CHANGE_MIN:
                return intercepts, coefficients, dev_ratio, k + 1, 3
        if saturated:
            return intercepts, coefficients, dev_ratio, k + 1, 1
    return intercepts, coefficients, dev_ratio, len(lambdas), 0


@njit(cache=True, nogil=True)
def _glmnet_coordinate(k: int, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                       v: np.ndarray, r: np.ndarray, state: np.ndarray, x_mean: np.ndarray,
                       sv: np.ndarray, xv: np.ndarray, beta: np.ndarray, l1: float,
                       l2: float) -> float:
    """One of R glmnet's coordinate updates on the centred column x_k - m_k, beta in place;
    returns the step (0 when it does not move). The residual w (y - p) - v (X_c db + d a0) is
    kept as r + c v (state[0] = c, state[1] = sum(r), state[2] = sum(v)), so that a step costs
    the column's nonzeros: r moves on them, c by m_k d."""
    start, stop = indptr[k], indptr[k + 1]
    c, r_sum, v_sum = state[0], state[1], state[2]
    gradient = 0.0
    for a in range(start, stop):
        gradient += data[a] * r[indices[a]]
    gradient += c * sv[k] - x_mean[k] * (r_sum + c * v_sum)
    old = beta[k]
    u = gradient + xv[k] * old
    au = abs(u) - l1
    new = 0.0 if au <= 0.0 else np.sign(u) * au / (xv[k] + l2)
    if new == old:
        return 0.0
    step = new - old
    beta[k] = new
    for a in range(start, stop):
        r[indices[a]] -= step * v[indices[a]] * data[a]
    state[1] = r_sum - step * sv[k]
    state[0] = c + step * x_mean[k]
    return step


@njit(cache=True, nogil=True)
def _glmnet_path(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, y: np.ndarray,
                 lambdas: np.ndarray, alpha: float, tol: float, max_passes: int,
                 own_path: bool, null: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """As _irls_path, but R glmnet's own solver step for step (lognet2n, glmnet 4.1's
    elnet_point/binomial_base.hpp), so that its coefficients are R's at R's default `thresh`
    rather than the optimum's: the predictors centred (unweighted) and the intercept a
    coordinate of its own, updated after each pass (sum(r) / sum(v)) and counted in the
    pass's change; each pass covers the strong set (the sequential strong rule), then the
    active set in the order its coordinates entered until it settles, then the strong set
    again until a whole pass moves nothing by `tol`; an IRLS step has converged when neither
    the intercept nor an active coordinate moved by `tol` (sum(v) a0^2, xv_k b_k^2, xv of the
    step's start), after which the KKT check over the other predictors may add to the strong
    set. `max_passes` counts passes over the whole path (glmnet's maxit)."""
    n = len(y)
    p = len(indptr) - 1
    w = 1.0 / n
    x_mean = np.empty(p)
    for j in range(p):
        total = 0.0
        for a in range(indptr[j], indptr[j + 1]):
            total += data[a]
        x_mean[j] = total * w
    q0 = 0.0
    for i in range(n):
        q0 += y[i] * w
    a0 = np.log(q0 / (1.0 - q0))
    beta = np.zeros(p)
    start_beta = np.zeros(p)
    v = np.empty(n)
    r = np.empty(n)
    eta = np.empty(n)
    for i in range(n):
        v[i] = w * q0 * (1.0 - q0)
        r[i] = w * (y[i] - q0)
    v_sum = q0 * (1.0 - q0)
    sv = np.zeros(p)
    xv = np.zeros(p)
    ga = np.empty(p)
    strong = np.zeros(p, dtype=np.bool_)
    entered = np.zeros(p, dtype=np.bool_)
    order = np.empty(p, dtype=np.int64)
    n_in = 0
    r_sum = 0.0
    for i in range(n):
        r_sum += r[i]
    for j in range(p):
        dot = 0.0
        for a in range(indptr[j], indptr[j + 1]):
            dot += data[a] * r[indices[a]]
        ga[j] = abs(dot - x_mean[j] * r_sum)
    state = np.empty(3)
    intercepts = np.empty(len(lambdas))
    coefficients = np.zeros((len(lambdas), p))
    dev_ratio = np.zeros(len(lambdas))
    passes = 0
    lam = 0.0
    for k in range(len(lambdas)):
        previous_lam = lam
        if own_path and k == 0:
            lam = BIG  # glmnet solves its first lambda at an infinite penalty
        else:
            lam = lambdas[k]
            if own_path and k == 1:
                previous_lam = lambdas[0]
        l1 = lam * alpha
        l2 = lam * (1.0 - alpha)
        cutoff = alpha * (2.0 * lam - previous_lam)
        for j in range(p):
            if not strong[j] and ga[j] > cutoff:
                strong[j] = True
        saturated = False
        while True:
            if passes > max_passes:
                return intercepts, coefficients, dev_ratio, k, 4
            start_a0 = a0
            start_beta[:] = beta
            for j in range(p):
                if strong[j]:
                    first = 0.0
                    second = 0.0
                    for a in range(indptr[j], indptr[j + 1]):
                        weighted = v[indices[a]] * data[a]
                        first += weighted
                        second += weighted * data[a]
                    sv[j] = first
                    xv[j] = second - 2.0 * x_mean[j] * first + x_mean[j] ** 2 * v_sum
            state[0] = 0.0
            state[1] = 0.0
            for i in range(n):
                state[1] += r[i]
            state[2] = v_sum
            while True:
                passes += 1
                change = 0.0
                for j in range(p):
                    if not strong[j]:
                        continue
                    step = _glmnet_coordinate(j, indptr, indices, data, v, r, state, x_mean,
                                              sv, xv, beta, l1, l2)
                    if step != 0.0:
                        change = max(change, xv[j] * step * step)
                        if not entered[j]:
                            entered[j] = True
                            order[n_in] = j
                            n_in += 1
                step = (state[1] + state[0] * v_sum) / v_sum
                if step != 0.0:
                    a0 += step
                    change = max(change, v_sum * step * step)
                    state[0] -= step
                if change < tol:
                    break
                if passes > max_passes:
                    return intercepts, coefficients, dev_ratio, k, 4
                while True:
                    passes += 1
                    change = 0.0
                    for e in range(n_in):
                        j = order[e]
                        step = _glmnet_coordinate(j, indptr, indices, data, v, r, state,
                                                  x_mean, sv, xv, beta, l1, l2)
                        if step != 0.0:
                            change = max(change, xv[j] * step * step)
                    step = (state[1] + state[0] * v_sum) / v_sum
                    if step != 0.0:
                        a0 += step
                        change = max(change, v_sum * step * step)
                        state[0] -= step
                    if change < tol:
                        break
                    if passes > max_passes:
                        return intercepts, coefficients, dev_ratio, k, 4
            offset = a0
            for j in range(p):
                offset -= x_mean[j] * beta[j]
            _linear_predictor(indptr, indices, data, beta, offset, eta)
            v_sum = 0.0
            for i in range(n):
                prob = _fitted_probability(eta[i])
                v[i] = w * prob * (1.0 - prob)
                v_sum += v[i]
                r[i] = w * (y[i] - prob)
            if v_sum <= WEIGHT_FLOOR:
                saturated = True
                break
            if v_sum * (a0 - start_a0) ** 2 < tol:
                moved = False
                for e in range(n_in):
                    j = order[e]
                    if xv[j] * (beta[j] - start_beta[j]) ** 2 >= tol:
                        moved = True
                        break
                if not moved:
                    r_sum = 0.0
                    for i in range(n):
                        r_sum += r[i]
                    for j in range(p):
                        if strong[j]:
                            continue
                        dot = 0.0
                        for a in range(indptr[j], indptr[j + 1]):
                            dot += data[a] * r[indices[a]]
                        ga[j] = abs(dot - x_mean[j] * r_sum)
                        if ga[j] > l1:
                            strong[j] = True
                            moved = True
                    if not moved:
                        break
        offset = a0
        for j in range(p):
            offset -= x_mean[j] * beta[j]
        intercepts[k] = offset
        coefficients[k] = beta
        dev_ratio[k] = _deviance_explained(indptr, indices, data, y, beta, offset, null)
        if saturated:
            return intercepts, coefficients, dev_ratio, k + 1, 1
        if own_path and k + 1 >= MIN_LAMBDAS:
            if dev_ratio[k] > DEVIANCE_EXPLAINED_MAX:
                return intercepts, coefficients, dev_ratio, k + 1, 2
            if dev_ratio[k] - dev_ratio[k - 1] < DEVIANCE_CHANGE_MIN:
                return intercepts, coefficients, dev_ratio, k + 1, 3
    return intercepts, coefficients, dev_ratio, len(lambdas), 0


def response_mean(y: np.ndarray) -> float:
    """The intercept-only fit's probability; as glmnet, an error within pmin of 0 or 1."""
    q = float(np.mean(y))
    if not PMIN < q < 1 - PMIN:
        raise ValueError(f"glmnet: the response's mean {q} is within {PMIN} of 0 or 1")
    return q


def null_deviance(q: float) -> float:
    """glmnet's dev0 with weights 1/n: minus the mean log-likelihood of the intercept-only fit
    (`q` its probability, `response_mean`)."""
    return -(q * np.log(q) + (1 - q) * np.log(1 - q))


def fit_path(x, y: np.ndarray, lambdas: np.ndarray | None = None, alpha: float = 1.0,
             thresh: float = 1e-7, max_iter: int = 1000, n_lambda: int = 100,
             min_ratio: float | None = None, convergence: str = "tight") -> Path:
    """The binomial elastic net along glmnet's own path (`lambdas` None: `n_lambda` lambdas
    from `lambda_path`, the first the intercept-only model, ended early by glmnet's rules) or at
    the lambdas given (decreasing; ended early only by a saturated fit). Converged, as glmnet's
    `thresh`, when no step moves the objective by `thresh` times the null deviance: an absolute
    tolerance made the flat ends of some paths 15 times slower than R's glmnet
    (docs/running.md, the Japanese preset at full size) for no better fit within it.

    `convergence` (CONVERGENCE): "tight" solves each IRLS step's quadratic with the intercept
    profiled out and every coordinate swept until it settles, which lands nearer the optimum
    than R (`refit` then solves one lambda to it); "r_default" is R glmnet's own solver
    (_glmnet_path), whose coefficients stop where R's default fit stops (up to 0.66 apart from
    the optimum on nearly separated designs), with glmnet's maxit (GLMNET_MAXIT passes over the
    whole path) in place of `max_iter`."""
    if convergence not in CONVERGENCE:
        raise ValueError(f"convergence {convergence!r} is not one of {', '.join(CONVERGENCE)}")
    x = sparse.csr_matrix(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n, p = x.shape
    mean_y = response_mean(y)
    own_path = lambdas is None
    if own_path:
        lambdas = lambda_path(x, y, alpha, n_lambda, min_ratio)
    lambdas = np.asarray(lambdas, dtype=float)
    sd = scales(x)
    kept = sd > 0
    xs = sparse.csc_matrix(x[:, kept] @ sparse.diags(1.0 / sd[kept]))
    xs.sum_duplicates()
    xs.sort_indices()
    null = null_deviance(mean_y)
    # one dtype per argument, so numba compiles each path solver once
    arrays = (xs.indptr.astype(np.int64), xs.indices.astype(np.int64),
              xs.data.astype(np.float64), y, lambdas, float(alpha))
    if convergence == "r_default":
        intercepts, standardised, dev_ratio, fitted, stop = _glmnet_path(
            *arrays, float(thresh * null), GLMNET_MAXIT, own_path, float(null))
    else:
        intercepts, standardised, dev_ratio, fitted, stop = _irls_path(
            *arrays, float(np.log(mean_y / (1 - mean_y))), float(thresh * null),
            int(max_iter), own_path, float(null))
    coefficients = np.zeros((fitted, p))
    coefficients[:, kept] = standardised[:fitted] / sd[kept]
    lambdas = lambdas[:fitted].copy()
    if own_path and fitted < 3:
        lambdas[0] = BIG
    return Path(lambdas, intercepts[:fitted].copy(), coefficients, dev_ratio[:fitted].copy(),
                STOPS[stop])


def binomial_deviance(y: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """cv.glmnet's per-observation deviance, one column per lambda."""
    prob = np.clip(expit(eta), DEVIANCE_FLOOR, 1 - DEVIANCE_FLOOR)
    y = y[:, None]
    return -2 * (y * np.log(prob) + (1 - y) * np.log(1 - prob))


def fold_ids(n: int, folds: int, seed: int) -> np.ndarray:
    """cv.glmnet's fold assignment, `sample(rep(seq(nfolds), length = n))`, seeded by numpy."""
    return np.random.default_rng(seed).permutation(np.arange(n) % folds)


@dataclass(frozen=True)
class CrossValidated:
    path: Path
    cv_mean: np.ndarray        # mean deviance over folds, per lambda
    cv_sd: np.ndarray          # its standard error
    cv_accuracy: np.ndarray    # folds x lambdas: held-out accuracy
    lambda_min: float
    lambda_1se: float
    folds: tuple[Path, ...]    # each fold's own path
    grouped: bool = True       # deviance averaged per fold (else per pair: < 3 pairs a fold)

    def index(self, choice: str) -> int:
        value = {"lambda.min": self.lambda_min, "lambda.1se": self.lambda_1se}[choice]
        return int(np.flatnonzero(self.path.lambdas == value)[0])

    def stops(self) -> str:
        """Where the path and the folds' paths ended early and why, for the log."""
        paths = {"all": self.path, **{f"fold {k + 1}": f for k, f in enumerate(self.folds)}}
        return ", ".join(f"{name} after {len(path.lambdas)} lambdas ({path.stopped})"
                         for name, path in paths.items() if path.stopped) or "none"


def cv_glmnet(x, y: np.ndarray, folds: int = 10, seed: int = 0, alpha: float = 1.0,
              n_lambda: int = 100, thresh: float = 1e-7, max_iter: int = 1000,
              jobs: int = 1, lambdas: np.ndarray | None = None,
              convergence: str = "tight", pool: Executor | None = None) -> CrossValidated:
    """cv.glmnet: the path on all pairs; each fold's own path on the others (`lambdas`, as
    cv.glmnet's `lambda` argument: None for glmnet's own paths, else every fit at those),
    predicted at the path's lambdas; the deviance grouped per fold. The fits run in `pool`
    (shared with other cross-validations) or else in `jobs` threads of their own; each is the
    same computation alone, so the result does not depend on the threads. `convergence`:
    fit_path's."""
    if folds < 3:
        raise ValueError(f"cv.glmnet needs at least 3 folds, not {folds}")
    x = sparse.csr_matrix(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ids = fold_ids(len(y), folds, seed)

    def fit(fold: int | None) -> Path:
        # a fold's rows copied by its own fit: only the fits running hold copies
        kept = (x, y) if fold is None else (x[ids != fold], y[ids != fold])
        return fit_path(*kept, lambdas, alpha, thresh, max_iter, n_lambda,
                        convergence=convergence)

    if pool is None:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as own:
            path, *fits = own.map(fit, [None, *range(folds)])
    else:
        path, *fits = pool.map(fit, [None, *range(folds)])
    grid = path.lambdas
    eta = np.empty((len(y), len(grid)))
    for k, fold in enumerate(fits):
        held = ids == k
        eta[held] = fold.predict_at(x[held], grid)
    deviance = binomial_deviance(y, eta)
    correct = (eta > 0) == (y[:, None] == 1)
    accuracy = np.array([correct[ids == k].mean(axis=0) for k in range(folds)])
    # cv.glmnet averages per fold, unless a fold has fewer than 3 pairs on average
    grouped = len(y) / folds >= 3
    if grouped:
        per_fold = np.array([deviance[ids == k].mean(axis=0) for k in range(folds)])
        weights = np.array([(ids == k).sum() for k in range(folds)], dtype=float)
        mean = weights @ per_fold / weights.sum()
        sd = np.sqrt(weights @ (per_fold - mean) ** 2 / weights.sum() / (folds - 1))
    else:
        mean = deviance.mean(axis=0)
        sd = np.sqrt(((deviance - mean) ** 2).mean(axis=0) / (len(y) - 1))
    lambda_min = float(np.max(grid[mean <= np.min(mean)]))
    at_min = int(np.flatnonzero(grid == lambda_min)[0])
    lambda_1se = float(np.max(grid[mean <= mean[at_min] + sd[at_min]]))
    return CrossValidated(path, mean, sd, accuracy, lambda_min, lambda_1se, tuple(fits),
                          grouped)


def refit(x, y: np.ndarray, path: Path, index: int, alpha: float = 1.0, max_iter: int = 1000
          ) -> tuple[float, np.ndarray]:
    """(intercept, coefficients) at the `index`-th lambda of `path`, glmnet's own path of x, y
    (fit_path with lambdas None), solved again down to it at REFIT_THRESH from its first, the
    intercept-only model, which is exact as it is. A ValueError where the refit ends before
    that lambda (its IRLS past `max_iter`)."""
    if index == 0:
        return float(path.intercepts[0]), path.coefficients[0]
    again = fit_path(x, y, path.lambdas[1:index + 1], alpha, REFIT_THRESH, max_iter,
                     convergence="tight")
    if len(again.lambdas) < index:
        hint = "; a larger max_iter may reach the last" if again.stopped == "maxit" else ""
        raise ValueError(f"the refit at thresh {REFIT_THRESH:g} ended after "
                         f"{len(again.lambdas) + 1} of {index + 1} lambdas ({again.stopped})"
                         + hint)
    return float(again.intercepts[-1]), again.coefficients[-1]
