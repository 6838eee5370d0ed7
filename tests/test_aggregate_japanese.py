"""Japanese transitivity: accuracy, agreement and kappa; the thesis's decision rule and modes, the
regression as cv.glmnet fits it on the thesis's predictors, the sentence-length
correlation (against formulas by hand) and the agreement graph (against a maximum spanning tree),
on items and scores made by the pairs and scoring stages."""

from __future__ import annotations

import io
import threading
from concurrent.futures import CancelledError, ThreadPoolExecutor

import networkx as nx
import numpy as np
import polars as pl
import pytest
import torch
from artifact_files import artifact_of_file, rewrite
from scipy import sparse, stats
from sklearn.metrics import cohen_kappa_score

from spudflow.aggregate.agreement_graph import agreement_graph
from spudflow.aggregate.glmnet import cv_glmnet, fold_ids, refit
from spudflow.aggregate.japanese_regression import regression_tables, smaller_class
from spudflow.aggregate.kappa_interval import kappa_interval
from spudflow.aggregate.uncertainty import Uncertainty
from spudflow.cli import main
from spudflow.core.artifacts import JAPANESE_NOUNS
from spudflow.core.contract import read_artifact
from spudflow.core.table_artifacts import TABLES

from aggregate_inputs import REPO, assert_table_files, japanese_inputs, run_command


@pytest.fixture(scope="module")
def japanese(tmp_path_factory):
    """The pairs and the folder of their tables, made once for the tests that only read them
    (the table fits cross-validated regressions: seconds)."""
    tmp_path = tmp_path_factory.mktemp("japanese")
    items, scores = japanese_inputs(tmp_path)
    out = tmp_path / "tables"
    assert run_command("table-japanese", "--items", items, "--scores", *scores, "--out-dir",
                       out, "--folds", 5, "--seed", 1, "--top", 4) == 0
    frame = pl.read_parquet(items).join(pl.concat([pl.read_parquet(p) for p in scores]),
                                        on="item_id")
    transitive = frame.filter(pl.col("verb_form") == "transitive")
    intransitive = frame.filter(pl.col("verb_form") == "intransitive").select(
        "group_id", "model", "method", "region", pl.col("logprob_sum").alias("other"))
    pairs = transitive.join(intransitive, on=["group_id", "model", "method", "region"],
                            nulls_equal=True)
    return pairs.with_columns((pl.col("logprob_sum") > pl.col("other")).alias("choice")), out


def _mode(pairs, model, method, region):
    region_filter = pl.col("region").is_null() if region is None else pl.col("region") == region
    return pairs.filter((pl.col("model") == model) & (pl.col("method") == method)
                        & region_filter).sort("group_id")


MODES = (("bert", "pppl", None), ("bert", "pppl", "verb"), ("gpt", "ppl", None))


def test_accuracy_and_transitive_preference(japanese):
    pairs, out = japanese
    table = assert_table_files(out, "japanese_accuracy")
    assert table.select("model", "method", "region").rows() == list(MODES)
    for row in table.iter_rows(named=True):
        mode = _mode(pairs, row["model"], row["method"], row["region"])
        obligatory = mode.filter(pl.col("context_label") == "obligatory")["choice"]
        ambiguous = mode.filter(pl.col("context_label") == "ambiguous")["choice"]
        assert row["n_obligatory"] == obligatory.len() == 48
        assert row["n_ambiguous"] == ambiguous.len() == 24
        assert row["accuracy_obligatory"] == pytest.approx(obligatory.mean())
        assert row["transitive_rate_ambiguous"] == pytest.approx(ambiguous.mean())
        tied = mode.filter((pl.col("context_label") == "obligatory")
                           & (pl.col("logprob_sum") == pl.col("other")))
        assert row["n_ties_obligatory"] == tied.height
    # a whole-sentence row's null region reads `--` in the Markdown table, never `nan`
    markdown = (out / "japanese_accuracy.md").read_text(encoding="utf-8")
    assert "nan" not in markdown
    assert markdown.splitlines()[2].split("|")[4].strip() == "--"


def test_agreement_and_kappa(japanese):
    pairs, out = japanese
    table = assert_table_files(out, "japanese_agreement")
    assert table.height == 9  # three modes, every ordered pair
    a = _mode(pairs, "bert", "pppl", "verb")["choice"].to_numpy()
    b = _mode(pairs, "gpt", "ppl", None)["choice"].to_numpy()
    row = table.filter((pl.col("mode_a") == "bert/pppl@verb")
                       & (pl.col("mode_b") == "gpt/ppl")).row(0, named=True)
    assert row["n_pairs"] == 72
    assert row["agreement"] == pytest.approx(np.mean(a == b))
    assert row["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    diagonal = table.filter(pl.col("mode_a") == pl.col("mode_b"))
    assert diagonal["agreement"].to_list() == [1.0] * 3
    # kappa's interval: the bootstrap over the pairs, the same for (a, b) and (b, a)
    first, second = sorted(["bert/pppl@verb", "gpt/ppl"])
    x, y = (a, b) if first == "bert/pppl@verb" else (b, a)
    assert (row["kappa_ci_low"], row["kappa_ci_high"], row["kappa_interval"]) == kappa_interval(
        x.astype(int), y.astype(int), Uncertainty())
    assert row["kappa_ci_low"] < row["kappa"] < row["kappa_ci_high"]
    mirror = table.filter((pl.col("mode_a") == "gpt/ppl")
                          & (pl.col("mode_b") == "bert/pppl@verb")).row(0, named=True)
    assert (mirror["kappa_ci_low"], mirror["kappa_ci_high"]) == (row["kappa_ci_low"],
                                                                 row["kappa_ci_high"])
    assert diagonal["kappa_ci_low"].to_list() == diagonal["kappa_ci_high"].to_list() == [1.0] * 3


def test_kappa_intervals_rerun_to_the_byte_and_turn_off(japanese, tmp_path, run_cli):
    _, out = japanese
    items, scores = japanese_inputs(tmp_path / "again")
    for name, extra in (("again", []), ("off", ["--resamples", 0])):
        code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores,
                               "--out-dir", tmp_path / name, "--folds", 5, "--seed", 1,
                               "--top", 4, *extra)
        assert code == 0, err
    for suffix in ("parquet", "csv", "md", "tex"):
        name = f"japanese_agreement.{suffix}"
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()
    off = pl.read_parquet(tmp_path / "off" / "japanese_agreement.parquet")
    assert off["kappa_ci_low"].is_null().all() and off["kappa_interval"].is_null().all()
    assert off["kappa"].is_not_null().all()


