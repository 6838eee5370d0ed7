"""Small hand-made inputs of the aggregate stage, written through the artifact contracts
(core/artifacts.py), so they have exactly the columns and types the producers write.

Scores are drawn from seeded generators with a known effect (nonce sentences more perplexing,
grammatical sentences more probable, ...) so every statistic has something to find. The tests
of finished tiny runs (tests/test_every_table.py) run the same consumers on what the producers
really write.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl

from spudflow.core import artifacts
from spudflow.core.contract import Artifact, write_artifact
from spudflow.core.tables import TABLE_FORMATS
from spudflow.core.text_hash import text_hash

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "aggregate.md"


def run_command(*args) -> int:
    """`spudflow ARGS...` in this process (no output captured): its exit status. For fixtures
    that build tables once per module, where run_cli (per test) cannot be used."""
    from spudflow.cli import main

    return main([str(a) for a in args])


def items_frame(rows: list[dict], dataset: str, language: str) -> pl.DataFrame:
    """The items columns every family shares (items.FAMILY) for rows carrying item_id,
    group_id, sentence, label and the dataset's condition columns."""
    shared = []
    for row in rows:
        words = row["sentence"].split()
        starts, position = [], 0
        for word in words:
            position = row["sentence"].index(word, position)
            starts.append(position)
            position += len(word)
        shared.append({
            "dataset": dataset, "item_id": row["item_id"], "group_id": row["group_id"],
            "sentence": row["sentence"], "words": words, "word_starts": starts,
            "word_ends": [s + len(w) for s, w in zip(starts, words, strict=True)],
            "label": row.get("label"), "language": language, "regions": row.get("regions", []),
        })
    frame = pl.DataFrame(shared, schema={
        "dataset": pl.String, "item_id": pl.String, "group_id": pl.String,
        "sentence": pl.String, "words": pl.List(pl.String), "word_starts": pl.List(pl.Int32),
        "word_ends": pl.List(pl.Int32), "label": pl.Int8, "language": pl.String,
        "regions": pl.List(pl.Struct({"name": pl.String, "start": pl.Int32, "end": pl.Int32})),
    })
    shared_names = {"item_id", "group_id", "sentence", "label", "regions"}
    conditions = pl.DataFrame([{k: v for k, v in r.items() if k not in shared_names}
                               for r in rows])
    return pl.concat([frame, conditions], how="horizontal")


def scores_frame(item_ids: list[str], model: str, method: str, logprob: np.ndarray,
                 n_tokens: np.ndarray, region: str | None = None,
                 unigram: np.ndarray | None = None) -> pl.DataFrame:
    """item_scores rows: ppl = exp(-logprob / n_tokens); SLOR, Word-LP Min-1 and NormLP
    from a unigram log-probability when given."""
    logprob = np.asarray(logprob, dtype=float)
    n_tokens = np.asarray(n_tokens, dtype=int)
    data = {
        "item_id": item_ids, "model": [model] * len(item_ids), "method": [method] * len(item_ids),
        "logprob_sum": logprob, "n_tokens": n_tokens, "n_words": n_tokens,
        "ppl": np.exp(-logprob / n_tokens), "mean_logprob": logprob / n_tokens,
    }
    missing = None if unigram is None else unigram
    data["slor"] = None if missing is None else (logprob - unigram) / n_tokens
    data["word_lp_min1"] = None if missing is None else logprob / n_tokens - 1.0
    data["normlp"] = None if missing is None else -logprob / unigram
    data["region"] = [region] * len(item_ids)
    data["skipped"] = None
    return pl.DataFrame(data).with_columns(
        pl.col("region", "skipped").cast(pl.String),
        pl.col("slor", "word_lp_min1", "normlp").cast(pl.Float64))


def _filled(frame: pl.DataFrame, artifact: Artifact) -> pl.DataFrame:
    """Columns of the artifact the fixture does not vary: null where nullable, else a typed
    constant (these tests do not read them)."""
    fill = {pa_type: value for pa_type, value in (("string", ""), ("int8", 0), ("int32", 0),
                                                   ("int64", 0), ("bool", False))}
    absent = []
    for column in artifact.columns:
        if column.name in frame.columns:
            continue
        dtype = artifact.polars_schema()[column.name]
        value = None if column.nullable else fill.get(str(column.type), [])
        absent.append(pl.lit(value, dtype=dtype).alias(column.name))
    return frame.with_columns(absent)


