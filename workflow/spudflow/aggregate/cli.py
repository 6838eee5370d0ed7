"""Commands of the aggregation stage: result tables (table-*) and figures (figure-*)."""

from __future__ import annotations

import argparse
from pathlib import Path

from spudflow.aggregate.derived_once import in_command_scope
from spudflow.core.option_types import finite_float, seed
from spudflow.core.output_paths import output_dir, output_file, output_stem

TABLE_FILES = "DIR/NAME.parquet, .csv, .md and .tex (LaTeX booktabs)"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "table-treebank-stats", help="collect per-split statistics into one table",
        description="Concatenate the one-row statistics files of `spudflow stats` into one "
        f"table, sorted by treebank and split. {writes('table-treebank-stats')}")
    p.add_argument("inputs", nargs="+", type=Path, help="statistics .parquet files")
    out_options(p)
    p.set_defaults(handler=run_treebank_stats)

    p = subparsers.add_parser(
        "table-collect", help="concatenate per-treebank tables (e.g. nonce replacement ratios)",
        description="Concatenate Parquet tables with a treebank column row-wise (other "
        "columns missing from a file are null there), sort by treebank, split, language, "
        "method and seed where present, and write them as the table of the registry whose "
        "artifact they are: DIR/nonce_replacements.* from nonce_stats files, "
        "DIR/treebank_stats.* from treebank_stats files (.parquet, .csv, .md, .tex and the "
        "report caption .caption.rst).")
    p.add_argument("inputs", nargs="+", type=Path, help=".parquet files")
    out_options(p)
    p.add_argument("--caption", default=None,
                   help="LaTeX caption (default: the table's caption in the registry)")
    p.set_defaults(handler=run_collect)

    p = _scored_table(subparsers, "table-spud-scores", run_spud_scores,
                      "SPUD nonce/original perplexity ratios (paper §4, Tables 10-13)",
                      "Per pair of an original and a nonce sentence and per scoring function, "
                      "r = ppl(nonce) / ppl(orig), per nonce seed and over the seeds with one "
                      "ratio per original sentence. Writes spud_ratio_summary (quartiles, mean, "
                      "fraction r > 1), spud_wilcoxon (signed-rank tests between scoring functions "
                      "on the same pairs), each also without ratios above --outlier-threshold "
                      "(§4.4), spud_extremes (highest and lowest ratios), spud_outliers (r_PPL "
                      "above / below two thresholds, Tables 12-13), spud_ratios (every pair).")
    p.add_argument("--extremes", type=int, default=5,
                   help="highest and lowest pairs listed per scoring function (default 5)")
    p.add_argument("--outlier-threshold", type=_positive, default=250.0,
                   help="summary and tests again without ratios above this (default 250, §4.4)")
    p.add_argument("--outliers-above", type=_positive, default=500.0,
                   help="spud_outliers lists pairs with r_PPL above this (default 500, Table 12)")
    p.add_argument("--outliers-below", type=_positive, default=0.5,
                   help="... and below this (default 0.5, Table 13)")
    _uncertainty_options(p, bootstrap=True)

    p = _scored_table(subparsers, "table-german-case", run_german_case,
                      "German case violations: ROC AUC per template, violation type, animacy, "
                      "order",
                      "ROC AUC of sentence log-probability, grammatical sentences against case "
                      "violations, per template; mean and sd over templates per scoring "
                      "function, and all templates in one ROC; by violation type (also "
                      "restricted to the original case assignment); the reference's 1-vs-6 AUC "
                      "(each grammatical sentence against its six one-case violations in the same "
                      "NP order) by case order, first case and the animacy of the NP in each "
                      "case; other comparisons by case order and position of the violation; "
                      "mean log-probability per case order; german_case_roc: the ROC curve "
                      "points.")
    _uncertainty_options(p, bootstrap=True)
    p.add_argument("--animacy", choices=("positions", "flags"), default="positions",
                   help="which NP is animate: positions, np1 and np2 (np3 inanimate), as the "
                   "reference defines its templates (default); flags, the templates' `animate` "
                   "flags (the items' animacy column)")

    p = _scored_table(subparsers, "table-cola", run_cola,
                      "CoLA: cross-validated thresholds on normalised scores (Tables 4, 5)",
                      "For LogProb, MeanLP, NormLP, SLOR and Word-LP Min-1, a threshold fitted on "
                      "the training folds of a seeded K-fold cross-validation per split "
                      "(phenomenon sets each on their own); accuracy and Matthews correlation of "
                      "the held-out predictions per CoLA split (cola_thresholds, Table 4), per "
                      "phenomenon set (cola_phenomena, Table 5) and per source of each split "
                      "(cola_sources, section 7).")
    _cv_options(p)
    p.add_argument("--criterion", choices=("accuracy", "mcc"), default="mcc",
                   help="what the threshold maximises on the training folds (default mcc, "
                   "the paper's)")
    _uncertainty_options(p, bootstrap=True)

    p = _scored_table(subparsers, "table-blimp", run_blimp, "BLiMP accuracy per paradigm and field",
                  "A pair is correct when log P(good) > log P(bad); ties count as wrong and are "
                  "reported.")
    _uncertainty_options(p, bootstrap=True)

    p = _scored_table(subparsers, "table-japanese-transitivity", run_japanese,
                      "Japanese transitivity: accuracy, agreement, elastic-net regression, "
                      "sentence length",
                      "Per dataset and scoring mode (model, method, and the whole sentence or the "
                      "verb: the thesis's modes, §4.5): accuracy on "
                      "obligatory pairs, transitive-preference rate on ambiguous pairs, agreement "
                      "between modes, an elastic-net logistic regression of each mode's "
                      "choices on the context with C chosen by cross-validation (§5.7), and the "
                      "correlation of sentence length and perplexity (§3.2).",
                      aliases=["table-japanese"])
    _uncertainty_options(p, bootstrap=True)
    _cv_options(p, minimum=3)  # cv.glmnet: "nfolds must be bigger than 3"
    p.add_argument("--lambda-choice", choices=("lambda.1se", "lambda.min"),
                   default="lambda.1se", help="the cross-validated penalty whose coefficients "
                   "are reported (default lambda.1se, glmnet coef()'s default)")
    p.add_argument("--n-lambda", type=int, default=100,
                   help="lambdas on glmnet's path (default 100)")
    p.add_argument("--l1-ratio", type=finite_float, default=1.0,
                   help="glmnet's alpha, the L1 fraction of the elastic-net penalty, between 0 and "
                   "1 (default 1, glmnet's)")
    p.add_argument("--top", type=int, default=10,
                   help="largest positive and largest negative coefficients listed per mode "
                   "(default 10 each)")
    p.add_argument("--max-iter", type=int, default=1000,
                   help="IRLS and coordinate-descent iterations per lambda (default 1000; "
                   "--convergence tight only)")
    p.add_argument("--convergence", choices=("tight", "r_default"), default="tight",
                   help="how each lambda is solved: tight (default), the path at glmnet's "
                   "thresh and the chosen lambda again to the optimum; r_default, R glmnet's own "
                   "solver at its default thresh, whose coefficients are those R's default fit "
                   "prints (the thesis's)")
    p.add_argument("--jobs", type=int, default=1,
                   help="threads of each regression's cross-validation: its folds' fits run side "
                   "by side, with the same results (default 1)")
    p.add_argument("--decision", choices=("perplexity", "logprob_sum"), default="perplexity",
                   help="which verb a mode prefers: the sentence with the lower perplexity (the "
                   "thesis's rule, §4.5; default) or the higher summed log probability")
    p.add_argument("--agreement-mode", action="append", default=[], metavar="MODE",
                   help="a mode (model/method, or model/method@verb) the agreement table, and so "
                   "the heat map and the graph, compare (repeatable; default: every mode). The "
                   "thesis compares 15 (App. A.1): no mBERT (§5) and no verb-only XLM-R or GPT")

    p = subparsers.add_parser(
        "table-probe", help="DepProbe metrics: mean ± sd over seeds, Δ on nonce sets",
        description="Collect probe metrics files: RelAcc, UAS, LAS and root accuracy per "
        "treebank, model, baseline and layers on the original test set and each nonce method "
        "(Δ = original − nonce); probe_languages: the cross-language table, orig and nonce side "
        f"by side. {writes('table-probe')}")
    p.add_argument("metrics", nargs="+", type=Path, help="metrics.parquet files")
    p.add_argument("--layer-choice", nargs="+", type=Path, default=[],
                   help="`probe select-layers` files: their layers are marked in probe_layers")
    p.add_argument("--predictions", nargs="+", type=Path, default=[],
                   help="the runs' predictions.parquet files (each next to its run's "
                   "metrics.parquet): the words of probe_examples' sentences (without them, "
                   "null)")
    p.add_argument("--out-dir", type=output_dir, required=True, help="directory for the tables")
    _uncertainty_options(p, bootstrap=True)
    _examples_options(p)
    p.set_defaults(handler=run_probe, table_command="table-probe")

    p = subparsers.add_parser(
        "table-probe-edges", help="DepProbe by edge direction (App. F.7, Tables 21-22)",
        description="Score each probe run's predicted trees (predictions.parquet, next to its "
        "metrics.parquet; those of its predictions/{eval set}.conllu) against the gold "
        "treebank of the eval set, per edge direction: left "
        "(the gold head precedes the word), right (it follows) or root. Fraction of edges, "
        "RelAcc, UAS and LAS per direction, mean ± sd over seeds, Δ = original − nonce per "
        "run; the directions together must reproduce each metrics row. "
        f"{writes('table-probe-edges')}")
    p.add_argument("metrics", nargs="+", type=Path, help="metrics.parquet files")
    p.add_argument("--gold", nargs=3, action="append", default=[],
                   metavar=("TREEBANK", "EVAL_SET", "DIR"),
                   help="the gold treebank directory of an eval set (`orig` or METHOD/seedN) of "
                   "a test treebank (the metrics' treebank column)")
    p.add_argument("--no-punct", action="store_true",
                   help="leave out PUNCT words, as the runs' metrics did (`probe train`)")
    p.add_argument("--subtypes", action="store_true",
                   help="labels keep subtypes, as in the runs (`probe train`)")
    p.add_argument("--out-dir", type=output_dir, required=True, help="directory for the table")
    p.set_defaults(handler=run_probe_edges)

    from spudflow.core.outputs_registry import FIGURE_OUTPUTS

    for figure in FIGURE_OUTPUTS.values():
        p = subparsers.add_parser(
            figure.command, help=figure.what, description=f"{figure.what}, from the "
            f"{figure.table} table, as STEM.png and STEM.svg (deterministic SVG).")
        p.add_argument("table", type=Path, help=f"{figure.table}.parquet")
        p.add_argument("--out", type=output_stem, required=True,
                       help="output path without extension")
        p.set_defaults(handler=run_figure, figure=figure.function, artifact=figure.artifact,
                       figure_options=())
        if figure.function == "japanese_agreement_graph":
            p.add_argument("--threshold", type=_fraction, default=None,
                           help="drop edges whose agreement is below this fraction (0-1); default: "
                           "the thesis's rule (§5.6), the weakest edges removed while the graph "
                           "stays connected")
            p.set_defaults(figure_options=("threshold",))

    _register_front_page(subparsers)


