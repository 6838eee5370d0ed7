"""SLOR, NormLP and Word-LP Min-1 of one scoring run under two versions of scoring/reductions.py.

    python bench/bench_slor_token_set.py SCORE_DIR ITEMS UNIGRAM --other-workflow DIR --out OUT

Why: before commit 8c8d9a0 `item_statistics` added the log probabilities of tokens
that belong to no word (a transformer's `Ġ`/`▁` or a character between words) to the model side
of SLOR and NormLP, which have no unigram term for them. Scoring twice would cost a second
transformer run for the same log probabilities, so this takes one run's token_scores.parquet
(SCORE_DIR, from `spudflow score` with --unigram UNIGRAM) and recomputes the item rows with this
checkout's reductions and with the `item_statistics` of another checkout (--other-workflow, e.g.
a `git worktree` of 8c8d9a0~1): the first is compared with SCORE_DIR's item_scores.parquet (rows
that differ are counted: none when this checkout scored it), the second is written as
OUT/item_scores.parquet, ready for `spudflow table-cola`. Prints how many scored tokens lie
outside every word and how many cover several words. Whole-sentence rows only (no regions), as
table-cola reads.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
from pathlib import Path

import polars as pl

from spudflow.core.alignment import anchor_span, words_in_span
from spudflow.core.artifacts import ITEM_SCORES
from spudflow.core.contract import write_artifact
from spudflow.scoring.ngram import NgramModel
from spudflow.scoring.reductions import item_statistics

STATISTICS = ("logprob_sum", "n_tokens", "n_words", "ppl", "mean_logprob", "slor",
              "word_lp_min1", "normlp")


def load_item_statistics(workflow: Path):
    """`item_statistics` of another checkout's scoring/reductions.py (a lone module import)."""
    path = workflow / "spudflow" / "scoring" / "reductions.py"
    spec = importlib.util.spec_from_file_location("other_reductions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.item_statistics


def recompute(items: pl.DataFrame, tokens: pl.DataFrame, unigram, statistics) -> pl.DataFrame:
    """Whole-sentence rows from the token rows; every word a token overlaps is passed to a
    `statistics` that takes them (token_covers), as scoring/run.py does."""
    takes_covers = "token_covers" in inspect.signature(statistics).parameters
    by_id = {row["item_id"]: row for row in items.iter_rows(named=True)}
    rows = []
    for (item_id, model, method), group in tokens.sort("token_index").group_by(
            "item_id", "model", "method", maintain_order=True):
        item = by_id[item_id]
        covers = [words_in_span(*anchor_span(item["sentence"], s, e), item["word_starts"],
                                item["word_ends"])
                  for s, e in zip(group["char_start"], group["char_end"], strict=True)]
        row = statistics(group["logprob"].to_list(), group["word_index"].to_list(),
                         item["words"], list(range(len(item["words"]))), unigram,
                         *([covers] if takes_covers else []))
        rows.append({"item_id": item_id, "model": model, "method": method, **row,
                     "outside": group["word_index"].null_count(),
                     "multiword": sum(len(c) > 1 for c in covers)})
    return pl.DataFrame(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("score_dir", type=Path, help="token_scores.parquet + item_scores.parquet")
    parser.add_argument("items", type=Path)
    parser.add_argument("unigram", type=Path, help="the --unigram model file of the run")
    parser.add_argument("--other-workflow", type=Path, required=True,
                        help="workflow/ folder of the other checkout")
    parser.add_argument("--out", type=Path, required=True, help="folder for the other rows")
    args = parser.parse_args()
    items = pl.read_parquet(args.items)
    tokens = pl.read_parquet(args.score_dir / "token_scores.parquet")
    scored = pl.read_parquet(args.score_dir / "item_scores.parquet").filter(
        pl.col("region").is_null() & pl.col("skipped").is_null())
    unigram = NgramModel.load(args.unigram).unigram_logprob
    keys = ["item_id", "model", "method"]

    mine = recompute(items, tokens, unigram, item_statistics)
    check = scored.join(mine, on=keys, suffix="_again", how="full", coalesce=True)
    for column in STATISTICS:
        differ = check.filter(pl.col(column).ne_missing(pl.col(f"{column}_again"))).height
        print(f"{column}: {differ} rows of {args.score_dir} differ from this checkout's "
              "reductions")

    other = recompute(items, tokens, unigram, load_item_statistics(args.other_workflow))
    full = pl.read_parquet(args.score_dir / "item_scores.parquet")
    replaced = full.drop("slor", "word_lp_min1", "normlp").join(
        other.select(*keys, "slor", "word_lp_min1", "normlp"), on=keys, how="left")
    args.out.mkdir(parents=True, exist_ok=True)
    write_artifact(replaced.select(full.columns), args.out / "item_scores.parquet", ITEM_SCORES)

    print(f"{mine.height} sentences, {tokens.height} scored tokens; tokens outside every word: "
          f"{mine['outside'].sum()} (per sentence mean {mine['outside'].mean():.3f}, max "
          f"{mine['outside'].max()}, {(mine['outside'] > 0).sum()} sentences); tokens over "
          f"several words: {mine['multiword'].sum()} in {(mine['multiword'] > 0).sum()} sentences")
    examples = tokens.filter(pl.col("word_index").is_null())["token"].value_counts(sort=True)
    print("most common outside tokens:", examples.head(5).rows())
    joined = mine.join(other, on=keys, suffix="_other")
    for column in ("slor", "normlp", "word_lp_min1"):
        diff = (joined[column] - joined[f"{column}_other"]).abs()
        before = joined[f"{column}_other"].mean()
        print(f"{column}: rows changed {(diff > 1e-12).sum()} of {joined.height}, mean this "
              f"{joined[column].mean():.4f} vs other {before:.4f}, max |diff| {diff.max():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
