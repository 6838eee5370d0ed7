"""Japanese transitivity (seed 002): which verb of a transitive/intransitive pair a model prefers.

A scoring mode is a model, a scoring method and one of the thesis's two spans (§4.5, Table 1):
the whole sentence (region null) or only the verb's tokens (region `verb`); masked models give
masked (`pppl`) and unmasked (`unmasked`) modes through their methods. Other regions of the items
(the `longer` prefix, the relative clause) are no modes and are left out, with a log line.

A mode prefers the transitive verb when the transitive sentence has the lower perplexity
(thesis §4.5: perplexity, normalised by the number of tokens) or, with the `logprob_sum`
decision, the higher summed log probability; ties count as not preferring it and are reported.
Accuracy on obligatory pairs (the transitive verb is the grammatical one) and the
transitive-preference rate on ambiguous pairs; how often two modes choose the same verb
(agreement and sklearn's Cohen's kappa). The regression (§5.7) is in japanese_regression, the
sentence-length check (§3.2, §4.5) in japanese_length. The agreement graph's pruning (§5.6), which
only the figure needs, is in agreement_graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor

import numpy as np
import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.coverage import unseen_fraction
from spudflow.aggregate.glmnet import REFIT_THRESH
from spudflow.aggregate.group_status import unscored_rows
from spudflow.aggregate.inputs import (
    ITEMS_TEXT_HASH,
    scored_items,
    unusable_functions,
    with_text_hash,
)
from spudflow.aggregate.japanese_length import correlation_table, length_perplexity_table
from spudflow.aggregate.japanese_regression import FORMULA as REGRESSION_FORMULA
from spudflow.aggregate.japanese_regression import regression_tables
from spudflow.aggregate.kappa_interval import kappa_as_sklearn, kappa_interval_of_cells
from spudflow.aggregate.outputs import Table
from spudflow.aggregate.uncertainty import Uncertainty, accuracy_stderr, wilson
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.table_artifacts import STATUS_OK, TABLES

log = get_logger(__name__)

MODE = ["model", "method", "region"]
CONTEXT = ["verb_pair", "pair_number", "condition", "order", "args", "adverbial",
           "relative_clause", "relative_position"]
# Decision rule -> the score column compared, higher = preferred. Perplexity exp(-mean_logprob)
# is lower exactly when mean_logprob is higher; comparing mean_logprob avoids exp's overflow.
DECISIONS = {"perplexity": "mean_logprob", "logprob_sum": "logprob_sum"}
DEFAULT_DECISION = "perplexity"
THESIS = "Japanese transitivity thesis"


def check_pairs(items: pl.DataFrame) -> None:
    """Each group: one transitive and one intransitive sentence."""
    counts = items.group_by("source_file", "dataset", "group_id").agg(
        (pl.col("transitivity") == columns.JAPANESE_TRANSITIVE).sum().alias("transitive"),
        pl.len().alias("n"))
    wrong = counts.filter((pl.col("transitive") != 1) | (pl.col("n") != 2))
    if wrong.height:
        row = wrong.sort("group_id").row(0, named=True)
        raise InputError(row["source_file"], None, f"group {row['group_id']!r} is not one "
                         f"transitive and one intransitive sentence ({row['n']} items, "
                         f"{row['transitive']} transitive)")


def mode_label() -> pl.Expr:
    """"model/method", or "model/method@region" for a region's score."""
    region = pl.when(pl.col("region").is_not_null()).then(pl.lit("@") + pl.col("region"))
    return pl.concat_str(pl.col("model"), pl.lit("/"), pl.col("method"),
                         region.otherwise(pl.lit("")))


def is_thesis_mode() -> pl.Expr:
    """A row of the thesis's spans (§4.5): whole sentence and verb-only."""
    return pl.col("region").is_null() | (pl.col("region") == columns.JAPANESE_VERB_REGION)


def thesis_modes(scored: pl.DataFrame) -> pl.DataFrame:
    """The rows of the thesis's spans (§4.5): whole sentence and verb-only. Rows of other regions
    (prefix, relative clause) are left out, and counted in the log."""
    left_out = scored.filter(~is_thesis_mode()).group_by("region").len().sort("region")
    for region, n in left_out.iter_rows():
        log.info("left out %d score rows of region %r: not a mode of the thesis (§4.5)", n, region)
    return scored.filter(is_thesis_mode())


