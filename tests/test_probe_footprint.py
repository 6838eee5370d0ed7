"""bench/bench_probe_footprint.py on the SPUD preset: the projected feature bytes follow the plan
(the layers each baseline stores, the splits trained and selected on; a test split's eval sets
are extracted in memory), a sweep of English EWT adds no bytes (its runs extract EWT train and
dev themselves; before, EWT's alone), and the bytes per word, layer and unit are those of a real
feature file."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from workflow_helpers import REPO

pytestmark = pytest.mark.slow


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_probe_footprint", REPO / "bench" / "bench_probe_footprint.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_projection_counts_the_planned_layers_of_each_treebank():
    bench = _bench()
    config = bench.filled(REPO / "config" / "papers" / "spud.yaml")
    assert config["probe"]["layer_sweep"] == ["en_ewt/mbert", "en_ewt/mgpt"]
    rate = 2.0
    swept = bench.projected(config, rate)
    stored_sweep = bench.projected(config, rate, sweeps_stored=True)
    # the sweep's runs of mBERT's 11 and mGPT's 24 layers outside their pairs extract EWT train
    # and dev themselves
    jobs, extracted = bench.sweep_extractions(config)
    config["probe"]["layer_sweep"] = False
    unswept = bench.projected(config, rate)
    assert swept == unswept
    assert [tb for tb in swept if stored_sweep[tb] != unswept[tb]] == ["en_ewt"]
    ewt = sum(bench.split_words(config, "en_ewt", s, None) for s in ("train", "dev"))
    assert (jobs, extracted) == (11 + 24, pytest.approx(35 * ewt))
    assert bench.sweep_extractions(config) == (0, 0.0)
    # French by hand: mBERT's lm 6,7 + M0 0 + MR 6,7 + MRC 6,7 (7 layers, 768 wide) and mGPT's
    # 12 (2048 wide); train and dev as they are; test, stored before, in 11 versions (orig, 5
    # SPUD, 5 POS)
    words = {s: bench.split_words(config, "fr_gsd", s, None) for s in ("train", "dev", "test")}
    per_word = (7 * 768 + 2048) * rate
    assert unswept["fr_gsd"] == pytest.approx((words["train"] + words["dev"]) * per_word)
    stored = bench.projected(config, rate, stored_tests=True, sweeps_stored=True)
    assert stored["fr_gsd"] == pytest.approx(
        (words["train"] + words["dev"] + 11 * words["test"]) * per_word)
    # EWT, mBERT and mGPT swept: before, mBERT's lm held 13 layers (18 with its baselines),
    # mGPT's 25, RoBERTa's and GPT-2's their 6 and 7; now mBERT's 7, mGPT's 1
    per_word = (18 * 768 + 25 * 2048 + 2 * 2 * 768) * rate
    assert stored_sweep["en_ewt"] == pytest.approx(ewt * per_word)
    assert swept["en_ewt"] == pytest.approx(ewt * (7 * 768 + 2048 + 2 * 2 * 768) * rate)
    # HDT's training features hold the 20,000 sentences its probes read (an eighth of the split,
    # probe.max_train_sentences); every sentence, as before the caps, is 1.55 times the bytes
    # of the stored splits then (test included)
    cap = config["probe"]["max_train_sentences"]
    words = {s: bench.split_words(config, "de_hdt", s, None, cap) for s in ("train", "dev")}
    words["test"] = bench.split_words(config, "de_hdt", "test", None)
    per_word = (7 * 768 + 2048) * rate
    assert unswept["de_hdt"] == pytest.approx((words["train"] + words["dev"]) * per_word)
    assert stored["de_hdt"] == pytest.approx(
        (words["train"] + words["dev"] + 11 * words["test"]) * per_word)
    every = bench.projected(config, rate, every_sentence=True, stored_tests=True,
                            sweeps_stored=True)
    assert every["de_hdt"] / stored["de_hdt"] == pytest.approx(1.55, abs=0.01)
    assert bench.split_words(config, "de_hdt", "train", None) > 7 * words["train"]


def test_a_feature_file_takes_two_bytes_per_word_layer_and_unit():
    rate, _ = _bench().measured_rate(None)
    assert 2.0 < rate < 2.01  # float16 values, and the sentence index and metadata
