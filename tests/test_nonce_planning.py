"""Which nonce versions and SPUD items the workflow plans: only those something downstream reads
(the SPUD items of a scored split, a probe task's test split), and for the items only the nonce
versions pairs.spud.methods x pairs.spud.seeds choose, which the scoring jobs then score."""

from __future__ import annotations

import shutil

import pytest
from workflow_helpers import copy_workflow, job, plan, update_config

TINY_DE = "resources/tiny/tiny_de.conllu"
# tiny_de's dev split: a copy of its test file (one file named by two splits is refused)
TINY_DE_DEV = "resources/tiny/tiny_de_dev.conllu"


def _nonce_splits(planned) -> set[tuple[str, str]]:
    return {(dict(w)["treebank"], dict(w)["split"]) for rule, w in planned.jobs if rule == "nonce"}


def with_dev_file(workdir):
    shutil.copy(workdir / TINY_DE, workdir / TINY_DE_DEV)
    return workdir


def _add_unread_split(config):
    """tiny_de's dev split, which only trains (the controls' text: null): neither scored nor
    probed on."""
    config["treebanks"]["tiny_de"]["splits"]["dev"] = TINY_DE_DEV
    config["scoring"]["datasets"] = [
        "spud_tiny_en_test", "spud_tiny_de_test", "german_case", "japanese_transitivity_base",
        "blimp"]


@pytest.mark.slow
def test_a_split_nothing_reads_gets_no_nonce_versions_or_items(tmp_path):
    workdir = with_dev_file(copy_workflow(tmp_path / "work"))
    update_config(workdir, _add_unread_split)
    planned = plan(workdir, forceall=True)
    assert job("ingest", treebank="tiny_de", split="dev") in planned.jobs
    assert _nonce_splits(planned) == {("tiny_en", "test"), ("tiny_de", "test")}
    items = {dict(w)["dataset"] for rule, w in planned.jobs if rule == "items_spud"}
    assert items == {"spud_tiny_en_test", "spud_tiny_de_test"}
    # the replacement tables cover the versions made, nothing of the dev split
    ratio = next(j for j in planned.jobs if j[0] == "table_nonce_ratio")
    assert not [f for f in planned.inputs[ratio] if "/dev/" in f]
    # scored, the same split gets its items and nonce versions
    update_config(workdir, lambda c: c["scoring"]["datasets"].append("spud_tiny_de_dev"))
    assert ("tiny_de", "dev") in _nonce_splits(plan(workdir, forceall=True))


def test_scored_seeds_choose_the_nonce_versions_the_scoring_jobs_read(tmp_path):
    workdir = copy_workflow(tmp_path / "work")

    def two_seeds_one_scored(config):
        config["nonce"]["seeds"] = [1, 2]
        config["pairs"]["spud"].update(methods=["spud"], seeds=[2])

    update_config(workdir, two_seeds_one_scored)
    planned = plan(workdir, forceall=True)
    items = job("items_spud", dataset="spud_tiny_de_test")
    nonce_inputs = {f for f in planned.inputs[items] if f.startswith("results/nonce/")}
    assert nonce_inputs == {"results/nonce/tiny_de/test/spud/seed2/tokens.parquet"}
    assert "--nonce results/nonce/tiny_de/test/spud/seed2" in planned.shell[items]
    assert " results/nonce/tiny_de/test/pos" not in planned.shell[items]
    # the scoring jobs of the dataset read those items
    scoring = {j for j in planned.downstream([items]) if j[0] in ("score", "score_shard")}
    assert {dict(w)["dataset"] for _, w in scoring} == {"spud_tiny_de_test"}
    # tiny_de is only scored: its one scored version; tiny_en is also the probe's test split:
    # every version, for the probe
    versions = {(dict(w)["treebank"], dict(w)["method"], dict(w)["seed"])
                for rule, w in planned.jobs if rule == "nonce"}
    assert {v for v in versions if v[0] == "tiny_de"} == {("tiny_de", "spud", "2")}
    assert {v for v in versions if v[0] == "tiny_en" and v[1] != "posfree"} == {
        ("tiny_en", method, seed) for method in ("spud", "pos") for seed in ("1", "2")}


@pytest.mark.parametrize(("key", "value", "message"), [
    ("seeds", [3], "config key pairs.spud.seeds: 3 not in nonce.seeds"),
    ("methods", ["posfree"], "config key pairs.spud.methods: posfree not in nonce.methods"),
])
def test_scored_versions_outside_the_nonce_section_stop_planning(tmp_path, key, value, message):
    workdir = copy_workflow(tmp_path / "work")
    update_config(workdir, lambda c: c["pairs"]["spud"].update({key: value}))
    with pytest.raises(Exception, match=message):
        plan(workdir)