def _register_front_page(subparsers) -> None:
    p = subparsers.add_parser(
        "front-page", help="the report's front page: one headline table per paper",
        description="Write an HTML page with one headline table per paper, cut from the run's "
        "full tables (same numbers), linking to each full table (CSV, Markdown), its figures and "
        "the Snakemake report (report.html beside the page).")
    from spudflow.aggregate.front_page import SECTIONS, page_tables

    tables = sorted(page_tables())
    figures = sorted(f for s in SECTIONS for f in s.figures)
    p.add_argument("--table", action="append", default=[], type=_named_path(tables),
                   metavar="NAME=PATH", help="a full table (.parquet; its .csv and .md beside "
                   f"it), repeatable; NAME one of {', '.join(tables)}")
    p.add_argument("--figure", action="append", default=[], type=_named_path(figures),
                   metavar="NAME=PATH", help=f"a figure (.svg), repeatable; NAME one of "
                   f"{', '.join(figures)}")
    p.add_argument("--out", type=output_file, required=True, help="the page (.html)")
    p.set_defaults(handler=run_front_page)


def _named_path(names: list[str]):
    """argparse type of NAME=PATH with NAME one of `names`."""
    def parse(text: str) -> tuple[str, Path]:
        name, sep, path = text.partition("=")
        if not sep or not path:
            raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=PATH")
        if name not in names:
            raise argparse.ArgumentTypeError(f"{name!r}: the front page has no section for it")
        return name, Path(path)
    return parse


