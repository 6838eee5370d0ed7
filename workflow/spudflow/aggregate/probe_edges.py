"""DepProbe by edge direction (SPUD paper App. F.7, Tables 21–22), from the probes' predictions.

An edge is a word and its gold head. Its direction is where the gold head stands: `left` when
the head precedes the dependent (head index < word index), `right` when it follows. This is
what reproduces Table 21 (UD English-EWT test: 0.36 left, 0.55 right; the paper: 0.37, 0.56),
although the paper's text words it the other way round ("the dependent has a lower index than
the head" for left). Root words (head 0) are neither: they form the direction `root`, and count
in the fraction's denominator, so that left + right < 1 as in Table 21.

Per probe run and eval set, the predicted trees next to metrics.parquet (predictions.parquet, the
columns of its predictions/{eval set}.conllu, read without parsing the text) are scored against
the gold treebank of that eval set: fraction of edges, RelAcc, UAS and LAS per direction;
the words counted are those of the run's own metrics (all or all but PUNCT), and the sums over
the directions must reproduce the run's metrics row. Then mean and sd over probe seeds (and nonce
seeds), and Δ = original − nonce per run, as in probe_summary.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.outputs import Table
from spudflow.core.artifacts import (
    PROBE_METRICS,
    PROBE_PREDICTIONS,
    PROBE_PREDICTIONS_FILE,
    TREEBANK_TOKENS,
)
from spudflow.core.contract import read_artifact
from spudflow.core.distinct_inputs import one_source_per
from spudflow.core.errors import InputError
from spudflow.core.treebank import TOKENS_FILE

DIRECTIONS = ("left", "right", "root")
RUN = ["treebank", "model", "baseline", "dist_layer", "label_layer", "auto_layers"]
SCORES = ("relacc", "uas", "las")
METRICS_COLUMNS = [*RUN, "seed", "eval_set", "uas", "las", "relacc", "n_words"]
PREDICTIONS_EMPTY = pl.DataFrame(schema=PROBE_PREDICTIONS.polars_schema())


def _label(deprel: pl.Expr, subtypes: bool) -> pl.Expr:
    # as the probe compares labels (probe/labels.py label_of); the totals check below would
    # catch a difference
    return deprel if subtypes else deprel.str.split(":").list.first()


def read_tree_words(directory: Path, subtypes: bool) -> pl.DataFrame:
    """The words of a gold treebank directory (its tokens.parquet): sent_index, word_index,
    form, the gold head and label, whether it is PUNCT and its edge's direction."""
    words = (read_artifact(Path(directory) / TOKENS_FILE, TREEBANK_TOKENS,
                           ["sent_index", "token_type", "word_index", "form", "upos", "head",
                            "deprel"])
             .filter(pl.col("token_type") == "word"))
    if words["head"].null_count():
        raise InputError(Path(directory) / TOKENS_FILE, None, "a word without HEAD: gold trees "
                         "are needed")
    head, position = pl.col("gold_head"), pl.col("word_index")
    return words.select(
        pl.col("sent_index", "word_index").cast(pl.Int64), "form",
        pl.col("head").cast(pl.Int64).alias("gold_head"),
        _label(pl.col("deprel"), subtypes).alias("gold_label"),
        (pl.col("upos") == "PUNCT").alias("is_punct"),
    ).with_columns(pl.when(head == 0).then(pl.lit("root")).when(head < position)
                   .then(pl.lit("left")).otherwise(pl.lit("right")).alias("direction"))


def read_predictions(path: Path) -> dict[str, pl.DataFrame]:
    """A probe run's predicted trees (predictions.parquet, written with its predictions CoNLL-U),
    per eval set. The labels are taken as written: the probe predicts labels of its own label set
    (`UNK` for `acl` with `probe train --acl-predicted-as-unk`, so it counts wrong here too)."""
    if not path.is_file():
        raise InputError(path, None, "no predictions (written by `probe train` next to "
                         "metrics.parquet; a run trained before they were: rerun it)")
    predicted = read_artifact(path, PROBE_PREDICTIONS)
    return {name: frame for (name,), frame in
            predicted.partition_by("eval_set", as_dict=True, maintain_order=True).items()}


