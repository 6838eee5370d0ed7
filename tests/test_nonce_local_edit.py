"""An edit is local: one word of one en_pud sentence edited changes the nonce versions of only
the sentences whose draw the edit reaches, and the same input and seed give the same bytes.

The edit makes a noun whose lemma occurs once in the treebank (`blog`) a noun never seen
(`florbix`): the candidate lists lose the unit `blog` and gain the unit `florbix`, nothing else.
A word's pick then changes exactly when its old pick was `blog` or its new pick is `florbix`
(replace.py ranks each entry per word, whatever else the list holds), so the sentences that
change are read off the two outputs' lemmas, not from the draw; and they all lie among the
sentences that have a noun of the edited word's FEATS (the only lists the two units are in),
computed here from the CoNLL-U alone. The draw of one stream per sentence changed 74 (spud) and
460 (pos) of the 1,000 sentences for this edit."""

from __future__ import annotations

import gzip
import logging
import re
from collections import Counter

import polars as pl
import pytest
from nonce_helpers import ingest, nonce
from workflow_helpers import REPO

from spudflow.cli import main

PUD = REPO / "resources" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu.gz"
NEW = "florbix"


def _words(block: str) -> list[list[str]]:
    return [line.split("\t") for line in block.splitlines() if re.match(r"^\d+\t", line)]


def _sent_id(block: str) -> str:
    return next(line for line in block.splitlines()
                if line.startswith("# sent_id = ")).removeprefix("# sent_id = ")


def edit_one_word(blocks: list[str]) -> tuple[list[str], str, str, str]:
    """BLOCKS with the first singular noun whose lemma occurs once in the treebank made NEW
    (form, lemma, `# text`); (blocks, sent_id, old lemma, FEATS)."""
    lemmas = Counter(word[2] for block in blocks for word in _words(block))
    for k, block in enumerate(blocks):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            cells = line.split("\t")
            if not (len(cells) == 10 and cells[0].isdigit() and cells[3] == "NOUN"
                    and cells[5] == "Number=Sing" and lemmas[cells[2]] == 1
                    and cells[1] == cells[2]):
                continue
            old = cells[1]
            cells[1] = cells[2] = NEW
            lines[i] = "\t".join(cells)
            text = next(j for j, x in enumerate(lines) if x.startswith("# text = "))
            assert re.search(rf"\b{old}\b", lines[text])
            lines[text] = re.sub(rf"\b{old}\b", NEW, lines[text], count=1)
            return [*blocks[:k], "\n".join(lines), *blocks[k + 1:]], _sent_id(block), old, \
                cells[5]
    raise AssertionError("no singular noun with a lemma seen once")


