"""The SPUD preset generates nonce data as the reference code does (TaniaBladier/spud): test's
and dev's candidates from dev and test together (build_spud.ipynb,
generate_data_multiprocess.py), train and dev without ADV, FEATS by inclusion with the
languages' relaxations (morph_dict_tools/), French `ne` replaced; the default config keeps
App. A.1's own-split pool, exact FEATS and a protected `ne`."""

from __future__ import annotations

import yaml
from workflow_helpers import REPO, default_config


def _nonce(path: str) -> dict:
    return yaml.safe_load((REPO / path).read_text(encoding="utf-8"))["nonce"]


def test_the_spud_preset_generates_as_the_reference():
    nonce = _nonce("config/papers/spud.yaml")
    assert nonce["feats_match"] == "reference"
    assert nonce["languages"]["fr"]["protect_ne"] is False
    assert nonce["splits"]["test"] == {"pool": ["dev"]}
    assert nonce["splits"]["dev"]["pool"] == ["test"]
    assert "pool" not in nonce["splits"]["train"]
    assert sorted(nonce["splits"]["dev"]["upos"]) == sorted(nonce["splits"]["train"]["upos"]) \
        == sorted(set(nonce["upos"]) - {"ADV"})


def test_the_default_config_keeps_its_own_readings():
    nonce = default_config()["nonce"]
    assert nonce["feats_match"] == "exact"
    assert nonce["splits"] == {}
    assert nonce["languages"]["fr"]["protect_ne"] is True