def out_options(p: argparse.ArgumentParser) -> None:
    """--out-dir DIR, as every table command takes it; --out STEM, the old spelling of a
    one-table command, still read (a deprecation line in the log)."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out-dir", type=output_dir, help="directory for the table")
    where.add_argument("--out", type=output_stem, help="deprecated: the output path without "
                       "extension; use --out-dir")


def writes(command: str) -> str:
    """What a table command writes, from the registry (core/outputs_registry.py)."""
    from spudflow.core.outputs_registry import TABLE, command_tables

    tables = [o.name for o in command_tables(command) if o.output_type == TABLE]
    data = [o.name for o in command_tables(command) if o.output_type != TABLE]
    text = f"Writes {_listed(tables)} as {TABLE_FILES}, each with its report caption "
    text += "DIR/NAME.caption.rst"
    return text + (f", and {_listed(data)} as .parquet and .csv." if data else ".")


def _listed(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _scored_table(subparsers, name: str, handler, help_text: str, description: str,
                  aliases=()):
    """A dataset family's table command (`aliases`: its old names, still read)."""
    p = subparsers.add_parser(name, help=help_text, aliases=list(aliases), description=(
        f"{description} {writes(name)} Scores of whole sentences are used (region rows only by "
        "table-japanese-transitivity)."))
    p.add_argument("--items", nargs="+", type=Path, required=True,
                   help="items files (results/items/{dataset}.parquet)")
    p.add_argument("--scores", nargs="+", type=Path, required=True,
                   help="score files (results/scores/{dataset}/{model}/item_scores.parquet; the "
                   "dataset comes from a `dataset` column or else from the path)")
    p.add_argument("--out-dir", type=output_dir, required=True, help="directory for the tables")
    _examples_options(p)
    p.set_defaults(handler=handler, table_command=name)
    return p


