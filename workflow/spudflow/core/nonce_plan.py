"""Which nonce treebanks a run makes (docs/nonce.md): one plan, read by the rules of the three
stages it joins. The nonce rules make the versions it lists, the items rules pair each scored
split with the versions its SPUD items hold, the probe rules test a task's probes on the versions
of its test split. Only what something reads is made: another split's versions would cost time
and feed no table but the replacement statistics.

Every function takes the checked config (the schema's defaults filled in); a version is a
(method, seed) pair of the `nonce:` section, a run one version of one (treebank, split).
"""

from __future__ import annotations

from spudflow.core.dataset_families import spud_dataset_splits
from spudflow.core.probe_tasks import probe_tasks

Version = tuple[str, int]
Run = tuple[str, str, str, int]  # treebank, split, method, seed


def nonce_versions(config: dict) -> list[Version]:
    """Every (method, seed) of the `nonce:` section, in its order; none without the section."""
    nonce = config.get("nonce")
    if nonce is None:
        return []
    return [(method, seed) for method in nonce["methods"] for seed in nonce["seeds"]]


def spud_items_splits(config: dict) -> dict[str, tuple[str, str]]:
    """SPUD items dataset name -> (treebank, split), for the splits of pairs.spud.treebanks that
    are scored: all of them, or those scoring.datasets names (no items, and no nonce versions
    for them, of a split nothing reads). None without a `nonce:` section (no nonce versions to
    pair)."""
    scored = config["scoring"].get("datasets")
    return {name: found for name, found in spud_dataset_splits(config).items()
            if scored is None or name in scored}


def spud_items_versions(config: dict) -> list[Version]:
    """The versions a SPUD items dataset holds beside each original sentence, and so the ones
    the models score: pairs.spud.methods x pairs.spud.seeds, in the nonce section's order (null:
    every method or seed of `nonce:`; the config check makes sure they are among them)."""
    nonce, spud = config.get("nonce"), config["pairs"].get("spud") or {}
    if nonce is None:
        return []
    chosen = {key: [v for v in nonce[key] if spud.get(key) is None or v in spud[key]]
              for key in ("methods", "seeds")}
    return [(method, seed) for method in chosen["methods"] for seed in chosen["seeds"]]


def probe_tests_nonce(config: dict) -> bool:
    """Whether the probes are tested on nonce versions (an enabled `probe:` with probe.nonce,
    and a `nonce:` section)."""
    probe = config.get("probe")
    return bool(probe and probe["enabled"] and probe["nonce"] and "nonce" in config)


def probe_nonce_splits(config: dict) -> list[tuple[str, str]]:
    """(treebank, split) of every probe task's test split (the whole split of a share) when the
    probes are tested on its nonce versions: each gets every version of `nonce:`."""
    if not probe_tests_nonce(config):
        return []
    return [(task.test.treebank, task.test.split) for task in probe_tasks(config).values()]


def ttr_all_splits_versions(config: dict) -> list[Version]:
    """The versions of nonce.ttr_all_splits: made of every split of a treebank for the
    type-token ratio table alone (none when null); each must be one of `nonce:`'s."""
    nonce = config.get("nonce")
    chosen = None if nonce is None else nonce["ttr_all_splits"]
    if chosen is None:
        return []
    for key in ("methods", "seeds"):
        unknown = [value for value in chosen[key] if value not in nonce[key]]
        if unknown:
            raise ValueError(f"config key nonce.ttr_all_splits.{key}: "
                             f"{', '.join(map(str, unknown))} not in nonce.{key}")
    return [(method, seed) for method in chosen["methods"] for seed in chosen["seeds"]]


def nonce_runs(config: dict) -> list[Run]:
    """Every nonce treebank something reads, in config order: the versions the SPUD items of a
    scored split hold, every version of a probe task's test split and, for a treebank with any
    of those, the nonce.ttr_all_splits versions of every one of its splits, which only the
    type-token ratio table reads (Table 8 pools a treebank's splits)."""
    read = set()
    for treebank, split in spud_items_splits(config).values():
        read |= {(treebank, split, *version) for version in spud_items_versions(config)}
    for treebank, split in probe_nonce_splits(config):
        read |= {(treebank, split, *version) for version in nonce_versions(config)}
    splits = [(tb, split) for tb, spec in config["treebanks"].items() for split in spec["splits"]]
    pooled = {treebank for treebank, *_ in read}
    for treebank, split in splits:
        if treebank in pooled:
            read |= {(treebank, split, *version) for version in ttr_all_splits_versions(config)}
    return [(tb, split, *version) for tb, split in splits for version in nonce_versions(config)
            if (tb, split, *version) in read]
