"""An input given twice, or inputs that do not belong together, are bad input (exit 2, one line
naming the duplicate or the mismatch), never counted twice: the same scores under two paths
counted every SPUD pair twice, statistics and feature shards were stacked twice, an export of
a folder whose tables came from two treebanks wrote sentences without tokens, and `pairs spud`
took a nonce treebank for the original."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from spudflow.core.distinct_inputs import distinct_paths
from spudflow.core.errors import EXIT_BAD_INPUT, InputError

from aggregate_inputs import probe_metrics, spud_inputs

MINI = Path(__file__).parent / "data" / "mini.conllu"
EWT_DEV = """# sent_id = dev-1
# text = It works.
1	It	it	PRON	PRP	_	2	nsubj	_	_
2	works	work	VERB	VBZ	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	.	_	2	punct	_	_

"""


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_the_same_scores_under_two_paths_are_refused(run_cli, tmp_path):
    items, scores = spud_inputs(tmp_path)
    copy = tmp_path / "copy" / scores[0].relative_to(tmp_path)
    copy.parent.mkdir(parents=True)
    shutil.copy(scores[0], copy)
    out = tmp_path / "tables"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores, copy,
                           "--out-dir", out)
    assert code == EXIT_BAD_INPUT, err
    model = scores[0].parent.name
    assert one_line(err) == (f"{copy}: scores of dataset 'spud_en', model '{model}' again (also "
                             f"in {scores[0]}): an input given twice?")
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           scores[0].parent / ".." / model / scores[0].name, "--out-dir", out)
    assert code == EXIT_BAD_INPUT, err
    assert one_line(err).endswith(f"given twice (the same as {scores[0]})")
    code, _, err = run_cli("table-spud-scores", "--items", items, items, "--scores", *scores,
                           "--out-dir", out)
    assert (code, one_line(err)) == (EXIT_BAD_INPUT, f"{items}: given twice")
    assert not out.exists()
    assert run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                   "--out-dir", out)[0] == 0


@pytest.fixture
def ingested(run_cli, tmp_path) -> Path:
    assert run_cli("ingest", MINI, "--out", tmp_path / "mini")[0] == 0
    return tmp_path / "mini"


def test_statistics_given_twice_are_refused(run_cli, tmp_path, ingested):
    stats = tmp_path / "stats.parquet"
    assert run_cli("stats", ingested, "--treebank", "t", "--split", "s", "--lang", "de",
                   "--out", stats)[0] == 0
    copy = tmp_path / "copy.parquet"
    shutil.copy(stats, copy)
    for command in ("table-treebank-stats", "table-collect"):
        code, _, err = run_cli(command, stats, stats, "--out", tmp_path / "table")
        assert (code, one_line(err)) == (EXIT_BAD_INPUT, f"{stats}: given twice")
        code, _, err = run_cli(command, stats, copy, "--out", tmp_path / "table")
        assert code == EXIT_BAD_INPUT
        assert one_line(err).startswith(f"{copy}: ")
        assert f"treebank 't', split 's' again (also in {stats})" in err
    assert not list(tmp_path.glob("table.*"))


def test_probe_feature_shards_given_twice_are_refused(run_cli, tmp_path):
    import numpy as np

    from spudflow.probe.feature_file import Features, write_features

    shard = tmp_path / "shard1.safetensors"
    write_features(shard, Features({0: np.ones((3, 2), dtype=np.float16)},
                                   np.array([0, 1]), np.array([0, 1, 3]), info={"shard": "1/2"}))
    copy = tmp_path / "shard2.safetensors"
    shutil.copy(shard, copy)
    out = tmp_path / "gathered.safetensors"
    code, _, err = run_cli("probe", "gather", shard, shard, "--out", out)
    assert (code, one_line(err)) == (EXIT_BAD_INPUT, f"{shard}: given twice")
    code, _, err = run_cli("probe", "gather", shard, copy, "--out", out)
    assert (code, one_line(err)) == (EXIT_BAD_INPUT, f"{copy}: the features of sent_index 0 "
                                     f"again (also in {shard}): an input given twice?")
    assert not out.exists()


def test_probe_metrics_given_twice_are_refused(run_cli, tmp_path):
    metrics = probe_metrics(tmp_path)
    copy = tmp_path / "copy.parquet"
    shutil.copy(metrics, copy)
    code, _, err = run_cli("table-probe", metrics, copy, "--out-dir", tmp_path / "tables")
    assert code == EXIT_BAD_INPUT
    assert one_line(err).startswith(f"{copy}: metrics of probe run treebank 'en_ewt', model ")
    code, _, err = run_cli("table-probe-edges", metrics, copy, "--out-dir", tmp_path / "tables")
    assert code == EXIT_BAD_INPUT
    assert one_line(err).startswith(f"{copy}: metrics of probe run treebank 'en_ewt', model ")


def test_an_export_of_tables_from_two_treebanks_is_refused(run_cli, tmp_path, ingested):
    (tmp_path / "dev.conllu").write_text(EWT_DEV, encoding="utf-8")
    assert run_cli("ingest", tmp_path / "dev.conllu", "--out", tmp_path / "dev")[0] == 0
    shutil.copy(tmp_path / "dev" / "sentences.parquet", ingested / "sentences.parquet")
    out = tmp_path / "out.conllu"
    code, _, err = run_cli("export", ingested, "--out", out)
    assert code == EXIT_BAD_INPUT
    assert one_line(err).startswith(f"{ingested}: tokens.parquet and sentences.parquet are not "
                                    "of one treebank: sentence 0 is 'dev-1' with 3 words in "
                                    "sentences.parquet, ")
    assert not out.exists()


def test_items_spud_refuses_a_nonce_treebank_as_the_original(run_cli, tmp_path, ingested):
    nonce = tmp_path / "nonce" / "spud" / "seed1"
    assert run_cli("nonce", ingested, "--lang", "de", "--seed", "1", "--out", nonce)[0] == 0
    out = tmp_path / "items.parquet"
    code, _, err = run_cli("items", "spud", "--orig", nonce, "--nonce", nonce, "--lang", "de",
                           "--out", out)
    assert code == EXIT_BAD_INPUT
    assert one_line(err) == (f"{nonce / 'tokens.parquet'}: a nonce treebank (made by spudflow "
                             "nonce, method 'spud' seed 1), not an original one")
    assert not out.exists()
    assert run_cli("items", "spud", "--orig", ingested, "--nonce", nonce, "--lang", "de",
                   "--out", out)[0] == 0


def test_two_spellings_of_one_path_are_one_input(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.parquet").write_bytes(b"x")
    (tmp_path / "link.parquet").symlink_to(tmp_path / "a" / "f.parquet")
    for twice in ([tmp_path / "a" / "f.parquet", tmp_path / "a" / ".." / "a" / "f.parquet"],
                  [tmp_path / "a" / "f.parquet", tmp_path / "link.parquet"],
                  [tmp_path / "missing", tmp_path / "a" / ".." / "missing"]):
        with pytest.raises(InputError) as raised:
            distinct_paths(twice)
        assert raised.value.format() == f"{twice[1]}: given twice (the same as {twice[0]})"
    distinct_paths([tmp_path / "a" / "f.parquet", tmp_path / "a"])


def test_a_name_given_twice_to_a_repeatable_option_is_refused(run_cli, tmp_path):
    """The second `--table NAME=PATH` (or `--gold`) silently replaced the first."""
    metrics = probe_metrics(tmp_path)
    table = tmp_path / "blimp_overall.parquet"
    table.write_bytes(b"PAR1")
    code, _, err = run_cli("front-page", "--table", f"blimp_overall={table}", "--table",
                           f"blimp_overall={metrics}", "--out", tmp_path / "index.html")
    assert (code, one_line(err)) == (EXIT_BAD_INPUT, "--table: blimp_overall given twice")
    code, _, err = run_cli("table-probe-edges", metrics, "--gold", "en_ewt", "orig", tmp_path,
                           "--gold", "en_ewt", "orig", tmp_path / "other", "--out-dir",
                           tmp_path / "tables")
    assert (code, one_line(err)) == (EXIT_BAD_INPUT, "--gold: en_ewt orig given twice")
    assert not (tmp_path / "index.html").exists() and not (tmp_path / "tables").exists()


def test_probe_train_refuses_an_eval_set_named_twice(run_cli, tmp_path):
    """Two `--eval orig …` gave a run two original-set rows, which its tables refused later."""
    code, _, err = run_cli("probe", "train", "--train", tmp_path / "f", tmp_path / "d",
                           "--eval", "orig", tmp_path / "f", tmp_path / "d",
                           "--eval", "orig", tmp_path / "g", tmp_path / "e",
                           "--treebank", "t", "--model", "m", "--dist-layer", "0",
                           "--label-layer", "0", "--out", tmp_path / "run")
    assert (code, one_line(err)) == (EXIT_BAD_INPUT, "--eval: orig given twice")
    assert not (tmp_path / "run").exists()
