"""Training data overlap (spudflow.core.overlap) and training shares (core.training_share):
no model may score sentences it was trained on. The workflow-level checks (planning stops on an
overlap) are in tests/test_workflow.py."""

from __future__ import annotations

import polars as pl
import pytest

from spudflow.core.overlap import (
    Sentences,
    conllu_sentences,
    dataset_sources,
    model_training,
    overlap_errors,
    source_texts,
)
from spudflow.core.training_share import training_share_keys

from conftest import REPO

TINY_EN = REPO / "tests" / "data" / "workflow" / "tiny_en.conllu"
TINY_DE = REPO / "tests" / "data" / "workflow" / "tiny_de.conllu"
BLIMP = REPO / "resources" / "blimp" / "causative.jsonl"
SECOND = ("For those who follow social media transitions on Capitol Hill, this will be a little "
          "different.")


def _tiny_en(part="all", share=None, min_words=0, path=str(TINY_EN)):
    name = "tiny_en/test@train" if part == "train" else "tiny_en/test"
    return Sentences(name, path, "conllu", "tiny_en/test", part, share, min_words)


def test_conllu_sentences_reads_ids_texts_and_word_counts():
    from spudflow.ingest.convert import read_conllu

    sentences = list(conllu_sentences(str(TINY_EN)))
    assert [s.key for s in sentences] == ["n01001011", "n01001013", "n01002017", "n01002032"]
    assert sentences[1].text == SECOND
    # the same word counts as the ingest stage's (what pairs.spud.min_words compares)
    ingested = read_conllu(TINY_EN, lenient=False)[1]
    assert [s.n_words for s in sentences] == ingested.get_column("n_words").to_list()


def test_a_sentence_without_text_is_its_surface_forms(tmp_path):
    conllu = tmp_path / "fr.conllu"
    conllu.write_text("1-2\tdu\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n"
                      "2\tle\tle\tDET\t_\t_\t3\tdet\t_\t_\n3\tpain\tpain\tNOUN\t_\t_\t0\troot\t_\t_\n"
                      "\n", encoding="utf-8")
    [sentence] = conllu_sentences(str(conllu))
    assert (sentence.key, sentence.text, sentence.n_words) == ("#0", "du pain", 3)


def test_a_model_scoring_its_own_training_split_is_an_error_naming_model_and_dataset():
    errors = overlap_errors([("spud_tiny_en_test", "trigram"), ("spud_tiny_de_test", "trigram")],
                            {"trigram": [_tiny_en()]},
                            {"spud_tiny_en_test": [_tiny_en(min_words=4)],
                             "spud_tiny_de_test": [Sentences("tiny_de/test", str(TINY_DE),
                                                             "conllu", "tiny_de/test")]})
    assert errors == ["config key models.trigram: trained on tiny_en/test (4 shared sentences), "
                      "which dataset spud_tiny_en_test scores; set "
                      "models.trigram.allow_training_overlap: true to allow it"]
    assert overlap_errors([("spud_tiny_en_test", "trigram")], {"trigram": [_tiny_en()]},
                          {"spud_tiny_en_test": [_tiny_en()]}, allowed=["trigram"]) == []


def test_the_training_share_and_the_rest_of_a_split_share_no_sentence():
    share = (0.5, 0)
    train, rest = _tiny_en("train", share), _tiny_en("rest", share)
    assert len(source_texts(train)) == 2 and len(source_texts(rest)) == 2
    assert source_texts(train) | source_texts(rest) == source_texts(_tiny_en())
    assert overlap_errors([("spud_tiny_en_test", "bert")], {"bert": [train]},
                          {"spud_tiny_en_test": [rest]}) == []
    # scoring the whole split after training on its share is an overlap
    assert "(2 shared sentences)" in overlap_errors(
        [("spud_tiny_en_test", "bert")], {"bert": [train]}, {"spud_tiny_en_test": [_tiny_en()]})[0]


def test_overlap_is_found_by_sentence_text_across_files(tmp_path):
    text = tmp_path / "train.txt"
    text.write_text(f"An unrelated sentence.\n  {SECOND.replace(' ', '  ')}\nAaron breaks the "
                    "glass.\n", encoding="utf-8")
    training = {"lm": [Sentences(str(text), str(text))]}
    scored = {"spud_tiny_en_test": [_tiny_en()],
              "blimp": [Sentences(str(BLIMP), str(BLIMP), "blimp")]}
    errors = overlap_errors([("spud_tiny_en_test", "lm"), ("blimp", "lm")], training, scored)
    assert [e.split(" (")[1].split(")")[0] for e in errors] == ["1 shared sentences"] * 2
    assert "which dataset blimp scores" in errors[1]


def test_a_split_not_on_disk_counts_as_overlapping_itself_only():
    missing = _tiny_en(path=None)
    other = Sentences("tiny_de/test", None, "conllu", "tiny_de/test")
    [error] = overlap_errors([("spud_tiny_en_test", "lm")], {"lm": [missing, other]},
                             {"spud_tiny_en_test": [missing]})
    assert "trained on tiny_en/test (the same split, not on disk yet to compare)" in error
    assert overlap_errors([("d", "lm")], {"lm": [_tiny_en("train", (0.5, 0), path=None)]},
                          {"d": [_tiny_en("rest", (0.5, 0), path=None)]}) == []