def test_a_group_with_two_transitive_sentences_is_bad_input(tmp_path, run_cli):
    items, scores = japanese_inputs(tmp_path)
    frame = read_artifact(items, artifact_of_file(items))
    first = frame["group_id"][0]
    rewrite(items, lambda f: f.with_columns(
        pl.when(pl.col("group_id") == first).then(pl.lit("transitive"))
        .otherwise(pl.col("verb_form")).alias("verb_form")))
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores,
                           "--out-dir", out)
    assert code == 2
    assert err.strip() == f"{items}: group {first!r} is not one transitive and one " \
        "intransitive sentence (2 items, 2 transitive)"
    assert not out.exists()


# --- on what the producers write: pairs-stage items, item_scores of tiny models -----------------

LEXICON = REPO / "config" / "lexicons" / "japanese_verb_pairs.tsv"
VARIANTS = ("base", "longer", "relative")
# name -> (kind, tokenizer of tests/scoring_models.py, methods)
SCORERS = {"gpt": ("causal", "bytebpe", "ppl"), "bert": ("masked", "wordpiece", "pppl,unmasked")}


def _tiny_gpt_of_128_positions(directory):
    """The tiny byte-level GPT-2 with 128 positions: a `longer` sentence (the prefix and at
    least one argument) takes 45 to 60 byte-level tokens, beyond the tiny models' 48."""
    from scoring_models import build_model, hf_tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = hf_tokenizer("bytebpe")
    tokenizer.model_max_length = 128
    small = build_model("causal", len(tokenizer), tokenizer.cls_token_id, tokenizer.sep_token_id)
    config = GPT2Config(**{**small.config.to_dict(), "n_positions": 128})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """{variant: (items file, {scorer: item_scores file})}: 20 sampled pairs per variant from
    `spudflow items japanese-transitivity`, scored by `spudflow score` with a tiny GPT-2 (byte-level
    BPE: verbs of different lengths get different token counts) and a tiny BERT."""
    from scoring_models import tiny_model_dir

    root = tmp_path_factory.mktemp("japanese")
    gpt = _tiny_gpt_of_128_positions(root / "gpt")
    produced = {}
    for variant in VARIANTS:
        dataset = f"japanese_transitivity_{variant}"
        items = root / "items" / f"{dataset}.parquet"
        assert main(["items", "japanese-transitivity", "--lexicon", str(LEXICON), "--variant",
                     variant, "--n-verb-pairs", "20", "--out", str(items), "--sample", "20",
                     "--seed", "3"]) == 0
        scores = {}
        for name, (kind, tokenizer, methods) in SCORERS.items():
            out = root / "scores" / dataset / name
            model = gpt if name == "gpt" else tiny_model_dir(kind, tokenizer)
            assert main(["score", str(items), "--model", str(model),
                         "--kind", kind, "--method", methods, "--name", name, "--out", str(out),
                         "--threads", "1"]) == 0
            scores[name] = out / "item_scores.parquet"
        produced[variant] = items, scores
    return produced


def _scored_pairs(items, scores, region=None) -> pl.DataFrame:
    """Transitive row joined with its intransitive row (suffix `_i`), both scored."""
    region_filter = pl.col("region").is_null() if region is None else pl.col("region") == region
    rows = pl.read_parquet(scores).filter(region_filter & pl.col("skipped").is_null()).join(
        pl.read_parquet(items).select("item_id", "group_id", "verb_form", "context_label"),
        on="item_id")
    return rows.filter(pl.col("verb_form") == "transitive").join(
        rows.filter(pl.col("verb_form") == "intransitive"), on=["group_id", "method"],
        suffix="_i")


def _accuracy(run_cli, out, items, scores, *options) -> pl.DataFrame:
    code, _, err = run_cli("table-japanese", "--items", *items, "--scores", *scores, "--out-dir",
                           out, "--folds", 3, *options)
    assert code == 0, err
    return assert_table_files(out, "japanese_accuracy")


