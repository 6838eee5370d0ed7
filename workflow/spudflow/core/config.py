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


def check_config(config: dict, schema_path: str | Path) -> None:
    errors = config_errors(config, schema_path)
    if errors:
        raise ConfigError("\n".join(errors))