def unusable_modes(scores: pl.DataFrame) -> pl.DataFrame:
    """(dataset, model, method, region, reason, mode) of each mode of the raw `scores` without
    one usable score (every one NaN, e.g. a float16 overflow, or left out by scoring): it has
    no pair, so its japanese_accuracy rows say why and every other table leaves it out."""
    unusable = unusable_functions(scores.filter(is_thesis_mode()), by_region=True)
    return unusable.with_columns(mode_label().alias("mode"))


def accuracy_with_status(accuracy: pl.DataFrame, unusable: pl.DataFrame,
                         decision: str) -> pl.DataFrame:
    """japanese_accuracy's rows, status `ok`, and those of the modes without a usable score
    (`skipped`, the reason; counts 0, fractions null)."""
    schema = TABLES["japanese_accuracy"].polars_schema()
    accuracy = accuracy.with_columns(pl.lit(STATUS_OK).alias("status"),
                                     pl.lit(None, pl.String).alias("reason")).select(
        schema.names()).cast(dict(schema))
    if unusable.is_empty():
        return accuracy
    for dataset, mode, reason in unusable.select("dataset", "mode", "reason").iter_rows():
        log.warning("%s, %s: %s; left out of japanese_agreement, japanese_regression (max, min) "
                    "and japanese_length_*", dataset, mode, reason)
    unscored = unscored_rows("japanese_accuracy", unusable.drop("mode"), decision=decision,
                             n_obligatory=0, n_ties_obligatory=0, n_ambiguous=0, n_ties=0)
    return pl.concat([accuracy, unscored]).sort(["dataset", *MODE], nulls_last=False)


def preferences(scored: pl.DataFrame, decision: str = DEFAULT_DECISION) -> pl.DataFrame:
    """One row per (pair, mode): prefers_transitive, tie, and the pair's context columns, by the
    decision rule (a key of DECISIONS)."""
    score = DECISIONS[decision]
    is_transitive = pl.col("transitivity") == columns.JAPANESE_TRANSITIVE
    transitive = scored.filter(is_transitive).select(
        "dataset", "group_id", *MODE, *CONTEXT, pl.col(score).alias("score_transitive"),
        pl.col("n_unseen").alias("unseen_transitive"), pl.col("n_words").alias("words_transitive"))
    intransitive = scored.filter(~is_transitive).select(
        "dataset", "group_id", *MODE, pl.col(score).alias("score_intransitive"),
        pl.col("n_unseen").alias("unseen_intransitive"),
        pl.col("n_words").alias("words_intransitive"))
    pairs = transitive.join(intransitive, on=["dataset", "group_id", *MODE], how="inner",
                            nulls_equal=True)
    pairs = pairs.filter(pl.col("score_transitive").is_not_null()
                         & pl.col("score_intransitive").is_not_null())
    return pairs.with_columns(
        (pl.col("score_transitive") > pl.col("score_intransitive")).alias("prefers_transitive"),
        (pl.col("score_transitive") == pl.col("score_intransitive")).alias("tie"),
        mode_label().alias("mode"),
        # the pair's words (both sentences) the model never saw in training, of its n_words
        (pl.col("unseen_transitive") + pl.col("unseen_intransitive")).alias("n_unseen"),
        (pl.col("words_transitive") + pl.col("words_intransitive")).alias("n_words"),
    ).drop("unseen_transitive", "unseen_intransitive", "words_transitive", "words_intransitive"
           ).sort(["dataset", *MODE, "group_id"], nulls_last=False)