@pytest.fixture(scope="module")
def treebanks(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("local_edit")
    with gzip.open(PUD, "rt", encoding="utf-8") as handle:
        text = handle.read()
    blocks = text.rstrip("\n").split("\n\n")
    edited, sent_id, old, feats = edit_one_word(blocks)
    assert NEW not in text
    return {"orig": ingest(root, text, "orig"),
            "edited": ingest(root, "\n\n".join(edited) + "\n\n", "edited"),
            "blocks": blocks, "sent_id": sent_id, "old": old, "feats": feats}


def by_sentence(tokens: pl.DataFrame, sentences: pl.DataFrame) -> dict[str, tuple]:
    """sent_id -> what the nonce version is: its text and its words' form, lemma, MISC."""
    words = (tokens.sort("sent_index", "token_index").group_by("sent_index", maintain_order=True)
             .agg("form", "lemma", "misc"))
    rows = sentences.join(words, on="sent_index").select("sent_id", "text", "form", "lemma",
                                                          "misc")
    return {row[0]: row[1:] for row in rows.iter_rows()}


def drawing(tokens: pl.DataFrame, sentences: pl.DataFrame, lemma: str) -> set[str]:
    """Sentences where a replaced word became a unit of LEMMA."""
    hit = tokens.filter(pl.col("replaced") & (pl.col("lemma") == lemma))
    return set(sentences.join(hit.select("sent_index").unique(), on="sent_index")
               .get_column("sent_id").to_list())


@pytest.mark.parametrize("method", ["spud", "pos"])
def test_one_word_edit_changes_only_the_sentences_it_reaches(treebanks, tmp_path, method):
    before = nonce(treebanks["orig"], "en", method=method, out=tmp_path / "before")
    after = nonce(treebanks["edited"], "en", method=method, out=tmp_path / "after")
    old, new = by_sentence(*before), by_sentence(*after)
    assert old.keys() == new.keys() and len(old) == 1000
    edited = treebanks["sent_id"]
    assert (edited, treebanks["old"]) == ("n01001011", "blog")
    changed = {s for s in old if old[s] != new[s]} - {edited}

    # Exactly the sentences where the removed unit was drawn or the added unit is drawn.
    expected = drawing(*before, treebanks["old"]) | drawing(*after, NEW)
    assert changed == expected - {edited}
    # All among the sentences with a noun of the edited word's FEATS (its lists), which are
    # most of the treebank: the edit reaches their candidate lists, not their draws.
    reached = {_sent_id(block) for block in treebanks["blocks"]
               if any(word[3] == "NOUN" and word[5] == treebanks["feats"]
                      for word in _words(block))}
    assert changed <= reached and len(reached) > 500
    assert len(changed) <= 5


def test_same_input_and_seed_same_bytes(treebanks, tmp_path):
    for run in ("one", "two"):
        nonce(treebanks["edited"], "en", method="spud", out=tmp_path / run)
    names = sorted(str(p.relative_to(tmp_path / "one"))
                   for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert {"tokens.parquet", "sentences.parquet", "replacement_stats.parquet",
            "nonce.conllu"} <= set(names)
    for name in names:  # the write marks too (core/written_files.py): same bytes, same hash
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert sorted(str(p.relative_to(tmp_path / "two"))
                  for p in (tmp_path / "two").rglob("*") if p.is_file()) == names



def test_rescoring_after_the_edit_computes_only_the_changed_items(treebanks, tmp_path, caplog):
    # The SPUD items (original + spud and pos versions) before and after the edit, scored by a
    # trigram into one cache: the second run computes exactly the items whose text changed.
    text = tmp_path / "train.txt"
    text.write_text("The cat sat on the mat .\nA dog saw the cat in the garden .\n",
                    encoding="utf-8")
    model = tmp_path / "trigram.parquet"
    assert main(["ngram-train", str(text), "--lang", "en", "--order", "3",
                 "--out", str(model)]) == 0
    counts = []
    items = {}
    for name in ("orig", "edited"):
        versions = []
        for method in ("spud", "pos"):
            out = tmp_path / name / method / "seed1"
            nonce(treebanks[name], "en", method=method, out=out)
            versions += ["--nonce", str(out)]
        items[name] = tmp_path / f"{name}_items.parquet"
        assert main(["items", "spud", "--orig", str(treebanks[name]), *versions, "--lang", "en",
                     "--out", str(items[name]), "--dataset", "spud_local"]) == 0
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="spudflow"):
            assert main(["score", str(items[name]), "--model", str(model), "--kind", "ngram",
                         "--method", "kn", "--out", str(tmp_path / f"{name}_scores"),
                         "--cache", str(tmp_path / "cache")]) == 0
        (found,) = re.findall(r"cache: (\d+) hits, (\d+) computed", caplog.text)
        counts.append(tuple(map(int, found)))
    before, after = (pl.read_parquet(items[n]).select("item_id", "sentence")
                     for n in ("orig", "edited"))
    assert before.height == after.height > 2000
    changed = after.join(before, on=["item_id", "sentence"], how="anti").height
    # 2 here: the edited original and the one pos sentence that now draws `florbix` (535 with
    # one stream per sentence: every version whose list the edit reached)
    assert 1 <= changed <= 8, changed
    assert counts == [(0, before.height), (after.height - changed, changed)]