def matched_gold(predicted: pl.DataFrame, gold: pl.DataFrame, path: Path, gold_dir: Path
                 ) -> pl.DataFrame:
    """Each predicted word with its gold word, met by sentence (sent_index, the position in the
    treebank that the probe writes) and word ID; every predicted sentence must have its gold
    sentence's words, all of them and no other (else predictions of another treebank)."""
    joined = predicted.join(gold, on=["sent_index", "word_index"], how="left", suffix="_gold")
    wrong = joined.filter(pl.col("form_gold").is_null() | (pl.col("form") != pl.col("form_gold")))
    lengths = predicted.group_by("sent_index").len().join(
        gold.group_by("sent_index").len(), on="sent_index", how="left", suffix="_gold")
    short = lengths.filter(pl.col("len_gold").is_null() | (pl.col("len") != pl.col("len_gold")))
    if wrong.height or short.height:
        sentence = min([*wrong["sent_index"], *short["sent_index"]])
        raise InputError(path, None, f"sentence {sentence} (sent_index) is not in {gold_dir} "
                         "with the same words: predictions of another treebank?")
    return joined


def direction_counts(words: pl.DataFrame, punct: bool) -> dict[str, dict[str, int]]:
    """Per direction: edges, and right heads, labels and both (matched_gold's words)."""
    head_ok = pl.col("head") == pl.col("gold_head")
    label_ok = pl.col("deprel") == pl.col("gold_label")
    counted = words if punct else words.filter(~pl.col("is_punct"))
    sums = counted.group_by("direction").agg(
        pl.len().alias("n"), head_ok.sum().alias("uas"), label_ok.sum().alias("relacc"),
        (head_ok & label_ok).sum().alias("las"))
    found = {row.pop("direction"): row for row in sums.iter_rows(named=True)}
    return {d: {k: int(found.get(d, {}).get(k, 0)) for k in ("n", "uas", "relacc", "las")}
            for d in DIRECTIONS}


def _check_totals(counts: dict, row: dict, path: Path) -> None:
    """The directions together must give the run's own metrics (same words, same scores)."""
    n = sum(c["n"] for c in counts.values())
    problems = [] if n == row["n_words"] else [f"{n} words, the metrics {row['n_words']}"]
    for score in SCORES:
        value = sum(c[score] for c in counts.values()) / max(n, 1)
        if abs(value - row[score]) > 1e-9:
            problems.append(f"{score} {value:.6f}, the metrics {row[score]:.6f}")
    if problems:
        raise InputError(path, None, "predictions do not reproduce metrics.parquet ("
                         + "; ".join(problems) + "): --no-punct / --subtypes as in the run?")