@pytest.mark.slow
def test_default_decision_is_perplexity(produced, tmp_path, run_cli):
    """Thesis §4.5: lower perplexity wins, not higher summed log probability (which favours the
    verb with fewer tokens)."""
    items, scores = produced["base"]
    pairs = _scored_pairs(items, scores["gpt"]).filter(pl.col("context_label") == "obligatory")
    by_ppl = pl.col("ppl") < pl.col("ppl_i")
    by_sum = pl.col("logprob_sum") > pl.col("logprob_sum_i")
    disagree = pairs.filter(by_ppl != by_sum)
    assert disagree.height  # the tiny GPT-2 gives pairs on which the two rules disagree
    pair = disagree.row(0, named=True)
    assert pair["n_tokens"] != pair["n_tokens_i"]
    # Only that pair's scores (all its regions), as scoring wrote them.
    one = tmp_path / "scores" / "japanese_transitivity_base" / "gpt" / "item_scores.parquet"
    rewrite(scores["gpt"], lambda f: f.filter(
        pl.col("item_id").is_in([pair["item_id"], pair["item_id_i"]])), one)
    whole = (pl.col("region").is_null()) & (pl.col("method") == "ppl")
    for options, decision, expected in (((), "perplexity", pair["ppl"] < pair["ppl_i"]),
                                        (("--decision", "logprob_sum"), "logprob_sum",
                                         pair["logprob_sum"] > pair["logprob_sum_i"])):
        table = _accuracy(run_cli, tmp_path / decision, [items], [one], *options)
        row = table.filter(whole).row(0, named=True)
        assert (row["n_obligatory"], row["decision"]) == (1, decision)
        assert row["accuracy_obligatory"] == float(expected)
    # Every pair, whole sentence and verb-only: the accuracy of the perplexity rule.
    table = _accuracy(run_cli, tmp_path / "all", [items], [scores["gpt"]])
    for region in (None, "verb"):
        pairs = _scored_pairs(items, scores["gpt"], region)
        obligatory = pairs.filter(pl.col("context_label") == "obligatory")
        row = table.filter(pl.col("region").eq_missing(region)).row(0, named=True)
        assert row["n_obligatory"] == obligatory.height
        assert row["accuracy_obligatory"] == pytest.approx(
            obligatory.select(by_ppl.mean()).item())
        assert row["n_ties"] == pairs.filter(pl.col("ppl") == pl.col("ppl_i")).height


def test_only_the_thesis_modes(produced, tmp_path, run_cli):
    """The `longer` prefix and the relative clause are regions of the items, not modes (§4.5):
    only whole sentence and verb-only rows make modes, for causal and masked models alike."""
    items = [produced[v][0] for v in VARIANTS]
    scores = [path for v in VARIANTS for path in produced[v][1].values()]
    regions = set(pl.concat([pl.read_parquet(p, columns=["region"]) for p in scores])["region"])
    assert regions == {None, "verb", "prefix", "relative_clause"}  # what scoring writes
    out = tmp_path / "tables"
    accuracy = _accuracy(run_cli, out, items, scores)
    modes = {(model, method, region) for model, methods in (("gpt", ["ppl"]),
                                                             ("bert", ["pppl", "unmasked"]))
             for method in methods for region in (None, "verb")}
    for dataset in (f"japanese_transitivity_{v}" for v in VARIANTS):
        found = accuracy.filter(pl.col("dataset") == dataset).select(
            "model", "method", "region").rows()
        assert sorted(found, key=str) == sorted(modes, key=str), dataset
    labels = {f"{m}/{x}" + (f"@{r}" if r else "") for m, x, r in modes}
    agreement = assert_table_files(out, "japanese_agreement")
    assert set(agreement["mode_a"]) == set(agreement["mode_b"]) == labels
    regression = assert_table_files(out, "japanese_regression")
    assert set(regression["region"]) <= {None, "verb"}
    assert regression.height  # some modes were fitted


# --- the regression (thesis §5.7): C by cross-validation, first and second argument apart -------

def _mode_pairs(items, scores, method, region) -> pl.DataFrame:
    """One row per pair of a mode, in group_id order: the transitive item's columns and `choice`
    (the thesis's rule: the lower perplexity, i.e. the higher mean log probability)."""
    region_filter = pl.col("region").is_null() if region is None else pl.col("region") == region
    rows = pl.read_parquet(scores).filter(region_filter & (pl.col("method") == method)).join(
        pl.read_parquet(items), on="item_id")
    transitive = rows.filter(pl.col("verb_form") == "transitive")
    intransitive = rows.filter(pl.col("verb_form") == "intransitive").select(
        "group_id", pl.col("mean_logprob").alias("other"))
    # pairs with a sentence the scorer left out (too long) are no pairs of the mode
    return transitive.join(intransitive, on="group_id").drop_nulls(["mean_logprob", "other"]
                                                                   ).with_columns(
        (pl.col("mean_logprob") > pl.col("other")).alias("choice")).sort("group_id")


def _thesis_design(pairs: pl.DataFrame):
    """R's model.matrix of the thesis's formula by hand from the items: treatment contrasts,
    `none` (no argument: noun 0) the baseline, other levels in code point order (nouns by their
    number in the thesis's list), one-level factors left out; main effects, then the
    noun x marker interactions with the noun varying fastest."""
    letters = {"が": "g", "は": "h", "を": "w", "adv": "a"}
    values = {name: [] for name in ("verb_pair_id", "CO", "adverbial", "arg1_id", "marker1",
                                    "arg2_id", "marker2", "relative_clause",
                                    "relative_position")}
    for row in pairs.iter_rows(named=True):
        values["verb_pair_id"].append(str(row["pair_number"]))
        values["CO"].append("".join(letters[t] for t in row["order"].split("-") if t) + "v")
        values["adverbial"].append(row["adverbial"] or "none")
        for k in (1, 2):
            argument = row["arguments"][k - 1] if k <= len(row["arguments"]) else None
            values[f"arg{k}_id"].append(
                "0" if argument is None else str(JAPANESE_NOUNS.index(argument[:-1]) + 1))
            values[f"marker{k}"].append("none" if argument is None else letters[argument[-1]])
        values["relative_clause"].append(row["relative_clause"] or "none")
        position = row["relative_argument"]
        values["relative_position"].append("none" if position is None else str(position + 1))
    levels = {}
    for name, column in values.items():
        by_number = name in ("verb_pair_id", "arg1_id", "arg2_id")
        rest = sorted(set(column) - {"none", "0"}, key=int if by_number else str)
        found = [v for v in ("none", "0") if v in column] + rest
        if len(found) > 1:
            levels[name] = found
    columns, names = [], []
    for name, found in levels.items():
        for level in found[1:]:
            columns.append([float(v == level) for v in values[name]])
            names.append(f"{name}{level}")
    for first, second in (("arg1_id", "marker1"), ("arg2_id", "marker2")):
        if first in levels and second in levels:
            for b in levels[second][1:]:
                for a in levels[first][1:]:
                    columns.append([float(x == a and y == b)
                                    for x, y in zip(values[first], values[second], strict=True)])
                    names.append(f"{first}{a}:{second}{b}")
    return sparse.csr_matrix(np.array(columns).T), names