def _examples_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--examples", type=_at_least_one, default=5, metavar="K",
                   help="the K items listed per scoring function in the examples table, those "
                   "it gets most confidently wrong (default 5)")
    p.add_argument("--examples-seed", type=seed, default=0,
                   help="seed of the hash that orders equally wrong examples (default 0)")


# Options a registered table's function may name (examples, its tie seed; CoLA's folds, seed and
# criterion; the Japanese decision rule): passed by name, so no Namespace leaves this module.
REGISTERED_OPTIONS = ("examples", "examples_seed", "folds", "seed", "criterion", "decision")


def _registered_options(args: argparse.Namespace) -> dict:
    return {name: getattr(args, name) for name in REGISTERED_OPTIONS if hasattr(args, name)}


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: at least 1")
    return value


def _cv_options(p: argparse.ArgumentParser, minimum: int = 2) -> None:
    p.add_argument("--folds", type=_folds(minimum), default=10,
                   help=f"cross-validation folds, at least {minimum} (default 10)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the fold split (default 0)")


def _uncertainty_options(p: argparse.ArgumentParser, bootstrap: bool) -> None:
    """aggregate.uncertainty: the level of every interval; a bootstrap's resamples and seed."""
    from spudflow.aggregate.uncertainty import MAX_RESAMPLES, MIN_RESAMPLES

    p.add_argument("--interval-level", type=_open_fraction, default=0.95,
                   help="confidence level of the intervals, between 0 and 1 (default 0.95)")
    if bootstrap:
        def resamples(text: str) -> int:
            value = int(text)
            if value != 0 and not MIN_RESAMPLES <= value <= MAX_RESAMPLES:
                raise argparse.ArgumentTypeError(
                    f"{value}: 0 (no bootstrap) or {MIN_RESAMPLES} to {MAX_RESAMPLES}")
            return value
        p.add_argument("--resamples", type=resamples, default=10_000,
                       help="bootstrap resamples; 0: no bootstrap interval (default 10000)")
        p.add_argument("--interval-seed", type=seed, default=0,
                       help="seed of the bootstrap resampling (default 0)")


def _open_fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return value


