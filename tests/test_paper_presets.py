"""The paper presets (config/papers/*.yaml): each one passes the real config/schema.yaml and plans
its whole DAG in a dry run (no network: URL splits become fetch_treebank jobs, hub models need no
files). The text corpora and CoLA files a preset needs but no rule can fetch are stood in for by
empty files, and config/papers/README.md must tell the user where to put them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml
from workflow_helpers import REPO, Plan, copy_checkout, job, plan

from spudflow.core.config import config_errors
from spudflow.core.outputs_registry import FIGURE_OUTPUTS

PAPERS = REPO / "config" / "papers"
SCHEMA = REPO / "config" / "schema.yaml"

# Files a preset reads that the user provides before the run (licensed or unpublished corpora).
USER_FILES = {
    "spud": [],
    "german_case": ["resources/corpora/dewiki.txt"],
    "cola": [
        "resources/corpora/bnc.txt",
        "resources/cola/cola_public/tokenized/in_domain_dev.tsv",
        "resources/cola/cola_public/tokenized/out_of_domain_dev.tsv",
    ],
    "japanese_transitivity": ["resources/corpora/jawiki.txt"],
}
PRESETS = sorted(USER_FILES)


def _preset(name: str) -> dict:
    return yaml.safe_load((PAPERS / f"{name}.yaml").read_text(encoding="utf-8"))


def _dry_run(tmp_path: Path, config: dict, user_files: list[str]) -> Counter:
    """Planned jobs per rule of the whole DAG of `config` (see _plan)."""
    return Counter(rule for rule, _ in _plan(tmp_path, config, user_files).jobs)


def _plan(tmp_path: Path, config: dict, user_files: list[str]) -> Plan:
    """The whole DAG of `config` in a copy of the workflow. The config becomes the copy's
    config/config.yaml, which is what `--configfile` does: it replaces the default whole."""
    return plan(copy_checkout(tmp_path, config, user_files), forceall=True)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_matches_the_schema(name):
    assert config_errors(_preset(name), SCHEMA) == []


def test_the_readme_says_where_each_user_file_goes():
    readme = (PAPERS / "README.md").read_text(encoding="utf-8")
    for name in PRESETS:
        assert f"config/papers/{name}.yaml" in readme
        for relative in USER_FILES[name]:
            assert relative in readme, relative


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESETS)
def test_preset_dry_run_plans_the_papers_tables(tmp_path, name):
    jobs = _dry_run(tmp_path, _preset(name), USER_FILES[name])
    expected = {
        "spud": {"table_spud_scores", "table_probe", "table_nonce_replacements"},
        "german_case": {"table_german_case", "figure_german_case_roc"},
        "cola": {"table_cola"},
        "japanese_transitivity": {"table_japanese_transitivity", "figure_japanese_agreement"},
    }[name]
    assert expected <= set(jobs)


def test_spud_preset_without_its_probe_section_plans_the_papers_data_and_scores(tmp_path):
    config = _preset("spud")
    config.pop("probe")
    jobs = _dry_run(tmp_path, config, [])
    # 5 treebanks x train, dev, test from UD 2.10 URLs; HDT's training set is 4 files,
    # SynTagRus's 3.
    assert jobs["fetch_treebank"] == 15 + 3 + 2
    # Without the probes: the scored versions (the test sets' SPUD version of seed 1) and, for
    # Table 8's type-token ratios pooled over all splits, the same version of every train and
    # dev split (text only).
    assert jobs["nonce"] == 5 * 3
    assert jobs["items_spud"] == 5
    # The test sets only: mBERT and mGPT on all five, the monolingual pairs on their language.
    assert jobs["score"] == 5 + 5 + 1 + 1 + 1 + 1


@pytest.mark.slow
def test_spud_preset_trains_on_all_of_hdt_and_scores_one_nonce_version(tmp_path):
    planned = _plan(tmp_path, _preset("spud"), [])
    hdt_train = [f"resources/downloads/de_hdt/train.{n}.conllu" for n in range(1, 5)]
    ingest = job("ingest", treebank="de_hdt", split="train")
    assert planned.inputs[ingest] == frozenset(hdt_train)
    # in the release's order: train-a-1, -a-2, -b-1, -b-2
    assert planned.shell[ingest].index(hdt_train[0]) < planned.shell[ingest].index(hdt_train[3])
    fetch = job("fetch_treebank", treebank="de_hdt", download="train.4", ext="conllu")
    assert planned.params[fetch]["url"].endswith("/r2.10/de_hdt-ud-train-b-2.conllu")
    # the probes read every version of the test sets (App. F.4: 5 seeds; F.5: the POS baseline);
    # of the train and dev splits only Table 8's pooled type-token ratios read one version
    nonce = [dict(w) for rule, w in planned.jobs if rule == "nonce"]
    assert len([w for w in nonce if w["split"] == "test"]) == 5 * 2 * 5
    assert sorted((w["split"], w["method"], w["seed"]) for w in nonce if w["split"] != "test") \
        == [("dev", "spud", "1")] * 5 + [("train", "spud", "1")] * 5
    # each sentence is scored in one nonce version: SPUD, seed 1 (Sec. 4.3)
    for treebank in ("ar_padt", "de_hdt", "en_ewt", "fr_gsd", "ru_syntagrus"):
        items = job("items_spud", dataset=f"spud_{treebank}_test")
        assert {f for f in planned.inputs[items] if f.startswith("results/nonce/")} == {
            f"results/nonce/{treebank}/test/spud/seed1/tokens.parquet"}
    spud_items = [dict(w)["dataset"] for rule, w in planned.jobs if rule == "items_spud"]
    assert sorted(spud_items) == sorted(f"spud_{tb}_test" for tb in _preset("spud")["treebanks"])
    # mBERT and mGPT are probed in all five languages, RoBERTa and GPT-2 in English (App. B)
    probed = {(w["treebank"], w["probe_model"]) for rule, w in map(
        lambda j: (j[0], dict(j[1])), planned.jobs) if rule == "probe_train"}
    assert probed == {(tb, model) for tb in _preset("spud")["treebanks"]
                      for model in ("mbert", "mgpt")} | {("en_ewt", "roberta_base"),
                                                         ("en_ewt", "gpt2")}
    features = {(w["treebank"], w["probe_model"]) for rule, w in map(
        lambda j: (j[0], dict(j[1])), planned.jobs) if rule == "probe_features"}
    assert features == probed
    # the reference pipeline's 20,000-sentence cap and its scoring of a predicted `acl` as UNK
    hdt_probe = [cmd for (rule, w), cmd in planned.shell.items()
                 if rule == "probe_train" and dict(w)["treebank"] == "de_hdt"]
    assert hdt_probe and all("--acl-predicted-as-unk" in cmd and "--max-train-sentences 20000"
                             in cmd and "--max-sentences-seed 42" in cmd for cmd in hdt_probe)
    # and its uniformly drawn batches with the mean of the selection batches' losses
    assert all("--batches reference" in cmd for cmd in hdt_probe)
    # the feature jobs of the capped training and selection splits extract the probes' sample
    # only; a test split has none: each probe job extracts every sentence of every version
    extracted = {dict(w)["split"]: cmd for (rule, w), cmd in planned.shell.items()
                 if rule == "probe_features" and dict(w)["treebank"] == "de_hdt"
                 and dict(w)["probe_model"] == "mbert"}
    assert sorted(extracted) == ["dev", "train"]
    for split in ("train", "dev"):
        assert "--max-sentences 20000 --max-sentences-seed 42 --min-words 4" in extracted[split]
    versions = [f"results/nonce/de_hdt/test/{m}/seed{s}" for m in ("spud", "pos")
                for s in range(1, 6)]
    for cmd in hdt_probe:
        assert "--eval-extract orig results/ingest/de_hdt/test " in cmd
        assert all(f" {version} " in cmd for version in versions)
        source = {"mbert": "bert-base-multilingual-cased", "mgpt": "ai-forever/mGPT"}
        assert any(f"--encoder {name} " in cmd for name in source.values())


def _feature_layers(shell: str) -> dict[str, str]:
    """baseline -> its layers, from a probe_features command's `--baselines lm=6,7 M0=0 ...`."""
    words = shell.split()
    pairs = words[words.index("--baselines") + 1:words.index("--eval-sets")]
    return dict(pair.split("=") for pair in pairs)


