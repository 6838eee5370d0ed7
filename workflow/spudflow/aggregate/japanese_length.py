"""Sentence length against perplexity (Japanese transitivity thesis, §3.2 and §4.5): "sequence
length has a negative correlation with perplexity for the base dataset ... for at least three
different language models". The thesis names no statistic; here Pearson's r (the plain
"correlation") and, as perplexity is skewed, Spearman's rank correlation, both from scipy.stats.

Per dataset and scoring mode on whole sentences (the perplexity the thesis compares), every
scored sentence once (transitive and intransitive alike). Length is the number of the model's
tokens, the n of the thesis's perplexity formula.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats

from spudflow.core.table_artifacts import TABLES

KEYS = ["dataset", "model", "method"]
CORRELATION_SCHEMA = TABLES["japanese_length_correlation"].polars_schema()


def whole_sentences(scored: pl.DataFrame) -> pl.DataFrame:
    """Whole-sentence rows with a perplexity (rows the scoring stage skipped have none)."""
    return scored.filter(pl.col("region").is_null() & pl.col("ppl").is_not_null()).select(
        *KEYS, "item_id", pl.col("n_tokens").cast(pl.Int64), "ppl")


def _statistic(result) -> tuple[float | None, float | None]:
    value, p = float(result.statistic), float(result.pvalue)
    return (None, None) if np.isnan(value) else (value, p)


def correlation_table(scored: pl.DataFrame) -> pl.DataFrame:
    """Pearson and Spearman correlation of length and perplexity; null where one of the two is
    constant (the correlation is undefined)."""
    rows = []
    sentences = whole_sentences(scored)
    for key, group in sorted(sentences.partition_by(KEYS, as_dict=True).items()):
        length = group["n_tokens"].to_numpy().astype(float)
        ppl = group["ppl"].to_numpy()
        defined = len(group) > 2 and np.ptp(length) > 0 and np.ptp(ppl) > 0
        pearson = _statistic(stats.pearsonr(length, ppl)) if defined else (None, None)
        spearman = _statistic(stats.spearmanr(length, ppl)) if defined else (None, None)
        rows.append({**dict(zip(KEYS, key, strict=True)), "n_sentences": len(group),
                     "min_tokens": int(length.min()), "max_tokens": int(length.max()),
                     "pearson_r": pearson[0], "pearson_p": pearson[1],
                     "spearman_rho": spearman[0], "spearman_p": spearman[1]})
    return pl.DataFrame(rows, schema=CORRELATION_SCHEMA)


def length_perplexity_table(scored: pl.DataFrame) -> pl.DataFrame:
    """Per dataset, mode and length: sentences, median and quartiles of perplexity (linear
    interpolation, numpy's default): what the figure draws."""
    ppl = pl.col("ppl")
    return whole_sentences(scored).group_by(*KEYS, "n_tokens").agg(
        pl.len().cast(pl.Int64).alias("n_sentences"),
        ppl.quantile(0.25, "linear").alias("ppl_q1"),
        ppl.median().alias("ppl_median"),
        ppl.quantile(0.75, "linear").alias("ppl_q3"),
    ).sort(*KEYS, "n_tokens")
