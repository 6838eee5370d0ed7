"""The Japanese regression's design (thesis §5.7): R's model.matrix of the thesis's formula with
treatment contrasts, its column names as R prints them, the thesis's 181 coefficients; and one
cross-validated fit on it against R's own model.matrix and cv.glmnet (skipped without R)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.special import expit

from spudflow.aggregate.glmnet import cv_glmnet, fold_ids
from spudflow.aggregate.japanese_regression import FORMULA, design_matrix, factor_values
from spudflow.core.errors import InputError
from spudflow.items.japanese_transitivity import RELATIVE_CLAUSES, enumerate_contexts

VERB_PAIRS = ("開ける/開く", "閉める/閉まる", "始める/始まる", "上げる/上がる")
# Their numbers in a lexicon (the items' pair_number), which the regression names them by.
PAIR_NUMBERS = {"開ける/開く": 12, "閉める/閉まる": 3, "始める/始まる": 100, "上げる/上がる": 27}

# The features of the thesis's Tables 4-7 other than verb pairs (its own list's numbers), as R
# names them: the PDF prints make.names' `.` for `:` and lost the underscores (`COagy` is
# `COagv` misread).
THESIS_FEATURES = (
    "marker1w", "arg1_id1:marker1g", "marker2w", "arg1_id2:marker1g", "COwgav",
    "arg2_id1:marker2g", "arg1_id4:marker1g", "arg2_id2:marker2g",  # Table 4
    "COwav", "COgwav", "COhwav", "arg1_id3:marker1w", "arg1_id2:marker1w",  # Table 6
    "arg1_id10:marker1g", "arg1_id8:marker1g", "COagv", "arg1_id7:marker1g", "COgv",
    "arg1_id11:marker1w",  # Table 5
)


def _frame(contexts, verb_pairs, clauses=None, numbers=None) -> pl.DataFrame:
    """Pairs as table-japanese's regression reads them (the items' context columns); the verb
    pairs numbered as PAIR_NUMBERS says unless `numbers` are given."""
    return pl.DataFrame({
        "verb_pair": verb_pairs,
        "pair_number": numbers or [PAIR_NUMBERS[v] for v in verb_pairs],
        "order": [c.order for c in contexts],
        "adverbial": [c.adverbial for c in contexts],
        "args": [[noun + particle for noun, particle in c.arguments] for c in contexts],
        "relative_clause": [None if clauses is None else RELATIVE_CLAUSES[k]
                            for k, _ in (clauses or [(0, 0)] * len(contexts))],
        "relative_position": [None if clauses is None else position
                              for _, position in (clauses or [(0, 0)] * len(contexts))],
    }, schema_overrides={"relative_clause": pl.String, "relative_position": pl.Int8,
                         "adverbial": pl.String})


def test_every_context_of_50_verb_pairs_gives_the_theses_181_coefficients():
    """§5.7: "there are 181 coefficients to consider": the intercept and 180 columns, 49 verb
    pairs, 34 orders, 3 adverbials and per argument 11 nouns, 3 markers and 33 noun-marker
    interactions; every feature of Tables 4-7 is one of them."""
    contexts = enumerate_contexts()
    numbers = [i % 50 + 1 for i in range(len(contexts))]
    design = design_matrix(_frame(contexts, [f"p{k}" for k in numbers], numbers=numbers))
    assert design.matrix.shape == (7495, 180)
    assert len(set(design.names)) == 180
    prefixes = ("verb_pair_id", "CO", "adverbial", "arg1_id", "marker1", "arg2_id", "marker2")
    counts = {p: sum(n.startswith(p) and ":" not in n for n in design.names) for p in prefixes}
    assert counts == {"verb_pair_id": 49, "CO": 34, "adverbial": 3, "arg1_id": 11,
                      "marker1": 3, "arg2_id": 11, "marker2": 3}
    assert sum(":" in n for n in design.names) == 66
    assert set(THESIS_FEATURES) <= set(design.names)
    # the baselines: no argument, no marker, no adverbial; the first order in code point order
    assert design.levels["arg1_id"][0] == "0" and design.levels["marker1"][0] == "none"
    assert design.levels["CO"][0] == "aghv" and design.levels["adverbial"][0] == "none"
    # verb pairs by number, as the thesis names them (`verb pair id286`), in numeric order
    assert design.names[:3] == ["verb_pair_id2", "verb_pair_id3", "verb_pair_id4"]
    assert design.levels["verb_pair_id"][:11] == [str(k) for k in range(1, 12)]
    # R's column order: main effects in formula order, then the interactions, whose first
    # factor varies fastest
    first = design.names.index("arg1_id1:marker1g")
    assert design.names[first:first + 12] == [f"arg1_id{k}:marker1g" for k in range(1, 12)] + [
        "arg1_id1:marker1h"]
    assert not any(n.startswith("relative") for n in design.names)


def test_a_pairs_columns_are_its_constituents():
    """たぶん看護婦を私が (adverbial, を-argument, が-argument): its nonzero columns by hand."""
    contexts = enumerate_contexts()
    chosen = next(c for c in contexts if c.text == "たぶん看護婦を私が")
    # 閉める/閉まる (number 3) before 開ける/開く (12): 閉める/閉まる is the baseline
    verb_pairs = ["閉める/閉まる"] * 40 + ["開ける/開く"]
    design = design_matrix(_frame([*contexts[:40], chosen], verb_pairs))
    row = design.matrix.tocsr()[40]
    assert sorted(design.names[j] for j in row.indices) == sorted([
        "verb_pair_id12", "COawgv", "adverbialたぶん", "arg1_id4", "marker1w",
        "arg1_id4:marker1w", "arg2_id1", "marker2g", "arg2_id1:marker2g"])
    assert set(row.data) == {1.0}


def test_verb_pairs_are_numbered_and_the_lowest_number_is_the_baseline():
    """The thesis names a pair by its number in its lexicon's list (`verb pair id286`); R's
    factor() of numbers orders them by value, so the lowest number is the baseline, whatever
    the pairs' text (開ける/開く would sort first by code point, "100" before "27" as text)."""
    contexts = enumerate_contexts()[:40]
    verb_pairs = [("始める/始まる", "上げる/上がる", "閉める/閉まる", "開ける/開く")[i % 4]
                  for i in range(40)]
    design = design_matrix(_frame(contexts, verb_pairs))
    assert design.levels["verb_pair_id"] == ["3", "12", "27", "100"]
    assert [n for n in design.names if n.startswith("verb_pair")] == [
        "verb_pair_id12", "verb_pair_id27", "verb_pair_id100"]
    first = design.matrix.tocsr()[0]  # 始める/始まる, number 100
    assert "verb_pair_id100" in [design.names[j] for j in first.indices]


