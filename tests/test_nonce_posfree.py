"""The rule-free POS-only method (`posfree`, Gulordava et al. 2018 as the paper's §3.2 human
evaluation uses it): candidates by UPOS like `pos`, but no language rule touches the sentence."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from spudflow.cli import main
from spudflow.nonce.languages.en import starts_with_vowel_sound

TINY_EN = Path(__file__).parent / "data" / "workflow" / "tiny_en.conllu"


@pytest.fixture(scope="module")
def tiny_en(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("posfree")
    assert main(["ingest", str(TINY_EN), "--out", str(root / "tiny_en" / "test")]) == 0
    return root


def nonce(root: Path, method: str, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    out = root / f"{method}{seed}"
    assert main(["nonce", str(root / "tiny_en" / "test"), "--lang", "en", "--seed", str(seed),
                 "--method", method, "--out", str(out)]) == 0
    return pl.read_parquet(out / "tokens.parquet"), pl.read_parquet(
        out / "replacement_stats.parquet")


# Seeds whose pos version of tiny_en fixes an article (most draws there need no fix).
@pytest.mark.parametrize("seed", [1, 7])
def test_posfree_leaves_the_article_that_pos_fixes(tiny_en, seed):
    """Same seed, same candidates: the two differ exactly where the English a/an rule fired."""
    pos, pos_stats = nonce(tiny_en, "pos", seed)
    free, free_stats = nonce(tiny_en, "posfree", seed)
    adjusted = pos_stats.filter(pl.col("upos") == "ALL")["adjusted"].item()
    assert adjusted >= 1
    assert free_stats.filter(pl.col("upos") == "ALL")["adjusted"].item() == 0
    assert free_stats["replaced"].to_list() == pos_stats["replaced"].to_list()
    differ = (pos.with_columns(free=free["form"], next_free=free["form"].shift(-1))
              .filter(pl.col("form") != pl.col("free")))
    assert differ.height == adjusted
    for row in differ.iter_rows(named=True):
        # pos rewrote the article for the replaced word after it; posfree kept the original one,
        # which no longer fits that word's first sound.
        assert row["free"] == row["orig_form"]
        assert row["free"].lower() in ("a", "an") and row["form"].lower() in ("a", "an")
        wants_an = starts_with_vowel_sound(row["next_free"])
        assert (row["form"].lower() == "an") == wants_an
        assert (row["free"].lower() == "an") != wants_an


def test_posfree_has_its_own_statistics_label(tiny_en):
    _, stats = nonce(tiny_en, "posfree", 1)
    assert stats["method"].unique().to_list() == ["posfree"]


def test_posfree_ignores_the_german_adjective_ending_class(tmp_path):
    """A rule that shapes candidates, not only function words: German adjectives keep their
    ending class under pos with strict_endings, may lose it under posfree (the lexicon key has
    no class)."""
    from nonce_helpers import conllu, ingest

    def np(adjective: str, lemma: str) -> str:
        return f"""
1 Das der DET Case=Nom|Gender=Neut|Number=Sing 3 det
2 {adjective} {lemma} ADJ Case=Nom|Degree=Pos|Gender=Neut|Number=Sing 3 amod
3 Haus Haus NOUN Case=Nom|Gender=Neut|Number=Sing 0 root
"""
    directory = ingest(tmp_path, conllu(np("alte", "alt"), np("grün", "grün")))
    forms = {}
    for method in ("pos", "posfree"):
        out = tmp_path / method
        assert main(["nonce", str(directory), "--lang", "de", "--seed", "1", "--method", method,
                     "--out", str(out), "--option", "strict_endings=true"]) == 0
        tokens = pl.read_parquet(out / "tokens.parquet")
        forms[method] = tokens.filter(pl.col("upos") == "ADJ")["form"].to_list()
    assert forms["pos"] == ["alte", "grün"]        # no other adjective of the same class
    assert forms["posfree"] == ["grün", "alte"]    # swapped regardless of the ending
