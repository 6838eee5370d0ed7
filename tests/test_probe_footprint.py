"""The real run's probe feature bytes projected from a config's plan (spudflow.rehearse.footprint:
rehearsal.md's estimate and bench/bench_probe_footprint.py's table), on the SPUD preset: they
follow the layers each baseline stores and the splits trained and selected on (a test split's
eval sets are extracted in memory), a sweep of English EWT adds no bytes (its runs extract EWT
train and dev themselves; before, EWT's alone), a capped split counts the sentences its sample
can hold, and the bytes per word, layer and unit are those of a real feature file."""

from __future__ import annotations

import copy
import gzip
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from workflow_helpers import REPO

from spudflow.probe.plan import ProbePlan
from spudflow.rehearse.footprint import (
    filled,
    language_lengths,
    measured_rate,
    projected,
    split_words,
    stored_words,
    sweep_extractions,
)
from spudflow.rehearse.mirror import source_files

SPUD = yaml.safe_load((REPO / "config" / "papers" / "spud.yaml").read_text(encoding="utf-8"))


def words(config: dict, treebank: str, split: str, capped: bool = True) -> float:
    """A split's stored words, capped as the plan caps its feature job (`capped`)."""
    cap = ProbePlan(config, REPO / "workflow").probe_feature_cap(treebank, split) if capped \
        else None
    return split_words(config, REPO, SimpleNamespace(treebank=treebank, split=split, part=None),
                       cap)


@pytest.mark.slow
def test_the_projection_counts_the_planned_layers_of_each_treebank():
    config = filled(SPUD, REPO)
    assert config["probe"]["layer_sweep"] == ["en_ewt/mbert", "en_ewt/mgpt"]
    rate = 2.0
    projection = projected(config, REPO, rate)
    swept = projection.per_treebank
    # PADT's sentences are counted with the lengths of the Arabic at hand, and it says so;
    # EWT's with its own (vendored), French GSD's with its own where ../shared has it
    assert projection.borrowed[0].startswith("ar_padt: sentence lengths of ar_pud")
    borrowing = {b.split(":")[0] for b in projection.borrowed}
    assert "en_ewt" not in borrowing
    assert ("fr_gsd" in borrowing) == (not any(p.name.startswith("fr_gsd-")
                                               for p in source_files(REPO, "fr")))
    stored_sweep = projected(config, REPO, rate, sweeps_stored=True).per_treebank
    # the sweep's runs of mBERT's 11 and mGPT's 24 layers outside their pairs extract EWT train
    # and dev themselves
    jobs, extracted = sweep_extractions(config, REPO)
    unswept_config = copy.deepcopy(config)
    unswept_config["probe"]["layer_sweep"] = False
    unswept = projected(unswept_config, REPO, rate).per_treebank
    assert swept == unswept
    assert [tb for tb in swept if stored_sweep[tb] != unswept[tb]] == ["en_ewt"]
    ewt = sum(words(config, "en_ewt", s) for s in ("train", "dev"))
    assert (jobs, extracted) == (11 + 24, pytest.approx(35 * ewt))
    assert sweep_extractions(unswept_config, REPO) == (0, 0.0)
    # French by hand: mBERT's lm 6,7 + M0 0 + MR 6,7 + MRC 6,7 (7 layers, 768 wide) and mGPT's
    # 12 (2048 wide); train and dev capped (20,000: all their sentences of 4 words or more);
    # test, stored before, in 11 versions (orig, 5 SPUD, 5 POS), every sentence
    fr = {s: words(config, "fr_gsd", s) for s in ("train", "dev", "test")}
    per_word = (7 * 768 + 2048) * rate
    assert unswept["fr_gsd"] == pytest.approx((fr["train"] + fr["dev"]) * per_word)
    stored = projected(config, REPO, rate, stored_tests=True, sweeps_stored=True).per_treebank
    assert stored["fr_gsd"] == pytest.approx((fr["train"] + fr["dev"] + 11 * fr["test"])
                                             * per_word)
    # EWT, mBERT and mGPT swept: before, mBERT's lm held 13 layers (18 with its baselines),
    # mGPT's 25, RoBERTa's and GPT-2's their 6 and 7; now mBERT's 7, mGPT's 1
    assert stored_sweep["en_ewt"] == pytest.approx(ewt * (18 * 768 + 25 * 2048 + 2 * 2 * 768)
                                                   * rate)
    assert swept["en_ewt"] == pytest.approx(ewt * (7 * 768 + 2048 + 2 * 2 * 768) * rate)
    # HDT's training features hold the 20,000 sentences its probes read (an eighth of the
    # split); every sentence, as before the caps, is about 1.7 times the bytes of the stored
    # splits then (test included)
    de = {s: words(config, "de_hdt", s) for s in ("train", "dev", "test")}
    assert unswept["de_hdt"] == pytest.approx((de["train"] + de["dev"]) * per_word)
    assert stored["de_hdt"] == pytest.approx((de["train"] + de["dev"] + 11 * de["test"])
                                             * per_word)
    every = projected(config, REPO, rate, every_sentence=True, stored_tests=True,
                      sweeps_stored=True).per_treebank
    whole = words(config, "de_hdt", "train", capped=False)
    assert whole > 6 * de["train"]
    assert every["de_hdt"] == pytest.approx(
        (whole + words(config, "de_hdt", "dev", capped=False) + 11 * de["test"]) * per_word)


