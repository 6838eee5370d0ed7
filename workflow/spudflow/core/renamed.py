"""Names a user writes that were renamed (docs/glossary.md): an old `spudflow` command or config
key still works, as the new one, after one deprecation line (stderr for a command; Snakemake's
log for a config key). A rename that would break a written command line or config adds its line
here; nothing else needs to know the old name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

# old `spudflow` command -> its name now
RENAMED_COMMANDS: dict[str, str] = {
    "train-control": "control-train",  # the pattern of ngram-train, score-gather: thing, then verb
    "pairs": "items",  # the stage is named for what it writes, results/items/
}

# old config key -> its name now: dotted paths from the top, `*` for any key of a map
# (`models.*.old_key`: every model's); the old and the new key have the same parent.
RENAMED_CONFIG_KEYS: dict[str, str] = {}


def renamed_command(argv: list[str], warn: Callable[[str], object] | None = None) -> list[str]:
    """ARGV with an old command name replaced by its new one, after one deprecation line."""
    if not argv or argv[0] not in RENAMED_COMMANDS:
        return argv
    new = RENAMED_COMMANDS[argv[0]]
    (warn or _stderr)(f"spudflow: `{argv[0]}` is deprecated, use `{new}` (same options)")
    return [new, *argv[1:]]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def rename_config_keys(config: dict, renamed: dict[str, str] | None = None
                       ) -> tuple[list[str], list[str]]:
    """Move every old key of CONFIG to its new name, in place: (a deprecation line for each,
    an error line for each old key given beside its new one, since neither may silently win)."""
    deprecated, errors = [], []
    for old, new in (RENAMED_CONFIG_KEYS if renamed is None else renamed).items():
        *parents, old_key = old.split(".")
        *new_parents, new_key = new.split(".")
        if new_parents != parents:
            raise ValueError(f"{old} -> {new}: a renamed config key keeps its parent")
        for path, section in _sections(config, parents, []):
            if not isinstance(section, dict) or old_key not in section:
                continue
            where, now = ".".join([*path, old_key]), ".".join([*path, new_key])
            if new_key in section:
                errors.append(f"config key {where}: the old spelling of {now}, which is given "
                              f"too; keep {now}")
                continue
            section[new_key] = section.pop(old_key)
            deprecated.append(f"config key {where} is deprecated: read as {now}; rename it")
    return deprecated, errors


def _sections(node, parts: list[str], path: list[str]):
    """(path, mapping) of every mapping the dotted PARTS reach from NODE."""
    if not parts:
        yield path, node
        return
    if not isinstance(node, dict):
        return
    head, rest = parts[0], parts[1:]
    keys = list(node) if head == "*" else [head] if head in node else []
    for key in keys:
        yield from _sections(node[key], rest, [*path, str(key)])
