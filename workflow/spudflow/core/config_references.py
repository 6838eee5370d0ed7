"""Every name a config value refers to must name something: a treebank, a split, a training
share, an items dataset, an n-gram model, a control, a probe task, a model. The schema checks
each value alone; a name that refers to nothing passes it and would fail only later, as a
Snakemake MissingInputException (`ngrams.X.text: [nope/test]` read as a text file) or not at all
(a typo in a list that selects). The Snakefile checks them all here, before any rule is read,
one `config key …` line per problem.

Paths are as the rules see them (after workflow:REL is resolved), relative to the working
directory: a user's own items file results/items/NAME.parquet is a dataset too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from spudflow.core.config import ConfigError
from spudflow.core.config_values import value_errors
from spudflow.core.dataset_families import FAMILIES, items_dataset_names, spud_dataset_list
from spudflow.core.model_source import is_local_path
from spudflow.core.overlap import CONTROL_SOURCE, NGRAM_SOURCE
from spudflow.core.split_files import is_url
from spudflow.core.training_share import split_part

ITEMS_FILE = "results/items/{}.parquet"


def _splits(config: dict) -> set[str]:
    return {f"{tb}/{split}" for tb, spec in config["treebanks"].items() for split in spec["splits"]}


def _training_text(config: dict, key: str, entries: list[str], exists) -> list[str]:
    """`treebank/split`, `treebank/split@train` (a configured share) or an existing text file."""
    errors = []
    splits, shares = _splits(config), config.get("training_shares") or {}
    for index, entry in enumerate(entries):
        name, part = split_part(entry)
        if part != "train":
            name = entry
        if name in splits:
            if name != entry and name not in shares:
                errors.append(f"config key {key}[{index}]: {entry!r} names a training share, "
                              f"but training_shares has no entry {name!r}")
        elif not exists(entry):
            errors.append(f"config key {key}[{index}]: {entry!r}: no such text file, nor a "
                          "split of `treebanks:` (treebank/split, or treebank/split@train for "
                          "its training share)")
    return errors


def _model_source(config: dict, key: str, source: str, exists) -> list[str]:
    """A model the pipeline trains must be configured; any other local path must exist."""
    if match := NGRAM_SOURCE.match(source):
        if match["name"] not in (config.get("ngrams") or {}):
            return [f"config key {key}: {source!r}: no n-gram model {match['name']!r} under "
                    "`ngrams:` makes it"]
    elif match := CONTROL_SOURCE.match(source):
        if match["name"] not in (config.get("controls") or {}):
            return [f"config key {key}: {source!r}: no control {match['name']!r} under "
                    "`controls:` makes it"]
    elif is_local_path(source) and not exists(str(Path(source).expanduser())):
        return [f"config key {key}: {source!r}: no such model file or directory"]
    return []


def _nonce(config: dict) -> list[str]:
    nonce = config["nonce"]
    errors = [f"config key nonce.pools.{name}: no treebank {name!r} is configured"
              for name in nonce.get("pools", {}) if name not in config["treebanks"]]
    splits = _splits(config)
    errors += [f"config key nonce.pools.{tb}[{i}]: {entry!r} is not a configured treebank/split"
               for tb, entries in nonce.get("pools", {}).items()
               for i, entry in enumerate(entries) if entry not in splits]
    errors += [f"config key nonce.splits.{split}.pool[{i}]: treebank {tb!r} has no split "
               f"{entry!r}" for split, settings in nonce.get("splits", {}).items()
               for i, entry in enumerate(settings.get("pool", []))
               for tb, spec in config["treebanks"].items()
               if split in spec["splits"] and entry not in spec["splits"]]
    languages = {spec["lang"] for spec in config["treebanks"].values()}
    errors += [f"config key nonce.lexicons.{lang}: no treebank of language {lang!r} is "
               "configured" for lang in nonce.get("lexicons", {}) if lang not in languages]
    return errors


def _pairs(config: dict) -> list[str]:
    spud = (config.get("pairs") or {}).get("spud") or {}
    if not spud.get("enabled"):
        return []
    errors = [f"config key pairs.spud.treebanks[{i}]: {tb!r} is not a treebank of `treebanks:`"
              for i, tb in enumerate(spud.get("treebanks") or ())
              if tb not in config["treebanks"]]
    for name, count in Counter(n for n, _, _ in spud_dataset_list(config)).items():
        if count > 1:
            errors.append(f"config key treebanks: {count} splits give the SPUD dataset name "
                          f"{name}")
    if "nonce" in config:
        for key in ("methods", "seeds"):
            unknown = [v for v in spud.get(key) or () if v not in config["nonce"][key]]
            if unknown:
                errors.append(f"config key pairs.spud.{key}: {', '.join(map(str, unknown))} "
                              f"not in nonce.{key}")
    return errors


def _human_eval(config: dict) -> list[str]:
    kit = config["human_eval"]
    errors = []
    if "nonce" not in config:
        errors.append("config key human_eval: needs the nonce section (nonce versions)")
    if kit["split"] not in _splits(config):
        errors.append(f"config key human_eval.split: {kit['split']!r} is not a configured "
                      "treebank/split")
    filled = kit.get("filled") or {}
    annotators = kit.get("annotators") or []
    if filled and set(filled) != set(annotators):
        errors.append("config key human_eval.filled: expected a sheet of each of "
                      f"{', '.join(annotators)}, got {', '.join(filled)}")
    return errors


def _datasets(config: dict, exists) -> list[str]:
    """scoring.datasets: datasets the `pairs:` section makes, or items files. models.*.datasets
    selects among them: a name a `pairs:` section would make when enabled may be switched off
    for a while; any other name is a typo (or a file that is not there)."""
    from spudflow.core.dataset_families import BUILT_FAMILIES, JAPANESE_VARIANTS

    made = items_dataset_names(config)
    known = {*made, *BUILT_FAMILIES,
             *(f"japanese_transitivity_{v}" for v in JAPANESE_VARIANTS),
             *(f"spud_{tb}_{split}" for tb, spec in config["treebanks"].items()
               for split in spec["splits"])}

    def unknown(key: str, names, names_ok) -> list[str]:
        return [f"config key {key}[{i}]: {name!r} is neither an items dataset the `pairs:` "
                f"section makes ({', '.join(made) or 'none'}) nor a file "
                f"{ITEMS_FILE.format(name)}" for i, name in enumerate(names or ())
                if name not in names_ok and not exists(ITEMS_FILE.format(name))]

    errors = unknown("scoring.datasets", (config.get("scoring") or {}).get("datasets"), made)
    for model, spec in (config.get("models") or {}).items():
        errors += unknown(f"models.{model}.datasets", spec.get("datasets"), known)
    return errors


def _probe(config: dict, exists) -> list[str]:
    from spudflow.core.probe_tasks import probe_tasks

    probe = config["probe"]
    if not probe.get("enabled", True):
        return []
    errors = []
    for model, spec in probe["models"].items():
        errors += _model_source(config, f"probe.models.{model}.source", spec["source"], exists)
    try:
        probe_tasks(config)
    except ConfigError as error:
        errors.append(str(error))
    return errors


# Keys of each enabled `pairs:` section that name the files its items are made from (a list,
# a mapping, or one path); a URL among them is downloaded by a rule.
PAIRS_FILE_KEYS = {f.name: f.files for f in FAMILIES if f.files}


def _named_paths(key: str, value) -> list[tuple[str, str]]:
    """(config key, path) of a path, a list of paths or a mapping of them (None: none)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [(f"{key}.{name}", v) for name, v in value.items()]
    if isinstance(value, list):
        return [(f"{key}[{i}]", v) for i, v in enumerate(value)]
    return [(key, value)]