def run_edges(metrics_paths: list[Path], gold_dirs: dict[tuple[str, str], Path], punct: bool,
              subtypes: bool) -> pl.DataFrame:
    """One row per probe run, eval set and direction."""
    rows, gold_cache = [], {}
    every = {path: read_artifact(path, PROBE_METRICS, METRICS_COLUMNS) for path in metrics_paths}
    if every:  # a run given twice is refused before any predictions file is parsed
        one_source_per(pl.concat([m.with_columns(pl.lit(str(p)).alias("source_file"))
                                  for p, m in every.items()]), [*RUN, "seed"],
                       "metrics of probe run")
    for path, metrics in every.items():
        predictions = path.parent / PROBE_PREDICTIONS_FILE
        per_run = read_predictions(predictions)
        for row in metrics.iter_rows(named=True):
            key = (row["treebank"], row["eval_set"])
            if key not in gold_dirs:
                raise InputError(path, None, f"no --gold treebank for treebank {key[0]!r}, "
                                 f"eval set {key[1]!r}")
            if gold_dirs[key] not in gold_cache:
                gold_cache[gold_dirs[key]] = read_tree_words(gold_dirs[key], subtypes)
            gold = gold_cache[gold_dirs[key]]
            predicted = per_run.get(row["eval_set"])
            if predicted is None and row["n_words"]:
                raise InputError(predictions, None, f"no words of eval set {row['eval_set']!r}")
            if predicted is None:  # an eval set without words (its metrics say 0)
                predicted = PREDICTIONS_EMPTY
            words = matched_gold(predicted, gold, predictions, gold_dirs[key])
            counts = direction_counts(words, punct)
            _check_totals(counts, row, predictions)
            total = sum(c["n"] for c in counts.values())
            for direction, c in counts.items():
                rows.append({**{k: row[k] for k in RUN}, "seed": row["seed"],
                             "eval_set": row["eval_set"], "direction": direction,
                             "n_edges": c["n"], "fraction": c["n"] / total if total else None,
                             **{s: c[s] / c["n"] if c["n"] else None for s in SCORES},
                             "source_file": str(path)})
    if not rows:
        raise InputError("metrics", None, "no metrics files given")
    return pl.DataFrame(rows, infer_schema_length=None)


def _mean(name: str) -> pl.Expr:
    """Mean over the group, null when any run has no value (no such edges): never a mean of
    fewer runs than n_runs says."""
    value = pl.col(name)
    return pl.when(value.null_count() == 0).then(value.mean()).alias(f"{name}_mean")


def _sd(name: str) -> pl.Expr:
    value = pl.col(name)
    return pl.when(value.null_count() == 0).then(value.std(ddof=1)).alias(f"{name}_sd")


def edge_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Mean and sd over probe seeds × nonce seeds per run configuration, eval set and direction."""
    is_orig = pl.col("eval_set") == columns.PROBE_ORIG_EVAL_SET
    method = pl.col("eval_set").str.split(columns.PROBE_EVAL_SET_SEPARATOR).list.first()
    runs = runs.with_columns(
        pl.col("eval_set").alias("eval_version"),
        pl.when(is_orig).then(pl.lit("orig")).otherwise(method).alias("eval_set"))
    keys = [*RUN, "seed", "direction"]
    orig = runs.filter(pl.col("eval_set") == "orig").select(
        *keys, *[pl.col(s).alias(f"orig_{s}") for s in SCORES])
    twice = orig.filter(pl.struct(keys).is_duplicated())
    if twice.height:
        raise InputError(runs.filter(is_orig)["source_file"][0], None,
                         "a probe run with more than one `orig` row")
    orphans = runs.join(orig, on=keys, how="anti")
    if orphans.height:
        raise InputError(orphans["source_file"][0], None,
                         f"a {orphans['eval_version'][0]!r} row but no `orig` row for its run")
    runs = runs.join(orig, on=keys, how="left").with_columns([
        pl.when(pl.col("eval_set") != "orig").then(pl.col(f"orig_{s}") - pl.col(s)).alias(
            f"delta_{s}") for s in SCORES])
    aggregations = [pl.len().cast(pl.Int64).alias("n_runs"),
                    pl.col("n_edges").cast(pl.Float64).mean().alias("n_edges_mean")]
    for name in ("fraction", *SCORES, *[f"delta_{s}" for s in SCORES]):
        aggregations += [_mean(name), _sd(name)]
    table = runs.group_by([*RUN, "eval_set", "direction"]).agg(aggregations)
    return table.sort([*RUN, pl.col("eval_set") != "orig", "eval_set", "direction"])


def edge_tables(runs: pl.DataFrame) -> list[Table]:
    """The probe_edges table (its caption is the registry's)."""
    return [Table("probe_edges", edge_table(runs))]