@pytest.mark.slow
def test_spud_preset_sweeps_english_layers_only_and_draws_fig_8(tmp_path):
    """App. F.6, Fig. 8 ("Layerwise DepProbe performance for mBERT and mGPT", English only):
    `probe.layer_sweep: [en_ewt/mbert, en_ewt/mgpt]` probes every layer of those two on EWT,
    and the figure is planned; every feature job holds only the layers of the configured
    pairs (mBERT 6/7 and its baselines', mGPT 12, RoBERTa's and GPT-2's 6/7), not every layer:
    the sweep's run of another layer extracts its EWT train and dev features itself."""
    swept_models = {"mbert", "mgpt"}
    preset = _preset("spud")
    figure = FIGURE_OUTPUTS["probe_layers"]
    planned = plan(copy_checkout(tmp_path, preset), forceall=True, targets=[figure.target])
    assert job(figure.rule) in planned.jobs
    models = preset["probe"]["models"]

    def pair(model):
        return ",".join(sorted({str(models[model][k]) for k in ("dist_layer", "label_layer")},
                               key=int))

    sweeps = {("en_ewt", model) for model in swept_models}
    assert {tuple(entry.split("/")) for entry in preset["probe"]["layer_sweep"]} == sweeps
    features = {(w["treebank"], w["probe_model"], w["split"]): _feature_layers(planned.shell[j])
                for j, w in ((j, dict(j[1])) for j in planned.jobs)
                if j[0] == "probe_features"}
    assert {tb for tb, _, _ in features} == set(preset["probe"]["tasks"])
    for (treebank, model, _), layers in features.items():
        assert layers == {"lm": pair(model), **({"M0": "0", "MR": pair(model), "MRC": pair(model)}
                                                if model == "mbert" else {})}, (treebank, model)
    # a sweep run of a layer the features do not hold extracts EWT train and dev (capped as
    # their feature jobs are) with the model; one of a stored layer reads the stored files
    for j in (j for j in planned.jobs if j[0] == "probe_train"):
        w = dict(j[1])
        if (w["treebank"], w["probe_model"]) not in sweeps or w["baseline"] != "lm":
            continue
        cmd = planned.shell[j]
        stored = {w["dist"], w["label"]} <= set(pair(w["probe_model"]).split(","))
        assert ("--train-extract results/ingest/en_ewt/train "
                "--dev-extract results/ingest/en_ewt/dev " in cmd) != stored, cmd
        assert ("--train results/probe/features/" in cmd) == stored, cmd
        if not stored:
            assert "--max-train-sentences 20000 --max-dev-sentences 20000 " \
                "--max-sentences-seed 42 " in cmd
            assert not any("probe/features" in path for path in planned.inputs[j])
    # the model's own runs: its layer pair in every task, and (l, l) for every layer on EWT
    runs = {(w["treebank"], w["probe_model"], w["dist"], w["label"])
            for w in (dict(j[1]) for j in planned.jobs if j[0] == "probe_train")
            if w["baseline"] == "lm"}
    expected = set()
    for treebank in preset["probe"]["tasks"]:
        for model, spec in models.items():
            if treebank not in spec.get("tasks", [treebank]):
                continue
            expected.add((treebank, model, str(spec["dist_layer"]), str(spec["label_layer"])))
            if (treebank, model) in sweeps:
                expected |= {(treebank, model, str(n), str(n)) for n in range(spec["layers"] + 1)}
    assert runs == expected
    # the figure draws the table the sweep's metrics feed
    table = next(j for j in planned.jobs if j[0] == "table_probe")
    assert table in planned.dependencies[job(figure.rule)]
    assert "results/probe/runs/en_ewt/mgpt/lm/dist24_label24/seed3/metrics.parquet" in \
        planned.inputs[table]