def accuracy_table(pairs: pl.DataFrame, decision: str = DEFAULT_DECISION,
                   level: float = 0.95) -> pl.DataFrame:
    obligatory = pl.col("condition") == columns.JAPANESE_OBLIGATORY
    ambiguous = pl.col("condition") == columns.JAPANESE_AMBIGUOUS
    prefers = pl.col("prefers_transitive")
    keys = ["dataset", *MODE]
    unseen = pairs.filter(obligatory).group_by(keys).agg(unseen_fraction().alias("unseen_fraction"))
    table = pairs.group_by(keys).agg(
        obligatory.sum().cast(pl.Int64).alias("n_obligatory"),
        prefers.filter(obligatory).mean().alias("accuracy_obligatory"),
        prefers.filter(obligatory).sum().cast(pl.Int64).alias("n_correct"),
        (pl.col("tie") & obligatory).sum().cast(pl.Int64).alias("n_ties_obligatory"),
        ambiguous.sum().cast(pl.Int64).alias("n_ambiguous"),
        prefers.filter(ambiguous).mean().alias("transitive_rate_ambiguous"),
        pl.col("tie").sum().cast(pl.Int64).alias("n_ties"),
        pl.col("tie").filter(obligatory).mean().alias("tie_fraction_obligatory"),
    ).join(unseen, on=keys, how="left", nulls_equal=True).sort(keys, nulls_last=False)
    # over obligatory pairs: Wilson's interval (closed form) and lm-eval's stderr
    correct, n = table["n_correct"].to_numpy(), table["n_obligatory"].to_numpy()
    low, high = wilson(correct, n, level)
    table = table.with_columns(
        pl.Series("accuracy_obligatory_ci_low", low).fill_nan(None),
        pl.Series("accuracy_obligatory_ci_high", high).fill_nan(None),
        pl.Series("accuracy_obligatory_stderr", accuracy_stderr(correct, n)).fill_nan(None),
    ).drop("n_correct")
    return table.insert_column(4, pl.lit(decision).alias("decision"))


def check_agreement_modes(scored: set[str], modes: Sequence[str]) -> None:
    """A mode the agreement analyses name but nothing scored is bad input, not a smaller
    matrix."""
    missing = [m for m in dict.fromkeys(modes) if m not in scored]
    if missing:
        raise InputError("--agreement-mode", None, f"{', '.join(missing)}: no such scoring mode "
                         f"(scored: {', '.join(sorted(scored))})")


NO_INTERVALS = Uncertainty(resamples=0)


def agreement_table(pairs: pl.DataFrame, decision: str = DEFAULT_DECISION,
                    settings: Uncertainty = NO_INTERVALS) -> pl.DataFrame:
    """Every ordered pair of modes (the full matrix, diagonal included), per dataset; kappa's
    bootstrap interval over the pairs both modes scored (uncertainty.kappa_interval), computed
    once per two modes so that (a, b) and (b, a) carry the same one."""
    rows = []
    intervals: dict[tuple[str, str, str], tuple] = {}
    for (dataset,), group in sorted(pairs.partition_by("dataset", as_dict=True).items()):
        modes = group.select("mode", *MODE).unique().sort(MODE, nulls_last=False)["mode"]
        # each mode's choice per pair of the dataset (-1: not scored): a 2 x 2 table of two
        # modes is a count over these rows, not a join of their pairs
        group_ids = group["group_id"].unique()
        row_of = pl.DataFrame({"group_id": group_ids, "row": np.arange(len(group_ids))})
        choices = np.full((len(modes), len(group_ids)), -1, dtype=np.int64)
        position = {m: k for k, m in enumerate(modes)}
        located = group.join(row_of, on="group_id").select(
            pl.col("mode").replace_strict(position, return_dtype=pl.Int64), "row",
            pl.col("prefers_transitive").cast(pl.Int64))
        choices[located["mode"].to_numpy(), located["row"].to_numpy()] = \
            located["prefers_transitive"].to_numpy()
        # every two modes' 2 x 2 table at once: cell 2 a + b of (mode_a, mode_b) counts the
        # pairs where mode_a chose a and mode_b chose b (products of 0/1 indicators, integers
        # exact in float64)
        chose = [(choices == c).astype(np.float64) for c in (0, 1)]
        tables = np.stack([chose[a] @ chose[b].T for a in (0, 1) for b in (0, 1)],
                          axis=-1).astype(np.int64)
        for mode_a, mode_b in itertools.product(modes, repeat=2):
            cells = tables[position[mode_a], position[mode_b]]
            n = int(cells.sum())
            kappa = kappa_as_sklearn(cells)
            first, second = sorted((mode_a, mode_b))
            if (dataset, first, second) not in intervals:
                # the draws depend on the 2 x 2 table alone, oriented as the sorted modes
                oriented = cells if first == mode_a else cells[[0, 2, 1, 3]]
                intervals[dataset, first, second] = (
                    kappa_interval_of_cells(oriented, settings) if kappa is not None
                    else (None, None, None))
            low, high, method = intervals[dataset, first, second]
            rows.append({"dataset": dataset, "mode_a": mode_a, "mode_b": mode_b,
                         "decision": decision, "n_pairs": n,
                         "agreement": float((cells[0] + cells[3]) / n) if n else None,
                         "kappa": kappa, "kappa_ci_low": low, "kappa_ci_high": high,
                         "kappa_interval": method})
    schema = {"dataset": pl.String, "mode_a": pl.String, "mode_b": pl.String,
              "decision": pl.String, "n_pairs": pl.Int64, "agreement": pl.Float64,
              "kappa": pl.Float64, "kappa_ci_low": pl.Float64, "kappa_ci_high": pl.Float64,
              "kappa_interval": pl.String}
    return pl.DataFrame(rows, schema=schema)