@pytest.mark.parametrize(("choice", "convergence"), [
    ("lambda.1se", "tight"), ("lambda.min", "tight"), ("lambda.1se", "r_default")])
def test_regression_is_cv_glmnet_on_the_thesis_predictors(produced, tmp_path, run_cli, choice,
                                                          convergence):
    """The relative set (every predictor varies): cv.glmnet (spudflow.aggregate.glmnet, which
    test_glmnet checks against R's glmnet) on R's design of the thesis's formula by hand gives the
    fit's lambdas, deviance, accuracy, intercept and the largest positive and negative
    coefficients, the intercept ranked among them (coef() lists it; the thesis's Table 6).
    `--convergence r_default` (the Japanese preset's) fits with R glmnet's own solver."""
    items, scores = produced["relative"]
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores.values(),
                           "--out-dir", out, "--folds", 3, "--seed", 1, "--top", 5,
                           "--n-lambda", 20, "--lambda-choice", choice,
                           "--convergence", convergence)
    assert code == 0, err
    caption = (out / "japanese_regression.tex").read_text(encoding="utf-8")
    assert ("glmnet solves it at its default" in caption) == (convergence == "r_default")
    fits = assert_table_files(out, "japanese_regression")
    largest = assert_table_files(out, "japanese_regression_max")
    smallest = assert_table_files(out, "japanese_regression_min")
    # every mode is fitted exactly when both choices occur at least twice in all pairs and in
    # every fold's training pairs, and there are 2 * folds pairs
    modes = [(model, method, region) for model, methods in (("gpt", ["ppl"]),
                                                            ("bert", ["pppl", "unmasked"]))
             for method in methods for region in (None, "verb")]
    fittable = []
    for model, method, region in modes:
        choices = _mode_pairs(items, scores[model], method, region)["choice"].to_numpy()
        ids = fold_ids(len(choices), 3, seed=1)  # glmnet needs 2 of each class in every fit
        minority = min(int(min(t.sum(), len(t) - t.sum()))
                       for t in [choices, *(choices[ids != k] for k in range(3))])
        if minority >= 2 and len(choices) >= 6:
            fittable.append((model, method, region))
    assert sorted(fits.select("model", "method", "region").rows(), key=str) == sorted(
        modes, key=str)
    assert sorted(fits.filter(pl.col("status") == "ok").select(
        "model", "method", "region").rows(), key=str) == sorted(fittable, key=str)
    assert len(fittable) >= 2
    shown = 0
    for fit in fits.filter(pl.col("status") == "ok").iter_rows(named=True):
        pairs = _mode_pairs(items, scores[fit["model"]], fit["method"], fit["region"])
        features, names = _thesis_design(pairs)
        # every relative pair has an argument: no `none` level, so 私 (1) and が the baselines
        assert "relative_position2" in names and "marker1w" in names
        assert any(n.startswith("arg1_id") and ":marker1" in n for n in names)
        target = pairs["choice"].cast(pl.Int64).to_numpy()
        cv = cv_glmnet(features, target, folds=3, seed=1, n_lambda=20, convergence=convergence)
        chosen = cv.index(choice)
        assert (fit["n_pairs"], fit["n_features"]) == (len(target), len(names))
        assert fit["lambda_choice"] == choice
        assert fit["lambda"] == pytest.approx(cv.path.lambdas[chosen])
        assert (fit["lambda_min"], fit["lambda_1se"]) == pytest.approx(
            (cv.lambda_min, cv.lambda_1se))
        assert fit["cv_deviance"] == pytest.approx(cv.cv_mean[chosen])
        assert fit["cv_accuracy_mean"] == pytest.approx(cv.cv_accuracy[:, chosen].mean())
        # a tight fit's coefficients are solved again to the optimum (test_glmnet checks
        # refit against R's glmnet); R's default fit's are the path's, as the thesis printed
        intercept, solved = ((cv.path.intercepts[chosen], cv.path.coefficients[chosen])
                             if convergence == "r_default"
                             else refit(features, target, cv.path, chosen))
        assert fit["intercept"] == pytest.approx(intercept)
        assert (fit["n_lambdas"], fit["path_end"]) == (len(cv.path.lambdas), cv.path.stopped)
        coefficients = {"(Intercept)": intercept, **dict(zip(names, solved, strict=True))}
        mode = ((pl.col("model") == fit["model"]) & (pl.col("method") == fit["method"])
                & pl.col("region").eq_missing(fit["region"]))
        for table, sign in ((largest, 1), (smallest, -1)):
            rows = table.filter(mode).sort("rank")
            ordered = sorted((n for n in coefficients if sign * coefficients[n] > 0),
                             key=lambda n: (-sign * coefficients[n], n))
            expected = ordered[:5]
            if not expected:
                assert rows["feature"].to_list() == [None]
                continue
            shown += 1
            assert rows["rank"].to_list() == list(range(1, len(expected) + 1))
            assert rows["feature"].to_list() == expected
            assert rows["coefficient"].to_list() == pytest.approx(
                [coefficients[n] for n in expected], abs=1e-6)
            # within 1e-4 of the next of its sign (the 6th too): the ranks could swap
            assert rows["tied_with_next"].to_list() == [
                k + 1 < len(ordered)
                and abs(coefficients[n] - coefficients[ordered[k + 1]]) <= 1e-4
                for k, n in enumerate(expected)]
    assert shown  # some fit has coefficients to compare