def test_cola_preset_is_lau_et_al_s_code_and_fetches_table_5_s_phenomena(tmp_path):
    planned = _plan(tmp_path, _preset("cola"), USER_FILES["cola"])
    phenomena = ["svo", "wh_extraction", "inchoative", "singular_pl", "reflexive"]
    fetches = {dict(w)["name"]: planned.params[(rule, w)]["url"] for rule, w in planned.jobs
               if rule == "fetch_pairs_file"}
    assert sorted(fetches) == sorted(f"{p}.tsv" for p in phenomena)
    for name, url in fetches.items():
        assert url.startswith("https://raw.githubusercontent.com/nyu-mll/CoLA-baselines/")
        assert url.endswith(f"/acceptability_corpus/phenomena/{name}")
    items = job("items_cola")
    assert {f"resources/downloads/pairs/cola/{p}.tsv" for p in phenomena} <= planned.inputs[items]
    assert "--words whitespace" in planned.shell[items]
    for order in (2, 3, 4):
        train = planned.shell[job("ngram_train", ngram=f"bnc_{order}gram")]
        for option in ("--discount 0.7", "--min-count 4", "--lowercase", "--unknown signature",
                       "--kneser-ney lau", "--words whitespace", f"--order {order}"):
            assert option in train, (order, option)
        score = planned.shell[job("score", dataset="cola", model=f"bnc_{order}gram")]
        assert "--measures lau" in score and "--unigram" not in score