def decision_text(decision: str) -> str:
    if decision == "perplexity":
        return ("the transitive sentence has the lower perplexity (normalised by the number of "
                f"tokens; {THESIS}, §4.5)")
    return ("the transitive sentence has the higher summed log probability (not the thesis's "
            "rule, §4.5: it favours the verb with fewer tokens)")


def dataset_items(items: pl.DataFrame, dataset: str) -> pl.DataFrame:
    """The columns of one dataset's items the tables read: the sentence and its words would be
    joined to each of the dataset's score rows."""
    return with_text_hash(items.filter(pl.col("dataset") == dataset)).select(
        "dataset", "item_id", "group_id", "transitivity", *CONTEXT, "source_file",
        ITEMS_TEXT_HASH)


class _FitThreads(ThreadPoolExecutor):
    """The threads of the regressions' fits. Shut down, as the job ends on an error, they
    cancel a mode that would submit more (CancelledError, which group_status.computed passes
    on) rather than make it a `failed` row of its own."""

    def submit(self, fn, /, *args, **kwargs):
        try:
            return super().submit(fn, *args, **kwargs)
        except RuntimeError as error:  # "cannot schedule new futures after shutdown"
            raise CancelledError(str(error)) from None


def japanese_tables(items: pl.DataFrame, scores: Iterable[tuple[str, pl.DataFrame]],
                    folds: int, seed: int, lambda_choice: str, l1_ratio: float, top: int,
                    max_iter: int, n_lambda: int = 100, decision: str = DEFAULT_DECISION,
                    agreement: Sequence[str] = (), jobs: int = 1,
                    level: float = 0.95, settings: Uncertainty | None = None,
                    convergence: str = "tight") -> list[Table]:
    """The tables of `scores`, (dataset, score rows) per dataset and model in sorted order
    (inputs.scores_by_model): every table is computed per dataset and mode, so one model's
    rows of one dataset are held at a time (beside the regressions of the model before it).
    `agreement` lists the modes the agreement table compares (empty: all); `jobs` the threads
    the regressions' fits share; `level` the confidence level of the accuracy's interval;
    `settings` the bootstrap of kappa's (none by default); `convergence` how glmnet solves each
    lambda (spudflow.aggregate.glmnet.fit_path)."""
    settings = settings or NO_INTERVALS
    if decision not in DECISIONS:
        raise InputError("--decision", None, f"{decision!r} is not one of {', '.join(DECISIONS)}")
    check_pairs(items)
    parts: dict[str, list[pl.DataFrame]] = {name: [] for name in (
        "accuracy", "agreement", "fits", "largest", "smallest", "correlation", "length",
        "unusable")}
    scored_modes: set[str] = set()
    # A model's regressions fit (in `jobs` threads, every fold of every mode a task of them)
    # while the next model's scores are read, its other tables made and its regressions
    # started; then the first is waited for, so that while scores are read only one model's
    # regressions are under way, and at most two at any time (each holds its pairs).
    fit_threads = _FitThreads(max_workers=max(1, jobs))
    model_threads = ThreadPoolExecutor(max_workers=2)
    regressions: list[Future] = []
    try:
        for dataset, chunks in itertools.groupby(scores, key=lambda chunk: chunk[0]):
            own_items = dataset_items(items, dataset)
            choices = []
            for _, model_scores in chunks:
                for regression in regressions:  # a model's error ends the job before a read
                    if regression.done():
                        regression.result()
                parts["unusable"].append(unusable_modes(model_scores))
                scored = thesis_modes(scored_items(own_items, model_scores, all_regions=True))
                del model_scores
                pairs = preferences(scored, decision)
                scored_modes.update(pairs["mode"].unique().to_list())
                parts["accuracy"].append(accuracy_table(pairs, decision, level))
                regressions.append(model_threads.submit(
                    regression_tables, pairs, folds, seed, lambda_choice, l1_ratio, top,
                    max_iter, n_lambda, decision, jobs, convergence, fit_threads))
                parts["correlation"].append(correlation_table(scored))
                parts["length"].append(length_perplexity_table(scored))
                del scored
                compared = (pairs.filter(pl.col("mode").is_in(list(agreement))) if agreement
                            else pairs)
                choices.append(compared.select("dataset", "group_id", *MODE, "mode",
                                               "prefers_transitive"))
                if len(regressions) >= 2:
                    regressions[-2].result()
            parts["agreement"].append(agreement_table(pl.concat(choices), decision, settings))
        for regression in regressions:
            fits, largest, smallest = regression.result()
            parts["fits"].append(fits)
            parts["largest"].append(largest)
            parts["smallest"].append(smallest)
    finally:  # on an error, the fits not yet started are not started
        fit_threads.shutdown(wait=False, cancel_futures=True)
        model_threads.shutdown(cancel_futures=True)
        fit_threads.shutdown()
    if not scored_modes and all(u.is_empty() for u in parts["unusable"]):
        raise InputError("--scores", None, "no Japanese pair with both sentences scored")
    unusable = pl.concat(parts["unusable"])
    check_agreement_modes(scored_modes | set(unusable["mode"]), agreement)
    accuracy_keys = ["dataset", *MODE]
    coefficient_keys = [*accuracy_keys, "rank"]
    length_keys = ["dataset", "model", "method"]
    fits = pl.concat(parts["fits"]).sort(accuracy_keys, nulls_last=False)
    largest = pl.concat(parts["largest"]).sort(coefficient_keys, nulls_last=False)
    smallest = pl.concat(parts["smallest"]).sort(coefficient_keys, nulls_last=False)
    modes = (f"Modes ({THESIS}, §4.5 and Table 1): each model and method on the whole sentence "
             "and on the verb only (region `verb`); masked models' `pppl` is the masked, "
             "`unmasked` the unmasked mode.")
    rule = f"A mode prefers the transitive verb when {decision_text(decision)}; ties count as not."
    compared_text = (f"Modes compared: {', '.join(agreement)}." if agreement
                     else "Modes compared: every scored mode.")
    regression = (f"Penalised logistic regression as R's glmnet fits it ({THESIS}, §5.7: "
                  f"cv.glmnet, alpha={l1_ratio:g}) of each mode's preference for the transitive "
                  "verb on R's model.matrix for the thesis's formula (treatment contrasts; "
                  f"{REGRESSION_FORMULA}; a factor with one level left out), "
                  f"standardised; lambda from a {n_lambda}-value path by {folds}-fold "
                  f"cross-validated binomial deviance, at {lambda_choice} (coef()'s default is "
                  "lambda.1se); each lambda solved "
                  + ("as R's glmnet solves it at its default thresh (its default fit)."
                     if convergence == "r_default" else
                     "to glmnet's optimum (convergence tight: glmnet's "
                     f"thresh along the path, the chosen lambda solved again at "
                     f"{REFIT_THRESH:g})."))
    # what the registry's captions show
    captions = dict(level=level, modes=modes, rule=rule, compared=compared_text,
                    regression=regression, top=top, thesis=THESIS)
    return [
        Table("japanese_accuracy", accuracy_with_status(
            pl.concat(parts["accuracy"]).sort(accuracy_keys, nulls_last=False), unusable,
            decision), captions),
        Table("japanese_agreement", pl.concat(parts["agreement"]), captions),
        Table("japanese_regression", fits, captions),
        Table("japanese_regression_max", largest, captions),
        Table("japanese_regression_min", smallest, captions),
        Table("japanese_length_correlation",
              pl.concat(parts["correlation"]).sort(length_keys), captions),
        Table("japanese_length_perplexity",
              pl.concat(parts["length"]).sort(*length_keys, "n_tokens")),
    ]