# --- sentence length against perplexity (thesis §3.2, §4.5) ---------------------------------------

def _forty_pairs(target: np.ndarray) -> pl.DataFrame:
    """One mode's pairs (the relative-clause dataset's columns) choosing `target`."""
    n = len(target)
    nouns = ["猫", "人", "鳥", "私"]
    return pl.DataFrame({
        "dataset": "relative", "model": "gpt", "method": "ppl", "region": None,
        "group_id": [f"g{i:02d}" for i in range(n)],
        "verb_pair": [f"v{i % 4}" for i in range(n)], "pair_number": [i % 4 + 1 for i in range(n)],
        "order": [("adv-が", "が-adv")[i % 2] for i in range(n)],
        "adverbial": [f"a{i % 3}" for i in range(n)], "relative_clause": None,
        "relative_position": None, "args": [f"{nouns[i % 4]}が" for i in range(n)],
        "prefers_transitive": target}, schema_overrides={"region": pl.String,
                                                          "relative_clause": pl.String,
                                                          "relative_position": pl.String})


def test_a_mode_whose_fits_are_cancelled_is_no_failed_row(caplog):
    """Fit threads shut down (the job ending on an error elsewhere) cancel the mode that would
    use them: CancelledError, not a `failed` row and warning of its own."""
    from spudflow.aggregate.japanese import _FitThreads

    target = np.arange(40) % 3 == 0
    fits = _FitThreads(max_workers=1)
    fits.shutdown()
    with caplog.at_level("WARNING"), pytest.raises(CancelledError):
        regression_tables(_forty_pairs(target), 4, 0, "lambda.1se", 1.0, 5, 1000, n_lambda=10,
                          fits=fits)
    assert "failed" not in caplog.text
    with ThreadPoolExecutor(max_workers=1) as open_threads:
        rows, _, _ = regression_tables(_forty_pairs(target), 4, 0, "lambda.1se", 1.0, 5, 1000,
                                       n_lambda=10, fits=open_threads)
    assert rows.select("status", "reason").rows() == [("ok", None)]


def test_a_mode_whose_fold_holds_every_pair_of_one_choice_is_not_fitted(caplog):
    """glmnet refuses a fit with fewer than 2 pairs of a class: when the only two transitive
    choices fall in one fold, that fold's training pairs have none, and the mode's rows are
    `skipped` with the reason and a warning, instead of an error or a fit on one class."""
    n, folds, seed = 40, 10, 0
    ids = fold_ids(n, folds, seed)
    target = np.zeros(n, dtype=bool)
    target[np.flatnonzero(ids == 3)[:2]] = True
    assert smaller_class(target.astype(int), folds, seed) == 0
    pairs = _forty_pairs(target)
    with caplog.at_level("WARNING"):
        fits, largest, smallest = regression_tables(pairs, folds, seed, "lambda.1se", 1.0, 5,
                                                    1000, n_lambda=10)
    reason = ("one choice has 0 of the pairs (all pairs, or a fold's training pairs): glmnet "
              "refuses a fit with fewer than 2 of a class")
    assert fits.select("status", "reason", "n_pairs").rows() == [("skipped", reason, 40)]
    assert fits.select("lambda", "intercept", "n_lambdas").null_count().row(0) == (1, 1, 1)
    for table in (largest, smallest):
        assert table.select("status", "reason", "rank", "feature").rows() == [
            ("skipped", reason, None, None)]
    assert f"gpt/ppl/None: skipped: {reason}" in caplog.text
    target[np.flatnonzero(ids == 5)[:2]] = True  # two more, in another fold: every fit has 2
    fits, _, _ = regression_tables(pairs.with_columns(prefers_transitive=target), folds, seed,
                                   "lambda.1se", 1.0, 5, 1000, n_lambda=10)
    assert fits.select("status", "reason").rows() == [("ok", None)]


def test_sentence_length_against_perplexity(produced, tmp_path, run_cli):
    """Pearson's r and Spearman's rho with their p-values by hand (t-distribution, n - 2 degrees
    of freedom) over every scored whole sentence; the figure's medians and quartiles by numpy."""
    items, scores = produced["base"]
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores.values(),
                           "--out-dir", out, "--folds", 3)
    assert code == 0, err
    table = assert_table_files(out, "japanese_length_correlation")
    lengths = read_artifact(out / "japanese_length_perplexity.parquet",
                            TABLES["japanese_length_perplexity"])
    assert table.select("model", "method").rows() == [
        ("bert", "pppl"), ("bert", "unmasked"), ("gpt", "ppl")]
    for row in table.iter_rows(named=True):
        sentences = pl.read_parquet(scores[row["model"]]).filter(
            pl.col("region").is_null() & (pl.col("method") == row["method"])
            & pl.col("ppl").is_not_null())
        x = sentences["n_tokens"].to_numpy().astype(float)
        y = sentences["ppl"].to_numpy()
        n = len(x)
        assert row["n_sentences"] == n == 40  # 20 pairs, none too long
        assert (row["min_tokens"], row["max_tokens"]) == (x.min(), x.max())
        assert x.min() < x.max()  # the contexts differ in length
        for r, p, (a, b) in ((row["pearson_r"], row["pearson_p"], (x, y)),
                             (row["spearman_rho"], row["spearman_p"],
                              (stats.rankdata(x), stats.rankdata(y)))):
            expected = np.sum((a - a.mean()) * (b - b.mean())) / np.sqrt(
                np.sum((a - a.mean()) ** 2) * np.sum((b - b.mean()) ** 2))
            t = expected * np.sqrt((n - 2) / (1 - expected ** 2))
            assert r == pytest.approx(expected)
            assert p == pytest.approx(2 * stats.t.sf(abs(t), n - 2))
        mode = lengths.filter((pl.col("model") == row["model"])
                              & (pl.col("method") == row["method"]))
        assert mode["n_tokens"].to_list() == sorted(set(x.astype(int)))
        for length in mode.iter_rows(named=True):
            of_length = y[x == length["n_tokens"]]
            assert length["n_sentences"] == len(of_length)
            assert [length["ppl_q1"], length["ppl_median"], length["ppl_q3"]] == pytest.approx(
                list(np.quantile(of_length, [0.25, 0.5, 0.75])))


