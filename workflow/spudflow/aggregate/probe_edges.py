"""DepProbe by edge direction (SPUD paper App. F.7, Tables 21–22), from the probes' predictions.

An edge is a word and its gold head. Its direction is where the gold head stands: `left` when
the head precedes the dependent (head index < word index), `right` when it follows. This is
what reproduces Table 21 (UD English-EWT test: 0.36 left, 0.55 right; the paper: 0.37, 0.56),
although the paper's text words it the other way round ("the dependent has a lower index than
the head" for left). Root words (head 0) are neither: they form the direction `root`, and count
in the fraction's denominator, so that left + right < 1 as in Table 21.

Per probe run and eval set, the predictions/{eval set}.conllu next to metrics.parquet are scored
against the gold treebank of that eval set: fraction of edges, RelAcc, UAS and LAS per direction;
the words counted are those of the run's own metrics (all or all but PUNCT), and the sums over
the directions must reproduce the run's metrics row. Then mean and sd over probe seeds (and nonce
seeds), and Δ = original − nonce per run, as in probe_summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import conllu
import numpy as np
import polars as pl

from spudflow.aggregate import columns
from spudflow.aggregate.outputs import Table
from spudflow.core.artifacts import PROBE_METRICS, TREEBANK_TOKENS
from spudflow.core.contract import read_artifact
from spudflow.core.distinct_inputs import one_source_per
from spudflow.core.errors import InputError
from spudflow.core.treebank import TOKENS_FILE

DIRECTIONS = ("left", "right", "root")
RUN = ["treebank", "model", "baseline", "dist_layer", "label_layer", "auto_layers"]
SCORES = ("relacc", "uas", "las")
METRICS_COLUMNS = [*RUN, "seed", "eval_set", "uas", "las", "relacc", "n_words"]


@dataclass(frozen=True)
class Words:
    """One treebank's words, flat, with per-sentence forms for matching."""

    forms: list[tuple[str, ...]]
    heads: list[np.ndarray]
    labels: list[list[str]]
    upos: list[list[str]]
    sent_ids: list[str | None]


def _label(deprel: str, subtypes: bool) -> str:
    # as the probe compares labels (probe/labels.py label_of); the totals check below would
    # catch a difference
    return deprel if subtypes else deprel.split(":", 1)[0]


def read_tree_words(directory: Path, subtypes: bool) -> Words:
    """The words of a gold treebank directory (its tokens.parquet), per sentence."""
    words = (read_artifact(Path(directory) / TOKENS_FILE, TREEBANK_TOKENS,
                           ["sent_index", "sent_id", "token_index", "token_type", "form", "upos",
                            "head", "deprel"])
             .filter(pl.col("token_type") == "word").sort(["sent_index", "token_index"])
             .group_by("sent_index", maintain_order=True)
             .agg("form", "head", "deprel", "upos", pl.col("sent_id").first()))
    if words.explode("head")["head"].null_count():
        raise InputError(Path(directory) / TOKENS_FILE, None, "a word without HEAD: gold trees "
                         "are needed")
    return Words([tuple(f) for f in words["form"].to_list()],
                 [np.asarray(h, dtype=np.int64) for h in words["head"].to_list()],
                 [[_label(d, subtypes) for d in s] for s in words["deprel"].to_list()],
                 words["upos"].to_list(), words["sent_id"].to_list())


