"""The `*_examples` tables (core/outputs_registry.py): per dataset family and scoring function,
the k items where it is most confidently wrong (aggregate/examples.py orders them), with their
text, both scores and the margin. Each function is a registered table's: its keywords are the
family's loaded items and scores and its command's options (`examples`: k; `examples_seed`: the
seed of the tie-break hash; CoLA: the folds of its thresholds; Japanese: the decision rule).

- BLiMP: the wrong pairs (ties count wrong) with the largest log P(bad) - log P(good).
- Japanese: the obligatory pairs whose intransitive sentence the mode preferred (ties count
  wrong), by the largest margin of the decision's score (mean log-probability for the
  perplexity rule); verb-only modes compare the verb's scores.
- CoLA: per split and normalisation, the sentences furthest on the wrong side of the threshold
  their fold fitted (an acceptable sentence below it, an unacceptable one at or above it).
- German case: the lowest-AUC template's worst (grammatical, violation) pairs.
- SPUD: the largest perplexity ratios, per nonce seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from spudflow.aggregate.examples import (
    MARGIN,
    RANK,
    blimp_examples,
    confidently_wrong_pairs,
    largest_ratios,
    top_k,
    worst_template_pairs,
)
from spudflow.aggregate.inputs import scored_items

SCORING = ["dataset", "model", "method"]


def blimp(items: pl.DataFrame, scores: pl.DataFrame, examples: int,
          examples_seed: int) -> pl.DataFrame:
    from spudflow.aggregate.blimp import pair_outcomes

    return blimp_examples(pair_outcomes(items, scores), items, examples, examples_seed)


def blimp_items(items: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """Every pair and scoring function that scored a sentence of it (blimp_items): both
    sentences and log-probabilities, margin = log P(bad) - log P(good) (at least 0: wrong,
    ties included) and whether it counts in the accuracy (`scored`) and as correct."""
    from spudflow.aggregate.blimp import pair_outcomes

    text = {side: items.filter(pl.col("label") == label).select(
        "dataset", "group_id", pl.col("sentence").alias(f"sentence_{side}"))
        for side, label in (("good", 1), ("bad", 0))}
    pairs = pair_outcomes(items, scores)
    for side in ("good", "bad"):
        pairs = pairs.join(text[side], on=["dataset", "group_id"], how="left")
    return pairs.select(
        *SCORING, "group_id", "uid", "sentence_good", "sentence_bad", "logprob_good",
        "logprob_bad", (pl.col("logprob_bad") - pl.col("logprob_good")).alias(MARGIN),
        "scored", "correct").sort([*SCORING, "group_id"])


def _german_scored(items: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """The German case items joined with their scores as the family's tables join them
    (with_derived's items: one join for every table of the command)."""
    # imported here: german_case loads sklearn, which other families' commands need not
    from spudflow.aggregate.german_case import with_derived

    return scored_items(with_derived(items), scores)


def german_case(items: pl.DataFrame, scores: pl.DataFrame, examples: int,
                examples_seed: int) -> pl.DataFrame:
    scored = _german_scored(items, scores)
    return worst_template_pairs(scored.filter(pl.col("logprob_sum").is_not_null()), SCORING,
                                examples, examples_seed)


def german_case_items(items: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """Every scored sentence per scoring function (german_case_items): its template, whether it
    is grammatical, the doubled case of a violation, its log-probability and its template's AUC
    (grammatical sentences against the violations, ties 1/2)."""
    scored = _german_scored(items, scores)
    scored = scored.filter(pl.col("logprob_sum").is_not_null())
    aucs = template_aucs(scored)
    return scored.join(aucs, on=[*SCORING, "template"], how="left").select(
        *SCORING, "template", "item_id", "sentence", "grammatical", "violation", "logprob_sum",
        "template_auc").sort([*SCORING, "item_id"])


def template_aucs(scored: pl.DataFrame) -> pl.DataFrame:
    """Per scoring function and template: P(grammatical above violation) + P(tie) / 2."""
    rows = []
    for key, group in scored.group_by([*SCORING, "template"], maintain_order=True):
        good = group.filter(pl.col("grammatical"))["logprob_sum"].to_numpy()
        bad = group.filter(~pl.col("grammatical"))["logprob_sum"].to_numpy()
        if len(good) and len(bad):
            difference = good[:, None] - bad[None, :]
            rows.append((*key, float((difference > 0).mean() + (difference == 0).mean() / 2)))
        else:
            rows.append((*key, None))
    return pl.DataFrame(rows, schema={**{k: scored.schema[k] for k in SCORING},
                                      "template": pl.String, "template_auc": pl.Float64},
                        orient="row")


def spud(items: pl.DataFrame, scores: pl.DataFrame, examples: int,
         examples_seed: int) -> pl.DataFrame:
    from spudflow.aggregate.spud_scores import PAIR_SET, pair_ratios

    pairs = pair_ratios(scored_items(items, scores))
    return largest_ratios(pairs, [*PAIR_SET, "model", "method", "nonce_seed"], examples,
                          examples_seed)


def cola(items: pl.DataFrame, scores: pl.DataFrame, examples: int, examples_seed: int,
         folds: int, seed: int, criterion: str) -> pl.DataFrame:
    """Per (dataset, model, method, split, normalisation) whose thresholds were fitted, the
    sentences furthest on the wrong side of their fold's threshold (`margin`: how far)."""
    from spudflow.aggregate.cola import KEYS

    wrong = cola_items(items, scores, folds, seed, criterion).filter(~pl.col("correct"))
    keys = [*KEYS, "normalisation"]
    top = top_k(wrong, keys, MARGIN, ["item_id"], examples, examples_seed)
    return top.select(*keys, RANK, "item_id", "sentence", "label", "score", "threshold",
                      MARGIN).sort([*keys, RANK])


def cola_items(items: pl.DataFrame, scores: pl.DataFrame, folds: int, seed: int,
               criterion: str) -> pl.DataFrame:
    """Every labelled sentence with a finite score, per scoring function, split and
    normalisation whose threshold was fitted (cola_items): its score, its fold's threshold,
    margin (how far on the wrong side: negative on the right one) and whether the held-out
    prediction (acceptable when score >= threshold) is its label."""
    from spudflow.aggregate.cola import KEYS, fits

    scored = scored_items(items, scores)
    rows = []
    for key, _, frame, thresholds, _ in fits(scored, folds, seed, criterion):
        if thresholds is None:
            continue  # no fitted threshold (the tables say why)
        values, labels = frame["score"].to_numpy(), frame["label"].to_numpy()
        threshold = frame["threshold"].to_numpy()
        # acceptable (1) predicted by score >= t: wrong below t, unacceptable wrong at or above
        signed = np.where(labels == 1, threshold - values, values - threshold)
        rows.append(frame.select(
            *(pl.lit(key[k], dtype=scored.schema[k]).alias(k) for k in KEYS),
            pl.lit(key["normalisation"]).alias("normalisation"), "item_id", "sentence",
            pl.col("label").cast(scored.schema["label"]), "score", "threshold",
            pl.Series(MARGIN, signed),
            (pl.col("prediction") == pl.col("label")).alias("correct")))
    schema = {**{k: scored.schema[k] for k in KEYS}, "normalisation": pl.String,
              "item_id": pl.String, "sentence": pl.String, "label": scored.schema["label"],
              "score": pl.Float64, "threshold": pl.Float64, MARGIN: pl.Float64,
              "correct": pl.Boolean}
    frame = pl.concat(rows) if rows else pl.DataFrame(schema=schema)
    return frame.sort([*KEYS, "normalisation", "item_id"])


def _obligatory_pairs(items: pl.DataFrame, scores: Iterable[tuple[str, pl.DataFrame]],
                      decision: str) -> Iterable[pl.DataFrame]:
    """The obligatory pairs with both sentences scored, as japanese_accuracy counts them
    (japanese.preferences by the decision rule), one dataset and model at a time."""
    from spudflow.aggregate import columns
    from spudflow.aggregate.japanese import dataset_items, preferences, thesis_modes

    for dataset, chunks in itertools.groupby(scores, key=lambda chunk: chunk[0]):
        own_items = dataset_items(items, dataset)
        for _, model_scores in chunks:
            scored = thesis_modes(scored_items(own_items, model_scores, all_regions=True))
            yield preferences(scored, decision).filter(
                pl.col("condition") == columns.JAPANESE_OBLIGATORY)


def _japanese_side_columns(items: pl.DataFrame, columns: Sequence[str]) -> list[pl.DataFrame]:
    """(dataset, group_id and `columns` suffixed _transitive) of the transitive items, then
    those of the intransitive ones."""
    from spudflow.aggregate.columns import JAPANESE_TRANSITIVE

    return [items.filter((pl.col("transitivity") == JAPANESE_TRANSITIVE) == (side == "transitive"))
            .select("dataset", "group_id", *(pl.col(c).alias(f"{c}_{side}") for c in columns))
            for side in ("transitive", "intransitive")]


def _japanese_sides(items: pl.DataFrame, frame: pl.DataFrame, columns: Sequence[str],
                    sides: list[pl.DataFrame] | None = None) -> pl.DataFrame:
    """`frame` with the `columns` of each pair's transitive and intransitive item (suffixed
    _transitive, _intransitive; `sides`: _japanese_side_columns' frames), in its own order."""
    for side in sides or _japanese_side_columns(items, columns):
        frame = frame.join(side, on=["dataset", "group_id"], how="left", maintain_order="left")
    return frame


def japanese(items: pl.DataFrame, scores: Iterable[tuple[str, pl.DataFrame]], examples: int,
             examples_seed: int, decision: str) -> pl.DataFrame:
    """The obligatory pairs per mode (dataset, model, method, region) whose intransitive
    sentence was preferred by the largest margin; one dataset and model's scores in memory at
    a time, only their top k kept."""
    from spudflow.aggregate.japanese import MODE

    keys = ["dataset", *MODE]
    tops = [confidently_wrong_pairs(
        pairs, keys, ["group_id"], "score_transitive", "score_intransitive", examples,
        examples_seed).select(*keys, RANK, "group_id", "verb_pair", "score_transitive",
                              "score_intransitive", MARGIN)
        for pairs in _obligatory_pairs(items, scores, decision)]
    if not tops:
        raise ValueError("japanese examples: no scores")  # the command refuses that before
    top = _japanese_sides(items, pl.concat(tops), ["sentence"])
    return top.select(*keys, RANK, "group_id", "verb_pair", "sentence_transitive",
                      "sentence_intransitive", "score_transitive", "score_intransitive",
                      MARGIN).sort([*keys, RANK], nulls_last=False)


def japanese_items(items: pl.DataFrame, scores: Iterable[tuple[str, pl.DataFrame]],
                   decision: str):
    """Every obligatory pair per mode that japanese_accuracy counts
    (japanese_transitivity_items): both items and sentences, the decision's two scores, margin
    = score_intransitive - score_transitive (japanese_examples' margin; negative when right) and
    `correct`, the mode preferring the transitive verb (a tie is wrong). One part per dataset
    and model, written as it is computed: at the thesis's size the whole file (17.6M rows)
    would take about 8 GB more than the job's other tables."""
    from spudflow.aggregate.japanese import MODE
    from spudflow.aggregate.outputs import TableParts

    columns = ["item_id", "sentence"]
    sides = _japanese_side_columns(items, columns)

    def parts():
        # preferences' order (dataset, mode, group_id) per dataset and model, both sorted
        for pairs in _obligatory_pairs(items, scores, decision):
            part = pairs.select(
                "dataset", *MODE, "mode", pl.lit(decision).alias("decision"), "group_id",
                "verb_pair", "score_transitive", "score_intransitive",
                (pl.col("score_intransitive") - pl.col("score_transitive")).alias(MARGIN),
                pl.col("prefers_transitive").alias("correct"))
            yield _japanese_sides(items, part, columns, sides).select(
                "dataset", *MODE, "mode", "decision", "group_id", "verb_pair",
                "item_id_transitive", "item_id_intransitive", "sentence_transitive",
                "sentence_intransitive", "score_transitive", "score_intransitive", MARGIN,
                "correct")

    return TableParts(parts(), ("dataset", "model"))


def probe(metrics: pl.DataFrame, examples: int, examples_seed: int,
          predictions: Iterable = ()) -> pl.DataFrame:
    """DepProbe: per probe configuration and nonce method, the k test sentences with the largest
    LAS drop (of those whose LAS drops at all), LAS of the original sentence minus LAS of its
    nonce versions, each over every probe seed's run (and nonce seed): right words over words,
    from the runs' per-sentence counts (sentence_counts.parquet). Sentences by their index in
    the test treebank, with their words (probe_sentence_texts) from the runs' `predictions`
    (predictions.parquet files, each next to its run's metrics.parquet; none given: the text
    is null)."""
    from pathlib import Path

    from spudflow.aggregate import columns
    from spudflow.aggregate.probe import RUN
    from spudflow.aggregate.probe_intervals import read_sentences
    from spudflow.core.artifacts import PROBE_SENTENCES_FILE
    from spudflow.core.logs import get_logger
    from spudflow.core.table_artifacts import TABLES

    given = runs_predictions(metrics, predictions)
    missing = [source for source in metrics["source_file"].unique(maintain_order=True)
               if not (Path(source).parent / PROBE_SENTENCES_FILE).is_file()]
    if missing:  # runs trained before the counts were written: the other tables need none
        get_logger(__name__).warning(
            "probe_examples left empty: %d probe runs have no %s next to their metrics (e.g. "
            "%s); rerun them for the sentences behind the LAS drops", len(missing),
            PROBE_SENTENCES_FILE, missing[0])
        return pl.DataFrame(schema=TABLES["probe_examples"].polars_schema())
    sentences = read_sentences(metrics).filter(pl.col("n_words") > 0).with_columns(
        pl.when(pl.col("eval_version") == columns.PROBE_ORIG_EVAL_SET).then(pl.lit("orig"))
        .otherwise(pl.col("eval_version").str.split(columns.PROBE_EVAL_SET_SEPARATOR)
                   .list.first()).alias("eval_method"))
    per_set = sentences.group_by(*RUN, "eval_method", "sent_index").agg(
        (pl.col("n_las").sum() / pl.col("n_words").sum()).alias("las"),
        pl.col("n_words").max().alias("n_words"))
    orig = per_set.filter(pl.col("eval_method") == "orig").select(
        *RUN, "sent_index", "n_words", pl.col("las").alias("las_orig"))
    nonce = per_set.filter(pl.col("eval_method") != "orig").select(
        *RUN, pl.col("eval_method").alias("nonce_method"), "sent_index",
        pl.col("las").alias("las_nonce"))
    # only sentences whose LAS drops are failures to show (as the other families' wrong items)
    drops = nonce.join(orig, on=[*RUN, "sent_index"], how="inner").with_columns(
        (pl.col("las_orig") - pl.col("las_nonce")).alias(MARGIN)).filter(pl.col(MARGIN) > 0)
    keys = [*RUN, "nonce_method"]
    top = top_k(drops, keys, MARGIN, ["sent_index"], examples, examples_seed)
    top = top.join(probe_sentence_texts(top, metrics, given), on=[*keys, "sent_index"],
                   how="left", nulls_equal=True)
    return top.select(*keys, RANK, "sent_index", "n_words", "sentence", "nonce_sentences",
                      "las_orig", "las_nonce", MARGIN).sort([*keys, RANK])


NONCE_VERSIONS = " ‖ "  # between the nonce versions of nonce_sentences


def _eval_set_order(name: str) -> tuple:
    """`spud/seed2` before `spud/seed10`."""
    method, _, seed = name.rpartition("/seed")
    return (method, int(seed)) if method and seed.isdigit() else (name, -1)


def runs_predictions(metrics: pl.DataFrame, predictions: Iterable) -> dict:
    """The given predictions.parquet files by their run's folder: each must be a file next to
    one of the metrics files (else whose run's trees would it be?)."""
    from pathlib import Path

    from spudflow.core.errors import InputError

    folders = {Path(s).resolve().parent for s in metrics["source_file"].unique()}
    given = {}
    for path in map(Path, predictions):
        if not path.is_file():
            raise InputError(path, None, "no such file (--predictions: a run's "
                             "predictions.parquet)")
        if path.resolve().parent not in folders:
            raise InputError(path, None, "not next to any metrics.parquet given: the "
                             "predictions of which run?")
        given[path.resolve().parent] = path
    return given


def probe_sentence_texts(top: pl.DataFrame, metrics: pl.DataFrame,
                         given: dict) -> pl.DataFrame:
    """Per example of `top` (a configuration, nonce method and sent_index): the original
    sentence's words (`sentence`, FORMs joined by spaces, as the probe read them: a multiword
    token's words, not its surface) and every nonce version's (`nonce_sentences`, each after
    its eval set, in seed order), from a run of the configuration: its predictions.parquet
    (`given`: runs_predictions), which holds every word of each sentence it evaluated. A
    configuration without one gets null text (the log says so)."""
    from pathlib import Path

    from spudflow.aggregate import columns
    from spudflow.aggregate.probe import RUN
    from spudflow.core.artifacts import PROBE_PREDICTIONS
    from spudflow.core.contract import read_artifact
    from spudflow.core.errors import InputError
    from spudflow.core.logs import get_logger

    orig = columns.PROBE_ORIG_EVAL_SET
    keys = [*RUN, "nonce_method"]
    schema = {**top.select(keys).schema, "sent_index": pl.Int64, "sentence": pl.String,
              "nonce_sentences": pl.String}
    rows, untold = [], 0
    runs = metrics.with_columns(pl.col(c).cast(t) for c, t in top.select(RUN).schema.items())
    for key, wanted in top.partition_by(RUN, as_dict=True).items():
        sources = runs.filter(*[pl.col(c) == v for c, v in zip(RUN, key, strict=True)])[
            "source_file"].unique(maintain_order=True)
        files = [given[Path(s).resolve().parent] for s in sources
                 if Path(s).resolve().parent in given]
        if not files:
            untold += 1
            continue
        needed = set(wanted["sent_index"])
        texts: dict = {}  # (eval set, sent_index) -> its words
        for path in files:  # the first run has them all: its words are every seed's
            words = read_artifact(path, PROBE_PREDICTIONS, ["eval_set", "sent_index",
                                                             "word_index", "form"])
            words = words.filter(pl.col("sent_index").is_in(sorted(needed))).sort(
                "eval_set", "sent_index", "word_index")
            sentences = words.group_by("eval_set", "sent_index", maintain_order=True).agg("form")
            for eval_set, index, forms in sentences.iter_rows():
                texts.setdefault((eval_set, index), " ".join(forms))
            if all((orig, i) in texts for i in needed):
                break
        for row in wanted.iter_rows(named=True):
            index, method = row["sent_index"], row["nonce_method"]
            if (orig, index) not in texts:
                raise InputError(files[0], None, f"no words of sentence {index} of eval set "
                                 f"{orig!r}, which the run's sentence_counts.parquet scores")
            versions = sorted((e for e, i in texts if i == index and e.split(
                columns.PROBE_EVAL_SET_SEPARATOR)[0] == method), key=_eval_set_order)
            rows.append({**{k: row[k] for k in keys}, "sent_index": index,
                         "sentence": texts[(orig, index)],
                         "nonce_sentences": NONCE_VERSIONS.join(
                             f"{e}: {texts[(e, index)]}" for e in versions) or None})
    if untold:
        get_logger(__name__).warning(
            "probe_examples: %d probe configurations have no predictions.parquet given "
            "(--predictions): their sentences' text is left null", untold)
    return pl.DataFrame(rows, schema=schema)
