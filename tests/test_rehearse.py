"""`spudflow rehearse` on the SPUD preset cut to a few jobs (one treebank split given as a list
of two URLs, one nonce version, no probe; GPT-2 by its hub id, a hub id no table knows, an
n-gram model on a user-supplied corpus): the models come from the offline hub cache, the
treebank from the mirror, the corpus from a stand-in; a second rehearsal has nothing to do, and
after one mirror file is edited only what depends on it reruns. About 30 s unloaded (its jobs
start preloaded: preloaded_rehearsal_jobs)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow_helpers import default_config

from spudflow.rehearse.families import choose_family
from spudflow.rehearse.mirror import mirror_location
from spudflow.rehearse.overlay import build_overlay, hub_models
from spudflow.rehearse.report import job_stats, probe_feature_loads

REPO = Path(__file__).resolve().parents[1]
SPUD = yaml.safe_load((REPO / "config" / "papers" / "spud.yaml").read_text(encoding="utf-8"))
EWT_TEST = SPUD["treebanks"]["en_ewt"]["splits"]["test"]


# A second file of the test split by a URL of another host: the split is a list of two files.
OTHER_TEST = "https://example.org/ud/en_extra-ud-test.conllu"


def cut_spud_preset() -> dict:
    return {
        "treebanks": {"en_ewt": {"lang": "en", "splits": {"test": [EWT_TEST, OTHER_TEST]}}},
        "ingest": {"lenient": False},
        # the cut treebank has test alone: no dev for the preset's pool of test's candidates
        "nonce": {**{k: v for k, v in SPUD["nonce"].items() if k != "splits"},
                  "methods": ["spud"], "seeds": [1]},
        "pairs": {"spud": {**SPUD["pairs"]["spud"], "treebanks": ["en_ewt"]}},
        "ngrams": {"user_lm": {"lang": "en", "text": ["resources/corpora/user.txt"],
                               "order": 2, "k": 1.0, "min_count": 1}},
        "models": {
            "gpt2": SPUD["models"]["gpt2"],
            "user_bert": {"source": "someorg/new-bert", "kind": "masked",
                          "methods": ["pppl"], "dtype": "float32"},
            "user_lm": {"source": "results/ngram/user_lm.parquet", "kind": "ngram",
                        "methods": ["addk"]},
        },
        "scoring": {"datasets": ["spud_en_ewt_test"]},
    }


def end_one_sentence_with_a_bang(conllu: Path, among: set[str]) -> None:
    """Edit the stand-in by hand as a user would: the last sentence of `among` (sent_ids) ending
    in '.' ends in '!' (its text and its token; no content word changes, so no other sentence's
    nonce version)."""
    blocks = conllu.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    for index in reversed(range(len(blocks))):
        lines = blocks[index].split("\n")
        text = next(i for i, line in enumerate(lines) if line.startswith("# text = "))
        sent_id = next(line.split("=", 1)[1].strip() for line in lines
                       if line.startswith("# sent_id ="))
        fields = lines[-1].split("\t")
        if (sent_id in among and lines[text].endswith(".") and fields[1] == "."
                and fields[2] == "."):
            lines[text] = lines[text][:-1] + "!"
            fields[1] = fields[2] = "!"
            lines[-1] = "\t".join(fields)
            blocks[index] = "\n".join(lines)
            conllu.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
            return
    raise AssertionError(f"{conllu}: no sentence of {len(among)} sent_ids ends in '.'")


@contextlib.contextmanager
def preloaded_rehearsal_jobs(workdir: Path, monkeypatch) -> Iterator[Path]:
    """The environment `rehearse` runs in here (from workdir's parent, with no HF_HUB_CACHE of
    the caller's), its jobs' `spudflow` started with the heavy libraries imported in the jobs'
    own environment (tests/preloaded_jobs.py: the offline hub cache of the rehearsal's
    stand-ins; a job whose environment differs runs as a real process). Yields the server's
    log of how each job ran."""
    from preloaded_jobs import client_dir_for

    import spudflow.rehearse.cli as rehearse_cli

    monkeypatch.chdir(workdir.parent)
    monkeypatch.setenv("PYTHONPATH", str(REPO / "workflow"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with client_dir_for(rehearse_cli.offline_hub_env(workdir)) as client:
        if client is not None:
            search_path = rehearse_cli.jobs_search_path
            monkeypatch.setattr(rehearse_cli, "jobs_search_path",
                                lambda: f"{client}{os.pathsep}{search_path()}")
        yield client.parent / "server.sock.log" if client is not None else None


def rehearse(config: Path, workdir: Path, capfd) -> tuple[int, str]:
    """`spudflow rehearse` in-process (coverage sees it), inside preloaded_rehearsal_jobs;
    (exit status, stderr: ours and the Snakemake subprocess's). The rehearsal leaves the
    environment and the working directory as it found them."""
    from spudflow.cli import main

    environment = dict(os.environ)
    code = main(["rehearse", str(config), "--workdir", str(workdir), "--cores", "2"])
    # torch writes its compile cache folder (its default) into os.environ on first use
    after = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    assert after == {k: v for k, v in environment.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    assert Path.cwd() == workdir.parent
    return code, capfd.readouterr().err


def test_unknown_hub_id_takes_its_kinds_generic_family():
    assert choose_family("someorg/new-bert", "masked").how.startswith("generic")
    assert choose_family("someorg/new-lm", "causal").family.architecture == "gpt2"
    assert choose_family("roberta-base", "masked").family.tokenizer == "bytebpe"
    assert choose_family("x/y", "causal", "gpt-neo").how == "overlay"


def test_overlay_points_at_the_mirror_and_narrows_only_sizes(tmp_path):
    preset = yaml.safe_load((REPO / "config/papers/japanese_transitivity.yaml").read_text())
    overlay = build_overlay(preset, {"https://x/": "/m"}, "small")
    assert set(overlay) == {"pairs", "fetch"}
    samples = overlay["pairs"]["japanese_transitivity"]["sample"]
    assert set(samples) == {"base", "rare", "longer", "relative"}
    assert {s["n"] for s in samples.values()} == {40}
    assert [m.hub_id for m in hub_models(SPUD)][:2] == ["bert-base-multilingual-cased",
                                                        "ai-forever/mGPT"]
    assert max(m.layers for m in hub_models(SPUD)) == 24  # mGPT's probe layers exist
    prefix, file = mirror_location(tmp_path, EWT_TEST)
    assert prefix + file.name == EWT_TEST


@pytest.mark.slow
def test_rehearsal_runs_offline_from_hub_cache_mirror_and_stand_ins(tmp_path, monkeypatch,
                                                                    capfd):
    config = tmp_path / "cut_spud.yaml"
    config.write_text(yaml.safe_dump(cut_spud_preset()), encoding="utf-8")
    workdir = tmp_path / "rehearsal"
    with preloaded_rehearsal_jobs(workdir, monkeypatch) as jobs_log:
        rehearse_three_times(config, workdir, capfd)
        # the jobs had the rehearsal's environment: they ran in the preloaded server
        assert jobs_log is None or "score forked" in jobs_log.read_text()


def rehearse_three_times(config: Path, workdir: Path, capfd) -> None:
    """The first rehearsal, a second with nothing to do, a third after an edit in the mirror."""
    code, log = rehearse(config, workdir, capfd)
    assert code == 0, log[-3000:]

    # Every hub id is a snapshot of the offline cache, loaded by id from it.
    for hub_id in ("gpt2", "someorg/new-bert"):
        repo = workdir / "hub" / ("models--" + hub_id.replace("/", "--"))
        commit = (repo / "refs" / "main").read_text()
        assert (repo / "snapshots" / commit / "config.json").is_file()
        logs = list((workdir / "results" / "logs").rglob("*.log"))
        assert any(f"cache: hub model {hub_id} at commit {commit}" in p.read_text()
                   for p in logs), hub_id
    # The treebank's two files came from the mirror, the corpus from a stand-in.
    for part, url in enumerate((EWT_TEST, OTHER_TEST), start=1):
        _, mirrored = mirror_location(workdir / "mirror", url)
        assert (workdir / f"resources/downloads/en_ewt/test.{part}.conllu").read_bytes() == \
            mirrored.read_bytes()
    assert (workdir / "resources/corpora/user.txt").stat().st_size > 0
    scores = pl.read_parquet(workdir / "results/tables/spud_ratio_summary.parquet")
    assert scores.height > 0
    assert set(scores["model"]) >= {"gpt2", "user_bert", "user_lm"}
    report = (workdir / "rehearsal.md").read_text(encoding="utf-8")
    assert "generic for kind masked (unknown id)" in report
    assert "resources/corpora/user.txt" in report
    assert "| score |" in report
    assert "No probe features are planned." in report

    code, log = rehearse(config, workdir, capfd)
    assert code == 0, log[-3000:]
    assert "Nothing to be done" in log

    # One sentence of the second file edited in the mirror: the rehearsal keeps the edit, that
    # file is fetched again and what reads the split reruns, the corpus's n-gram model does not;
    # every item but the sentence and its nonce version is a cache hit.
    _, edited = mirror_location(workdir / "mirror", OTHER_TEST)
    scored = pl.read_parquet(workdir / "results/items/spud_en_ewt_test.parquet")["sent_id"]
    end_one_sentence_with_a_bang(edited, set(scored.drop_nulls()))
    code, log = rehearse(config, workdir, capfd)
    assert code == 0, log[-3000:]
    jobs = job_stats(log)
    assert jobs["fetch_treebank"] == 1 and jobs["score"] == 3, jobs
    assert "ngram_train" not in jobs, jobs
    assert "edited in the mirror by hand (kept)" in (workdir / "rehearsal.md").read_text()
    items = pl.read_parquet(workdir / "results/items/spud_en_ewt_test.parquet").height
    for model in ("gpt2", "user_bert", "user_lm"):
        log = (workdir / f"results/logs/score/spud_en_ewt_test/{model}.log").read_text()
        assert f"cache: {items - 2} hits, 2 computed" in log, (model, log[-2000:])


def test_a_stand_in_has_the_layers_the_probe_reads_else_two():
    from spudflow.rehearse.cli import stand_in_layers

    assert stand_in_layers(0) == 2      # scoring only: no layer is read
    assert stand_in_layers(12) == 12    # mBERT probed at layers 6, 7 and 12
    assert stand_in_layers(7) == 8      # even, for GPT-Neo's alternating attention


def test_a_corpus_stand_in_repeats_no_sentence_of_a_treebank_that_holds_every_one(tmp_path):
    """german_case reads the only vendored German treebank (PUD): its dewiki stand-in was empty
    and ngram_train stopped on it; now it is PUD's sentences with their words shuffled."""
    from spudflow.core.workflow_paths import local_workflow_file, resolve_workflow_paths
    from spudflow.rehearse.conllu_blocks import block_text, read_blocks
    from spudflow.rehearse.standins import make_user_files

    preset = resolve_workflow_paths(  # as `rehearse` reads it: workflow: files of this repo
        yaml.safe_load((REPO / "config/papers/german_case.yaml").read_text()),
        local_workflow_file(REPO, REPO))
    pud = REPO / preset["treebanks"]["de_pud"]["splits"]["test"]
    taken = {block_text(b) for b in read_blocks(pud)}
    made = make_user_files(preset, REPO, tmp_path, taken)
    assert [m.path for m in made] == ["resources/corpora/dewiki.txt"] * 2
    lines = (tmp_path / "resources/corpora/dewiki.txt").read_text().splitlines()
    assert len(lines) > 200 and not set(lines) & taken
    if not (REPO.parent / "shared" / "data" / "ud").is_dir():  # PUD: the only German at hand
        assert "words shuffled" in made[0].made


def test_probe_feature_jobs_count_one_encoder_per_baseline(tmp_path):
    """A feature job builds every baseline's encoder: the report counts jobs and encoders, a
    shard job as many as its gathered directory has baselines."""
    benchmarks = tmp_path / "results" / "benchmarks" / "probe_features" / "bert" / "en_ewt"
    benchmarks.mkdir(parents=True)
    for name in ("train", "test@heldout.shard1", "test@heldout.shard2"):
        (benchmarks / f"{name}.tsv").write_text("s\n1\n", encoding="utf-8")
    features = tmp_path / "results" / "probe" / "features" / "bert" / "en_ewt"
    for split, baselines in (("train", ("lm", "M0", "MR")), ("test@heldout", ("lm", "M0"))):
        for baseline in baselines:
            (features / split / baseline).mkdir(parents=True)
    assert probe_feature_loads(tmp_path) == (3, 3 + 2 * 2)


@pytest.mark.parametrize(("text", "extra", "error"), [
    (None, [], "cut_spud.yaml: no such config file"),
    ("treebanks: [unclosed\n", [], "cut_spud.yaml:2: not a YAML config"),
    ("models: {}\n", [], "cut_spud.yaml: not a spudflow config (no treebanks: mapping)"),
    ("treebanks: {}\n", ["--family", "gpt2"], "--family: 'gpt2' is not HUB_ID=FAMILY"),
    ("treebanks: {}\n", ["--family", "x/y=gpt5"], "--family: unknown family 'gpt5' for x/y"),
    ({"ngrams": {"lm": {"lang": "en", "text": ["/abs/corpus.txt"]}}}, [],
     "cut_spud.yaml: /abs/corpus.txt: missing, and a stand-in is only made for a path relative"),
    ({"treebanks": {"en_pud": {"lang": 5, "splits": {}}}}, [],
     "cut_spud.yaml: config key treebanks.en_pud.lang: 5 is not of type 'string'"),
    # YAML keeps the last of a key given twice without a word
    ("treebanks: {}\nnonce: {seeds: [1]}\nnonce: {seeds: [2]}\n", [],
     "cut_spud.yaml:3: config key nonce: given twice (first on line 2)"),
])
def test_bad_rehearsal_input_is_one_line_and_writes_nothing(tmp_path, capsys, text, extra,
                                                            error):
    from spudflow.cli import main

    config = tmp_path / "cut_spud.yaml"
    if isinstance(text, dict):  # the default config with these sections: valid but for them
        text = yaml.safe_dump({**default_config(), **text})
    if text is not None:
        config.write_text(text, encoding="utf-8")
    workdir = tmp_path / "rehearsal"
    assert main(["rehearse", str(config), "--workdir", str(workdir), *extra]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and error in err, err
    assert not workdir.exists()


@pytest.mark.parametrize("name", ["bert-japanese", "bert-japanese-char", "electra-japanese",
                                  "roberta", "xlm-roberta", "electra",
                                  "gpt2-medium-sentencepiece", "gpt-neo"])
def test_a_tiny_model_of_each_architecture_and_tokenizer_reads_its_text(tmp_path, name):
    """Every tokenizer type knows every character of the text it was built from (no unknown
    token), the model takes its ids, and the same text gives the same snapshot commit (or a
    second rehearsal would rerun every scoring job)."""
    import dataclasses

    import torch

    from spudflow.rehearse.families import FAMILIES
    from spudflow.rehearse.tiny_models import add_tiny_model, build_model, build_tokenizer

    family = dataclasses.replace(FAMILIES[name], layers=2)
    texts = ["The cat sat on the mat .", "猫が座った。", "A dog, a cat and a bird!"] * 5
    tokenizer = build_tokenizer(family, texts)
    for text in texts[:3]:
        ids = tokenizer(text)["input_ids"]
        assert ids and tokenizer.unk_token_id not in ids, (text, ids)
    model = build_model(family, tokenizer, seed=0).eval()
    with torch.no_grad():
        logits = model(torch.tensor([tokenizer(texts[0])["input_ids"]])).logits
    n = len(tokenizer(texts[0])["input_ids"])
    assert logits.shape == ((1, n) if family.architecture == "electra"
                            else (1, n, len(tokenizer)))
    commits = {add_tiny_model(tmp_path / f"hub{k}", "x/y", family, texts, 0) for k in range(2)}
    assert len(commits) == 1
    # the Japanese BERTs and ELECTRA have only a slow tokenizer on the hub: so do their stand-ins
    assert tokenizer.is_fast == (family.tokenizer not in ("wordpiece-ja", "char"))


def test_cola_stand_in_is_labelled_pairs_and_an_absolute_corpus_path_is_refused(tmp_path):
    """CoLA's raw TSV: each treebank sentence (label 1) followed by its words shuffled (label 0,
    mark *), none a sentence of the treebanks; a stand-in is never written outside DIR."""
    from spudflow.rehearse.standins import COLA_SENTENCES, make_user_files

    config = {"treebanks": {}, "pairs": {"cola": {"enabled": True, "files": [
        "resources/cola/raw/in_domain_train.tsv"]}}}
    (made,) = make_user_files(config, REPO, tmp_path, set())
    assert (made.path, made.what) == ("resources/cola/raw/in_domain_train.tsv", "pairs.cola.files")
    rows = [line.split("\t") for line in
            (tmp_path / made.path).read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 * COLA_SENTENCES
    for good, bad in zip(rows[::2], rows[1::2], strict=True):
        assert good[:3] == ["standin", "1", ""] and bad[:3] == ["standin", "0", "*"]
        assert sorted(good[3].split()) == sorted(bad[3].split()) and good[3] != bad[3]
    taken = {rows[0][3]}  # a sentence a treebank holds is not taken again
    (again,) = make_user_files(config, REPO, tmp_path / "again", taken)
    assert rows[0][3] not in (tmp_path / "again" / again.path).read_text(encoding="utf-8")

    corpus = {"treebanks": {}, "ngrams": {"lm": {"lang": "en", "text": ["/abs/corpus.txt"]}}}
    with pytest.raises(ValueError, match="only made for a path relative to the working"):
        make_user_files(corpus, REPO, tmp_path, set())


def test_a_full_size_cola_stand_in_has_the_real_files_rows(tmp_path):
    """--size full: each CoLA file of the release has its real number of rows (the dev sets'
    1,043 sentences the preset scores); too few free sentences are used again, and said."""
    from spudflow.rehearse.standins import REAL_COLA_ROWS, language_text, make_user_files

    files = ["resources/cola/raw/in_domain_dev.tsv", "resources/cola/raw/out_of_domain_dev.tsv",
             "resources/cola/raw/mine.tsv"]
    config = {"treebanks": {}, "pairs": {"cola": {"enabled": True, "files": files}}}
    made = make_user_files(config, REPO, tmp_path, set(), "full")
    rows = [len((tmp_path / m.path).read_text(encoding="utf-8").splitlines()) for m in made]
    assert rows == [527, 516, 120]  # a file the release does not have: the small stand-in's
    assert REAL_COLA_ROWS["in_domain_dev.tsv"] == 527
    assert [m.made.split(" ")[0] for m in made] == ["527", "516", "120"]
    assert not any("used up to" in m.made for m in made)

    english = [s for s in language_text(REPO, "en") if 3 <= len(s.split()) <= 20]
    # the treebanks hold all but 40 (about half of them on CoLA's side; vendored and shared
    # treebanks share sentences, so by content)
    few = set(english) - set(english[:40])
    (dev,) = make_user_files({"treebanks": {}, "pairs": {"cola": {"enabled": True, "files": [
        files[0]]}}}, REPO, tmp_path / "few", few, "full")
    lines = (tmp_path / "few" / dev.path).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 527
    good = [line.split("\t")[3] for line in lines[::2]]
    assert len(set(good)) < 40 and not set(good) & few
    assert "times" in dev.made


def test_cola_phenomenon_urls_are_answered_by_the_mirror(tmp_path):
    """The CoLA preset fetches Table 5's phenomenon sets by URL: the rehearsal puts a stand-in
    of the phenomenon format (empty source column) where fetch.mirror sends each URL, with the
    real set's rows in a full rehearsal; local entries need no stand-in."""
    from spudflow.core.pairs_files import local_file
    from spudflow.core.split_files import mirrored_file
    from spudflow.rehearse.pairs_downloads import mirror_pairs_files
    from spudflow.rehearse.standins import COLA_SENTENCES

    base = "https://raw.githubusercontent.com/nyu-mll/CoLA-baselines/abc/phenomena/"
    config = {"treebanks": {}, "pairs": {"cola": {"enabled": True, "files": [],
              "phenomena": [base + "svo.tsv", base + "reflexive.tsv", "local/wh_extraction.tsv"]}}}
    for size, rows in (("small", {"svo.tsv": 2 * COLA_SENTENCES,
                                  "reflexive.tsv": 2 * COLA_SENTENCES}),
                       ("full", {"svo.tsv": 500, "reflexive.tsv": 144})):
        prefixes, made = mirror_pairs_files(config, REPO, tmp_path / size, set(), size)
        assert [m.what for m in made] == ["pairs.cola.phenomena"] * 2
        for name, n in rows.items():
            local = mirrored_file(prefixes, base + name)
            lines = Path(local).read_text(encoding="utf-8").splitlines()
            assert len(lines) == n
            assert all(line.split("\t")[0] == "" for line in lines)
    assert local_file("cola", base + "svo.tsv") == "resources/downloads/pairs/cola/svo.tsv"
    assert local_file("cola", "local/wh_extraction.tsv") == "local/wh_extraction.tsv"
    duplicated = {"treebanks": {}, "pairs": {"cola": {"enabled": True, "files": [],
                  "phenomena": [base + "svo.tsv", base.replace("abc", "def") + "svo.tsv"]}}}
    with pytest.raises(ValueError, match="both download to svo.tsv"):
        mirror_pairs_files(duplicated, REPO, tmp_path / "dup", set())


def test_a_full_size_mirror_grows_a_split_to_the_real_count_under_new_sent_ids(tmp_path):
    """--size full: en_ewt's test file repeated up to UD's 2,077 sentences with unique sent_ids;
    a language with no treebank at hand gets English, said so; a local split is read, not
    mirrored."""
    from spudflow.rehearse.conllu_blocks import block_text, read_blocks
    from spudflow.rehearse.mirror import fill_mirror

    local = "resources/ud/UD_English-PUD/en_pud-ud-test.conllu.gz"
    config = {"treebanks": {
        "en_ewt": {"lang": "en", "splits": {"test": EWT_TEST}},
        "xx_none": {"lang": "xx", "splits": {"test": "https://example.org/xx-ud-test.conllu"}},
        "en_pud": {"lang": "en", "splits": {"test": local}}}}
    mirror, stand_ins, taken = fill_mirror(config, REPO, tmp_path / "mirror", "full")
    ewt, other = stand_ins
    assert (ewt.sentences, ewt.real) == (2077, 2077) and "grown to the real" in ewt.note
    ids = [line for block in read_blocks(ewt.file) for line in block.splitlines()
           if line.startswith("# sent_id")]
    assert len(ids) == len(set(ids)) == 2077
    assert other.note.startswith("no xx treebank at hand: English; all ")
    assert other.real is None and "real size unknown" in other.note
    assert len(mirror) == 2 and local not in {s.url for s in stand_ins}
    assert {block_text(b) for b in read_blocks(REPO / local)} <= taken


def test_a_full_size_rehearsal_knows_the_real_size_of_every_file_of_the_presets():
    """Every file of every URL split of the presets has its real sentence count: a split given
    as a list of files (HDT's four training files, SynTagRus's three) grows in every part, not
    only in its first (a full SPUD rehearsal had HDT train at 46,587 sentences of 153,035)."""
    from spudflow.core.split_files import split_locations
    from spudflow.rehearse.mirror import REAL_SENTENCES

    files = {}
    for preset in sorted((REPO / "config" / "papers").glob("*.yaml")):
        config = yaml.safe_load(preset.read_text(encoding="utf-8"))
        for name, spec in config["treebanks"].items():
            for split in spec["splits"]:
                for url in split_locations(config, name, split):
                    if url.startswith("https://"):
                        files[url.rsplit("/", 1)[1]] = (preset.name, name, split)
    assert any(split == "train" and name == "de_hdt" for _, name, split in files.values())
    assert {f: where for f, where in files.items() if f not in REAL_SENTENCES} == {}
    hdt_train = sum(n for f, n in REAL_SENTENCES.items() if f.startswith("de_hdt-ud-train-"))
    assert hdt_train == 153035   # UD 2.10 (2,754K tokens, the SPUD paper's Table 6)


def test_a_treebank_vendored_and_in_shared_is_one_pool_of_unique_sent_ids(tmp_path):
    """A vendored treebank is a subset of ../shared's copy: each sentence is cut once, and a
    different sentence that only shares a sent_id is kept under a new one (the CI clone has
    ../shared beside it; a fresh clone does not)."""
    from spudflow.rehearse.conllu_blocks import read_blocks
    from spudflow.rehearse.mirror import fill_mirror

    def block(sent_id: str, word: str) -> str:
        return (f"# sent_id = {sent_id}\n# text = {word} .\n1\t{word}\t{word}\tNOUN\t_\t_\t0\troot"
                "\t_\t_\n2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n")

    repo = tmp_path / "repo"
    vendored = repo / "resources/ud/UD_English-EWT/en_ewt-ud-test.conllu"
    shared = tmp_path / "shared/data/ud/UD_English-EWT/en_ewt-ud-train.conllu"
    for path in (vendored, shared):
        path.parent.mkdir(parents=True)
    vendored.write_text("".join(block(f"s{i}", f"w{i}") for i in range(3)), encoding="utf-8")
    shared.write_text("".join(block(f"s{i}", f"w{i}") for i in range(5)) + block("s0", "other"),
                      encoding="utf-8")
    config = {"treebanks": {"en_ewt": {"lang": "en", "splits": {"test": EWT_TEST}}}}
    _, (ewt,), taken = fill_mirror(config, repo, tmp_path / "mirror", "full")
    ids = [line for b in read_blocks(ewt.file) for line in b.splitlines()
           if line.startswith("# sent_id")]
    assert len(ids) == len(set(ids)) == 2077
    assert {"w0 .", "w4 .", "other ."} <= taken
    first_round = {i.split("= ")[1] for i in ids if "-r" not in i}
    assert first_round == {"s0", "s1", "s2", "s3", "s4", "s0-en_ewt-ud-train"}
    # rehearsal.md names the files by where they are, the vendored one apart from ../shared's
    assert ewt.sources == ("resources/ud/UD_English-EWT/en_ewt-ud-test.conllu",
                           "../shared/data/ud/UD_English-EWT/en_ewt-ud-train.conllu")


@pytest.mark.parametrize(("preset", "key", "path"), [
    ("german_case", "pairs.german_case.templates", "resources/templates/german_case_paper.tsv"),
    ("japanese_transitivity", "pairs.japanese_transitivity.corpus",
     "resources/corpora/jawiki.txt"),
])
def test_every_file_a_preset_asks_the_user_for_gets_a_stand_in(tmp_path, preset, key, path):
    """A German template file of the user's own and the Japanese verb-count corpus: without a
    stand-in the rehearsal of such a config stops at planning (a missing input)."""
    from spudflow.rehearse.standins import GERMAN_TEMPLATES, make_user_files

    config = yaml.safe_load((REPO / "config/papers" / f"{preset}.yaml").read_text())
    if preset == "german_case":  # the preset fetches the paper's sentences; a user's own TSV
        config["pairs"]["german_case"] = {"enabled": True, "templates": path}
    made = {m.what: m for m in make_user_files(config, REPO, tmp_path, set())}
    assert made[key].path == path
    text = (tmp_path / path).read_text(encoding="utf-8")
    if preset == "german_case":
        assert text == (REPO / GERMAN_TEMPLATES).read_text(encoding="utf-8")
    else:
        assert len(text.splitlines()) > 100 and any("\u3040" <= c <= "\u30ff" for c in text)


def test_the_german_presets_sentence_urls_are_answered_by_stand_ins_in_the_papers_layout(
        tmp_path, capsys):
    """The German preset fetches the paper's two sentence files by URL: the rehearsal's mirror
    answers both, through the same code as every items dataset file given by URL, with the
    project's templates laid out as the paper's files, which `pairs german-case --sentences`
    reads as it reads the real ones."""
    from spudflow.cli import main
    from spudflow.core.split_files import mirrored_file
    from spudflow.rehearse.pairs_downloads import mirror_pairs_files

    config = yaml.safe_load((REPO / "config/papers/german_case.yaml").read_text())
    prefixes, made = mirror_pairs_files(config, REPO, tmp_path / "mirror", set())
    urls = config["pairs"]["german_case"]["sentences"]
    files = [mirrored_file(prefixes, urls[which]) for which in ("grammatical", "ungrammatical")]
    assert [m.what for m in made] == ["pairs.german_case.sentences.grammatical",
                                      "pairs.german_case.sentences.ungrammatical"]
    assert [len(Path(f).read_text(encoding="utf-8").splitlines()) for f in files] == [
        50 * 36, 50 * 108]
    out = tmp_path / "items.parquet"
    assert main(["items", "german-case", "--sentences", *files, "--sample", "2",
                 "--out", str(out)]) == 0
    assert pl.read_parquet(out).height == 2 * 144
    # a second rehearsal rewrites nothing
    mtimes = [Path(f).stat().st_mtime_ns for f in files]
    mirror_pairs_files(config, REPO, tmp_path / "mirror", set())
    assert [Path(f).stat().st_mtime_ns for f in files] == mtimes


def test_every_family_with_urls_has_a_stand_in_on_one_mirror(tmp_path):
    """One config naming files of both families by URL: each gets its family's stand-in, in
    one mirror, under the config key that names it; a family that is not enabled gets none."""
    from spudflow.core.pairs_files import URL_KEYS
    from spudflow.rehearse.pairs_downloads import STAND_INS, mirror_pairs_files

    assert set(STAND_INS) == set(URL_KEYS)
    german = yaml.safe_load((REPO / "config/papers/german_case.yaml").read_text())
    base = "https://example.org/cola/"
    config = {"treebanks": {}, "pairs": {
        "german_case": german["pairs"]["german_case"],
        "cola": {"enabled": True, "files": [], "phenomena": [base + "svo.tsv"]}}}
    prefixes, made = mirror_pairs_files(config, REPO, tmp_path / "mirror", set())
    assert [m.what for m in made] == ["pairs.cola.phenomena",
                                      "pairs.german_case.sentences.grammatical",
                                      "pairs.german_case.sentences.ungrammatical"]
    assert len(prefixes) == 2 and all(Path(folder).is_dir() for folder in prefixes.values())
    config["pairs"]["german_case"] = {**config["pairs"]["german_case"], "enabled": False}
    assert [m.what for m in mirror_pairs_files(config, REPO, tmp_path / "m2", set())[1]] == [
        "pairs.cola.phenomena"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bert-multilingual", "mgpt"])
def test_a_stand_in_tokenizer_splits_unseen_text_like_a_real_one(name):
    """Learned subwords: words the tokenizer never saw cost a few pieces, not one per character
    (the SPUD rehearsal's stand-ins were at 3-4.6 tokens per word, a real mBERT at 1.2-2)."""
    from spudflow.rehearse.families import FAMILIES
    from spudflow.rehearse.standins import language_text
    from spudflow.rehearse.tiny_models import build_tokenizer

    texts = {lang: language_text(REPO, lang) for lang in ("de", "en", "ru")}
    seen = [t for lang in texts for t in texts[lang][:800]]
    tokenizer = build_tokenizer(FAMILIES[name], seen)
    for lang, sentences in texts.items():
        unseen = sentences[800:1000]
        pieces = sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in unseen)
        per_word = pieces / sum(len(t.split()) for t in unseen)
        assert 1.0 < per_word < 2.6, (lang, per_word)


def test_a_stand_in_is_built_again_when_the_code_that_builds_it_changes(tmp_path, monkeypatch):
    """The hub manifest keys a stand-in on its builder's code as well: the first full-size SPUD
    rehearsal after the tokenizers changed kept the old stand-ins (same family, layers, text)."""
    import spudflow.rehearse.cli as rehearse_cli
    import spudflow.rehearse.standins as standins
    import spudflow.rehearse.tiny_models as tiny_models

    monkeypatch.setattr(standins, "language_text",
                        lambda repo, lang: ["The cat sat on the mat .", "A dog barked ."] * 5)
    built = []
    real_add = tiny_models.add_tiny_model

    def counting_add(*args, **kwargs):
        built.append(args[1])
        return real_add(*args, **kwargs)

    monkeypatch.setattr(tiny_models, "add_tiny_model", counting_add)
    config = {"treebanks": {"en_ewt": {"lang": "en"}},
              "models": {"gpt2": {"source": "gpt2", "kind": "causal"}}}
    first = rehearse_cli.build_hub(config, tmp_path, {})
    assert built == ["gpt2"]
    assert rehearse_cli.build_hub(config, tmp_path, {}) == first and built == ["gpt2"]
    monkeypatch.setattr(rehearse_cli, "builder_version", lambda: "other code")
    rehearse_cli.build_hub(config, tmp_path, {})
    assert built == ["gpt2", "gpt2"]


def test_a_stand_in_tokenizer_is_the_same_in_every_process():
    """The same text gives the same vocabulary in three fresh processes (tokenizers' WordPiece
    trainer gave a different one in every process: hash-map ties), so a second rehearsal
    finds the same snapshot commit and reruns no scoring job. Each process builds the
    tokenizer of both families trained that way."""
    script = (
        "import hashlib, sys\n"
        "from spudflow.rehearse.families import FAMILIES\n"
        "from spudflow.rehearse.standins import language_text\n"
        "from spudflow.rehearse.tiny_models import build_tokenizer\n"
        "from pathlib import Path\n"
        "repo = Path(sys.argv[1])\n"
        "texts = language_text(repo, 'en')[:400] + language_text(repo, 'de')[:400]\n"
        "for name in sys.argv[2:]:\n"
        "    vocab = build_tokenizer(FAMILIES[name], texts).get_vocab()\n"
        "    print(name, hashlib.sha256(repr(sorted(vocab.items())).encode()).hexdigest())\n"
    )
    families = ["bert-multilingual", "roberta"]
    runs = {subprocess.run([sys.executable, "-c", script, str(REPO), *families], check=True,
                           capture_output=True, text=True).stdout for _ in range(3)}
    assert len(runs) == 1
    assert [line.split()[0] for line in runs.pop().splitlines()] == families