def _folds(minimum: int):
    """argparse type of a number of folds, at least `minimum`."""
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} folds: at least {minimum} are needed")
        return value
    parse.__name__ = "folds"  # argparse names it in "invalid folds value"
    return parse


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: a ratio threshold must be a number > 0")
    return value


def run_treebank_stats(args: argparse.Namespace) -> None:
    import polars as pl

    from spudflow.aggregate.outputs import Table, table_stem, write_registry_table
    from spudflow.core.artifacts import TREEBANK_STATS
    from spudflow.core.contract import read_artifact
    from spudflow.core.distinct_inputs import one_source_per

    table = pl.concat([read_artifact(p, TREEBANK_STATS).with_columns(
        pl.lit(str(p)).alias("source_file")) for p in args.inputs])
    one_source_per(table, ["treebank", "split"], "statistics of")
    table = table.drop("source_file").sort(["treebank", "split"])
    write_registry_table(Table("treebank_stats", table),
                         table_stem(args.out_dir, args.out, "treebank_stats"))


def run_collect(args: argparse.Namespace) -> None:
    from spudflow.aggregate.collect import collect, collected_table
    from spudflow.aggregate.outputs import Table, table_stem, write_registry_table

    table, artifact = collect(args.inputs)
    name = collected_table(artifact)
    write_registry_table(Table(name, table, caption=args.caption),
                         table_stem(args.out_dir, args.out, name))


@in_command_scope
def run_spud_scores(args: argparse.Namespace) -> None:
    from spudflow.aggregate import columns
    from spudflow.aggregate.inputs import read_items, read_scores
    from spudflow.aggregate.outputs import with_registered, write_tables
    from spudflow.aggregate.spud_scores import spud_tables
    from spudflow.aggregate.uncertainty import Uncertainty
    from spudflow.core import artifacts

    items = read_items(args.items, artifacts.ITEMS_SPUD, columns.SPUD_ITEMS)
    settings = Uncertainty(args.interval_level, args.resamples, args.interval_seed)
    scores = read_scores(args.scores)
    tables = spud_tables(items, scores, args.extremes, args.outlier_threshold,
                         args.outliers_above, args.outliers_below, settings)
    tables = with_registered(args.table_command, tables, **_registered_options(args),
                             items=items, scores=scores, settings=settings)
    write_tables(tables, args.out_dir)


@in_command_scope
def run_german_case(args: argparse.Namespace) -> None:
    from spudflow.aggregate import columns
    from spudflow.aggregate.german_case import german_case_tables
    from spudflow.aggregate.inputs import read_items, read_scores
    from spudflow.aggregate.outputs import with_registered, write_tables
    from spudflow.aggregate.uncertainty import Uncertainty
    from spudflow.core import artifacts

    items = read_items(args.items, artifacts.ITEMS_GERMAN_CASE, columns.GERMAN_CASE_ITEMS)
    settings = Uncertainty(args.interval_level, args.resamples, args.interval_seed)
    scores = read_scores(args.scores)
    tables = german_case_tables(items, scores, args.animacy, settings)
    tables = with_registered(args.table_command, tables, **_registered_options(args),
                             items=items, scores=scores, settings=settings)
    write_tables(tables, args.out_dir)


@in_command_scope
def run_cola(args: argparse.Namespace) -> None:
    from spudflow.aggregate import columns
    from spudflow.aggregate.cola import cola_tables
    from spudflow.aggregate.inputs import read_items, read_scores
    from spudflow.aggregate.outputs import with_registered, write_tables
    from spudflow.aggregate.uncertainty import Uncertainty
    from spudflow.core import artifacts

    items = read_items(args.items, artifacts.ITEMS_COLA, columns.COLA_ITEMS)
    settings = Uncertainty(args.interval_level, args.resamples, args.interval_seed)
    scores = read_scores(args.scores)
    tables = cola_tables(items, scores, args.folds, args.seed, args.criterion, settings)
    tables = with_registered(args.table_command, tables, **_registered_options(args),
                             items=items, scores=scores, settings=settings)
    write_tables(tables, args.out_dir)