def test_a_capped_split_stores_its_sample_of_sentences_long_enough():
    """Uncapped, a split's words are its sentences times their mean length; capped, the sample
    holds only sentences of min_words words or more (longer than the mean), at most the cap."""
    lengths = np.array([2, 3, 10, 20, 5, 8])  # 4 of 6 have 5 words or more, mean 10.75
    assert stored_words(600, lengths, None, 5, None) == pytest.approx(600 * 8)
    assert stored_words(600, lengths, None, 5, 60) == pytest.approx(60 * 8)
    assert stored_words(600, lengths, 1000, 5, None) == pytest.approx(400 * 10.75)
    assert stored_words(600, lengths, 100, 5, None) == pytest.approx(100 * 10.75)
    assert stored_words(600, lengths, 100, 30, None) == 0.0


def test_a_split_s_words_are_its_real_sentences_as_the_probes_cap_them():
    """EWT's training split (UD 2.10: 12,543 sentences) capped at 20,000 keeps its sentences
    of 4 words or more, dev (2,001) capped at 1,000 is 1,000 of those; mBERT stores layers 6
    and 7 of its lm, 768 wide; a model of an unknown width is left out, with why."""
    probe = {**SPUD["probe"], "max_dev_sentences": 1000, "layer_sweep": False,
             "models": {"mbert": {**SPUD["probe"]["models"]["mbert"], "baselines": []},
                        "mine": {**SPUD["probe"]["models"]["gpt2"],
                                 "source": "someone/unknown-model"}},
             "tasks": {"en_ewt": {"train": "train", "dev": "dev", "test": "test"}}}
    config = filled({**SPUD, "probe": probe}, REPO)
    lengths = language_lengths(REPO, "en")
    eligible = lengths[lengths >= 4]
    train = 12543 * len(eligible) / len(lengths) * eligible.mean()
    dev = 1000 * eligible.mean()
    projection = projected(config, REPO, 2.0)
    assert projection.per_treebank == {"en_ewt": pytest.approx((train + dev) * 2 * 768 * 2.0)}
    assert projection.left_out == ["en_ewt/mine: someone/unknown-model: hidden width unknown"]


def test_a_treebank_of_known_size_borrows_lengths_scaled_to_its_own_mean():
    """Arabic PADT's split (no file of it at hand) is counted with the Arabic lengths at hand
    scaled to PADT's real 282,384 words in 7,664 sentences (36.8 a sentence; Arabic PUD's
    are about 21): its words are its sentences x that mean, uncapped."""
    config = filled(SPUD, REPO)
    at_hand = language_lengths(REPO, "ar")
    assert at_hand.mean() < 25
    assert words(config, "ar_padt", "test", capped=False) == pytest.approx(680 * 282384 / 7664)


def test_a_local_split_counts_its_own_file():
    """A split given as a local file (a `workflow:` path, as the default config gives them) is
    the real split: its own sentences and lengths."""
    ewt_test = "resources/ud/UD_English-EWT/en_ewt-ud-test.conllu.gz"
    config = filled({**SPUD, "treebanks": {**SPUD["treebanks"], "en_ewt": {
        "lang": "en", "splits": {**SPUD["treebanks"]["en_ewt"]["splits"],
                                 "test": f"workflow:{ewt_test}"}}}}, REPO)
    with gzip.open(REPO / ewt_test, "rt", encoding="utf-8") as f:
        rows = [line.split("\t", 1)[0] for line in f]
    assert words(config, "en_ewt", "test") == pytest.approx(sum(r.isdigit() for r in rows))


def test_a_feature_file_takes_two_bytes_per_word_layer_and_unit():
    assert 2.0 < measured_rate(REPO) < 2.01  # float16 values, and the sentence index


def test_the_rehearsal_report_gives_the_projection_per_treebank(tmp_path):
    """rehearsal.md's probe feature section is the projection: its total and each treebank's
    bytes, and whose sentence lengths stand in."""
    from spudflow.rehearse.report import feature_projection

    projection = projected(filled(SPUD, REPO), REPO, measured_rate(REPO))
    lines = feature_projection(SPUD, REPO, tmp_path)
    assert lines[0].startswith(f"The real run: about {projection.total / 1e9:.1f} GB.")
    for treebank, size in projection.per_treebank.items():
        assert f"| {treebank} | {size / 1e9:.1f} GB |" in lines
    assert lines[-1].startswith("Lengths from other treebanks of the language: ar_padt: ")