def read_predictions(path: Path, empty: bool = False) -> Words:
    """The words (integer IDs) of a predictions CoNLL-U file, per sentence, read by `conllu`.
    The labels are taken as written: the probe predicts labels of its own label set (`UNK` for
    `acl` with `probe train --acl-predicted-as-unk`, so it counts wrong here too). `empty`:
    a file without sentences is an eval set without words (its metrics say 0), not bad input."""
    if not path.is_file():
        raise InputError(path, None, "no predictions file (written by `probe train` next to "
                         "metrics.parquet)")
    try:
        sentences = conllu.parse(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None
    except conllu.exceptions.ParseException as error:
        raise InputError(path, None, " ".join(str(error).split())) from None
    kept = [s for s in sentences if any(isinstance(t["id"], int) for t in s)]
    words = [[t for t in sentence if isinstance(t["id"], int)] for sentence in kept]
    if not words and not empty:
        raise InputError(path, None, "no sentences")
    if any(not isinstance(t["head"], int) for s in words for t in s):
        raise InputError(path, None, "a word without a numeric HEAD")
    return Words([tuple(t["form"] for t in s) for s in words],
                 [np.array([t["head"] for t in s], dtype=np.int64) for s in words],
                 [[t["deprel"] for t in s] for s in words], [[t["upos"] for t in s] for s in words],
                 [s.metadata.get("sent_id") for s in kept])


def matched_gold(predicted: Words, gold: Words, path: Path, gold_dir: Path) -> list[int]:
    """For each predicted sentence, its gold sentence: by sent_id where every sentence of both
    has one and the gold ones are unique (the probe writes the treebank's sent_ids), its words
    checked; else greedy on the words, the predictions being the evaluated sentences of the
    treebank in order (a subsequence). Greedy matching takes the first gold sentence of the same
    words, which need not be the one evaluated where a treebank repeats a sentence (with
    another tree), so it is the fallback only."""
    index = {sent_id: g for g, sent_id in enumerate(gold.sent_ids)}
    if (None not in index and len(index) == len(gold.sent_ids)
            and None not in predicted.sent_ids):
        picks = []
        for i, (sent_id, forms) in enumerate(zip(predicted.sent_ids, predicted.forms,
                                                  strict=True)):
            g = index.get(sent_id)
            if g is None or gold.forms[g] != forms:
                raise InputError(path, None, f"sentence {i + 1} ({sent_id}) is not in "
                                 f"{gold_dir} with the same words: predictions of another "
                                 "treebank?")
            picks.append(g)
        return picks
    picks, g = [], 0
    for i, forms in enumerate(predicted.forms):
        while g < len(gold.forms) and gold.forms[g] != forms:
            g += 1
        if g == len(gold.forms):
            raise InputError(path, None, f"sentence {i + 1} ({' '.join(forms[:6])} …) is not in "
                             f"{gold_dir} (in order): predictions of another treebank?")
        picks.append(g)
        g += 1
    return picks


def direction_counts(predicted: Words, gold: Words, picks: list[int], punct: bool
                     ) -> dict[str, dict[str, int]]:
    """Per direction: edges, and right heads, labels and both."""
    counts = {d: dict(n=0, uas=0, relacc=0, las=0) for d in DIRECTIONS}
    for i, g in enumerate(picks):
        heads, position = gold.heads[g], np.arange(1, len(gold.heads[g]) + 1)
        keep = np.ones(len(heads), bool) if punct else np.asarray(gold.upos[g]) != "PUNCT"
        head_ok = heads == predicted.heads[i]
        label_ok = np.asarray(gold.labels[g], dtype=object) == np.asarray(predicted.labels[i],
                                                                           dtype=object)
        direction = {"root": heads == 0, "left": (heads > 0) & (heads < position),
                     "right": heads > position}
        for name, mask in direction.items():
            mask = mask & keep
            counts[name]["n"] += int(mask.sum())
            counts[name]["uas"] += int((head_ok & mask).sum())
            counts[name]["relacc"] += int((label_ok & mask).sum())
            counts[name]["las"] += int((head_ok & label_ok & mask).sum())
    return counts


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
        for row in metrics.iter_rows(named=True):
            key = (row["treebank"], row["eval_set"])
            if key not in gold_dirs:
                raise InputError(path, None, f"no --gold treebank for treebank {key[0]!r}, "
                                 f"eval set {key[1]!r}")
            if gold_dirs[key] not in gold_cache:
                gold_cache[gold_dirs[key]] = read_tree_words(gold_dirs[key], subtypes)
            gold = gold_cache[gold_dirs[key]]
            predictions = path.parent / "predictions" / f"{row['eval_set']}.conllu"
            predicted = read_predictions(predictions, empty=row["n_words"] == 0)
            picks = matched_gold(predicted, gold, predictions, gold_dirs[key])
            counts = direction_counts(predicted, gold, picks, punct)
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