def write(frame: pl.DataFrame, path: Path, artifact: Artifact | None = None) -> Path:
    """Write through the artifact's contract: items (by the path's folder) unless given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if artifact is None:
        artifact = artifacts.ITEM_SCORES if path.name == "item_scores.parquet" else None
    if artifact is None:
        raise ValueError(f"{path}: say which artifact this fixture is")
    if artifact is artifacts.ITEM_SCORES and "text_hash" not in frame.columns:
        frame = with_text_hashes(frame, path)
    write_artifact(_filled(frame, artifact), path, artifact)
    return path


def with_text_hashes(scores: pl.DataFrame, path: Path) -> pl.DataFrame:
    """Score rows with the text hash the scorer writes: of their item's sentence in the items
    file of the score path's dataset (results/items/{dataset}.parquet), written first."""
    items_path = path.parents[3] / "items" / f"{path.parent.parent.name}.parquet"
    items = pl.read_parquet(items_path, columns=["item_id", "sentence"])
    hashes = items.select("item_id", pl.col("sentence").map_elements(
        text_hash, return_dtype=pl.String).alias("text_hash"))
    hashed = scores.join(hashes, on="item_id", how="left", maintain_order="left")
    assert hashed["text_hash"].null_count() == 0, f"{path}: score rows of no item"
    return hashed


def score_path(root: Path, dataset: str, model: str) -> Path:
    return root / "results" / "scores" / dataset / model / "item_scores.parquet"


# --- SPUD pairs: each original sentence with nonce versions by two methods -------------------

SPUD_SCORING_FUNCTIONS = (("gpt", "ppl"), ("bert", "pppl"), ("bert", "pppl_l2r"))


def spud_inputs(root: Path, dataset: str = "spud_en", language: str = "en", n_groups: int = 30,
                seed: int = 0, nonce_seeds: tuple[int, ...] = (1,)) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_groups):
        rows.append({"item_id": f"{g}-orig", "group_id": f"g{g}",
                     "sentence": f"the cat {g} sat on the mat", "label": None,
                     "method": "orig", "seed": None})
        for method in ("spud", "pos"):
            for s in nonce_seeds:
                rows.append({"item_id": f"{g}-{method}-{s}", "group_id": f"g{g}",
                             "sentence": f"the dax {g} blicked on the wug"
                             + ("" if s == 1 else f" {s}"), "label": None,
                             "method": method, "seed": s})
    items = items_frame(rows, dataset, language)
    items_path = write(items, root / "results" / "items" / f"{dataset}.parquet",
                       artifacts.ITEMS_SPUD)
    ids = items["item_id"].to_list()
    n_tokens = rng.integers(5, 12, len(ids))
    is_nonce = (items["method"] != "orig").to_numpy()
    score_paths = []
    by_model: dict[str, list[pl.DataFrame]] = {}
    for k, (model, method) in enumerate(SPUD_SCORING_FUNCTIONS):
        logprob = -n_tokens * (3.0 + 0.8 * is_nonce + 0.1 * k + rng.normal(0, 0.4, len(ids)))
        by_model.setdefault(model, []).append(scores_frame(ids, model, method, logprob, n_tokens))
    for model, frames in by_model.items():
        score_paths.append(write(pl.concat(frames), score_path(root, dataset, model)))
    return items_path, score_paths


# --- German case: every case assignment but NNN/AAA/DDD, in all six orders ------------------

