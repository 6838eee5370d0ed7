"""The probe section's tasks (docs/probe.md, "Tasks"): per treebank, the splits or split shares
the probes train, select and are tested on, checked when the workflow is planned.

A task value is `SPLIT` (the whole split), `SPLIT@train` (its training share, config
training_shares) or `SPLIT@heldout` (the rest of the split, the sentences the SPUD items keep);
feature files of a share live under the split directory of the same name
(core/training_share.py spells both, and reads the old `SPLIT:PART`)."""

from __future__ import annotations

from dataclasses import dataclass

from spudflow.core.config import ConfigError
from spudflow.core.training_share import PARTS, part_name, split_part

ROLES = ("train", "dev", "test")


@dataclass(frozen=True)
class ProbeSplit:
    """A split of a treebank, or one of its two shares (part)."""

    treebank: str
    split: str
    part: str | None = None

    @property
    def dir_name(self) -> str:
        """The split's directory in feature paths, its name in the config: `dev`,
        `test@train`, `test@heldout`."""
        return self.split if self.part is None else part_name(self.split, self.part)

    @property
    def share_name(self) -> str:
        return f"{self.treebank}/{self.split}"

    def overlaps(self, other: ProbeSplit) -> bool:
        """Whether the two can hold the same sentence: the same split, unless one is its
        training share and the other the rest (UD's splits of a treebank are disjoint)."""
        if (self.treebank, self.split) != (other.treebank, other.split):
            return False
        return {self.part, other.part} != set(PARTS)


@dataclass(frozen=True)
class ProbeTask:
    treebank: str
    train: ProbeSplit
    dev: ProbeSplit | None
    test: ProbeSplit
    layers: dict[str, dict[str, int]]
    # the probe models probed in this task (probe.models.MODEL.tasks), in probe.models' order
    models: tuple[str, ...]

    def layer_pair(self, model: str, models: dict) -> tuple[int, int]:
        """(dist, label) layers of a probe model in this task: the task's own, else the model's."""
        spec = {**models[model], **self.layers.get(model, {})}
        return spec["dist_layer"], spec["label_layer"]


def split_from_dir(treebank: str, dir_name: str) -> ProbeSplit:
    """The inverse of ProbeSplit.dir_name."""
    split, part = split_part(dir_name)
    return ProbeSplit(treebank, split, part)


def _parse(config: dict, treebank: str, role: str, value: str) -> ProbeSplit:
    key = f"config key probe.tasks.{treebank}.{role}"
    split, part = split_part(value)
    if part is not None and part not in PARTS:
        raise ConfigError(f"{key}: {value!r}: a split's part is train or heldout, not {part!r}")
    if split not in config["treebanks"][treebank]["splits"]:
        raise ConfigError(f"{key}: {split!r} is not a split of treebank {treebank}")
    found = ProbeSplit(treebank, split, part)
    if found.part and found.share_name not in config.get("training_shares", {}):
        raise ConfigError(f"{key}: {value!r} needs a training share, but training_shares has "
                          f"no entry {found.share_name!r}")
    return found


def layer_sweeps(probe: dict, tasks: dict[str, ProbeTask]) -> frozenset[tuple[str, str]]:
    """(task, model) pairs probe.layer_sweep sweeps: an entry TASK sweeps every model probed in
    the task, TASK/MODEL that model; true is every task, false none. A task or model the
    entry cannot name is a ConfigError (it would sweep nothing, silently)."""
    sweep = probe.get("layer_sweep", False)
    if sweep is True:
        sweep = list(tasks)
    elif sweep is False:
        sweep = []
    swept = set()
    for i, entry in enumerate(sweep):
        name, _, model = entry.partition("/")
        key = f"config key probe.layer_sweep[{i}]"
        if name not in tasks:
            raise ConfigError(f"{key}: {name!r} is not a task of probe.tasks")
        if model and model not in tasks[name].models:
            raise ConfigError(f"{key}: {model!r} is not a model probed in {name} "
                              "(probe.models, their `tasks`)")
        swept |= {(name, m) for m in ([model] if model else tasks[name].models)}
    return frozenset(swept)


def probe_tasks(config: dict) -> dict[str, ProbeTask]:
    """The probe section's tasks by treebank; a ConfigError for a treebank, split or share that
    is not configured, a layer override of a model that is not probed, two sets of a task
    that can share sentences (training and testing on the same sentences), a model's `tasks`
    or probe.layer_sweep naming no task (or a model not probed in it), or a task no model is
    probed in."""
    probe = config["probe"]
    for model, model_spec in probe["models"].items():
        for name in model_spec.get("tasks") or ():
            if name not in probe["tasks"]:
                raise ConfigError(f"config key probe.models.{model}.tasks: {name!r} is not a "
                                  "task of probe.tasks")
    tasks = {}
    for treebank, spec in probe["tasks"].items():
        if treebank not in config["treebanks"]:
            raise ConfigError(f"config key probe.tasks.{treebank}: not a treebank of `treebanks:`")
        sets = {role: _parse(config, treebank, role, spec[role])
                for role in ROLES if spec.get(role) is not None}
        for i, first in enumerate(ROLES):
            for second in ROLES[i + 1:]:
                if first in sets and second in sets and sets[first].overlaps(sets[second]):
                    raise ConfigError(
                        f"config key probe.tasks.{treebank}: {first} {spec[first]!r} and "
                        f"{second} {spec[second]!r} share sentences")
        layers = spec.get("layers") or {}
        for model in layers:
            if model not in probe["models"]:
                raise ConfigError(f"config key probe.tasks.{treebank}.layers.{model}: not a "
                                  "model of probe.models")
        models = tuple(model for model, model_spec in probe["models"].items()
                       if model_spec.get("tasks") is None or treebank in model_spec["tasks"])
        if not models:
            raise ConfigError(f"config key probe.tasks.{treebank}: no model of probe.models is "
                              "probed in it (their `tasks`)")
        for model in layers:
            if model not in models:
                raise ConfigError(f"config key probe.tasks.{treebank}.layers.{model}: the model "
                                  f"is not probed in {treebank} (probe.models.{model}.tasks)")
        tasks[treebank] = ProbeTask(treebank, sets["train"], sets.get("dev"), sets["test"],
                                    layers, models)
    layer_sweeps(probe, tasks)
    return tasks
