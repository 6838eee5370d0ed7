"""A language's nonce options have one default: its class's OPTIONS (what `spudflow nonce
--option` starts from) and config/schema.yaml's `nonce.languages.LANG` (what the pipeline fills
in) agree key by key and value by value, and the default config writes the same values."""

from __future__ import annotations

import pytest
import yaml
from workflow_helpers import REPO, default_config

from spudflow.nonce.languages import HOOKS


def _schema_languages() -> dict:
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text(encoding="utf-8"))
    return schema["properties"]["nonce"]["properties"]["languages"]["properties"]


def test_the_schema_has_a_section_for_each_language_with_options_and_no_other():
    assert set(_schema_languages()) == {code for code, hooks in HOOKS.items() if hooks.OPTIONS}


@pytest.mark.parametrize("code", sorted(c for c, hooks in HOOKS.items() if hooks.OPTIONS))
def test_the_schema_defaults_are_the_class_defaults(code):
    section = _schema_languages()[code]
    assert section["additionalProperties"] is False
    assert section["default"] == {}
    defaults = {name: option["default"] for name, option in section["properties"].items()}
    assert defaults == HOOKS[code].OPTIONS
    assert {option["type"] for option in section["properties"].values()} == {"boolean"}


def test_the_default_config_writes_the_class_defaults():
    written = default_config()["nonce"].get("languages", {})
    for code, options in written.items():
        assert options == HOOKS[code].OPTIONS, code
