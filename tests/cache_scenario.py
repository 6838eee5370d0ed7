"""The five-sentence rerun: a workflow copy whose SPUD pairs, built from the first 16
sentences of EWT test, are scored by an n-gram model and a tiny GPT-2 that do not depend on the
treebank; then five sentences are edited (a determiner each, form and `# text`). Used by
tests/test_score_cache_rerun.py and bench/bench_score_cache_rerun.py."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

from scoring_models import tiny_model_dir
from workflow_helpers import REPO, copy_workflow, update_config

EWT_TEST = REPO / "resources" / "ud" / "UD_English-EWT" / "en_ewt-ud-test.conllu.gz"
N_SENTENCES = 16
N_EDITED = 5
DATASET = "spud_scen_en_test"
MODELS = {"scen_trigram": ["kn"], "scen_gpt2": ["ppl"]}
TRAINING_TEXT = ["The cat sat on the mat .", "A dog saw the cat in the garden .",
                 "This is a sentence about the weather ."]
COUNTS = re.compile(r"cache: (\d+) hits, (\d+) computed")


def first_sentences(n: int) -> str:
    """The first n sentences of EWT test with 6 to 12 words (short enough for the tiny GPT-2),
    as CoNLL-U text."""
    with gzip.open(EWT_TEST, "rt", encoding="utf-8") as handle:
        blocks = handle.read().split("\n\n")
    kept = [b for b in blocks if 6 <= sum(1 for line in b.splitlines()
                                          if re.match(r"^\d+\t", line)) <= 12][:n]
    return "\n\n".join(kept) + "\n\n"


def scenario_workflow(dest: Path) -> Path:
    workdir = copy_workflow(dest)
    tiny = workdir / "resources" / "tiny"
    (tiny / "scen_en.conllu").write_text(first_sentences(N_SENTENCES), encoding="utf-8")
    (tiny / "scen_text.txt").write_text("\n".join(TRAINING_TEXT) + "\n", encoding="utf-8")
    shutil.copytree(tiny_model_dir("causal", "bytebpe"), tiny / "scen_gpt2")

    def change(config):
        config["treebanks"] = {"scen_en": {"lang": "en",
                                           "splits": {"test": "resources/tiny/scen_en.conllu"}}}
        config["pairs"]["spud"] = {"enabled": True, "treebanks": None, "min_words": 4}
        for kind in ("german_case", "japanese_transitivity", "cola", "blimp"):
            config["pairs"][kind]["enabled"] = False
        config["controls"] = {}
        config["ngrams"] = {"scen_text": {"lang": "en", "text": ["resources/tiny/scen_text.txt"],
                                          "order": 3}}
        config["models"] = {
            "scen_trigram": {"source": "results/ngram/scen_text.parquet", "kind": "ngram",
                             "methods": MODELS["scen_trigram"]},
            "scen_gpt2": {"source": "resources/tiny/scen_gpt2", "kind": "causal",
                          "methods": MODELS["scen_gpt2"], "device": "cpu"}}
        config["scoring"] = {"datasets": None, "unigram": ["scen_text"], "block_size": 4,
                             "shards": 1}
        # No probes, human evaluation kit or training shares: nothing here reads them.
        for section in ("probe", "human_eval"):
            config.pop(section, None)
        config["training_shares"] = {}

    update_config(workdir, change)
    return workdir


def edit_sentences(workdir: Path, n: int = N_EDITED) -> list[str]:
    """In the first n sentences with a determiner `the`/`The`, make it `this`/`This` (form,
    lemma and the `# text` line); returns the edited sentences' ids."""
    path = workdir / "resources" / "tiny" / "scen_en.conllu"
    blocks = path.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    edited = []
    for k, block in enumerate(blocks):
        lines = block.splitlines()
        index = next((i for i, line in enumerate(lines)
                      if re.match(r"^\d+\t(the|The)\tthe\tDET\t", line)), None)
        if index is None or len(edited) == n:
            continue
        cells = lines[index].split("\t")
        old = cells[1]
        new = "this" if old == "the" else "This"
        cells[1], cells[2] = new, "this"
        lines[index] = "\t".join(cells)
        text = next(i for i, line in enumerate(lines) if line.startswith("# text = "))
        lines[text] = re.sub(rf"\b{old}\b", new, lines[text], count=1)
        sent_id = next(line for line in lines if line.startswith("# sent_id = "))
        edited.append(sent_id.removeprefix("# sent_id = "))
        blocks[k] = "\n".join(lines)
    assert len(edited) == n, f"only {len(edited)} sentences with a determiner `the`"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return edited


def cache_counts(workdir: Path) -> dict[str, tuple[int, int]]:
    """model -> (hits, computed) from the scoring job's log of the scenario's dataset."""
    counts = {}
    for model in MODELS:
        log = (workdir / "results" / "logs" / "score" / DATASET / f"{model}.log").read_text()
        (found,) = COUNTS.findall(log)
        counts[model] = tuple(map(int, found))
    return counts
