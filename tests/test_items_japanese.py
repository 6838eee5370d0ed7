"""Japanese transitivity: the 7,495-context grammar, the verb pair lexicon, the four variants."""

from __future__ import annotations

from collections import Counter

import pytest
from items_support import REPO, SHARED_DATA, assert_bad_input, needs_shared, read_items, run_cli

from spudflow.items.japanese_lexicon import (
    count_verb_lemmas,
    is_kanji,
    ranked,
    read_lexicon,
    seen_pairs,
)
from spudflow.items.japanese_transitivity import (
    ADVERBIALS,
    NOUNS,
    PREFIX,
    RELATIVE_CLAUSES,
    enumerate_contexts,
    select_pairs,
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


def test_the_constituents_are_the_thesiss():
    """§4.4.2-4.4.4, romaji there: watashi, kare, hito, kangofu 'nurse' (看護婦; 看護師 is
    kangoshi), neko, tori, ongaku, jiyuu, isu, zairyou, doa; katteni, yoku, tabun; "utsukushii
    tenki na hi, tokidoki"; kinpatsu no onna ga shiranakatta / wo tasuketa / ga ki wo tsuketa.
    (Kana or kanji the romaji cannot tell: たぶん, not 多分.)"""
    assert NOUNS == ("私", "彼", "人", "看護婦", "猫", "鳥", "音楽", "自由", "椅子", "材料", "ドア")
    assert ADVERBIALS == ("勝手に", "よく", "たぶん")
    assert PREFIX == "美しい天気な日、時々"
    assert RELATIVE_CLAUSES == ("金髪の女が知らなかった", "金髪の女を助けた",
                                "金髪の女が気をつけた")
    texts = [c.text for c in enumerate_contexts()]
    assert "看護婦が" in texts and "たぶん看護婦を" in texts
    assert not any("看護師" in t for t in texts)


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
    assert len(pairs) == 145
    # The UD counts (the file's header): 98 pairs have a verb never seen, 43 both; the thesis's
    # rule leaves 47, enough for the default config's 20 base and 20 rare pairs apart.
    assert sum(p.rarer_count == 0 for p in pairs) == 98
    assert sum(p.count == 0 for p in pairs) == 43
    assert len(seen_pairs(pairs)) == 47
    header = LEXICON.read_text(encoding="utf-8").split("\ntransitive\t")[0]
    assert "NOT the thesis's Japanese Wikipedia counts" in header and "2,050 sentences" in header
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
    """Items from the shipped lexicon; 20 pairs (47 have both verbs seen) unless `extra` says."""
    if "--n-verb-pairs" not in extra:
        extra = ("--n-verb-pairs", "20", *extra)
    out = tmp_path / f"{variant}.parquet"
    code, err = run_cli(capsys, "items", "japanese-transitivity", "--lexicon", LEXICON,
                        "--variant", variant, *extra, "--out", out)
    assert code == 0, err
    return out


@pytest.mark.slow
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
    ranking = ranked(seen_pairs(read_lexicon(LEXICON)))
    n = ("--n-verb-pairs", "20")
    base = read_items(_build(capsys, tmp_path, "base", "--sample", "300", "--seed", "1", *n))
    rare = read_items(_build(capsys, tmp_path, "rare", "--sample", "300", "--seed", "1", *n))
    assert len(base) == len(rare) == 600
    assert {r["verb_pair"] for r in base} <= {p.id for p in ranking[:20]}
    assert {r["verb_pair"] for r in rare} <= {p.id for p in ranking[-20:]}
    assert {r["pair_rank"] for r in rare} <= set(range(47 - 19, 47 + 1))
    # a pair's number is its place among the lexicon's rows, the same in every dataset
    numbers = {p.id: k for k, p in enumerate(read_lexicon(LEXICON), start=1)}
    assert all(r["pair_number"] == numbers[r["verb_pair"]] for r in base + rare)
    assert {r["dataset"] for r in rare} == {"japanese_transitivity_rare"}


def test_items_rank_by_the_less_common_verb_and_unseen_pairs_are_dropped():
    """Thesis §4.4.1, by hand on the shipped counts: 出す/出る (15, 13) ranks above 入れる/入る
    (7, 21), which ties with 進める/進む (7, 8) on its rarer verb and wins on the sum. No pair with
    a verb never counted is chosen, rare or not: the rare set is the least common seen pairs."""
    pairs = read_lexicon(LEXICON)
    top = [p.id for p in ranked(seen_pairs(pairs))[:4]]
    assert top == ["始める/始まる", "出す/出る", "入れる/入る", "進める/進む"]
    assert ranked(pairs, "sum")[0].id == "入れる/入る"  # the older reading, 28 in all
    rare = select_pairs(pairs, "rare", 20, LEXICON)
    assert [rank for rank, _ in rare] == list(range(28, 48))
    assert all(p.rarer_count >= 1 for _, p in rare)
    assert sum(p.rarer_count == 1 for _, p in rare) == 19
    # --min-count 0 keeps the unseen pairs (then last, in code point order)
    kept = select_pairs(pairs, "rare", 20, LEXICON, min_count=0)
    assert len(kept) == 20 and all(p.count == 0 for _, p in kept)


def test_count_verbs_counts_lemmas_in_a_text_corpus(tmp_path, capsys):
    """`spudflow items count-verbs`: VERB tokens by their Sudachi lemma (開け→開ける, 入っ→入る),
    the lexicon rewritten with those counts in the thesis's order, its header saying so."""
    corpus = tmp_path / "jawiki.txt"
    corpus.write_text("猫がドアを開けた。ドアが開いている。\n彼は部屋に入った。箱に入れる。箱に入れた。\n"
                      "開けるという名詞。\n", encoding="utf-8")
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text("transitive\tintransitive\ttransitive_count\tintransitive_count\n"
                       "閉める\t閉まる\t5\t5\n開ける\t開く\t0\t0\n入れる\t入る\t0\t0\n",
                       encoding="utf-8")
    out = tmp_path / "counts.tsv"
    code, err = run_cli(capsys, "items", "count-verbs", corpus, "--lexicon", lexicon,
                        "--out", out)
    assert code == 0, err
    counted = read_lexicon(out)
    assert [(p.id, p.transitive_count, p.intransitive_count) for p in counted] == [
        ("入れる/入る", 2, 1), ("開ける/開く", 2, 1), ("閉める/閉まる", 0, 0)]
    assert "counts in jawiki.txt" in out.read_text(encoding="utf-8").splitlines()[0]
    corpus.write_bytes("開けた\n".encode() + b"\xff\n")
    assert_bad_input(capsys, tmp_path / "bad.tsv",
                     ["items", "count-verbs", corpus, "--lexicon", lexicon],
                     str(corpus), "not UTF-8 text")
    # the counted lexicon feeds the items: 閉める/閉まる is never seen, so one pair is too few
    items = tmp_path / "base.parquet"
    code, err = run_cli(capsys, "items", "japanese-transitivity", "--lexicon", out, "--variant",
                        "base", "--n-verb-pairs", "2", "--sample", "4", "--out", items)
    assert code == 0, err
    assert {r["verb_pair"]: r["pair_rank"] for r in read_items(items)}.keys() <= {
        "入れる/入る", "開ける/開く"}


def test_longer_and_relative_share_their_sample_of_base_pairs_with_an_argument(tmp_path,
                                                                                 capsys):
    """The thesis's relative ambiguous pairs are exactly 3x its longer ones (Table 3: 657 and
    219), so its sample had no context without an argument, which a relative clause needs."""
    base = read_items(_build(capsys, tmp_path, "base", "--sample", "40", "--seed", "5"))
    longer = read_items(_build(capsys, tmp_path, "longer", "--sample", "40", "--seed", "5"))
    relative = read_items(_build(capsys, tmp_path, "relative", "--sample", "40", "--seed", "5"))

    def drawn(rows):
        return {(r["verb_pair"], r["context_index"]) for r in rows}

    assert len(drawn(base)) == 40 and drawn(longer) == drawn(relative)
    assert len(drawn(longer)) == 40
    assert all(enumerate_contexts()[c].arguments for _, c in drawn(longer))
    ambiguous = [r for r in longer if r["context_label"] != "obligatory"]
    assert len([r for r in relative if r["context_label"] != "obligatory"]) == 3 * len(
        [r for r in ambiguous if r["n_arguments"] == 1])
    assert all(r["sentence"].startswith(PREFIX) and r["prefix"] == PREFIX for r in longer)
    for r in longer:
        spans = {g["name"]: r["sentence"][g["start"]:g["end"]] for g in r["regions"]}
        assert spans == {"prefix": PREFIX, "verb": r["verb"]}
    # Each drawn pair gives one pair per argument and relative clause.
    n_arguments = sum(enumerate_contexts()[c].arguments.__len__() for _, c in drawn(longer))
    assert len(relative) == 2 * 3 * n_arguments
    for r in relative:
        spans = {g["name"]: r["sentence"][g["start"]:g["end"]] for g in r["regions"]}
        assert spans["relative_clause"] == r["relative_clause"] in RELATIVE_CLAUSES
        context = enumerate_contexts()[r["context_index"]]
        noun, particle = context.arguments[r["relative_argument"]]
        end = next(g["end"] for g in r["regions"] if g["name"] == "relative_clause")
        assert r["sentence"][end:].startswith(noun + particle)
    assert len({r["item_id"] for r in relative}) == len(relative)


def test_longer_leaves_out_the_contexts_without_an_argument(tmp_path, capsys):
    """All of one verb pair's longer pairs: the 7,491 contexts with an argument (the 4 without
    one, which relative cannot use either, are not drawn)."""
    rows = read_items(_build(capsys, tmp_path, "longer", "--n-verb-pairs", "1"))
    contexts = {r["context_index"] for r in rows}
    assert len(rows) == 2 * len(contexts) == 2 * 7491
    assert all(r["n_arguments"] > 0 for r in rows)


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
    args = ["items", "japanese-transitivity", "--lexicon", path, "--variant", "base"]
    path.write_text(header + "開ける\t開く\t3\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, f"{path}:2", "expected 4")
    path.write_text(header + "開ける\t閉まる\t3\t1\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, f"{path}:2", "share a kanji stem")
    path.write_text(header + "開ける\t開く\tmany\t1\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, f"{path}:2", "is not a count")
    path.write_text(header + "開ける\t開く\t3\t1\n", encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "o.parquet", args, str(path),
                     "1 of 1 verb pairs have both verbs counted at least 1 times, 50 needed")