@in_command_scope
def run_blimp(args: argparse.Namespace) -> None:
    from spudflow.aggregate import columns
    from spudflow.aggregate.blimp import blimp_tables
    from spudflow.aggregate.inputs import read_items, read_scores
    from spudflow.aggregate.outputs import with_registered, write_tables
    from spudflow.aggregate.uncertainty import Uncertainty
    from spudflow.core import artifacts

    items = read_items(args.items, artifacts.ITEMS_BLIMP, columns.BLIMP_ITEMS)
    settings = Uncertainty(args.interval_level, args.resamples, args.interval_seed)
    scores = read_scores(args.scores)
    tables = blimp_tables(items, scores, settings)
    tables = with_registered(args.table_command, tables, **_registered_options(args),
                             items=items, scores=scores, settings=settings)
    write_tables(tables, args.out_dir)


def run_japanese(args: argparse.Namespace) -> None:
    from spudflow.aggregate import columns
    from spudflow.aggregate.inputs import ScoresByModel, read_items, scores_by_model
    from spudflow.aggregate.japanese import japanese_tables
    from spudflow.aggregate.outputs import with_registered, write_tables
    from spudflow.aggregate.uncertainty import Uncertainty
    from spudflow.core import artifacts
    from spudflow.core.errors import InputError

    if not 0 <= args.l1_ratio <= 1:
        raise InputError("--l1-ratio", None, f"{args.l1_ratio} is not between 0 and 1")
    items = read_items(args.items, artifacts.ITEMS_JAPANESE, columns.JAPANESE_ITEMS)
    tables = japanese_tables(items, scores_by_model(args.scores), args.folds, args.seed,
                             args.lambda_choice, args.l1_ratio, args.top, args.max_iter,
                             args.n_lambda, args.decision, args.agreement_mode, args.jobs,
                             args.interval_level,
                             Uncertainty(args.interval_level, args.resamples, args.interval_seed),
                             args.convergence)
    # a registered function reads the scores as the writer does: (dataset, its rows of a model)
    tables = with_registered(args.table_command, tables, **_registered_options(args),
                             items=items, scores=ScoresByModel(args.scores),
                             settings=Uncertainty(args.interval_level, args.resamples,
                                                  args.interval_seed))
    write_tables(tables, args.out_dir)


def run_probe(args: argparse.Namespace) -> None:
    from spudflow.aggregate.inputs import read_layer_choices, read_probe_metrics
    from spudflow.aggregate.outputs import with_registered, write_tables
    from spudflow.aggregate.probe import probe_tables
    from spudflow.aggregate.uncertainty import Uncertainty

    settings = Uncertainty(args.interval_level, args.resamples, args.interval_seed)
    metrics = read_probe_metrics(args.metrics)
    tables = probe_tables(metrics, read_layer_choices(args.layer_choice), settings)
    write_tables(with_registered(args.table_command, tables, **_registered_options(args),
                                 metrics=metrics, settings=settings,
                                 predictions=args.predictions), args.out_dir)


def run_probe_edges(args: argparse.Namespace) -> None:
    from spudflow.aggregate.outputs import write_tables
    from spudflow.aggregate.probe_edges import edge_tables, run_edges
    from spudflow.core.distinct_inputs import distinct_names

    distinct_names([(treebank, eval_set) for treebank, eval_set, _ in args.gold], "--gold")
    gold = {(treebank, eval_set): Path(directory) for treebank, eval_set, directory in args.gold}
    runs = run_edges(args.metrics, gold, punct=not args.no_punct, subtypes=args.subtypes)
    write_tables(edge_tables(runs), args.out_dir)


def run_front_page(args: argparse.Namespace) -> None:
    from spudflow.aggregate.front_page import write_front_page
    from spudflow.core.distinct_inputs import distinct_names
    from spudflow.core.input_files import require_file

    distinct_names([name for name, _ in args.table], "--table")
    distinct_names([name for name, _ in args.figure], "--figure")

    for _, path in args.table:
        require_file(path, "a table (.parquet)")
    for _, path in args.figure:
        require_file(path, "a figure (.svg)")
    write_front_page(dict(args.table), dict(args.figure), args.out)


def run_figure(args: argparse.Namespace) -> None:
    from spudflow.aggregate import figures
    from spudflow.core.contract import read_artifact
    from spudflow.core.table_artifacts import TABLES

    table = read_artifact(args.table, TABLES[args.artifact])
    options = {name: getattr(args, name) for name in args.figure_options}
    getattr(figures, args.figure)(table, args.out, **options)
