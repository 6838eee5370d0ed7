"""The German case paper's own inputs through our pipeline: the reference repository's 2019
sentence files (crochereau/Word-based-LM at REFERENCE_COMMIT) go through `spudflow items
german-case --sentences`, the paper LSTM's probabilities of those lines (LSTM_{gram,ungram}_probs
.pkl) become a scores file, and `spudflow table-german-case` gives the tables. Prints the figures
the paper and the reference notebooks report beside ours, and fails when one differs.

It also writes the test fixture, tests/data/german_case_reference/lstm_logprobs.parquet: the
natural log of each probability by file and line. The repository has no licence, so only these
numbers are vendored, not its sentences (tests/data/german_case_reference/README.md); the test
(tests/test_german_case_reference.py) lays stand-in sentences out as the reference's files.

    python bench/german_case_reference.py [--reference DIR] [--write-fixture] [--keep DIR]

DIR: a copy of the repository (its src/data and src/results); without it the four files are
downloaded from raw.githubusercontent.com at REFERENCE_COMMIT. Takes about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import io
import os
import pickle
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
REFERENCE_COMMIT = "5ccd37b36ff28758d29dfa87270d6ddf0cb1db04"
RAW = f"https://raw.githubusercontent.com/crochereau/Word-based-LM/{REFERENCE_COMMIT}/"
FILES = {
    "grammatical_sentences": "src/data/grammatical_sentences.txt",
    "ungrammatical_sentences": "src/data/ungrammatical_sentences.txt",
    "grammatical_probs": "src/results/LSTM_results/LSTM_gram_probs.pkl",
    "ungrammatical_probs": "src/results/LSTM_results/LSTM_ungram_probs.pkl",
}
FIXTURE = REPO / "tests" / "data" / "german_case_reference" / "lstm_logprobs.parquet"

# What the reference reports, to 3 decimals where its notebooks print them, else the paper's 2.
EXPECTED = {
    # the paper (german_case_lstm.txt, "Results"; the per-violation AUC table): mean AUC over
    # templates
    ("german_case_auc", "all", "auc_mean"): 0.56,
    ("german_case_auc_violation", "all N", "auc_mean"): 0.42,
    ("german_case_auc_violation", "all A", "auc_mean"): 0.55,
    ("german_case_auc_violation", "all D", "auc_mean"): 0.71,
    # src/analyse_results.ipynb, get_results (cell 37): one ROC over all templates
    ("german_case_auc", "all", "auc_pooled"): 0.545,
    ("german_case_auc_violation", "all N", "auc_pooled"): 0.440,
    ("german_case_auc_violation", "all A", "auc_pooled"): 0.535,
    ("german_case_auc_violation", "all D", "auc_pooled"): 0.658,
    # ... get_semantically_plausible_results (cell 50), the plausible-sentences table's sentences
    ("german_case_auc", "restricted", "auc_pooled"): 0.617,
    ("german_case_auc_violation", "restricted N", "auc_pooled"): 0.523,
    ("german_case_auc_violation", "restricted A", "auc_pooled"): 0.610,
    ("german_case_auc_violation", "restricted D", "auc_pooled"): 0.719,
    # src/1vs6_analyses.ipynb: cell 26 ("lstm average: 0.597"), cell 31 (by first case)
    ("german_case_order_auc", "one_vs_six_first_case N", "auc_mean"): 0.81,
    ("german_case_order_auc", "one_vs_six_first_case A", "auc_mean"): 0.35,
    ("german_case_order_auc", "one_vs_six_first_case D", "auc_mean"): 0.63,
    # ... cell 32 (animate and inanimate per case; the paper's animacy table is their difference)
    ("german_case_animacy", "N", "auc_animate"): 0.60,
    ("german_case_animacy", "N", "auc_inanimate"): 0.59,
    ("german_case_animacy", "A", "auc_animate"): 0.56,
    ("german_case_animacy", "A", "auc_inanimate"): 0.67,
    ("german_case_animacy", "D", "auc_animate"): 0.63,
    ("german_case_animacy", "D", "auc_inanimate"): 0.54,
}


class _ArraysOnly(pickle.Unpickler):
    """The probability files are pickled numpy arrays; anything else in them is refused (a
    pickle from the network may name any callable)."""

    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray",
                                                          "_reconstruct"),
               ("numpy", "ndarray"), ("numpy", "dtype"),
               ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar")}

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refusing {module}.{name} in a probability file")
        return super().find_class(module, name)


def read_reference(source: Path | None) -> dict[str, bytes]:
    files = {}
    for key, path in FILES.items():
        if source is not None:
            files[key] = (source / path).read_bytes()
        else:
            with urllib.request.urlopen(RAW + path, timeout=120) as response:
                files[key] = response.read()
    return files


def logprobs(files: dict[str, bytes]) -> pl.DataFrame:
    """file (grammatical/ungrammatical), line (1-based), logprob: np.log of the pickled
    probabilities, as the reference notebooks take them."""
    frames = []
    for which in ("grammatical", "ungrammatical"):
        probs = np.asarray(_ArraysOnly(io.BytesIO(files[f"{which}_probs"])).load(),
                           dtype=np.float64)
        frames.append(pl.DataFrame({"file": [which] * len(probs),
                                    "line": np.arange(1, len(probs) + 1, dtype=np.int32),
                                    "logprob": np.log(probs)}))
    return pl.concat(frames)


def reference_scores(items: Path, fixture: pl.DataFrame, out: Path) -> None:
    """The LSTM's log-probabilities as the item_scores file of model `wordnlm`, method
    `reference`: each item gets the number of the reference line it is (same template, case
    assignment and NP order); one token per word (a word-level model)."""
    sys.path.insert(0, str(REPO / "workflow"))
    from spudflow.core.artifacts import ITEM_SCORES
    from spudflow.core.contract import write_artifact
    from spudflow.items.german_case_reference import reference_line, template_id

    by_design = {}
    for which, line, logprob in fixture.iter_rows():
        template, cases, positions = reference_line(which, line - 1)
        by_design[template_id(template), cases, positions] = logprob
    frame = pl.read_parquet(items, columns=["item_id", "template", "cases", "positions", "words"])
    logprob = np.array([by_design[t, c, p] for t, c, p in
                        frame.select("template", "cases", "positions").iter_rows()])
    n = frame["words"].list.len().cast(pl.Int32).to_numpy()
    scores = pl.DataFrame({
        "item_id": frame["item_id"], "model": "wordnlm", "method": "reference",
        "region": pl.Series([None] * frame.height, dtype=pl.String),
        "logprob_sum": logprob, "n_tokens": n, "n_words": n,
        "n_unseen": pl.Series([None] * frame.height, dtype=pl.Int32),
        "ppl": np.exp(-logprob / n), "mean_logprob": logprob / n,
        "slor": pl.Series([None] * frame.height, dtype=pl.Float64),
        "word_lp_min1": pl.Series([None] * frame.height, dtype=pl.Float64),
        "normlp": pl.Series([None] * frame.height, dtype=pl.Float64),
        "skipped": pl.Series([None] * frame.height, dtype=pl.String),
    })
    out.parent.mkdir(parents=True, exist_ok=True)
    write_artifact(scores, out, ITEM_SCORES)


def spudflow(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    subprocess.run([sys.executable, "-m", "spudflow", *args], env=env, check=True)


def figure(tables: Path, table: str, row: str, column: str) -> float:
    frame = pl.read_parquet(tables / f"{table}.parquet")
    if table in ("german_case_auc",):
        frame = frame.filter(pl.col("analysis") == row)
    elif table == "german_case_auc_violation":
        analysis, violation = row.split()
        frame = frame.filter(pl.col("analysis") == analysis, pl.col("violation") == violation)
    elif table == "german_case_order_auc":
        comparison, subset = row.split()
        frame = frame.filter(pl.col("comparison") == comparison, pl.col("subset") == subset)
    else:
        frame = frame.filter(pl.col("case") == row)
    return frame[column].item()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="a copy of crochereau/Word-based-LM")
    parser.add_argument("--write-fixture", action="store_true",
                        help=f"(re)write {FIXTURE.relative_to(REPO)}")
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    args = parser.parse_args()
    files = read_reference(args.reference)
    fixture = logprobs(files)
    if args.write_fixture:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        fixture.write_parquet(FIXTURE, compression="zstd", statistics=False)
        print(f"wrote {FIXTURE.relative_to(REPO)} ({FIXTURE.stat().st_size} bytes)")
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        sentences = []
        for which in ("grammatical", "ungrammatical"):
            path = work / f"{which}_sentences.txt"
            path.write_bytes(files[f"{which}_sentences"])
            sentences.append(str(path))
        items = work / "items" / "german_case.parquet"
        spudflow("items", "german-case", "--sentences", *sentences, "--out", str(items))
        scores = work / "scores" / "german_case" / "wordnlm" / "item_scores.parquet"
        reference_scores(items, fixture, scores)
        tables = work / "tables"
        spudflow("table-german-case", "--items", str(items), "--scores", str(scores),
                 "--out-dir", str(tables))
        failed = 0
        for (table, row, column), expected in EXPECTED.items():
            got = figure(tables, table, row, column)
            digits = len(str(expected).split(".")[1])
            ok = round(got, digits) == expected
            failed += not ok
            print(f"{'ok ' if ok else 'BAD'} {table} {row} {column}: {got:.4f} "
                  f"(reference {expected})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
