"""spudflow.aggregate.glmnet against R's glmnet itself (skipped, with the reason, where R or its
glmnet package is absent: Debian `r-base-core r-cran-glmnet`) and against scikit-learn's
LogisticRegression (saga, L1) at a fixed lambda on the standardised design."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from spudflow.aggregate.glmnet import (
    BIG,
    cv_glmnet,
    fit_path,
    fold_ids,
    lambda_path,
    refit,
    scales,
)


def _design(n: int = 400, seed: int = 3):
    """A one-hot design like the thesis's (three factors, all levels kept) and choices drawn
    from a logistic model of it."""
    rng = np.random.default_rng(seed)
    levels = (5, 4, 3)
    columns = []
    for k in levels:
        codes = rng.integers(0, k, n)
        columns.append(np.eye(k)[codes])
    x = np.hstack(columns)
    effect = rng.normal(0, 1.2, x.shape[1])
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ effect - 0.3)))).astype(float)
    return x, y


# The tests that compare with R take `r_glmnet` (conftest): R with glmnet loaded, or skipped
# without them.


def _r(r, tmp_path, x, y, script: str) -> np.ndarray:
    np.savetxt(tmp_path / "x.csv", x, delimiter=",")
    np.savetxt(tmp_path / "y.csv", y, delimiter=",")
    program = (f'x <- as.matrix(read.csv("{tmp_path}/x.csv", header = FALSE)); '
               f'y <- read.csv("{tmp_path}/y.csv", header = FALSE)[, 1]; ' + script)
    return np.array([float(v) for v in r.run(program).split()])


def _fits_at(r, tmp_path, x, y, lambdas, options: str) -> list[np.ndarray]:
    """R glmnet's coefficients (intercept first) of one binomial fit at each lambda alone, all
    in one R process (R and glmnet take seconds to start)."""
    values = _r(r, tmp_path, x, y, (
        f"for (lam in c({', '.join(map(repr, lambdas))})) {{ "
        f"fit <- glmnet(x, y, family = 'binomial', {options}, lambda = lam, "
        "thresh = 1e-14, maxit = 1e6); "
        "cat(sprintf('%.17g', as.numeric(coef(fit))), sep = '\\n'); cat('\\n') }"))
    return np.split(values, len(lambdas))


@pytest.mark.slow
def test_coefficients_match_r_glmnet_at_fixed_lambda(r_glmnet, tmp_path):
    x, y = _design()
    lambdas = (0.05, 0.01, 0.002)
    references = _fits_at(r_glmnet, tmp_path, x, y, lambdas, "alpha = 1, standardize = TRUE")
    for lam, reference in zip(lambdas, references, strict=True):
        ours = fit_path(x, y, np.array([lam]), thresh=1e-14)
        assert ours.intercepts[0] == pytest.approx(reference[0], abs=1e-4)
        # with all levels kept the coefficients of a factor are identified by the penalty only;
        # the fitted log odds are identified at any lambda
        assert ours.predict(x)[:, 0] == pytest.approx(
            reference[0] + x @ reference[1:], abs=1e-4)
        assert ours.coefficients[0] == pytest.approx(reference[1:], abs=1e-4)


@pytest.mark.slow
def test_the_default_threshold_is_glmnets_relative_to_the_null_deviance(r_glmnet, tmp_path):
    """Both at their defaults (glmnet's thresh 1e-7 times the null deviance), the whole path's
    log odds agree with R's to 2e-3 (1.5e-3 here); a threshold of 1e-5 misses that (2.9e-3)."""
    x, y = _design()
    lambdas = lambda_path(x, y, n_lambda=30)
    listed = ", ".join(f"{lam:.17g}" for lam in lambdas)
    reference = _r(r_glmnet, tmp_path, x, y, (
        f"fit <- glmnet(x, y, family = 'binomial', lambda = c({listed})); "
        "cat(sprintf('%.17g', as.numeric(predict(fit, x, type = 'link'))), sep = '\\n')"))
    ours = fit_path(x, y, lambdas)
    assert ours.predict(x) == pytest.approx(reference.reshape(len(lambdas), -1).T, abs=2e-3)


def _r_cv(r, tmp_path, x, y, ids, options: str = "") -> dict[str, np.ndarray]:
    """R's glmnet path and cv.glmnet on the same fold ids (1-based), OPTIONS added to both
    calls: the path's lambdas and dev.ratio, lambda.min, lambda.1se, cvm and cvsd."""
    np.savetxt(tmp_path / "folds.csv", ids + 1, delimiter=",", fmt="%d")
    values = _r(r, tmp_path, x, y, (
        f'foldid <- read.csv("{tmp_path}/folds.csv", header = FALSE)[, 1]; '
        f"fit <- glmnet(x, y, family = 'binomial'{options}); "
        f"cv <- cv.glmnet(x, y, family = 'binomial', foldid = foldid{options}); "
        "out <- c(length(fit$lambda), fit$lambda, fit$dev.ratio, cv$lambda.min, cv$lambda.1se, "
        "length(cv$cvm), cv$cvm, cv$cvsd); cat(sprintf('%.17g', out), sep = '\\n')"))
    n = int(values[0])
    m = int(values[2 * n + 3])
    return {"lambdas": values[1:n + 1], "dev_ratio": values[n + 1:2 * n + 1],
            "lambda_min": values[2 * n + 1], "lambda_1se": values[2 * n + 2],
            "cvm": values[2 * n + 4:2 * n + 4 + m], "cvsd": values[2 * n + 4 + m:]}


@pytest.mark.slow
def test_lambda_path_and_cv_choice_match_cv_glmnet(r_glmnet, tmp_path):
    """Same design, same fold ids: glmnet's own path (lambdas, where it ends early, deviance
    explained) and cv.glmnet's lambda.min, lambda.1se and mean deviance with its defaults,
    where each fold fits its own path (the first version fitted the folds at the full path's
    lambdas: cv.glmnet's `lambda = fit$lambda`, kept as `lambdas`)."""
    x, y = _design()
    ids = fold_ids(len(y), 10, seed=0)
    reference = _r_cv(r_glmnet, tmp_path, x, y, ids, ", thresh = 1e-12")
    cv = cv_glmnet(x, y, folds=10, seed=0, thresh=1e-12)
    assert len(cv.path.lambdas) == len(reference["lambdas"]) < 100  # ended early, as glmnet
    assert cv.path.stopped == "fdev"
    assert cv.path.lambdas == pytest.approx(reference["lambdas"], rel=1e-9)
    assert cv.path.dev_ratio == pytest.approx(reference["dev_ratio"], abs=1e-7)
    assert cv.cv_mean == pytest.approx(reference["cvm"], abs=1e-6)
    assert cv.cv_sd == pytest.approx(reference["cvsd"], abs=1e-6)
    assert cv.lambda_min == pytest.approx(reference["lambda_min"], rel=1e-9)
    assert cv.lambda_1se == pytest.approx(reference["lambda_1se"], rel=1e-9)
    listed = ", ".join(f"{lam:.17g}" for lam in lambda_path(x, y))
    given = _r_cv(r_glmnet, tmp_path, x, y, ids, f", thresh = 1e-12, lambda = c({listed})")
    at_given = cv_glmnet(x, y, folds=10, seed=0, thresh=1e-12, lambdas=lambda_path(x, y))
    assert len(at_given.path.lambdas) == len(given["lambdas"]) == 100  # no early end
    assert at_given.cv_mean == pytest.approx(given["cvm"], abs=1e-6)
    assert at_given.lambda_min == pytest.approx(given["lambda_min"], rel=1e-9)
    assert at_given.lambda_1se == pytest.approx(given["lambda_1se"], rel=1e-9)


def _separable_design(n: int = 120, seed: int = 4):
    """Choices that one indicator separates (its level always chooses 1, the other always 0),
    beside two factors of noise: glmnet's path ends at devmax, before the fit saturates."""
    rng = np.random.default_rng(seed)
    separating = rng.integers(0, 2, n)
    x = np.hstack([np.eye(2)[separating], np.eye(3)[rng.integers(0, 3, n)],
                   np.eye(4)[rng.integers(0, 4, n)]])
    return x, separating.astype(float)


@pytest.mark.slow
def test_a_separable_design_gives_a_shorter_path_and_cv_glmnets_choice(r_glmnet, tmp_path):
    """The separable design: glmnet's path ends once the deviance explained passes 0.999, and
    the folds' own paths end early too; the first versions stopped with "saturated fit" at the
    path's small lambdas. The path's lambdas, deviance explained, log odds and cv.glmnet's
    choice are R's."""
    x, y = _separable_design()
    ids = fold_ids(len(y), 10, seed=0)
    reference = _r_cv(r_glmnet, tmp_path, x, y, ids, ", thresh = 1e-12")
    cv = cv_glmnet(x, y, folds=10, seed=0, thresh=1e-12)
    assert cv.path.stopped == "devmax" and cv.path.dev_ratio[-1] > 0.999
    assert len(cv.path.lambdas) == len(reference["lambdas"]) < 100
    assert all(fold.stopped == "devmax" for fold in cv.folds)
    assert cv.path.lambdas == pytest.approx(reference["lambdas"], rel=1e-9)
    assert cv.path.dev_ratio == pytest.approx(reference["dev_ratio"], abs=1e-6)
    assert cv.cv_mean == pytest.approx(reference["cvm"], abs=1e-5)
    assert cv.lambda_min == pytest.approx(reference["lambda_min"], rel=1e-9)
    assert cv.lambda_1se == pytest.approx(reference["lambda_1se"], rel=1e-9)
    link = _r(r_glmnet, tmp_path, x, y, (
        "fit <- glmnet(x, y, family = 'binomial', thresh = 1e-12); "
        "cat(sprintf('%.17g', as.numeric(predict(fit, x, type = 'link'))), sep = '\\n')"))
    assert cv.path.predict(x) == pytest.approx(
        link.reshape(len(cv.path.lambdas), -1).T, abs=1e-3)


@pytest.mark.slow
def test_predictions_between_and_beyond_a_paths_lambdas_are_glmnets(r_glmnet, tmp_path):
    """predict(fit, s = lambda): coefficients linear in lambda between the path's two nearest
    lambdas, the first or last solution beyond its ends (how cv.glmnet predicts a fold whose
    own path ended before the full path's smallest lambdas)."""
    x, y = _separable_design()
    path = fit_path(x, y, thresh=1e-12)
    lam = path.lambdas
    s = np.array([lam[0] * 2, lam[0], (lam[3] + lam[4]) / 2, lam[7] * 0.9 + lam[8] * 0.1,
                  lam[-1], lam[-1] / 10])
    listed = ", ".join(f"{v:.17g}" for v in s)
    reference = _r(r_glmnet, tmp_path, x, y, (
        f"fit <- glmnet(x, y, family = 'binomial', thresh = 1e-12); "
        f"cat(sprintf('%.17g', as.numeric(coef(fit, s = c({listed})))), sep = '\\n')"
    )).reshape(len(s), -1)
    intercepts, coefficients = path.at(s)
    assert intercepts == pytest.approx(reference[:, 0], abs=1e-4)
    assert coefficients == pytest.approx(reference[:, 1:], abs=1e-4)
    assert (intercepts[-1], *coefficients[-1]) == (path.intercepts[-1], *path.coefficients[-1])
    assert not coefficients[0].any()


DATA = Path(__file__).parent / "data" / "glmnet"


def _rare_kn_verb():
    """The default run's rare/ja_pud_trigram/kn/verb design (tests/data/glmnet/README.md)."""
    return _default_run_design("rare_kn_verb.csv")


def _default_run_design(name: str):
    """(x, y) of a default run's mode in tests/data/glmnet (its README says how it was made)."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()[1:]
    rows = [line.split(",") for line in lines]
    ones = [[int(j) for j in predictors.split()] for _, predictors in rows]
    x = np.zeros((len(rows), 1 + max(max(r) for r in ones)))
    for i, columns in enumerate(ones):
        x[i, columns] = 1
    return x, np.array([float(choice) for choice, _ in rows])


def test_the_default_runs_failing_mode_is_fitted():
    """The mode that stopped the default run ("saturated fit": the fold holding 2 of its 4
    transitive choices saturated at the path's small lambdas): now the path and 9 folds end at
    devmax, and the fold with 2 choices at its second lambda, where glmnet's IRLS cycles too."""
    x, y = _rare_kn_verb()
    assert x.shape == (200, 117) and y.sum() == 4
    cv = cv_glmnet(x, y, folds=10, seed=0)
    assert (len(cv.path.lambdas), cv.path.stopped) == (66, "devmax")
    ends = [(len(fold.lambdas), fold.stopped) for fold in cv.folds]
    assert ends.count((66, "devmax")) == 9 and (1, "maxit") in ends
    single = cv.folds[ends.index((1, "maxit"))]
    assert single.lambdas[0] == BIG and not single.coefficients.any()
    assert np.isfinite(cv.cv_mean).all() and cv.lambda_1se >= cv.lambda_min


@pytest.mark.slow
def test_the_default_runs_failing_mode_matches_cv_glmnet(r_glmnet, tmp_path):
    """On the same folds R's cv.glmnet gives the same lambdas, lambda.min (3.31e-4) and
    lambda.1se (0.116), and the same mean deviance to 1e-5 (2.3e-6 here)."""
    x, y = _rare_kn_verb()
    reference = _r_cv(r_glmnet, tmp_path, x, y, fold_ids(len(y), 10, seed=0))
    cv = cv_glmnet(x, y, folds=10, seed=0)
    assert cv.path.lambdas == pytest.approx(reference["lambdas"], rel=1e-9)
    assert cv.cv_mean == pytest.approx(reference["cvm"], abs=1e-5)
    assert cv.lambda_min == pytest.approx(reference["lambda_min"], rel=1e-9)
    assert cv.lambda_1se == pytest.approx(reference["lambda_1se"], rel=1e-9)


def _relative_addk_optimum() -> tuple[float, np.ndarray]:
    """(lambda.1se, R glmnet's optimum there, intercept first) of the relative/addk design."""
    rows = [line.split(",") for line in (DATA / "relative_addk_optimum.csv").read_text(
        encoding="utf-8").splitlines()[1:]]
    return float(rows[0][1]), np.array([float(value) for _, value in rows[1:]])


def _largest(b: np.ndarray, sign: int, top: int = 10) -> list[int]:
    """The indices of the `top` largest coefficients of one sign, as the regression tables list
    them."""
    return sorted(np.flatnonzero(sign * b > 0), key=lambda i: (-sign * b[i], i))[:top]


def test_a_tight_fits_coefficients_are_refitted_to_the_optimum():
    """The default run's relative/addk mode: nearly separated (intercept -22) and flat along some
    coefficients. At glmnet's thresh the path stops up to 0.45 from the optimum at lambda.1se
    (R glmnet at thresh 1e-24), enough to reorder the largest coefficients of both signs; the
    refit lands within 1e-5 of it (2.2e-6 here) with its order, and meets the optimality
    conditions (every nonzero coefficient's gradient lambda to 1e-4 of it; 2 % off before)."""
    x, y = _default_run_design("relative_addk.csv")
    assert x.shape == (1191, 130) and y.sum() == 36
    lam, optimum = _relative_addk_optimum()
    cv = cv_glmnet(x, y, folds=10, seed=0)
    k = cv.index("lambda.1se")
    assert cv.path.lambdas[k] == pytest.approx(lam, rel=1e-12)
    stopped = np.concatenate([[cv.path.intercepts[k]], cv.path.coefficients[k]])
    intercept, coefficients = refit(x, y, cv.path, k)
    refitted = np.concatenate([[intercept], coefficients])
    assert np.abs(stopped - optimum).max() > 0.3
    assert refitted == pytest.approx(optimum, abs=1e-5)
    for sign in (1, -1):
        assert _largest(refitted, sign) == _largest(optimum, sign)
        assert _largest(stopped, sign) != _largest(optimum, sign)
    residual = y - 1 / (1 + np.exp(-(intercept + x @ coefficients)))
    gradient = x.T @ residual / len(y) / scales(x)
    chosen = coefficients != 0
    assert abs(residual.mean()) < 1e-9
    assert np.abs(gradient[chosen] - lam * np.sign(coefficients[chosen])).max() < 1e-4 * lam
    assert np.all(np.abs(gradient[~chosen]) <= lam)


@pytest.mark.slow
def test_the_refits_optimum_is_r_glmnets_at_a_tiny_thresh(r_glmnet, tmp_path):
    """tests/data/glmnet/relative_addk_optimum.csv is what R glmnet gives now: the path's
    lambdas down to lambda.1se at thresh 1e-24."""
    x, y = _default_run_design("relative_addk.csv")
    cv = cv_glmnet(x, y, folds=10, seed=0)
    lambdas = ", ".join(f"{lam:.17g}" for lam in cv.path.lambdas[:cv.index("lambda.1se") + 1])
    reference = _r(r_glmnet, tmp_path, x, y, (
        f"fit <- glmnet(x, y, family = 'binomial', lambda = c({lambdas}), thresh = 1e-24, "
        "maxit = 1e9); cat(sprintf('%.17g', as.numeric(coef(fit)[, ncol(coef(fit))])), "
        "sep = '\\n')"))
    assert reference == pytest.approx(_relative_addk_optimum()[1], abs=1e-9)


def test_a_refit_at_the_paths_first_lambda_is_the_intercept_only_model():
    """glmnet's own path starts at the intercept-only model, exact as it is: solving lambda_max
    again can leave float dust (a coefficient of 2e-14 on a default run's mode, listed as its
    largest positive one)."""
    x, y = _design(seed=4)
    path = fit_path(x, y)
    intercept, coefficients = refit(x, y, path, 0)
    assert intercept == path.intercepts[0] and not coefficients.any()


def test_a_refit_that_ends_before_its_lambda_is_an_error():
    x, y = _design()
    path = fit_path(x, y)
    with pytest.raises(ValueError, match=r"ended after \d+ of 31 lambdas \(maxit\); a larger "
                       "max_iter may reach the last"):
        refit(x, y, path, 30, max_iter=1)


def test_a_refit_of_an_elastic_net_solves_its_own_penalty():
    """alpha reaches the refit: the relative/addk design's elastic net (alpha 0.5) refitted at
    its lambda.1se meets that penalty's optimality conditions (gradient = lambda (alpha sign(b)
    + (1 - alpha) b) for a nonzero b, standardised), which the lasso's refit does not."""
    x, y = _default_run_design("relative_addk.csv")
    cv = cv_glmnet(x, y, folds=10, seed=0, alpha=0.5)
    k = cv.index("lambda.1se")
    lam, sd = cv.path.lambdas[k], scales(x)

    def off(alpha, intercept, coefficients):
        residual = y - 1 / (1 + np.exp(-(intercept + x @ coefficients)))
        gradient = x.T @ residual / len(y) / sd
        b = (coefficients * sd)[coefficients != 0]
        return np.abs(gradient[coefficients != 0]
                      - lam * (alpha * np.sign(b) + (1 - alpha) * b)).max() / lam

    assert off(0.5, *refit(x, y, cv.path, k, alpha=0.5)) < 1e-4
    assert off(0.5, *refit(x, y, cv.path, k, alpha=1.0)) > 1e-2


def _near_separated_design(n: int = 300, seed: int = 2):
    """Three one-hot factors with large effects (sd 6 on the log odds): some levels choose
    almost only one way, where R's default fit stops visibly short of the optimum."""
    rng = np.random.default_rng(seed)
    x = np.hstack([np.eye(k)[rng.integers(0, k, n)] for k in (6, 5, 4)])
    effect = rng.normal(0, 6.0, x.shape[1])
    return x, (rng.random(n) < 1 / (1 + np.exp(-(x @ effect)))).astype(float)


def _interaction_design(n: int = 500, seed: int = 11):
    """Three one-hot factors and the interactions of the first two (the thesis's noun:marker
    columns), constant columns left out, effects sd 2: R's default fit stops 0.70 from the
    optimum on a coefficient here, as on the default run's relative/addk modes (0.66)."""
    rng = np.random.default_rng(seed)
    x = np.hstack([np.eye(k)[rng.integers(0, k, n)] for k in (4, 3, 6)])
    x = np.hstack([x, (x[:, :4, None] * x[:, None, 4:7]).reshape(n, -1)])
    x = x[:, x.std(axis=0) > 0]
    effect = rng.normal(0, 2.0, x.shape[1])
    return x, (rng.random(n) < 1 / (1 + np.exp(-(x @ effect - 0.5)))).astype(float)


def _r_default_1se(r, tmp_path, x, y, ids) -> np.ndarray:
    """R's cv.glmnet with every default on the fold ids: coef() at lambda.1se, intercept
    first, after lambda.1se itself."""
    np.savetxt(tmp_path / "folds.csv", ids + 1, delimiter=",", fmt="%d")
    return _r(r, tmp_path, x, y, (
        f'foldid <- read.csv("{tmp_path}/folds.csv", header = FALSE)[, 1]; '
        "cv <- cv.glmnet(x, y, family = 'binomial', foldid = foldid); "
        "cat(sprintf('%.17g', c(cv$lambda.1se, as.numeric(coef(cv)))), sep = '\\n')"))


@pytest.mark.slow
@pytest.mark.parametrize(("design", "seed", "tight_off"), [
    (_near_separated_design, 0, 1e-3), (_interaction_design, 11, 0.5), (_rare_kn_verb, 0, 0)],
    ids=["near_separated", "interactions", "rare_kn_verb"])
def test_r_default_convergence_gives_r_glmnets_default_coefficients(r_glmnet, tmp_path, design,
                                                                    seed, tight_off):
    """The thesis printed R's default fits. convergence="r_default" is R glmnet's own solver
    (the intercept a coordinate, strong set then active set in entry order, its stopping
    rule), so its coefficients at lambda.1se are R's default fit's (to 1e-13 here); the tight
    mode's are `tight_off` or more away (7.4e-3 and 0.70; 8.8e-7 on rare_kn_verb), nearer the
    optimum."""
    x, y = design()
    ids = fold_ids(len(y), 10, seed=seed)
    reference = _r_default_1se(r_glmnet, tmp_path, x, y, ids)
    fits = {mode: cv_glmnet(x, y, folds=10, seed=seed, convergence=mode)
            for mode in ("r_default", "tight")}
    coefficients = {}
    for mode, cv in fits.items():
        assert cv.lambda_1se == pytest.approx(reference[0], rel=1e-9)
        k = cv.index("lambda.1se")
        coefficients[mode] = np.concatenate([[cv.path.intercepts[k]], cv.path.coefficients[k]])
    assert coefficients["r_default"] == pytest.approx(reference[1:], abs=1e-6)
    assert np.max(np.abs(coefficients["tight"] - reference[1:])) > tight_off


def test_convergence_must_be_a_known_mode():
    x, y = _design()
    with pytest.raises(ValueError, match="convergence 'exact' is not one of tight, r_default"):
        fit_path(x, y, convergence="exact")


def test_coefficients_match_sklearn_l1_at_fixed_lambda():
    """glmnet's objective, -loglik/n + lambda |b|_1 on standardised predictors, is sklearn's
    C sum(log loss) + |b|_1 with C = 1 / (n lambda); saga leaves the intercept unpenalised."""
    x, y = _design()
    sd = scales(x)
    lam = 0.01
    model = LogisticRegression(l1_ratio=1.0, C=1 / (len(y) * lam), solver="saga", tol=1e-12,
                               max_iter=200000)
    model.fit(x / sd, y)
    ours = fit_path(sparse.csr_matrix(x), y, np.array([lam]), thresh=1e-14)
    assert ours.predict(x)[:, 0] == pytest.approx(model.decision_function(x / sd), abs=1e-4)
    assert ours.coefficients[0] == pytest.approx(model.coef_[0] / sd, abs=1e-3)


def test_lambda_max_zeroes_every_coefficient_and_the_path_is_glmnets():
    x, y = _design()
    lambdas = lambda_path(x, y)
    assert len(lambdas) == 100 and lambdas[-1] == pytest.approx(lambdas[0] * 1e-4)
    assert np.diff(np.log(lambdas)) == pytest.approx(np.full(99, np.log(1e-4) / 99))
    path = fit_path(x, y, lambdas[:2])
    assert not path.coefficients[0].any() and path.coefficients[1].any()
    assert path.intercepts[0] == pytest.approx(np.log(y.mean() / (1 - y.mean())))
    # n <= p: the path ends at 1 % of lambda_max
    assert lambda_path(x[:10], y[:10])[-1] == pytest.approx(lambda_path(x[:10], y[:10])[0] / 100)


def test_the_paths_first_point_is_the_intercept_only_model_as_glmnets():
    """glmnet fits the first lambda of its own path at an infinite penalty. Solved at
    lambda_max, this design keeps coefficients of 5e-15 from rounding; cv_glmnet's path has
    none there, so lambda.1se = lambda_max ranks no coefficient but the intercept."""
    x, y = _design(seed=2)
    lambdas = lambda_path(x, y)
    assert 0 < np.abs(fit_path(x, y, lambdas[:1]).coefficients).max() < 1e-13
    cv = cv_glmnet(x, y, folds=5, seed=0, n_lambda=10)
    assert not cv.path.coefficients[0].any()
    assert cv.path.intercepts[0] == np.log(y.mean() / (1 - y.mean()))
    assert cv.path.coefficients[1].any()


def test_lambda_1se_is_the_largest_within_one_standard_error():
    x, y = _design()
    cv = cv_glmnet(x, y, folds=5, seed=1, n_lambda=30)
    best = int(np.argmin(cv.cv_mean))
    assert cv.lambda_min == cv.path.lambdas[best]
    within = cv.path.lambdas[cv.cv_mean <= cv.cv_mean[best] + cv.cv_sd[best]]
    assert cv.lambda_1se == within.max() >= cv.lambda_min
    assert cv.index("lambda.1se") <= cv.index("lambda.min")


def _separated_design():
    """The one-hot design with a rare level (8 of 400 pairs) whose pairs all choose 1: its
    coefficient grows along the path, and its fitted log odds pass 11.5 (probability 1 - 1e-5)
    before the path ends."""
    x, y = _design(seed=1)
    rng = np.random.default_rng(1)
    rare = np.zeros((len(y), 1))
    chosen = rng.choice(len(y), 8, replace=False)
    rare[chosen] = 1
    y[chosen] = 1
    return np.hstack([x, rare]), y


def test_a_separated_levels_fit_meets_the_optimality_conditions_along_the_path():
    """glmnet's IRLS counts a fitted probability as 0 or 1 only within pmin (1e-9); clipping
    it at 1e-5 instead moved the fit off the optimum of the penalised likelihood once a
    separated level's log odds passed 11.5 (a gradient 3 % of lambda off at the path's end).
    Here every nonzero coefficient's gradient is lambda to 1e-4, the intercept's 0."""
    x, y = _separated_design()
    lambdas = lambda_path(x, y)
    path = fit_path(x, y, lambdas, thresh=1e-14)
    eta = path.predict(x)
    assert eta[:, -1].max() > 11.5  # beyond the old clip
    sd = scales(x)
    for k, lam in enumerate(lambdas):
        residual = y - 1 / (1 + np.exp(-eta[:, k]))
        gradient = x.T @ residual / len(y) / sd  # of the log-likelihood / n, standardised
        b = path.coefficients[k]
        assert abs(residual.mean()) < 1e-9
        assert np.abs(gradient[b != 0] - lam * np.sign(b[b != 0])) == pytest.approx(
            0, abs=1e-4 * lam)
        assert np.all(np.abs(gradient[b == 0]) <= lam * (1 + 1e-4))


@pytest.mark.slow
def test_a_separated_levels_path_matches_r_glmnet(r_glmnet, tmp_path):
    """The whole default path on the separated design: log odds agree with R's to 1e-3 (2e-4
    here, at the path's end, where the objective is flattest); with the old clip at 1e-5
    they were 3.2e-2 apart."""
    x, y = _separated_design()
    lambdas = lambda_path(x, y)
    listed = ", ".join(f"{lam:.17g}" for lam in lambdas)
    reference = _r(r_glmnet, tmp_path, x, y, (
        f"fit <- glmnet(x, y, family = 'binomial', lambda = c({listed}), thresh = 1e-14, "
        "maxit = 1e6); "
        "cat(sprintf('%.17g', as.numeric(predict(fit, x, type = 'link'))), sep = '\\n')"))
    ours = fit_path(x, y, lambdas, thresh=1e-14)
    assert ours.predict(x) == pytest.approx(reference.reshape(len(lambdas), -1).T, abs=1e-3)


def test_a_response_of_one_class_is_an_error_as_in_glmnet():
    x, y = _design()
    for constant in (np.zeros_like(y), np.ones_like(y)):
        with pytest.raises(ValueError, match="within 1e-09 of 0 or 1"):
            fit_path(x, constant, np.array([0.01]))


def test_a_level_fitted_at_probability_one_keeps_its_coefficient():
    """Far below glmnet's default path (1e-12 of lambda_max), the separated level's log odds
    pass log(1/pmin - 1) = 20.7: its rows get IRLS weight 0, as in glmnet, and its column no
    curvature; it keeps its coefficient (no division by that zero, no fall back to 0). With
    the old clip at 1e-5 it grew without bound (to 24,000). At a threshold of 1e-14 the IRLS
    cycles at the 37th lambda, where those rows cross the bound, and the path ends there
    (`maxit`), as R's glmnet's does at its default maxit (at the 36th)."""
    x, y = _separated_design()
    lambdas = lambda_path(x, y, n_lambda=60, min_ratio=1e-12)
    path = fit_path(x, y, lambdas, thresh=1e-12)
    rare = path.coefficients[:, -1]
    assert len(path.lambdas) == 60 and path.predict(x)[:, -1].max() > 20.7
    assert np.all(np.diff(rare) >= -1e-6) and 15 < rare[-1] < 40
    strict = fit_path(x, y, lambdas, thresh=1e-14)
    assert (len(strict.lambdas), strict.stopped) == (36, "maxit")


def test_a_saturated_fit_ends_the_path_as_glmnets():
    """Choices that one indicator separates, fitted far below glmnet's default path: once every
    fitted probability is 0 or 1 (glmnet's vmin), the path ends there with the lambdas fitted
    so far, as glmnet's ("solutions for larger values of lambda returned"); the first versions
    stopped with an error."""
    x = np.repeat(np.eye(2), 50, axis=0)
    y = x[:, 0].copy()
    lambdas = lambda_path(x, y, n_lambda=40, min_ratio=1e-14)
    path = fit_path(x, y, lambdas)
    assert path.stopped == "saturated" and 1 < len(path.lambdas) < 40
    assert path.lambdas.tobytes() == lambdas[:len(path.lambdas)].tobytes()
    assert np.abs(path.predict(x)[:, -1]).min() > 20.7  # every probability 0 or 1
    assert path.dev_ratio[-1] == pytest.approx(1, abs=1e-6)
    assert np.all(np.diff(path.dev_ratio) > 0)


def test_cv_glmnet_on_a_separable_design_fits_shorter_paths():
    """No R needed: the separable design's cv.glmnet runs, every path ends early (devmax), a
    fold's predictions at the full path's smaller lambdas are its last solution's."""
    x, y = _separable_design()
    cv = cv_glmnet(x, y, folds=5, seed=3)
    assert cv.path.stopped == "devmax" and len(cv.path.lambdas) < 100
    ids = fold_ids(len(y), 5, 3)
    for k, fold in enumerate(cv.folds):
        assert fold.stopped == "devmax" and fold.dev_ratio[-1] > 0.999
        beyond = cv.path.lambdas < fold.lambdas[-1]
        if beyond.any():
            eta = fold.predict_at(x[ids == k], cv.path.lambdas[beyond])
            assert eta == pytest.approx(np.repeat(fold.predict(x[ids == k])[:, -1:],
                                                  beyond.sum(), axis=1))
    assert np.isfinite(cv.cv_mean).all() and cv.lambda_1se >= cv.lambda_min


def _continuous_design(n: int = 300, p: int = 15, seed: int = 5):
    """Sparse predictors with real values of differing scales (not one-hot), and choices drawn
    from a logistic model of them."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (n, p)) * (rng.random((n, p)) < 0.35) * rng.uniform(0.5, 4, p)
    y = (rng.random(n) < 1 / (1 + np.exp(-(x[:, :5] @ rng.normal(0, 0.8, 5) + 0.4)))).astype(float)
    return x, y


@pytest.mark.slow
def test_elastic_net_on_a_continuous_sparse_design_matches_r_glmnet(r_glmnet, tmp_path):
    """alpha = 0.5 (the ridge part of the update) and unequal column scales and means: the
    centring offset of the residual updates does its work."""
    x, y = _continuous_design()
    lambdas = (0.08, 0.01)
    references = _fits_at(r_glmnet, tmp_path, x, y, lambdas, "alpha = 0.5")
    for lam, reference in zip(lambdas, references, strict=True):
        ours = fit_path(sparse.csc_matrix(x), y, np.array([lam]), alpha=0.5, thresh=1e-14)
        assert ours.intercepts[0] == pytest.approx(reference[0], abs=1e-5)
        assert ours.coefficients[0] == pytest.approx(reference[1:], abs=1e-5)


def test_centring_the_predictors_changes_no_coefficient():
    """The fit centres on the fly; a design centred beforehand (dense, no zeros left) has the
    same coefficients, only the intercept moves by the means."""
    x, y = _continuous_design()
    lambdas = lambda_path(x, y, alpha=0.7, n_lambda=15)
    plain = fit_path(sparse.csr_matrix(x), y, lambdas, alpha=0.7, thresh=1e-14)
    mean = x.mean(axis=0)
    centred = fit_path(x - mean, y, lambdas, alpha=0.7, thresh=1e-14)
    assert centred.coefficients == pytest.approx(plain.coefficients, abs=1e-8)
    assert centred.intercepts == pytest.approx(plain.intercepts + plain.coefficients @ mean,
                                               abs=1e-8)


def test_same_inputs_give_the_same_bytes_whatever_the_matrix_format():
    x, y = _design()
    first = cv_glmnet(x, y, folds=4, seed=2, n_lambda=25)
    again = cv_glmnet(sparse.coo_matrix(x), y.astype(int), folds=4, seed=2, n_lambda=25)
    for a, b in ((first.path.coefficients, again.path.coefficients),
                 (first.path.intercepts, again.path.intercepts), (first.cv_mean, again.cv_mean)):
        assert a.tobytes() == b.tobytes()
    assert (first.lambda_min, first.lambda_1se) == (again.lambda_min, again.lambda_1se)


def test_folds_fitted_in_threads_give_the_same_bytes_as_one_after_the_other():
    x, y = _design()
    alone = cv_glmnet(x, y, folds=5, seed=3, n_lambda=25)
    threaded = cv_glmnet(x, y, folds=5, seed=3, n_lambda=25, jobs=3)
    for a, b in ((alone.path.coefficients, threaded.path.coefficients),
                 (alone.path.intercepts, threaded.path.intercepts),
                 (alone.cv_mean, threaded.cv_mean), (alone.cv_sd, threaded.cv_sd),
                 (alone.cv_accuracy, threaded.cv_accuracy)):
        assert a.tobytes() == b.tobytes()
    assert (alone.lambda_min, alone.lambda_1se) == (threaded.lambda_min, threaded.lambda_1se)


def test_cross_validations_sharing_threads_give_the_same_bytes_as_each_alone():
    """Two cross-validations whose paths are tasks of the same two threads, submitted at once
    (as the Japanese table fits its modes), each give the bytes they give alone."""
    designs = [_design(), _continuous_design(n=90, p=5, seed=4)]
    alone = [cv_glmnet(x, y, folds=4, seed=1, n_lambda=20) for x, y in designs]
    with ThreadPoolExecutor(max_workers=2) as fits, ThreadPoolExecutor(max_workers=2) as both:
        shared = list(both.map(lambda xy: cv_glmnet(*xy, folds=4, seed=1, n_lambda=20,
                                                     pool=fits), designs))
    for one, other in zip(alone, shared, strict=True):
        for a, b in ((one.path.coefficients, other.path.coefficients),
                     (one.cv_mean, other.cv_mean), (one.cv_sd, other.cv_sd),
                     *zip((f.coefficients for f in one.folds),
                          (f.coefficients for f in other.folds), strict=True)):
            assert a.tobytes() == b.tobytes()


def test_the_compiled_path_is_the_python_code_it_was_compiled_from(monkeypatch):
    """numba keeps each jitted function's Python as `.py_func`: the fit with both swapped for
    it (the Python _irls_path then calls the Python _coordinate_descent) gives the compiled
    path. Coverage cannot trace compiled code; this run is what shows the bodies run as read."""
    from spudflow.aggregate import glmnet

    x, y = _continuous_design(n=80, p=6, seed=7)
    lambdas = lambda_path(x, y, alpha=0.6, n_lambda=6)
    compiled = fit_path(x, y, lambdas, alpha=0.6, thresh=1e-12)
    monkeypatch.setattr(glmnet, "_coordinate_descent", glmnet._coordinate_descent.py_func)
    monkeypatch.setattr(glmnet, "_irls_path", glmnet._irls_path.py_func)
    python = fit_path(x, y, lambdas, alpha=0.6, thresh=1e-12)
    assert python.coefficients[-1].any()  # the path reached nonzero coefficients
    assert python.intercepts == pytest.approx(compiled.intercepts, rel=0, abs=1e-12)
    assert python.coefficients == pytest.approx(compiled.coefficients, rel=0, abs=1e-12)