def _config():
    return {
        "treebanks": {"tiny_en": {"lang": "en", "splits": {"test": str(TINY_EN)}},
                      "tiny_de": {"lang": "de", "splits": {"test": "https://x.org/de.conllu"}}},
        "training_shares": {"tiny_en/test": {"share": 0.5, "seed": 3}},
        "ngrams": {"en": {"lang": "en", "text": ["tiny_en/test@train", "extra.txt"]}},
        "controls": {"bert": {"kind": "masked", "text": None}},
        "models": {"trigram": {"source": "results/ngram/en.parquet"},
                   "bert": {"source": "results/controls/bert"},
                   "gpt2": {"source": "gpt2"}},
        "pairs": {"spud": {"min_words": 5}, "cola": {"files": ["in_domain_dev.tsv"],
                                                    "phenomena": ["svo.tsv"]}},
    }


def test_training_text_and_dataset_sources_come_from_the_config():
    config = _config()
    share = (0.5, 3)
    assert model_training(config, "trigram") == [
        Sentences("tiny_en/test@train", str(TINY_EN), "conllu", "tiny_en/test", "train", share),
        Sentences("extra.txt", "extra.txt")]
    # a config written with the old spelling reads the same
    config["ngrams"]["en"]["text"][0] = "tiny_en/test:train"
    assert model_training(config, "trigram")[0].name == "tiny_en/test@train"
    # text: null is every configured split, all of it; a URL split is not on disk yet
    assert [(s.name, s.path, s.part) for s in model_training(config, "bert")] == [
        ("tiny_en/test", str(TINY_EN), "all"), ("tiny_de/test", None, "all")]
    assert model_training(config, "gpt2") is None
    spud = {"spud_tiny_en_test": ("tiny_en", "test")}
    assert dataset_sources(config, "spud_tiny_en_test", spud, []) == [
        Sentences("tiny_en/test", str(TINY_EN), "conllu", "tiny_en/test", "rest", share, 5)]
    assert dataset_sources(config, "blimp", spud, ["a.jsonl"]) == [
        Sentences("a.jsonl", "a.jsonl", "blimp")]
    assert dataset_sources(config, "cola", spud, []) == [
        Sentences("in_domain_dev.tsv", "in_domain_dev.tsv", "cola"),
        Sentences("svo.tsv", "svo.tsv", "cola")]  # the phenomenon sets are items too
    assert dataset_sources(config, "german_case", spud, []) == []
    # the acceptability set built from BLiMP: the paradigm files of its own section
    config["pairs"]["blimp_acceptability"] = {"paths": [str(BLIMP)]}
    assert dataset_sources(config, "blimp_acceptability", spud, []) == [
        Sentences(str(BLIMP), str(BLIMP), "blimp")]


def test_training_share_keys_are_seeded_exact_and_independent_of_order():
    keys = [f"n{i:05d}" for i in range(1000)]
    chosen = training_share_keys(keys, 0.3, 0)
    assert len(chosen) == 300
    assert training_share_keys(list(reversed(keys)), 0.3, 0) == chosen
    assert training_share_keys(keys, 0.3, 1) != chosen
    with pytest.raises(ValueError, match="between 0 and 1"):
        training_share_keys(keys, 1.0, 0)


def test_spud_items_leave_out_the_training_share_the_share_command_writes(tmp_path, run_cli):
    ingested, share = tmp_path / "ingest", tmp_path / "share"
    assert run_cli("ingest", TINY_EN, "--out", ingested)[0] == 0
    assert run_cli("training-share", ingested, "--fraction", "0.5", "--seed", "0",
                   "--out", share)[0] == 0
    items = tmp_path / "items.parquet"
    assert run_cli("items", "spud", "--orig", ingested, "--lang", "en", "--min-words", "1",
                   "--leave-out-share", "0.5", "--share-seed", "0", "--out", items)[0] == 0
    trained = set(pl.read_parquet(share / "sentences.parquet").get_column("sent_id"))
    scored = set(pl.read_parquet(items).get_column("sent_id"))
    assert trained == training_share_keys(
        [s.key for s in conllu_sentences(str(TINY_EN))], 0.5, 0)
    assert len(trained) == 2 and trained.isdisjoint(scored)
    assert trained | scored == set(pl.read_parquet(ingested / "sentences.parquet")
                                   .get_column("sent_id"))
    tokens = pl.read_parquet(share / "tokens.parquet")
    assert set(tokens.get_column("sent_id")) == trained
    with pytest.raises(SystemExit):  # argparse: a share must be between 0 and 1
        run_cli("training-share", ingested, "--fraction", "1.5", "--out", tmp_path / "x")


def test_the_default_config_names_only_existing_training_sources():
    import yaml

    from spudflow.core.workflow_paths import local_workflow_file, resolve_workflow_paths

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    resolve_workflow_paths(config, local_workflow_file(REPO, REPO))  # as the Snakefile does
    for model in config["models"]:
        for source in model_training(config, model) or []:
            assert source.path is not None and (REPO / source.path).is_file(), source


def test_a_training_text_entry_is_a_split_a_share_or_a_file():
    from spudflow.core.training_share import text_entry

    treebanks = {"en_ewt": {"splits": {"train": "x.conllu"}}, "empty": None}
    assert text_entry(treebanks, "en_ewt/train") == ("split", "en_ewt/train")
    assert text_entry(treebanks, "en_ewt/train@train") == ("share", "en_ewt/train")
    assert text_entry(treebanks, "en_ewt/train:train") == ("share", "en_ewt/train")
    # a held-out part, an unconfigured split or treebank, a path: a text file
    assert text_entry(treebanks, "en_ewt/train@heldout") == ("file", "en_ewt/train@heldout")
    assert text_entry(treebanks, "en_ewt/dev") == ("file", "en_ewt/dev")
    assert text_entry(treebanks, "empty/test") == ("file", "empty/test")
    assert text_entry(treebanks, "data/corpus.txt") == ("file", "data/corpus.txt")