def german_case_inputs(root: Path, n_templates: int = 3, seed: int = 0,
                       dataset: str = "german_case") -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(seed)
    rows = []
    animacies = ["110", "100", "110"]
    for t in range(n_templates):
        np_animacy = animacies[t % len(animacies)]
        for cases in itertools.product("NDA", repeat=3):
            cases = "".join(cases)
            if cases in ("NNN", "DDD", "AAA"):
                continue
            grammatical = sorted(cases) == sorted("NDA")
            doubled = None if grammatical else max(set(cases), key=cases.count)
            for order in itertools.permutations("123"):
                positions = "".join(order)
                rows.append({
                    "item_id": f"t{t}-{cases}-{positions}", "group_id": f"t{t}",
                    "sentence": f"Wir wissen , dass {cases} {positions} gegeben hat .",
                    "label": int(grammatical), "template": f"t{t}", "cases": cases,
                    "positions": positions, "grammatical": grammatical, "violation": doubled,
                    "animacy": "".join(np_animacy[int(p) - 1] for p in positions),
                })
    items = items_frame(rows, dataset, "de")
    items_path = write(items, root / "results" / "items" / f"{dataset}.parquet",
                       artifacts.ITEMS_GERMAN_CASE)
    ids = items["item_id"].to_list()
    grammatical = items["grammatical"].to_numpy()
    n_tokens = np.full(len(ids), 9)
    paths = []
    for k, model in enumerate(("gbert", "ggpt")):
        effect = 1.5 + k
        logprob = -40 + effect * grammatical + rng.normal(0, 2.0, len(ids))
        method = "pppl" if model == "gbert" else "ppl"
        paths.append(write(scores_frame(ids, model, method, logprob, n_tokens),
                           score_path(root, dataset, model)))
    return items_path, paths


# --- CoLA: acceptability labels, two dev splits ------------------------------------------------

def cola_inputs(root: Path, n_per_split: int = 60, seed: int = 0,
                unigram: bool = True) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(seed)
    rows = []
    for split in ("in_domain_dev", "out_of_domain_dev"):
        for i in range(n_per_split):
            label = int(rng.random() < 0.7)
            rows.append({"item_id": f"{split}-{i}", "group_id": f"{split}-{i}",
                         "sentence": f"sentence number {i} of {split}", "label": label,
                         "split": split, "source": f"src{i % 4}"})
    items = items_frame(rows, "cola", "en")
    items_path = write(items, root / "results" / "items" / "cola.parquet", artifacts.ITEMS_COLA)
    ids = items["item_id"].to_list()
    labels = items["label"].to_numpy()
    n_tokens = rng.integers(4, 15, len(ids))
    logprob = -n_tokens * (4.0 - 0.7 * labels + rng.normal(0, 0.6, len(ids)))
    unigram_lp = -n_tokens * (6.0 + rng.normal(0, 0.3, len(ids))) if unigram else None
    path = write(scores_frame(ids, "lm", "ppl", logprob, n_tokens, unigram=unigram_lp),
                 score_path(root, "cola", "lm"))
    return items_path, [path]


# --- BLiMP: good/bad pairs in two fields, one tie ---------------------------------------------

BLIMP_PARADIGMS = (("morphology", "anaphor_agreement", "anaphor_gender_agreement"),
                   ("morphology", "anaphor_agreement", "anaphor_number_agreement"),
                   ("syntax", "island_effects", "adjunct_island"))


def blimp_inputs(root: Path, n_pairs: int = 12, seed: int = 0) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(seed)
    rows = []
    for field, term, uid in BLIMP_PARADIGMS:
        for i in range(n_pairs):
            for label, kind in ((1, "good"), (0, "bad")):
                rows.append({"item_id": f"{uid}-{i}-{kind}", "group_id": f"{uid}-{i}",
                             "sentence": f"{kind} sentence {i}", "label": label, "field": field,
                             "linguistics_term": term, "UID": uid, "pairID": str(i)})
    items = items_frame(rows, "blimp", "en")
    items_path = write(items, root / "results" / "items" / "blimp.parquet",
                       artifacts.ITEMS_BLIMP)
    ids = items["item_id"].to_list()
    good = items["label"].to_numpy()
    n_tokens = np.full(len(ids), 6)
    logprob = -30 + 1.0 * good + rng.normal(0, 2.0, len(ids))
    logprob[1] = logprob[0]  # the first pair is a tie
    path = write(scores_frame(ids, "lm", "ppl", logprob, n_tokens), score_path(root, "blimp", "lm"))
    return items_path, [path]


# --- Japanese transitivity: pairs of sentences differing in the verb -------------------------

JA_VERB_PAIRS = ("開ける/開く", "閉める/閉まる", "始める/始まる")
JA_ARGUMENTS = ("猫が", "ドアを", "私は", "")


