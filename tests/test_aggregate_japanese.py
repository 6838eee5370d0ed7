"""Japanese transitivity: accuracy, agreement and kappa, elastic-net regression against sklearn;
the thesis's decision rule and modes on items and scores made by the pairs and scoring stages."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from artifact_files import artifact_of_file, rewrite
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import StratifiedKFold, cross_val_score

from spudflow.cli import main
from spudflow.core.contract import read_artifact

from aggregate_inputs import REPO, assert_table_files, japanese_inputs


@pytest.fixture
def japanese(tmp_path, run_cli):
    items, scores = japanese_inputs(tmp_path)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-japanese", "--items", items, "--scores", *scores, "--out-dir",
                           out, "--folds", 5, "--seed", 1, "--top", 4)
    assert code == 0, err
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


def _one_hot(mode):
    """Indicators in sorted order per column (verb_pair, order, adverbial with null as `none`,
    then each argument), constant ones dropped."""
    columns, names = [], []
    for column in ("verb_pair", "order", "adverbial"):
        values = mode[column].fill_null("none").to_list()
        for value in sorted(set(values)):
            if len(set(values)) > 1:
                columns.append([float(v == value) for v in values])
                names.append(f"{column}={value}")
    args = mode["arguments"].to_list()
    for argument in sorted({a for row in args for a in row}):
        column = [float(argument in row) for row in args]
        if 0 < sum(column) < len(column):
            columns.append(column)
            names.append(f"args={argument}")
    # sparse, as saga takes a slightly different path on sparse input (intercept decay)
    return sparse.csr_matrix(np.array(columns).T), names


def test_elastic_net_regression(japanese):
    pairs, out = japanese
    table = assert_table_files(out, "japanese_regression")
    mode = _mode(pairs, "bert", "pppl", "verb")
    features, names = _one_hot(mode)
    target = mode["choice"].cast(pl.Int64).to_numpy()
    model = LogisticRegression(solver="saga", l1_ratio=0.5, C=1.0, max_iter=1000, random_state=1)
    accuracy = cross_val_score(model, features, target, scoring="accuracy",
                               cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=1))
    coefficients = dict(zip(names, model.fit(features, target).coef_[0], strict=True))
    rows = table.filter((pl.col("model") == "bert") & (pl.col("region") == "verb")).sort("rank")
    assert rows["rank"].to_list() == [1, 2, 3, 4]
    assert rows["n_pairs"][0] == 72
    assert rows["cv_accuracy_mean"][0] == pytest.approx(accuracy.mean())
    assert rows["cv_accuracy_sd"][0] == pytest.approx(accuracy.std(ddof=1))
    expected = sorted((n for n in names if coefficients[n] != 0),
                      key=lambda n: -abs(coefficients[n]))[:4]
    assert rows["feature"].to_list() == expected
    assert rows["coefficient"].to_list() == pytest.approx([coefficients[n] for n in expected])
    # the generator makes を-arguments favour the transitive verb
    assert coefficients["args=ドアを"] > 0


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


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """{variant: (items file, {scorer: item_scores file})}: 20 sampled pairs per variant from
    `spudflow pairs japanese-transitivity`, scored by `spudflow score` with a tiny GPT-2 (byte-level
    BPE: verbs of different lengths get different token counts) and a tiny BERT."""
    from scoring_models import tiny_model_dir

    root = tmp_path_factory.mktemp("japanese")
    produced = {}
    for variant in VARIANTS:
        dataset = f"japanese_transitivity_{variant}"
        items = root / "items" / f"{dataset}.parquet"
        assert main(["pairs", "japanese-transitivity", "--lexicon", str(LEXICON), "--variant",
                     variant, "--out", str(items), "--sample", "20", "--seed", "3"]) == 0
        scores = {}
        for name, (kind, tokenizer, methods) in SCORERS.items():
            out = root / "scores" / dataset / name
            assert main(["score", str(items), "--model", str(tiny_model_dir(kind, tokenizer)),
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
                           out, "--folds", 2, *options)
    assert code == 0, err
    return assert_table_files(out, "japanese_accuracy")


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
