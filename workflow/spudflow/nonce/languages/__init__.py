"""Language hooks by ISO 639-1 code; a language without a module gets the plain algorithm."""

from __future__ import annotations

from spudflow.core.errors import InputError
from spudflow.nonce.languages.ar import ArabicHooks
from spudflow.nonce.languages.base import LanguageHooks
from spudflow.nonce.languages.de import GermanHooks
from spudflow.nonce.languages.en import EnglishHooks
from spudflow.nonce.languages.fr import FrenchHooks
from spudflow.nonce.languages.ja import JapaneseHooks
from spudflow.nonce.languages.ru import RussianHooks

HOOKS: dict[str, type[LanguageHooks]] = {
    hooks.code: hooks for hooks in (ArabicHooks, GermanHooks, EnglishHooks, FrenchHooks,
                                    JapaneseHooks, RussianHooks)
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


def get_hooks(lang: str, options: dict[str, str] | None = None) -> LanguageHooks:
    """The hooks of LANG with its options checked; unknown option names exit 2."""
    cls = HOOKS.get(lang, LanguageHooks)
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