# --- the agreement graph (thesis §5.6) ------------------------------------------------------------

def _edges(graph) -> dict:
    return {tuple(sorted((a, b))): w for a, b, w in graph.edges(data="weight")}


@pytest.mark.slow
def test_agreement_graph_prunes_as_the_thesis(produced, tmp_path, run_cli):
    """Removing the weakest edges while the graph stays connected keeps every edge at least as
    strong as the weakest edge of a maximum spanning tree, and the graph connected; a threshold
    keeps exactly the edges at or above it. The figure command draws both."""
    items = [produced[v][0] for v in VARIANTS]
    scores = [path for v in VARIANTS for path in produced[v][1].values()]
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", *items, "--scores", *scores, "--out-dir",
                           out, "--folds", 3)
    assert code == 0, err
    agreement = assert_table_files(out, "japanese_agreement")
    panel = agreement.filter(pl.col("dataset") == "japanese_transitivity_base")
    full = nx.Graph()
    full.add_weighted_edges_from(panel.filter(pl.col("mode_a") != pl.col("mode_b")).select(
        "mode_a", "mode_b", "agreement").iter_rows())
    assert full.number_of_nodes() == 6 and nx.is_connected(full)
    bottleneck = min(w for _, _, w in nx.maximum_spanning_tree(full).edges(data="weight"))

    graph, used = agreement_graph(panel)
    kept = _edges(graph)
    assert set(graph.nodes) == set(full.nodes)
    assert nx.is_connected(graph)
    assert used == bottleneck == min(kept.values())
    assert {e for e, w in _edges(full).items() if w > bottleneck} <= set(kept)
    assert len(kept) < full.number_of_edges()  # something was pruned
    weakest = min(kept, key=lambda e: (kept[e], *e))
    graph.remove_edge(*weakest)
    assert not nx.is_connected(graph)  # the next removal would disconnect it

    threshold = sorted(_edges(full).values())[len(_edges(full)) // 2]
    graph, used = agreement_graph(panel, threshold)
    assert used == threshold
    assert _edges(graph) == {e: w for e, w in _edges(full).items() if w >= threshold}

    for options in ((), ("--threshold", threshold)):
        stem = tmp_path / "figures" / f"graph{len(options)}"
        code, _, err = run_cli("figure-japanese-agreement-graph",
                               out / "japanese_agreement.parquet", "--out", stem, *options)
        assert code == 0, err
        svg = stem.with_name(stem.name + ".svg").read_text(encoding="utf-8")
        assert f"≥ {(bottleneck if not options else threshold):.2f}" in svg


def test_an_argument_without_its_particle_is_bad_input(produced, tmp_path, run_cli):
    """The regression's markers come from the arguments' particles: one without is bad input,
    not a noun read as a marker."""
    items, scores = produced["base"]
    changed = tmp_path / "items" / "japanese_transitivity_base.parquet"
    rewrite(items, lambda f: f.with_columns(
        pl.when(pl.col("n_arguments") > 0).then(pl.col("arguments").list.eval(
            pl.element().str.slice(0, pl.element().str.len_chars() - 1)))
        .otherwise(pl.col("arguments")).alias("arguments")), changed)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", changed, "--scores", scores["gpt"],
                           "--out-dir", out, "--folds", 3)
    assert code == 2
    assert err.strip().startswith("--items: argument ")
    assert "is not a noun followed by one of the particles が, は, を" in err
    assert not out.exists()


# --- the modes the agreement analyses compare (thesis §5, App. A.1) -------------------------------

def test_agreement_compares_only_the_configured_modes(japanese, tmp_path, run_cli):
    """--agreement-mode narrows the agreement table (and so the heat map and graph) to the modes
    named; the accuracy table keeps every mode. A mode never scored is bad input."""
    pairs, _ = japanese
    items, scores = japanese_inputs(tmp_path / "again")
    out = tmp_path / "narrow"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores, "--out-dir",
                           out, "--folds", 5, "--seed", 1, "--top", 4,
                           "--agreement-mode", "gpt/ppl", "--agreement-mode", "bert/pppl@verb")
    assert code == 0, err
    agreement = assert_table_files(out, "japanese_agreement")
    assert sorted(agreement.select("mode_a", "mode_b").rows()) == [
        ("bert/pppl@verb", "bert/pppl@verb"), ("bert/pppl@verb", "gpt/ppl"),
        ("gpt/ppl", "bert/pppl@verb"), ("gpt/ppl", "gpt/ppl")]
    a = _mode(pairs, "bert", "pppl", "verb")["choice"].to_numpy()
    b = _mode(pairs, "gpt", "ppl", None)["choice"].to_numpy()
    across = agreement.filter(pl.col("mode_a") != pl.col("mode_b"))
    assert across["agreement"].to_list() == [pytest.approx(np.mean(a == b))] * 2
    assert assert_table_files(out, "japanese_accuracy").height == 3

    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores, "--out-dir",
                           tmp_path / "bad", "--agreement-mode", "mbert/pppl")
    assert code == 2
    assert err.strip() == ("--agreement-mode: mbert/pppl: no such scoring mode (scored: "
                           "bert/pppl, bert/pppl@verb, gpt/ppl)")
    assert not (tmp_path / "bad").exists()