def test_japanese_preset_scores_every_variant_with_the_eight_models(tmp_path):
    jobs = _dry_run(tmp_path, _preset("japanese_transitivity"),
                    USER_FILES["japanese_transitivity"])
    # the verb pairs counted in the user's Japanese Wikipedia text, once for the four variants
    assert jobs["japanese_verb_counts"] == 1
    assert jobs["items_japanese_transitivity"] == 4
    assert jobs["score"] == 8 * 4


def test_japanese_preset_compares_the_thesis_s_fifteen_modes():
    """App. A.1's agreement tables have 15 columns: no mBERT (dropped after §5) and, as Table 1
    says, no verb-only mode of XLM-R, GPT-2 or GPTneo (nor of GPT-2 small)."""
    preset = _preset("japanese_transitivity")
    modes = preset["aggregate"]["japanese_agreement_modes"]
    assert len(modes) == len(set(modes)) == 15
    scored = {f"{name}/{method}{span}" for name, spec in preset["models"].items()
              for method in spec["methods"] for span in ("", "@verb")}
    assert len(scored) == 24 and set(modes) <= scored
    left_out = sorted(scored - set(modes))
    assert [m for m in left_out if not m.startswith("mbert/")] == [
        "gpt2/ppl@verb", "gpt2_small/ppl@verb", "gptneo/ppl@verb", "xlm_r/pppl@verb",
        "xlm_r/unmasked@verb"]


def test_missing_user_files_stop_planning(tmp_path):
    # Without the German Wikipedia text the n-gram models cannot be planned: no silent skip,
    # and the config key that names it
    with pytest.raises(Exception, match=r"config key ngrams\.dewiki_bigram\.text\[0\]: "
                       r"'resources/corpora/dewiki\.txt': no such text file"):
        _dry_run(tmp_path, _preset("german_case"), USER_FILES["german_case"][1:])
    # nor the Japanese verb pairs without the Japanese Wikipedia text they are counted in
    (tmp_path / "jawiki").mkdir()
    with pytest.raises(Exception, match=r"config key pairs\.japanese_transitivity\.corpus: "
                       r"'resources/corpora/jawiki\.txt': no such file"):
        _dry_run(tmp_path / "jawiki", _preset("japanese_transitivity"), [])