def japanese_inputs(root: Path, seed: int = 0,
                    dataset: str = "japanese_base") -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(seed)
    rows = []
    for v, verb_pair in enumerate(JA_VERB_PAIRS):
        transitive, intransitive = verb_pair.split("/")
        for a, (first, second) in enumerate(itertools.permutations(JA_ARGUMENTS, 2)):
            for adverbial in (None, "よく"):
                args = [x for x in (first, second) if x]
                obligatory = any(x.endswith("を") for x in args) or len(args) == 2
                group = f"v{v}-a{a}-{adverbial or 'none'}"
                prefix = (adverbial or "") + "".join(args)
                for verb, kind in ((transitive, "transitive"), (intransitive, "intransitive")):
                    start = len(prefix)
                    rows.append({
                        "item_id": f"{group}-{kind}", "group_id": group,
                        "sentence": prefix + verb + "。",
                        "label": (1 if kind == "transitive" else 0) if obligatory else None,
                        "regions": [{"name": "verb", "start": start, "end": start + len(verb)}],
                        "verb_form": kind, "verb_pair": verb_pair, "pair_number": v + 1,
                        "context_label": "obligatory" if obligatory else "ambiguous",
                        "order": "-".join(["adv"] * bool(adverbial) + [x[-1] for x in args]),
                        "arguments": args,
                        "adverbial": adverbial,
                    })
    items = items_frame(rows, dataset, "ja")
    items_path = write(items, root / "results" / "items" / f"{dataset}.parquet",
                       artifacts.ITEMS_JAPANESE)
    ids = items["item_id"].to_list()
    transitive = (items["verb_form"] == "transitive").to_numpy()
    has_wo = items["arguments"].list.eval(pl.element().str.ends_with("を")).list.any().to_numpy()
    n_tokens = np.full(len(ids), 7)
    frames = []
    for model, method, region, effect in (("bert", "pppl", None, 1.0),
                                          ("bert", "pppl", "verb", 1.5),
                                          ("gpt", "ppl", None, 0.3)):
        logprob = -20 + effect * transitive * (2 * has_wo - 0.5) + rng.normal(0, 1.0, len(ids))
        frames.append((model, scores_frame(ids, model, method, logprob, n_tokens, region=region)))
    paths = []
    for model in ("bert", "gpt"):
        frame = pl.concat([f for m, f in frames if m == model])
        paths.append(write(frame, score_path(root, dataset, model)))
    return items_path, paths


# --- DepProbe metrics -------------------------------------------------------------------------

PROBE_SENTENCES_PER_SET = 20


def _sentence_counts(rng, p_uas: float, p_relacc: float, n: int) -> dict[str, np.ndarray]:
    """Counts of n sentences as a probe would score them (LAS needs head and label right)."""
    words = rng.integers(5, 25, n)
    heads = rng.binomial(words, min(p_uas, 1.0))
    labels = rng.binomial(words, min(p_relacc, 1.0))
    both = np.minimum(rng.binomial(heads, 0.85), labels)
    return {"n_words": words, "n_uas": heads, "n_relacc": labels, "n_las": both,
            "root_right": rng.random(n) < p_uas}


