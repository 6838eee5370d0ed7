"""Japanese transitivity: the 7,495-context grammar, the verb pair lexicon, the four variants."""

from __future__ import annotations

from collections import Counter

import pytest
from pairs_support import REPO, SHARED_DATA, assert_bad_input, needs_shared, read_items, run_cli

from spudflow.pairs.japanese_lexicon import count_verb_lemmas, is_kanji, ranked, read_lexicon
from spudflow.pairs.japanese_transitivity import (
    ADVERBIALS,
    NOUNS,
    PREFIX,
    RELATIVE_CLAUSES,
    enumerate_contexts,
)

LEXICON = REPO / "config" / "lexicons" / "japanese_verb_pairs.tsv"


def test_grammar_gives_7495_contexts_per_verb_pair():
    contexts = enumerate_contexts()
    assert len(contexts) == 7495
    assert [c.index for c in contexts] == list(range(7495))
    assert len({c.text for c in contexts}) == 7495
    by_arguments = Counter(len(c.arguments) for c in contexts)
    assert by_arguments == {0: 4, 1: 231, 2: 7260}
    assert Counter(c.adverbial for c in contexts)[None] == 1 + 33 + 726
    for c in contexts:
        particles = [p for _, p in c.arguments]
        assert len(set(particles)) == len(particles)
        assert all(noun in NOUNS for noun, _ in c.arguments)
        assert c.adverbial in (None, *ADVERBIALS)
    # 50 verb pairs x 7,495 contexts: the thesis's 374,750 pairs.
    assert 50 * len(contexts) == 374_750


def test_context_labels():
    labels = {c.text: c.label for c in enumerate_contexts()}
    assert labels[""] == "ambiguous"
    assert labels["猫が"] == "ambiguous" and labels["よく私は"] == "ambiguous"
    assert labels["ドアを"] == "obligatory"
    assert labels["私は猫が"] == "obligatory"
    assert labels["たぶん音楽をドアは"] == "obligatory"
    assert Counter(labels.values()) == {"obligatory": 7260 + 3 * 11 * 2 + 11,
                                        "ambiguous": 4 + 2 * (11 + 22 * 3)}


def test_lexicon_has_enough_pairs_sharing_a_kanji_stem():
    pairs = read_lexicon(LEXICON)
    assert len(pairs) >= 100  # base (top 50) and rare (bottom 50) do not overlap
    assert all(is_kanji(p.transitive[0]) and p.transitive[0] == p.intransitive[0] for p in pairs)
    assert len({p.transitive for p in pairs}) == len(pairs)
    # The file lists the pairs in rank order (ranking does not depend on it).
    assert ranked(pairs) == pairs
    assert ranked(reversed(pairs)) == pairs
    assert {"開ける/開く", "閉める/閉まる", "始める/始まる", "止める/止まる", "変える/変わる"} <= {
        p.id for p in pairs}


