"""Scores carry a hash of each item's text (item_scores `text_hash`): items made again under the
same ids with another sentence are not joined with the old sentence's scores."""

from __future__ import annotations

import polars as pl
from artifact_files import rewrite
from test_coverage import spud_items, trigram  # noqa: F401 - trigram is a fixture

from spudflow.core.text_hash import text_hash

from aggregate_inputs import score_path, spud_inputs


def _edit_one_sentence(items, item_id: str, old: str, new: str):
    """The items made again with one word of one sentence changed (words and offsets with it)."""
    def change(frame: pl.DataFrame) -> pl.DataFrame:
        this = pl.col("item_id") == item_id
        return frame.with_columns(
            pl.when(this).then(pl.col("sentence").str.replace(old, new))
            .otherwise(pl.col("sentence")).alias("sentence"),
            pl.when(this).then(pl.col("words").list.eval(pl.element().str.replace(old, new)))
            .otherwise(pl.col("words")).alias("words"))
    return rewrite(items, change)


def test_the_scorer_writes_the_hash_of_each_sentence(tmp_path, run_cli, trigram):  # noqa: F811
    items = spud_items(tmp_path)
    out = score_path(tmp_path, "spud_en", "tri").parent
    code, _, err = run_cli("score", items, "--model", trigram, "--name", "tri", "--kind", "ngram",
                           "--method", "addk", "--out", out)
    assert code == 0, err
    sentences = dict(pl.read_parquet(items).select("item_id", "sentence").iter_rows())
    scores = pl.read_parquet(out / "item_scores.parquet")
    assert scores.height == len(sentences)
    for item_id, digest in scores.select("item_id", "text_hash").iter_rows():
        assert digest == text_hash(sentences[item_id])
    # the first 16 hex digits of the SHA-256 of the UTF-8 text
    assert text_hash("the cat sat on the mat") == "9ac66dfb23e682b5"


def test_items_made_again_with_a_new_sentence_and_old_scores_are_bad_input(tmp_path, run_cli,
                                                                            trigram):  # noqa: F811
    """Before: the old sentence's scores were joined by id with the new sentence, exit 0."""
    items = spud_items(tmp_path)
    out = score_path(tmp_path, "spud_en", "tri").parent
    assert run_cli("score", items, "--model", trigram, "--name", "tri", "--kind", "ngram",
                   "--method", "addk", "--out", out)[0] == 0
    tables = tmp_path / "tables"
    assert run_cli("table-spud-scores", "--items", items, "--scores", out / "item_scores.parquet",
                   "--out-dir", tables)[0] == 0
    _edit_one_sentence(items, "1-spud-1", "mib", "mob")
    tables = tmp_path / "tables2"
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores",
                           out / "item_scores.parquet", "--out-dir", tables)
    assert code == 2
    new = text_hash("the tupa sat on the mob")
    old = text_hash("the tupa sat on the mib")
    assert err.strip() == (f"{out / 'item_scores.parquet'}: item '1-spud-1' of dataset "
                           f"'spud_en': model 'tri' scored another text than the items file's "
                           f"sentence (text hash {old}, the items' {new}; 1 item(s) so): the "
                           "items were made again since these scores, score them again")
    assert not tables.exists()
    # scored again (the score cache keys on the text, so only the new sentence is computed)
    assert run_cli("score", items, "--model", trigram, "--name", "tri", "--kind", "ngram",
                   "--method", "addk", "--out", out)[0] == 0
    assert run_cli("table-spud-scores", "--items", items, "--scores", out / "item_scores.parquet",
                   "--out-dir", tables)[0] == 0


def test_every_table_command_checks_the_text(tmp_path, run_cli):
    """The hand-made fixtures' scores carry their items' hashes; one changed sentence is refused by
    the reader all table commands share (here of SPUD items, through the fixture writers)."""
    items, scores = spud_inputs(tmp_path, n_groups=4)
    _edit_one_sentence(items, "2-pos-1", "wug", "wog")
    code, _, err = run_cli("table-spud-scores", "--items", items, "--scores", *scores,
                           "--out-dir", tmp_path / "t")
    assert code == 2
    assert "item '2-pos-1' of dataset 'spud_en': model 'bert' scored another text" in err