def _panel(weights: dict) -> pl.DataFrame:
    rows = [(a, b, w) for (a, b), w in weights.items()]
    rows += [(b, a, w) for a, b, w in rows]
    return pl.DataFrame(rows, schema=["mode_a", "mode_b", "agreement"], orient="row")


def test_a_poorly_agreeing_mode_left_out_no_longer_sets_the_cut_off():
    """By hand: with mBERT in, pruning must keep its best edge (0.55), so every edge of 0.55 and
    more stays; without it, pruning stops at 0.85 (removing B-C next would cut C off)."""
    weights = {("A", "B"): 0.9, ("B", "C"): 0.85, ("A", "C"): 0.8,
               ("A", "mbert"): 0.5, ("B", "mbert"): 0.52, ("C", "mbert"): 0.55}
    graph, cut = agreement_graph(_panel(weights))
    assert cut == 0.55
    assert _edges(graph) == {("A", "B"): 0.9, ("B", "C"): 0.85, ("A", "C"): 0.8,
                             ("C", "mbert"): 0.55}
    thesis = {pair: w for pair, w in weights.items() if "mbert" not in pair}
    graph, cut = agreement_graph(_panel(thesis))
    assert cut == 0.85
    assert _edges(graph) == {("A", "B"): 0.9, ("B", "C"): 0.85}


def test_a_fit_that_fails_is_its_modes_row_and_every_table_is_written(tmp_path, run_cli,
                                                                      monkeypatch, caplog):
    """One mode's glmnet stopping with an error (here: made to) is that mode's `failed` row,
    with the error as its reason and a warning in the log; the other modes are fitted and
    every table of the job is written (the first versions stopped the job: the default run's
    rare/ja_pud_trigram/kn/verb mode)."""
    from spudflow.aggregate import japanese_regression

    fit = japanese_regression.cv_glmnet
    counting = threading.Lock()  # the modes are fitted at once

    def failing(features, target, *args, **kwargs):
        with counting:
            failing.calls += 1
            first = failing.calls == 1
        if first:
            raise ValueError("glmnet: saturated fit, every fitted probability is 0 or 1")
        return fit(features, target, *args, **kwargs)

    failing.calls = 0
    monkeypatch.setattr(japanese_regression, "cv_glmnet", failing)
    items, scores = japanese_inputs(tmp_path)
    out = tmp_path / "tables"
    with caplog.at_level("WARNING"):
        code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores,
                               "--out-dir", out, "--folds", 5, "--seed", 1, "--top", 4)
    assert code == 0, err
    reason = "ValueError: glmnet: saturated fit, every fitted probability is 0 or 1"
    fits = assert_table_files(out, "japanese_regression")
    assert sorted(fits.select("status", "reason").rows(), key=str) == [
        ("failed", reason), ("ok", None), ("ok", None)]
    assert fits.filter(pl.col("status") == "failed")["lambda"].to_list() == [None]
    assert fits.filter(pl.col("status") == "ok")["lambda"].null_count() == 0
    for name in ("japanese_regression_max", "japanese_regression_min"):
        table = assert_table_files(out, name)
        failed = table.filter(pl.col("status") == "failed")
        assert failed.select("reason", "rank", "coefficient").rows() == [(reason, None, None)]
        assert table.filter(pl.col("status") == "ok")["rank"].drop_nulls().len()
    for name in ("japanese_accuracy", "japanese_agreement", "japanese_length_correlation"):
        assert assert_table_files(out, name).height
    assert f"failed: {reason}" in caplog.text and "Traceback" in caplog.text


def _two_datasets(tmp_path) -> list[str]:
    """--items and --scores of two datasets, each scored by two models (four regressions)."""
    items, scores = [], []
    for seed, dataset in enumerate(("japanese_base", "japanese_rare")):
        items_path, score_paths = japanese_inputs(tmp_path / dataset, seed, dataset)
        items.append(items_path)
        scores += score_paths
    return ["--items", *items, "--scores", *scores, "--folds", 3, "--seed", 1, "--top", 4]


def test_every_models_regressions_share_the_threads_and_give_the_same_bytes(tmp_path):
    """One thread or three, where every path of every mode of the four models is a task of the
    job's threads and a model's fits run while the next model's tables are made: the same
    files, byte for byte."""
    given = _two_datasets(tmp_path)
    written = {}
    for jobs in (1, 3):
        out = tmp_path / f"jobs-{jobs}"
        assert run_command("table-japanese", *given, "--out-dir", out, "--jobs", jobs) == 0
        written[jobs] = {path.name: path.read_bytes() for path in sorted(out.iterdir())
                         if path.is_file()}
    assert len(written[1]) >= 7 * 4 and written[1] == written[3]
    fits = pl.read_parquet(io.BytesIO(written[3]["japanese_regression.parquet"]))
    assert fits.height == 6 and fits["status"].to_list() == ["ok"] * 6