def test_a_pool_for_an_unconfigured_treebank_stops_planning(tmp_path):
    """A pool keyed by a misspelt treebank name would silently add no candidates."""
    workdir = copy_workflow(tmp_path / "work")
    update_config(workdir, lambda c: c["nonce"]["pools"].update(tiny_xx=["tiny_en/test"]))
    with pytest.raises(Exception, match="config key nonce.pools.tiny_xx: no treebank 'tiny_xx' "
                                        "is configured"):
        plan(workdir)


@pytest.mark.slow
def test_language_options_left_out_of_the_config_are_the_schemas(tmp_path):
    """nonce.languages without `ar`: the Arabic runs still get the schema's strip_diacritics
    (one home for the default, passed explicitly); a language without options gets none."""
    from workflow_helpers import copy_checkout, default_config

    config = default_config()
    del config["nonce"]["languages"]["ar"]
    planned = plan(copy_checkout(tmp_path / "work", config), forceall=True)
    arabic = [j for j in planned.jobs if j[0] == "nonce" and dict(j[1])["treebank"] == "ar_pud"]
    english = [j for j in planned.jobs if j[0] == "nonce" and dict(j[1])["treebank"] == "en_pud"]
    assert arabic and english
    assert all("--option strip_diacritics=true" in planned.shell[j] for j in arabic)
    assert not any("--option" in planned.shell[j] for j in english)


@pytest.mark.slow
def test_ttr_all_splits_makes_every_split_of_a_treebank_for_the_ttr_table_alone(tmp_path):
    """Table 8 pools a treebank's splits: with nonce.ttr_all_splits a split that nothing else
    reads (tiny_de dev) gets those versions, read by the type-token ratio table only."""
    workdir = with_dev_file(copy_workflow(tmp_path / "work"))

    def pool_all_splits(config):
        _add_unread_split(config)
        config["nonce"]["ttr_all_splits"] = {"methods": ["spud"], "seeds": [1]}

    update_config(workdir, pool_all_splits)
    planned = plan(workdir, forceall=True)
    dev = [dict(w) for rule, w in planned.jobs if rule == "nonce" and dict(w)["split"] == "dev"]
    assert [(w["treebank"], w["method"], w["seed"]) for w in dev] == [("tiny_de", "spud", "1")]
    dev_tokens = "results/nonce/tiny_de/dev/spud/seed1/tokens.parquet"
    readers = {j[0] for j in planned.jobs if dev_tokens in planned.inputs.get(j, ())}
    assert readers - {"all"} == {"table_nonce_ttr"}  # `all` only asks for it to be made
    # the nonce jobs pass the case, the multiword tokens and the candidate weights: a change of
    # any reruns them
    nonce_job = job("nonce", treebank="tiny_de", split="dev", method="spud", seed="1")
    assert "--case match --multiword-tokens keep" in planned.shell[nonce_job]
    assert "--candidate-weights forms" in planned.shell[nonce_job]
    # a version outside the nonce section stops planning
    update_config(workdir, lambda c: c["nonce"].update(ttr_all_splits={"methods": ["spud"],
                                                                       "seeds": [7]}))
    with pytest.raises(Exception, match="config key nonce.ttr_all_splits.seeds: 7 not in "
                                        "nonce.seeds"):
        plan(workdir)


def test_split_settings_give_a_split_its_pool_and_upos(tmp_path):
    """nonce.splits, as the reference (generate_data_multiprocess.py): dev's candidates from dev
    and test together, dev without ADV; a pool split a treebank lacks stops planning."""
    workdir = with_dev_file(copy_workflow(tmp_path / "work"))

    def reference_splits(config):
        _add_unread_split(config)
        config["nonce"]["ttr_all_splits"] = {"methods": ["spud"], "seeds": [1]}
        config["nonce"]["splits"] = {"dev": {"upos": ["NOUN", "PROPN", "VERB", "ADJ"],
                                             "pool": ["test"]}}

    update_config(workdir, reference_splits)
    planned = plan(workdir, forceall=True)
    dev = job("nonce", treebank="tiny_de", split="dev", method="spud", seed="1")
    test = job("nonce", treebank="tiny_de", split="test", method="spud", seed="1")
    assert "results/ingest/tiny_de/test/tokens.parquet" in planned.inputs[dev]
    assert "--pool results/ingest/tiny_de/test" in planned.shell[dev]
    assert "--upos NOUN,PROPN,VERB,ADJ " in planned.shell[dev]
    assert "--upos NOUN,PROPN,ADJ,ADV,VERB " in planned.shell[test]
    assert "--pool" not in planned.shell[test]
    # test's candidates from dev too: tiny_en has a test split but no dev split
    update_config(workdir, lambda c: c["nonce"]["splits"].update(test={"pool": ["dev"]}))
    with pytest.raises(Exception, match=r"config key nonce.splits.test.pool\[0\]: treebank "
                                        "'tiny_en' has no split 'dev'"):
        plan(workdir)