def test_a_noun_outside_the_theses_list_is_bad_input():
    contexts = [c for c in enumerate_contexts() if len(c.arguments) == 1][:5]
    frame = _frame(contexts, ["開ける/開く"] * 5).with_columns(
        pl.col("args").list.eval(pl.element().str.replace("^.+(.)$", "犬$1")))
    with pytest.raises(InputError, match="noun '犬' is not one of the thesis's nouns"):
        design_matrix(frame)


def _sample(n: int, seed: int, relative: bool) -> tuple[pl.DataFrame, np.ndarray]:
    """n contexts (with an argument and a clause before one of them when `relative`), 4 verb
    pairs, choices drawn from a logistic model of を, two arguments, a pronoun with が, the verb
    pair and the clause."""
    rng = np.random.default_rng(seed)
    pool = [c for c in enumerate_contexts() if c.arguments or not relative]
    contexts = [pool[i] for i in rng.choice(len(pool), n, replace=False)]
    verbs = rng.integers(0, len(VERB_PAIRS), n)
    clauses = [(int(rng.integers(3)), int(rng.integers(len(c.arguments)))) for c in contexts] \
        if relative else None
    frame = _frame(contexts, [VERB_PAIRS[v] for v in verbs], clauses)
    eta = np.array([1.6 * any(p == "を" for _, p in c.arguments) + 0.8 * (len(c.arguments) == 2)
                    + 0.9 * any(w in ("私", "彼") and p == "が" for w, p in c.arguments)
                    for c in contexts]) + np.array([0.0, -1.2, 0.5, 0.3])[verbs] - 1.0
    if relative:
        eta += np.array([0.0, -0.6, 0.2])[[k for k, _ in clauses]]
    return frame, (rng.random(n) < expit(eta)).astype(float)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "relative"), [(400, False), (400, True), (60, False)],
                         ids=["base", "relative", "small"])