def test_a_models_regressions_run_while_the_next_model_is_read_but_no_further(tmp_path,
                                                                             monkeypatch):
    """While the first model's regressions are under way, the next model's scores are read and
    its regressions start, but no third model is read until the first is done: at most two
    models' regressions (each holding its pairs) at any time."""
    from spudflow.aggregate import japanese

    regressions, preferences = japanese.regression_tables, japanese.preferences
    lock = threading.Lock()
    reads, started, seen = [], [], {}
    second_started, third_read = threading.Event(), threading.Event()

    def read(*args, **kwargs):  # each model's pairs, made just before its regressions start
        with lock:
            reads.append(1)
            if len(reads) == 3:
                third_read.set()
        return preferences(*args, **kwargs)

    def held_first(*args, **kwargs):
        with lock:
            started.append(1)
            first = len(started) == 1
            if len(started) == 2:
                second_started.set()
        if first:  # held until the second has started, and a while for a third read
            second_started.wait(timeout=30)
            third_read.wait(timeout=1)
            with lock:
                seen.update(reads=len(reads), started=len(started))
        return regressions(*args, **kwargs)

    monkeypatch.setattr(japanese, "preferences", read)
    monkeypatch.setattr(japanese, "regression_tables", held_first)
    assert run_command("table-japanese", *_two_datasets(tmp_path), "--out-dir",
                       tmp_path / "out", "--jobs", 2) == 0
    assert seen == {"reads": 2, "started": 2}
    assert len(started) == 4


def test_an_error_in_a_models_regressions_ends_the_job_before_a_third_model(tmp_path, run_cli,
                                                                            monkeypatch):
    """Bad input found by the first model's regressions (in a thread of their own) ends the job
    with its one line before a third model is read, and no table is written."""
    from spudflow.aggregate import japanese
    from spudflow.core.errors import InputError

    regressions, preferences = japanese.regression_tables, japanese.preferences
    reads, calls, lock = [], [], threading.Lock()

    def first_refused(*args, **kwargs):
        with lock:
            calls.append(1)
            first = len(calls) == 1
        if first:
            raise InputError("--lambda-choice", None, "refused here")
        return regressions(*args, **kwargs)

    monkeypatch.setattr(japanese, "preferences",
                        lambda *a, **k: reads.append(1) or preferences(*a, **k))
    monkeypatch.setattr(japanese, "regression_tables", first_refused)
    out = tmp_path / "out"
    code, _, err = run_cli("table-japanese", *_two_datasets(tmp_path), "--out-dir", out,
                           "--jobs", 2)
    assert code == 2 and "--lambda-choice: refused here" in err
    assert len(reads) <= 2
    assert not list(out.glob("*.parquet"))


def test_fewer_than_three_folds_is_bad_input(tmp_path, run_cli, capsys):
    """cv.glmnet refuses fewer than 3 folds ("nfolds must be bigger than 3"): the command
    says so before reading anything, not once per mode."""
    items, scores = japanese_inputs(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        run_cli("table-japanese", "--items", items, "--scores", *scores, "--out-dir",
                tmp_path / "tables", "--folds", 2)
    assert exit_info.value.code == 2
    assert "2 folds: at least 3 are needed" in capsys.readouterr().err
    assert not (tmp_path / "tables").exists()


def test_agreement_counts_each_two_modes_pairs_as_a_join_would():
    """agreement_table counts every 2 x 2 table from one choice matrix: on modes that scored
    different pairs (the table is over the pairs both scored) and a constant mode, its n_pairs,
    agreement and kappa are those of the two modes' joined choices, bit for bit (sklearn's
    kappa on them)."""
    from spudflow.aggregate.japanese import agreement_table

    rng = np.random.default_rng(3)
    frames = []
    for model, keep, constant in (("a", 0.9, False), ("b", 0.7, False), ("c", 1.0, True)):
        ids = [f"g{k}" for k in range(300) if rng.random() < keep]
        choice = np.ones(len(ids), bool) if constant else rng.random(len(ids)) < 0.6
        frames.append(pl.DataFrame({"dataset": "d", "group_id": ids, "model": model,
                                    "method": "ppl", "region": None, "mode": f"{model}/ppl",
                                    "prefers_transitive": choice},
                                   schema_overrides={"region": pl.String}))
    pairs = pl.concat(frames)
    table = agreement_table(pairs)
    assert table.height == 9
    for row in table.iter_rows(named=True):
        both = pairs.filter(pl.col("mode") == row["mode_a"]).join(
            pairs.filter(pl.col("mode") == row["mode_b"]), on="group_id")
        a = both["prefers_transitive"].to_numpy().astype(int)
        b = both["prefers_transitive_right"].to_numpy().astype(int)
        assert row["n_pairs"] == len(a)
        assert row["agreement"] == float(np.mean(a == b))
        undefined = len(set(a.tolist())) < 2 and len(set(b.tolist())) < 2
        assert row["kappa"] == (None if undefined else float(cohen_kappa_score(a, b)))


def test_kappa_of_a_two_by_two_table_is_sklearns_to_the_bit():
    """The agreement table's kappa from a 2 x 2 table's cells equals sklearn's
    cohen_kappa_score of the same choices bit for bit: every table of cells 0..4 (the undefined
    ones, both modes constant, None) and tables of the Japanese preset's counts."""
    from spudflow.aggregate.kappa_interval import kappa_as_sklearn

    choice_a, choice_b = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])  # cell 2 a + b
    rng = np.random.default_rng(0)
    tables = [np.array(c) for c in np.ndindex(5, 5, 5, 5)]
    tables += list(rng.integers(0, 400_000, (200, 4)))
    tables += list(rng.integers(0, 3, (50, 4)) * rng.integers(0, 300_000, (50, 1)))
    defined = 0
    for cells in tables:
        cells = np.asarray(cells, dtype=np.int64)
        a_constant = min(cells[0] + cells[1], cells[2] + cells[3]) == 0
        b_constant = min(cells[0] + cells[2], cells[1] + cells[3]) == 0
        if cells.sum() == 0 or (a_constant and b_constant):
            assert kappa_as_sklearn(cells) is None
            continue
        defined += 1
        expected = float(cohen_kappa_score(choice_a, choice_b, sample_weight=cells))
        assert kappa_as_sklearn(cells) == expected, cells
    assert defined > 800
