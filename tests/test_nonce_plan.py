"""The nonce plan (spudflow.core.nonce_plan), one for the three stages it joins: the nonce
treebanks made are exactly those the SPUD items of a scored split and a probe task's test split
read, plus the type-token ratio table's versions of their treebanks' other splits. Here on
config dicts, without Snakemake; tests/test_nonce_planning.py plans the workflow."""

from __future__ import annotations

import pytest

from spudflow.core import nonce_plan


def _config(**changes) -> dict:
    """en (train, test) and de (test); SPUD items of both test splits; a probe task on en."""
    config = {
        "treebanks": {"en": {"lang": "en", "splits": {"train": "en-train.conllu",
                                                       "test": "en-test.conllu"}},
                      "de": {"lang": "de", "splits": {"test": "de-test.conllu"}}},
        "training_shares": {},
        "scoring": {"datasets": ["spud_en_test", "spud_de_test"]},
        "pairs": {"spud": {"enabled": True, "treebanks": None, "methods": ["spud"],
                           "seeds": [1]}},
        "nonce": {"methods": ["spud", "pos"], "seeds": [1, 2], "ttr_all_splits": None},
        "probe": {"enabled": True, "nonce": False, "models": {"m": {}},
                  "tasks": {"en": {"train": "train", "test": "test"}}},
    }
    for key, value in changes.items():
        section, _, name = key.partition("__")
        config[section][name] = value
    return config


def test_the_scored_splits_get_the_versions_their_items_hold():
    config = _config()
    assert nonce_plan.spud_items_splits(config) == {"spud_en_test": ("en", "test"),
                                                    "spud_de_test": ("de", "test")}
    assert nonce_plan.spud_items_versions(config) == [("spud", 1)]
    assert nonce_plan.nonce_runs(config) == [("en", "test", "spud", 1), ("de", "test", "spud", 1)]


def test_a_split_nothing_scores_or_probes_gets_none():
    config = _config(scoring__datasets=["spud_de_test"])
    assert nonce_plan.nonce_runs(config) == [("de", "test", "spud", 1)]


def test_a_probe_task_tested_on_nonce_versions_gets_every_version_of_its_test_split():
    config = _config(scoring__datasets=["spud_de_test"], probe__nonce=True)
    assert nonce_plan.probe_nonce_splits(config) == [("en", "test")]
    assert nonce_plan.nonce_runs(config) == [
        ("en", "test", "spud", 1), ("en", "test", "spud", 2), ("en", "test", "pos", 1),
        ("en", "test", "pos", 2), ("de", "test", "spud", 1)]
    # a share of the test split: its whole split's versions (the share restricts the features)
    config["training_shares"] = {"en/test": {"share": 0.5, "seed": 0}}
    config["probe"]["tasks"]["en"] = {"train": "test@train", "test": "test@heldout"}
    assert nonce_plan.probe_nonce_splits(config) == [("en", "test")]
    config["probe"]["enabled"] = False
    assert nonce_plan.probe_nonce_splits(config) == []


def test_the_ttr_versions_cover_every_split_of_a_treebank_with_a_version():
    config = _config(nonce__ttr_all_splits={"methods": ["spud"], "seeds": [2]})
    assert nonce_plan.nonce_runs(config) == [
        ("en", "train", "spud", 2), ("en", "test", "spud", 1), ("en", "test", "spud", 2),
        ("de", "test", "spud", 1), ("de", "test", "spud", 2)]
    config["nonce"]["ttr_all_splits"]["seeds"] = [3]
    with pytest.raises(ValueError, match=r"^config key nonce.ttr_all_splits.seeds: 3 not in "):
        nonce_plan.nonce_runs(config)


def test_no_nonce_section_no_versions():
    config = _config(probe__nonce=True)
    del config["nonce"]
    assert nonce_plan.nonce_runs(config) == []
    assert nonce_plan.spud_items_splits(config) == {}
    assert not nonce_plan.probe_tests_nonce(config)