def probe_metrics(root: Path, seed: int = 0) -> Path:
    """Two models with three probe seeds (layers 6/7), an MR baseline, a layer sweep of one model;
    every run evaluated on orig and on spud/pos nonce sets with two seeds each, on the same 20
    sentences; the per-sentence counts (sentence_counts.parquet, next to the metrics) sum to
    the metrics, as `probe train` writes them."""
    rng = np.random.default_rng(seed)
    rows, sentences = [], []
    runs = [("bert", "lm", 6, 7), ("gpt", "lm", 6, 7), ("bert", "MR", 6, 7)]
    runs += [("bert", "lm", layer, layer) for layer in range(4)]
    for model, baseline, dist_layer, label_layer in runs:
        quality = {"bert": 0.8, "gpt": 0.7}[model] - (0.4 if baseline != "lm" else 0.0)
        for probe_seed in (1, 2, 3):
            # selection-data scores: one per run, on every row of it
            dev = quality + 0.02 * dist_layer + rng.normal(0, 0.01)
            dev_scores = {"dev_uas": dev, "dev_las": dev - 0.1, "dev_relacc": dev + 0.05,
                          "dev_root_acc": dev + 0.1}
            for eval_set in ("orig", "spud/seed1", "spud/seed2", "pos/seed1", "pos/seed2"):
                drop = 0.0 if eval_set == "orig" else (0.1 if eval_set.startswith("spud") else 0.05)
                base = quality - drop + 0.02 * dist_layer
                counts = _sentence_counts(rng, base, base + 0.05, PROBE_SENTENCES_PER_SET)
                run = {"treebank": "en_ewt", "model": model, "baseline": baseline,
                       "seed": probe_seed, "dist_layer": dist_layer, "label_layer": label_layer,
                       "eval_set": eval_set}
                sentences.append(pl.DataFrame({
                    **run, "sent_index": np.arange(PROBE_SENTENCES_PER_SET), **counts}))
                n = int(counts["n_words"].sum())
                rows.append({
                    **run, "uas": counts["n_uas"].sum() / n, "las": counts["n_las"].sum() / n,
                    "relacc": counts["n_relacc"].sum() / n,
                    "root_acc": float(counts["root_right"].mean()), "n_words": n,
                    "n_sentences": PROBE_SENTENCES_PER_SET, "auto_layers": False, **dev_scores,
                })
    frame = pl.DataFrame(rows, schema_overrides={"baseline": pl.String})
    folder = root / "results" / "probe" / "en_ewt"
    write(pl.concat(sentences), folder / artifacts.PROBE_SENTENCES_FILE,
          artifacts.PROBE_SENTENCES)
    return write(frame, folder / "metrics.parquet", artifacts.PROBE_METRICS)


def probe_words(sent_index: int) -> int:
    return 3 + sent_index % 4


def probe_predictions(metrics: Path) -> Path:
    """predictions.parquet next to probe_metrics' files, as `probe train` writes it: the words
    of each evaluated sentence of each eval set (PROBE_WORDS(sentence) of them: the fixture's
    runs, sharing one folder, count different words scored), FORMs `w{sentence}.{word}` on
    the original set and `{method}{seed}.{sentence}.{word}` on a nonce set; heads and labels
    arbitrary."""
    counts = pl.read_parquet(metrics.parent / artifacts.PROBE_SENTENCES_FILE).select(
        "eval_set", "sent_index").unique().sort("eval_set", "sent_index")
    rows = []
    for eval_set, index in counts.iter_rows():
        n = probe_words(index)
        prefix = "w" if eval_set == "orig" else eval_set.replace("/seed", "") + "."
        rows += [{"eval_set": eval_set, "sent_index": index, "word_index": i,
                  "form": f"{prefix}{index}.{i}", "head": 0, "deprel": "root"}
                 for i in range(1, n + 1)]
    return write(pl.DataFrame(rows), metrics.parent / artifacts.PROBE_PREDICTIONS_FILE,
                 artifacts.PROBE_PREDICTIONS)


# --- defined columns -------------------------------------------------------------------------

def documented_columns(name: str) -> list[str]:
    """The columns of results/tables/NAME.* as defined in core (and rendered in the docs)."""
    from spudflow.core.table_artifacts import TABLES

    return list(TABLES[name].names)


def assert_table_files(out_dir: Path, name: str, formats=TABLE_FORMATS) -> pl.DataFrame:
    """NAME exists in every format with exactly the documented columns; returns the Parquet."""
    expected = documented_columns(name)
    table = pl.read_parquet(out_dir / f"{name}.parquet")
    assert table.columns == expected, name
    if "csv" in formats:
        header = (out_dir / f"{name}.csv").read_text(encoding="utf-8").splitlines()[0]
        assert header.split(",") == expected
    if "md" in formats:
        header = (out_dir / f"{name}.md").read_text(encoding="utf-8").splitlines()[0]
        assert [c.strip() for c in header.strip("|").split("|")] == expected
    if "tex" in formats:
        tex = (out_dir / f"{name}.tex").read_text(encoding="utf-8")
        assert "\\toprule" in tex and "\\bottomrule" in tex
        assert tex.split("\\midrule")[0].count("&") == len(expected) - 1
    for fmt in set(TABLE_FORMATS) - set(formats):
        assert not (out_dir / f"{name}.{fmt}").exists()
    return table