def test_count_verb_lemmas_counts_verb_tokens_only(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(
        "# text = ドアを開けた。\n"
        "1\tドア\tドア\tNOUN\t_\t_\t3\tobj\t_\tSpaceAfter=No\n"
        "2\tを\tを\tADP\t_\t_\t1\tcase\t_\tSpaceAfter=No\n"
        "3\t開け\t開ける\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
        "4\tた\tた\tAUX\t_\t_\t3\taux\t_\tSpaceAfter=No\n"
        "5\t。\t。\tPUNCT\t_\t_\t3\tpunct\t_\t_\n\n"
        "# text = 開ける\n"
        "1\t開ける\t開ける\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    assert count_verb_lemmas([path], ["開ける", "開く"]) == {"開ける": 1, "開く": 0}


@needs_shared
@pytest.mark.shared
def test_shipped_counts_equal_a_recount_on_the_japanese_treebanks():
    treebanks = [REPO / "resources/ud/UD_Japanese-PUD/ja_pud-ud-test.conllu.gz",
                 SHARED_DATA / "ud/UD_Japanese-GSD/ja_gsd-ud-dev.conllu.gz",
                 SHARED_DATA / "ud/UD_Japanese-GSD/ja_gsd-ud-test.conllu.gz"]
    pairs = read_lexicon(LEXICON)
    counts = count_verb_lemmas(treebanks, [v for p in pairs for v in (p.transitive,
                                                                       p.intransitive)])
    for pair in pairs:
        assert (pair.transitive_count, pair.intransitive_count) == (
            counts[pair.transitive], counts[pair.intransitive]), pair.id


def _build(capsys, tmp_path, variant, *extra):
    out = tmp_path / f"{variant}.parquet"
    code, err = run_cli(capsys, "pairs", "japanese-transitivity", "--lexicon", LEXICON,
                        "--variant", variant, *extra, "--out", out)
    assert code == 0, err
    return out


def test_one_verb_pair_in_every_context(tmp_path, capsys):
    rows = read_items(_build(capsys, tmp_path, "base", "--n-verb-pairs", "1"))
    top = ranked(read_lexicon(LEXICON))[0]
    assert len(rows) == 2 * 7495
    groups = Counter(r["group_id"] for r in rows)
    assert len(groups) == 7495 and set(groups.values()) == {2}
    assert {r["verb_pair"] for r in rows} == {top.id} and {r["pair_rank"] for r in rows} == {1}
    for r in rows:
        verb = [r["sentence"][g["start"]:g["end"]] for g in r["regions"] if g["name"] == "verb"]
        assert verb == [r["verb"]]
        assert r["sentence"] == r["context"] + r["verb"] + "。"
        assert r["verb"] == (top.transitive if r["verb_form"] == "transitive"
                             else top.intransitive)
        if r["context_label"] == "obligatory":
            assert r["label"] == (1 if r["verb_form"] == "transitive" else 0)
        else:
            assert r["label"] is None
        assert "".join(r["words"]) == r["sentence"]


def test_base_and_rare_use_the_most_and_least_frequent_pairs(tmp_path, capsys):
    ranking = ranked(read_lexicon(LEXICON))
    base = read_items(_build(capsys, tmp_path, "base", "--sample", "300", "--seed", "1"))
    rare = read_items(_build(capsys, tmp_path, "rare", "--sample", "300", "--seed", "1"))
    assert len(base) == len(rare) == 600
    assert {r["verb_pair"] for r in base} <= {p.id for p in ranking[:50]}
    assert {r["verb_pair"] for r in rare} <= {p.id for p in ranking[-50:]}
    assert {r["pair_rank"] for r in rare} <= set(range(len(ranking) - 49, len(ranking) + 1))
    assert {r["dataset"] for r in rare} == {"japanese_transitivity_rare"}


def test_longer_and_relative_share_their_sample_of_base_pairs(tmp_path, capsys):
    base = read_items(_build(capsys, tmp_path, "base", "--sample", "40", "--seed", "5"))
    longer = read_items(_build(capsys, tmp_path, "longer", "--sample", "40", "--seed", "5"))
    relative = read_items(_build(capsys, tmp_path, "relative", "--sample", "40", "--seed", "5"))

    def drawn(rows):
        return {(r["verb_pair"], r["context_index"]) for r in rows}

    assert drawn(base) == drawn(longer) and len(drawn(base)) == 40
    assert drawn(relative) == {k for k in drawn(base) if enumerate_contexts()[k[1]].arguments}
    assert all(r["sentence"].startswith(PREFIX) and r["prefix"] == PREFIX for r in longer)
    for r in longer:
        spans = {g["name"]: r["sentence"][g["start"]:g["end"]] for g in r["regions"]}
        assert spans == {"prefix": PREFIX, "verb": r["verb"]}
    # Each drawn pair gives one pair per argument and relative clause.
    n_arguments = sum(enumerate_contexts()[c].arguments.__len__() for _, c in drawn(base))
    assert len(relative) == 2 * 3 * n_arguments
    for r in relative:
        spans = {g["name"]: r["sentence"][g["start"]:g["end"]] for g in r["regions"]}
        assert spans["relative_clause"] == r["relative_clause"] in RELATIVE_CLAUSES
        context = enumerate_contexts()[r["context_index"]]
        noun, particle = context.arguments[r["relative_argument"]]
        end = next(g["end"] for g in r["regions"] if g["name"] == "relative_clause")
        assert r["sentence"][end:].startswith(noun + particle)
    assert len({r["item_id"] for r in relative}) == len(relative)


def test_item_ids_are_stable(tmp_path, capsys):
    first = _build(capsys, tmp_path / "a", "relative", "--sample", "20", "--seed", "3")
    second = _build(capsys, tmp_path / "b", "relative", "--sample", "20", "--seed", "3")
    assert first.read_bytes() == second.read_bytes()
    ids = [r["item_id"] for r in read_items(first)]
    assert ids[0].startswith("japanese_transitivity_relative:")
    assert ids[0].endswith(":transitive") and ids[1].endswith(":intransitive")


def test_bad_lexicon_exits_2(tmp_path, capsys):
    path = tmp_path / "lexicon.tsv"
    header = "transitive\tintransitive\ttransitive_count\tintransitive_count\n"
    args = ["pairs", "japanese-transitivity", "--lexicon", path, "--variant", "base"]
    path.write_text(header + "開ける\t開く\t3\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, f"{path}:2", "expected 4")
    path.write_text(header + "開ける\t閉まる\t3\t1\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, f"{path}:2", "share a kanji stem")
    path.write_text(header + "開ける\t開く\tmany\t1\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, f"{path}:2", "is not a count")
    path.write_text(header + "開ける\t開く\t3\t1\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, str(path), "1 verb pairs, 50 needed")