def test_the_design_and_its_fit_are_r_model_matrix_and_cv_glmnet(r_glmnet, tmp_path, n,
                                                                  relative):
    """R's own model.matrix of the thesis's formula, the factors given our levels (baseline
    first): the same column names in the same order and the same columns. cv.glmnet on it,
    with the same fold ids and lambdas: the same lambda.1se and coefficients there, so the
    same largest positive and negative ones. The small sample's design has copies of earlier
    columns (a noun seen with one marker) and empty interaction columns, as R's has."""
    frame, y = _sample(n, seed=11, relative=relative)
    design = design_matrix(frame)
    dense = design.matrix.toarray()
    if n == 60:
        assert (dense.sum(axis=0) == 0).any()
        assert len({dense[:, j].tobytes() for j in range(dense.shape[1])}) < dense.shape[1]
    values = factor_values(frame)
    pl.DataFrame({name: values[name] for name in design.levels}).write_csv(tmp_path / "f.csv")
    np.savetxt(tmp_path / "y.csv", y, fmt="%d")
    np.savetxt(tmp_path / "folds.csv", fold_ids(len(y), 10, seed=2) + 1, fmt="%d")
    cv = cv_glmnet(design.matrix, y, folds=10, seed=2, thresh=1e-12)
    np.savetxt(tmp_path / "lambda.csv", cv.path.lambdas, fmt="%.17g")
    factors = "; ".join(
        f"d${name} <- factor(d${name}, levels = c({', '.join(repr(v) for v in levels)}))"
        for name, levels in design.levels.items())
    terms = [t for t in FORMULA.removeprefix("~ ").split(" + ")
             if all(f in design.levels for f in t.split(" * "))]
    program = (
        f'setwd("{tmp_path}"); '
        'd <- read.csv("f.csv", colClasses = "character", encoding = "UTF-8"); '
        f'{factors}; x <- model.matrix(~ {" + ".join(terms)}, d)[, -1]; '
        'y <- scan("y.csv", quiet = TRUE); foldid <- scan("folds.csv", quiet = TRUE); '
        'lambda <- scan("lambda.csv", quiet = TRUE); '
        'cv <- cv.glmnet(x, y, family = "binomial", foldid = foldid, lambda = lambda, '
        'thresh = 1e-12); '
        'write.csv(x, "x.csv", row.names = FALSE, fileEncoding = "UTF-8"); '
        'cat(sprintf("%.17g", c(cv$lambda.1se, as.numeric(coef(cv, s = "lambda.1se")))), '
        'sep = "\\n")')
    output = r_glmnet.run(program)  # LC_ALL=C.UTF-8 (conftest)
    r_x = pl.read_csv(tmp_path / "x.csv")
    assert r_x.columns == design.names
    assert np.array_equal(r_x.to_numpy(), dense)
    assert any(n.startswith("marker") for n in design.names)
    if relative:
        assert "relative_position2" in design.names
    reference = np.array([float(v) for v in output.split()])
    chosen = cv.index("lambda.1se")
    assert cv.lambda_1se == pytest.approx(reference[0], rel=1e-9)
    ours = np.concatenate([[cv.path.intercepts[chosen]], cv.path.coefficients[chosen]])
    assert ours == pytest.approx(reference[1:], abs=1e-5)
    names = np.array(["(Intercept)", *design.names])
    for sign in (1, -1):
        assert list(names[np.argsort(-sign * ours)[:5]]) == list(
            names[np.argsort(-sign * reference[1:])[:5]])
