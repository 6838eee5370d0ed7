"""table_probe_edges's cost: reading predictions.parquet against parsing the predictions CoNLL-U.

    python bench/bench_probe_edges.py [--runs 4] [--copies 4] [--eval-sets 11] [--old]

Probe runs of the SPUD preset's shape, made here: the gold treebank is UD English-EWT test
repeated `--copies` times (sent_ids made unique), each of `--runs` runs has `--eval-sets` eval sets
(the preset: orig and 5 seeds each of spud and pos, 11) of every sentence, with a predicted tree
(the gold head and label of 80 % of the words, seeded) written as the probe writes it: the
CoNLL-U through core.treebank.conllu_lines, predictions.parquet and metrics.parquet through their
contracts. Times `run_edges` + the table on them (this checkout's code, which reads the Parquet)
and, with `--old`, the code of `--old-ref` (default main's, which parses the CoNLL-U with
`conllu`), checks that both write the same table bytes, and prints MB of CoNLL-U, words, seconds
and the projection to the SPUD preset's 7,130 MB of predictions (81 runs; docs/running.md).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
EWT_TEST = next((p / "shared" / "data" / "ud" / "UD_English-EWT" / "en_ewt-ud-test.conllu.gz"
                 for p in (REPO, *REPO.parents) if (p / "shared" / "data").is_dir()),
                Path("missing"))
PRESET_MB = 7130  # the SPUD preset's predictions CoNLL-U (docs/running.md)


def gold_treebank(dest: Path, copies: int) -> Path:
    from spudflow.cli import main

    text = gzip.decompress(EWT_TEST.read_bytes()).decode("utf-8")
    conllu = dest / "gold.conllu"
    with conllu.open("w", encoding="utf-8") as out:
        for copy in range(copies):
            out.write(text.replace("# sent_id = ", f"# sent_id = r{copy}-") if copy else text)
    assert main(["ingest", str(conllu), "--out", str(dest / "gold")]) == 0
    return dest / "gold"


def probe_runs(root: Path, gold: Path, runs: int, eval_sets: list[str]) -> list[Path]:
    """metrics.parquet, predictions.parquet and predictions/{eval set}.conllu per run."""
    from spudflow.core.artifacts import PROBE_METRICS, PROBE_PREDICTIONS
    from spudflow.core.contract import write_artifact
    from spudflow.core.treebank import conllu_lines, read_treebank

    tokens, sentences = read_treebank(gold)
    words = tokens.filter(pl.col("token_type") == "word")
    n = words.height
    rng = np.random.default_rng(0)
    metrics_paths = []
    for r in range(runs):
        folder = root / "runs" / f"run{r}" / "seed1"
        rows, frames = [], []
        for eval_set in eval_sets:
            right = rng.random(n) < 0.8
            head = np.where(right, words["head"].to_numpy(),
                            rng.integers(0, 10, n)).astype(np.int64)
            label = words["deprel"].str.split(":").list.first()
            deprel = pl.select(pl.when(pl.Series(rng.random(n) < 0.8)).then(label)
                               .otherwise(pl.lit("dep"))).to_series()
            predicted = words.select("sent_index", "word_index", "form").with_columns(
                pl.Series("head", head), deprel.alias("deprel"))
            frames.append(predicted.select(pl.lit(eval_set).alias("eval_set"),
                                           pl.col("sent_index", "word_index").cast(pl.Int64),
                                           "form", "head", "deprel"))
            is_word = pl.col("token_type") == "word"
            joined = tokens.join(predicted.select("sent_index", "word_index",
                                                  pl.col("head").alias("p_head"),
                                                  pl.col("deprel").alias("p_deprel"),
                                                  pl.lit("word").alias("token_type")),
                                 on=["sent_index", "word_index", "token_type"], how="left")
            joined = joined.with_columns(
                pl.when(is_word).then(pl.col("p_head")).otherwise(pl.col("head"))
                .cast(pl.Int32).alias("head"),
                pl.when(is_word).then(pl.col("p_deprel")).otherwise(pl.col("deprel"))
                .alias("deprel"), pl.when(is_word).then(pl.lit("_")).otherwise(pl.col("deps"))
                .alias("deps")).drop("p_head", "p_deprel")
            path = folder / "predictions" / f"{eval_set}.conllu"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(conllu_lines(joined, sentences)), encoding="utf-8")
            head_ok = head == words["head"].to_numpy()
            label_ok = (deprel == label).to_numpy()
            rows.append({"treebank": "ewt", "model": "bench", "baseline": "lm", "seed": 1,
                         "dist_layer": r, "label_layer": r, "auto_layers": False,
                         "eval_set": eval_set, "uas": head_ok.mean(), "las": (head_ok & label_ok)
                         .mean(), "relacc": label_ok.mean(), "root_acc": 0.0, "n_words": n,
                         "n_sentences": sentences.height, **{k: 0 for k in (
                             "n_too_long", "n_short", "n_train_sentences", "n_train_short",
                             "n_dev_sentences", "n_dev_short", "best_epoch")},
                         **{k: 0.0 for k in ("dev_uas", "dev_las", "dev_relacc",
                                             "dev_root_acc")}})
        write_artifact(pl.concat(frames), folder / "predictions.parquet", PROBE_PREDICTIONS)
        write_artifact(pl.DataFrame(rows, schema=PROBE_METRICS.polars_schema()),
                       folder / "metrics.parquet", PROBE_METRICS)
        metrics_paths.append(folder / "metrics.parquet")
    return metrics_paths


def old_module(ref: str):
    """aggregate/probe_edges.py as it is at `ref`, imported under another name."""
    source = subprocess.run(["git", "show", f"{ref}:workflow/spudflow/aggregate/probe_edges.py"],
                            cwd=REPO, check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "probe_edges_old.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("probe_edges_old", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["probe_edges_old"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def timed(module, metrics: list[Path], gold: dict, out: Path) -> float:
    from spudflow.aggregate.outputs import write_tables

    start = time.perf_counter()
    write_tables(module.edge_tables(module.run_edges(metrics, gold, punct=True, subtypes=False)),
                 out)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--copies", type=int, default=4, help="EWT test copies in the gold")
    parser.add_argument("--eval-sets", type=int, default=11)
    parser.add_argument("--old", action="store_true", help="also time --old-ref's code")
    parser.add_argument("--old-ref", default="main")
    args = parser.parse_args()
    from spudflow.aggregate import probe_edges

    eval_sets = ["orig", *(f"{m}/seed{s}" for m in ("spud", "pos") for s in range(1, 6))]
    eval_sets = eval_sets[:args.eval_sets]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gold_dir = gold_treebank(root, args.copies)
        start = time.perf_counter()
        metrics = probe_runs(root, gold_dir, args.runs, eval_sets)
        made = time.perf_counter() - start
        conllu_mb = sum(p.stat().st_size for p in root.rglob("*.conllu")
                        if p.parent.name != root.name) / 1e6
        parquet_mb = sum(p.stat().st_size for p in root.rglob("predictions.parquet")) / 1e6
        words = sum(pl.scan_parquet(p.parent / "predictions.parquet").select(pl.len())
                    .collect().item() for p in metrics)
        gold = {("ewt", e): gold_dir for e in eval_sets}
        new = timed(probe_edges, metrics, gold, root / "new")
        print(f"{args.runs} runs x {len(eval_sets)} eval sets, {words:,} predicted words: "
              f"{conllu_mb:,.0f} MB of CoNLL-U, {parquet_mb:,.1f} MB of predictions.parquet "
              f"(made in {made:.0f} s)")
        print(f"parquet (this checkout): {new:.2f} s, {new / conllu_mb * 1000:.2f} s per GB of "
              f"CoNLL-U; the preset's {PRESET_MB:,} MB: {new / conllu_mb * PRESET_MB:.0f} s")
        if args.old:
            old = timed(old_module(args.old_ref), metrics, gold, root / "old")
            same = all((root / "old" / p.name).read_bytes() == p.read_bytes()
                       for p in (root / "new").iterdir() if p.is_file())
            print(f"conllu ({args.old_ref}): {old:.2f} s, {old / conllu_mb * 1000:.1f} s per GB; "
                  f"the preset's: {old / conllu_mb * PRESET_MB:.0f} s; "
                  f"{old / new:.0f}x; same table bytes: {same}")
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()