def test_german_preset_fetches_the_papers_sentences_and_recovers_its_templates(tmp_path):
    """The paper's 50 templates are public in the reference repository's sentence files: the
    preset fetches both by URL (pinned commit) and `pairs german-case --sentences` recovers the
    templates; no template file for the user to supply. "What differs" says the project's own
    templates (config/templates/german_case.tsv) are not the paper's."""
    german = _preset("german_case")["pairs"]["german_case"]
    assert "templates" not in german
    planned = _plan(tmp_path, _preset("german_case"), USER_FILES["german_case"])
    # the same download rule as CoLA's phenomenon sets, under the URL's file name
    fetches = {dict(w)["name"]: planned.params[(rule, w)]["url"] for rule, w in planned.jobs
               if rule == "fetch_pairs_file" and dict(w)["family"] == "german_case"}
    commit = "crochereau/Word-based-LM/5ccd37b36ff28758d29dfa87270d6ddf0cb1db04/src/data/"
    names = [f"{which}_sentences.txt" for which in ("grammatical", "ungrammatical")]
    assert fetches == {name: f"https://raw.githubusercontent.com/{commit}{name}"
                       for name in names}
    items = job("items_german_case")
    downloads = [f"resources/downloads/pairs/german_case/{name}" for name in names]
    assert planned.inputs[items] == frozenset(downloads)
    assert f"--sentences {downloads[0]} {downloads[1]}" in planned.shell[items]
    table = job("table_german_case")
    assert "--animacy positions" in planned.shell[table]
    differs = (PAPERS / "README.md").read_text(encoding="utf-8").split(
        "## What differs from the papers")[1]
    assert "config/templates/german_case.tsv" in differs.split("**German case**")[1].split(
        "**CoLA**")[0]


def test_spud_preset_takes_the_settings_the_papers_numbers_were_made_with():
    config = _preset("spud")
    # Sec. 5.2 took DepProbe's hyperparameters "to replicate their results": its code squares
    # the distance (Eq. 5 writes the plain L2, the stage default).
    assert config["probe"]["distance"] == "squared"
    # App. D: "The TTR (when tokenized with mBERT)".
    assert config["nonce"]["ttr_tokenizer"] == "bert-base-multilingual-cased"
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    assert schema["properties"]["probe"]["properties"]["distance"]["default"] == "l2"
    # The reference's predict.py writes a predicted `acl` as UNK (RelAcc and LAS lose it), and
    # its data/split.py keeps 20,000 sentences of a larger training or dev split.
    assert config["probe"]["acl_predicted_as_unk"] is True
    assert config["probe"]["max_train_sentences"] == config["probe"]["max_dev_sentences"] == 20000
    probe = schema["properties"]["probe"]["properties"]
    assert probe["acl_predicted_as_unk"]["default"] is False
    # The reference draws batches uniformly (DepSpaceDataset) and selects on the mean of the
    # batch losses; the stage default buckets by length.
    assert config["probe"]["batches"] == "reference"
    assert probe["batches"]["default"] == "buckets"
    assert probe["max_train_sentences"]["default"] is None


def test_japanese_preset_fits_glmnet_as_r_does_by_default():
    """The thesis printed R's default glmnet fits (§5.7): the preset's table command solves each
    lambda with R's own solver (`--convergence r_default`, spudflow.aggregate.glmnet), not the
    default `tight` one."""
    from snakemake.utils import validate

    from spudflow.aggregate.plan import AggregatePlan

    config = _preset("japanese_transitivity")
    validate(config, str(SCHEMA), set_default=True)
    options = AggregatePlan(config, REPO / "workflow" / "spudflow").japanese_table_options()
    assert "--convergence r_default" in options
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    assert default["aggregate"]["regression"]["convergence"] == "tight"
