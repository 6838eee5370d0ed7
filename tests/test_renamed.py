"""Renamed names a user writes (core/renamed.py): an old command or config key still works, as
the new one, after one deprecation line; the old name is gone from the code."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from spudflow.cli import build_parser, main
from spudflow.core import renamed
from spudflow.core.config import ConfigError, check_config

SCHEMA = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"


def commands() -> set[str]:
    return set(build_parser()._subparsers._group_actions[0].choices)


def test_each_renamed_command_is_registered_only_under_its_new_name():
    registered = commands()
    for old, new in renamed.RENAMED_COMMANDS.items():
        assert new in registered and old not in registered, (old, new)


def test_train_control_runs_control_train_after_a_deprecation_line(tmp_path, capsys):
    """The same command and the same one-line error, the deprecation line first."""
    args = ["--kind", "causal", "--text", str(tmp_path / "none"), "--out", str(tmp_path / "m")]
    assert main(["control-train", *args]) == 2
    new = capsys.readouterr().err
    assert main(["train-control", *args]) == 2
    old = capsys.readouterr().err
    assert old == ("spudflow: `train-control` is deprecated, use `control-train` (same "
                   "options)\n" + new)
    assert "no such file or directory" in new


def test_an_unrenamed_command_is_left_alone(capsys):
    assert renamed.renamed_command(["score", "--kind", "causal"]) == ["score", "--kind", "causal"]
    assert renamed.renamed_command([]) == []
    assert capsys.readouterr().err == ""


def default_config() -> dict:
    return yaml.safe_load((SCHEMA.parent / "config.yaml").read_text(encoding="utf-8"))


def test_an_old_config_key_is_read_as_the_new_one_with_a_deprecation_line(monkeypatch):
    """A throwaway rename (aggregate.n_folds, each model's method_list): the config check reads
    the old spellings as the new keys and returns one line for each, for the log."""
    monkeypatch.setitem(renamed.RENAMED_CONFIG_KEYS, "aggregate.n_folds", "aggregate.folds")
    monkeypatch.setitem(renamed.RENAMED_CONFIG_KEYS, "models.*.method_list", "models.*.methods")
    config = default_config()
    expected = default_config()
    config.setdefault("aggregate", {}).pop("folds", None)
    config["aggregate"]["n_folds"] = 5
    expected.setdefault("aggregate", {})["folds"] = 5
    first = next(iter(config["models"]))
    config["models"][first]["method_list"] = config["models"][first].pop("methods")
    assert check_config(config, SCHEMA) == [
        "config key aggregate.n_folds is deprecated: read as aggregate.folds; rename it",
        f"config key models.{first}.method_list is deprecated: read as models.{first}.methods; "
        "rename it"]
    assert config == expected
    assert check_config(default_config(), SCHEMA) == []  # nothing old, nothing said


def test_an_old_config_key_beside_its_new_one_is_bad_input(monkeypatch):
    """Neither spelling may silently win."""
    monkeypatch.setitem(renamed.RENAMED_CONFIG_KEYS, "aggregate.n_folds", "aggregate.folds")
    config = default_config()
    config.setdefault("aggregate", {}).update(n_folds=5, folds=10)
    with pytest.raises(ConfigError) as stopped:
        check_config(config, SCHEMA)
    assert str(stopped.value) == ("config key aggregate.n_folds: the old spelling of "
                                  "aggregate.folds, which is given too; keep aggregate.folds")


def test_a_rename_keeps_the_key_under_its_parent():
    with pytest.raises(ValueError, match="keeps its parent"):
        renamed.rename_config_keys({}, {"aggregate.folds": "scoring.folds"})


def test_a_plan_reads_an_old_config_key_as_the_new_one_and_logs_it(tmp_path, monkeypatch, caplog,
                                                                    capfd):
    """Through the Snakefile: a throwaway rename (nonce.seed_list -> nonce.seeds) plans the jobs
    of the new key's value, and Snakemake's log says it once."""
    from workflow_helpers import copy_workflow, planned_jobs, update_config

    monkeypatch.setitem(renamed.RENAMED_CONFIG_KEYS, "nonce.seed_list", "nonce.seeds")
    workdir = copy_workflow(tmp_path / "wf")
    update_config(workdir, lambda c: c["nonce"].update(seeds=[1, 2]))
    new = planned_jobs(workdir, forceall=True)
    update_config(workdir, lambda c: c["nonce"].update(seed_list=c["nonce"].pop("seeds")))
    caplog.clear()
    capfd.readouterr()
    assert planned_jobs(workdir, forceall=True) == new
    assert any(dict(wildcards).get("seed") == "2" for _, wildcards in new)
    logged = caplog.text + capfd.readouterr().err
    assert logged.count("config key nonce.seed_list is deprecated: read as nonce.seeds") == 1
