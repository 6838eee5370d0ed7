"""Language rules by ISO 639-1 code; a language without a module gets the plain algorithm."""

from __future__ import annotations

from spudflow.core.errors import InputError
from spudflow.nonce.languages.ar import ArabicRules
from spudflow.nonce.languages.base import LanguageRules
from spudflow.nonce.languages.de import GermanRules
from spudflow.nonce.languages.en import EnglishRules
from spudflow.nonce.languages.fr import FrenchRules
from spudflow.nonce.languages.ja import JapaneseRules
from spudflow.nonce.languages.ru import RussianRules

RULES: dict[str, type[LanguageRules]] = {
    rules.code: rules for rules in (ArabicRules, GermanRules, EnglishRules, FrenchRules,
                                    JapaneseRules, RussianRules)
}

_BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def parse_options(items: list[str]) -> dict[str, str]:
    """["strip_diacritics=false", ...] -> {"strip_diacritics": "false"}."""
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError("--option", None, f"expected NAME=VALUE, got {item!r}")
        options[name.strip()] = value.strip()
    return options


def get_rules(lang: str, options: dict[str, str] | None = None) -> LanguageRules:
    """The rules of LANG with its options checked; unknown option names exit 2."""
    cls = RULES.get(lang, LanguageRules)
    values = {}
    for name, raw in (options or {}).items():
        if name not in cls.OPTIONS:
            known = ", ".join(sorted(cls.OPTIONS)) or "none"
            raise InputError("--option", None, f"language {lang!r} has no option {name!r} "
                             f"(options: {known})")
        if raw.lower() not in _BOOLEANS:
            raise InputError("--option", None, f"{name}={raw!r}: expected true or false")
        values[name] = _BOOLEANS[raw.lower()]
    return cls(**values)