def _source_files(config: dict, exists) -> list[str]:
    """Every local file the config names as a job's source (a treebank split, a pairs
    section's files, a nonce lexicon, a filled sheet) must exist. Snakemake stops on a missing
    one only while the outputs made from it are missing too: after a run it would keep them and
    plan nothing."""
    named = [(f"treebanks.{tb}.splits.{split}", path)
             for tb, spec in config["treebanks"].items()
             for split, value in spec["splits"].items()
             for _, path in _named_paths("", value)]
    for family, keys in PAIRS_FILE_KEYS.items():
        section = (config.get("pairs") or {}).get(family) or {}
        if section.get("enabled"):
            for key in keys:
                named += _named_paths(f"pairs.{family}.{key}", section.get(key))
    # (a lexicon of no configured language, sheets not matching the annotators: errors of
    # their own)
    languages = {spec["lang"] for spec in config["treebanks"].values()}
    if "nonce" in config:
        for lang, files in (config["nonce"].get("lexicons") or {}).items():
            if lang in languages:
                named += _named_paths(f"nonce.lexicons.{lang}", files)
    if "human_eval" in config:
        filled = config["human_eval"].get("filled") or {}
        if set(filled) == set(config["human_eval"].get("annotators") or ()):
            named += _named_paths("human_eval.filled", filled or None)
    return [f"config key {key}: {path!r}: no such file" for key, path in named
            if isinstance(path, str) and not is_url(path) and not exists(path)]


def reference_errors(config: dict, exists: Callable[[str], bool] = lambda p: Path(p).exists()
                     ) -> list[str]:
    """One `config key KEY: …` line per name in the config that names nothing, sorted."""
    errors = []
    shares = config.get("training_shares") or {}
    splits = _splits(config)
    errors += [f"config key training_shares.{name}: {name!r} is not a configured treebank/split"
               for name in shares if name not in splits]
    if "nonce" in config:
        errors += _nonce(config)
    if "human_eval" in config:
        errors += _human_eval(config)
    errors += _pairs(config)
    for section in ("ngrams", "controls"):
        for name, spec in (config.get(section) or {}).items():
            if spec.get("text") is not None:
                errors += _training_text(config, f"{section}.{name}.text", spec["text"], exists)
    for model, spec in (config.get("models") or {}).items():
        errors += _model_source(config, f"models.{model}.source", spec["source"], exists)
    errors += _datasets(config, exists)
    ngrams = config.get("ngrams") or {}
    errors += [f"config key scoring.unigram[{i}]: {name!r} is not an n-gram model of `ngrams:`"
               for i, name in enumerate((config.get("scoring") or {}).get("unigram") or ())
               if name not in ngrams]
    models = config.get("models") or {}
    modes = (config.get("aggregate") or {}).get("japanese_agreement_modes") or ()
    errors += [f"config key aggregate.japanese_agreement_modes[{i}]: {mode!r}: no model "
               f"{mode.split('/')[0]!r} under `models:`"
               for i, mode in enumerate(modes) if mode.split("/")[0] not in models]
    if "probe" in config:
        errors += _probe(config, exists)
    errors += value_errors(config, exists)
    errors += _source_files(config, exists)
    return sorted(errors)


def check_references(config: dict) -> None:
    errors = reference_errors(config)
    if errors:
        raise ConfigError("\n".join(errors))
