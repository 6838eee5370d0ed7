"""Human evaluation kit (paper §3.2, Tables 1-2): export of seeded sheets from real nonce
treebanks of tests/data, filled sheets back into the tables, Cohen's kappa, bad sheets."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from spudflow.cli import main
from spudflow.core.errors import EXIT_BAD_INPUT
from spudflow.core.written_files import MARK_DIR

TINY_EN = Path(__file__).parent / "data" / "workflow" / "tiny_en.conllu"
FILLED = Path(__file__).parent / "data" / "workflow" / "human_eval"


def make_treebanks(root: Path, conllu: Path = TINY_EN) -> dict[str, Path]:
    """CONLLU ingested as tiny_en/test under ROOT and its nonce versions (seed 1)."""
    orig = root / "tiny_en" / "test"
    assert main(["ingest", str(conllu), "--out", str(orig)]) == 0
    dirs = {"orig": orig}
    for method in ("spud", "pos", "posfree"):
        dirs[method] = root / method
        assert main(["nonce", str(orig), "--lang", "en", "--seed", "1", "--method", method,
                     "--out", str(dirs[method])]) == 0
    return dirs


@pytest.fixture(scope="module")
def treebanks(tmp_path_factory) -> dict[str, Path]:
    return make_treebanks(tmp_path_factory.mktemp("human_eval"))


def edit_peaceful(conllu: Path, out: Path) -> Path:
    """OUT: CONLLU (tiny_en) with workflow_helpers.one_word_edited's edit (the sentence keeps
    its length: the same sample)."""
    from workflow_helpers import one_word_edited

    out.write_text(one_word_edited(conllu.read_text(encoding="utf-8")), encoding="utf-8")
    return out


def export(dirs: dict[str, Path], out: Path, seed: int = 1, n: int = 3,
           annotators: tuple[str, ...] = ("ann1", "ann2"), posfree: str = "posfree") -> int:
    return main(["human-eval", "export", "--orig", str(dirs["orig"]), "--spud",
                 str(dirs["spud"]), "--posfree", str(dirs[posfree]), "--n", str(n), "--seed",
                 str(seed), "--annotators", *annotators, "--out", str(out)])


def files(directory: Path) -> dict[str, bytes]:
    """The files under DIRECTORY, but for the marks of what spudflow wrote."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file() and MARK_DIR not in p.parts}


def test_same_seed_gives_byte_identical_files(treebanks, tmp_path):
    assert export(treebanks, tmp_path / "a") == 0
    assert export(treebanks, tmp_path / "b") == 0
    first = files(tmp_path / "a")
    assert sorted(first) == ["answer_key.parquet", "sheets/ann1.csv", "sheets/ann1.html",
                             "sheets/ann2.csv", "sheets/ann2.html"]
    assert first == files(tmp_path / "b")
    assert export(treebanks, tmp_path / "c", seed=2) == 0
    assert files(tmp_path / "c")["answer_key.parquet"] != first["answer_key.parquet"]


def test_sheets_show_the_triplets_and_the_key_says_which_is_which(treebanks, tmp_path):
    assert export(treebanks, tmp_path, n=3) == 0
    key = pl.read_parquet(tmp_path / "answer_key.parquet")
    assert key.height == 6 and key["item"].to_list() == [1, 2, 3, 1, 2, 3]
    # The same three sentences for both annotators, none of them short.
    per = key.group_by("annotator").agg(pl.col("sent_index").sort())
    assert per["sent_index"].to_list()[0] == per["sent_index"].to_list()[1]
    orig = pl.read_parquet(treebanks["orig"] / "sentences.parquet")
    spud = pl.read_parquet(treebanks["spud"] / "sentences.parquet")
    posfree = pl.read_parquet(treebanks["posfree"] / "sentences.parquet")
    for row in key.iter_rows(named=True):
        assert row["original"] == orig["text"][row["sent_index"] - orig["sent_index"][0]]
        assert row["spud"] == spud.filter(pl.col("sent_index") == row["sent_index"])["text"].item()
        assert row["posfree"] == posfree.filter(
            pl.col("sent_index") == row["sent_index"])["text"].item()
        assert not spud.filter(pl.col("sent_index") == row["sent_index"])["short"].item()
        assert {row["sentence_a"], row["sentence_b"]} == {"spud", "posfree"}
    for annotator in ("ann1", "ann2"):
        with (tmp_path / "sheets" / f"{annotator}.csv").open(encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        mine = key.filter(pl.col("annotator") == annotator).sort("item")
        for row, record in zip(rows, mine.iter_rows(named=True), strict=True):
            assert row["sentence_a"] == record[record["sentence_a"]]
            assert row["sentence_b"] == record[record["sentence_b"]]
            assert row["closer"] == row["a_grammatical"] == ""
        page = (tmp_path / "sheets" / f"{annotator}.html").read_text(encoding="utf-8")
        assert page.count('class="item"') == 3 and "spud" not in page.lower()


def fill(sheet: Path, key: pl.DataFrame, rng: random.Random) -> dict[tuple[int, str], str]:
    """Answer a sheet at random, SPUD favoured; returns the answers by (sent_index, method)."""
    with sheet.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    truth = {}
    for row in rows:
        record = key.filter((pl.col("annotator") == row["annotator"])
                            & (pl.col("item") == int(row["item"]))).row(0, named=True)
        answers = {"spud": rng.choice(["yes", "yes", "no", "unsure"]),
                   "posfree": rng.choice(["yes", "no", "no", "unsure"]),
                   "preference": rng.choice(["spud", "spud", "posfree", "equal", "unsure"])}
        row["original_grammatical"] = "Yes"
        row["a_grammatical"] = answers[record["sentence_a"]]
        row["b_grammatical"] = answers[record["sentence_b"]]
        row["closer"] = {record["sentence_a"]: "A", record["sentence_b"]: "B"}.get(
            answers["preference"], answers["preference"])
        for name, value in answers.items():
            truth[record["sent_index"], name] = value
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return truth


def kappa(left: list[str], right: list[str]) -> float:
    """Cohen's kappa by its definition: (p_o - p_e) / (1 - p_e)."""
    n = len(left)
    observed = sum(a == b for a, b in zip(left, right, strict=True)) / n
    expected = sum(left.count(c) * right.count(c) for c in set(left) | set(right)) / n / n
    return (observed - expected) / (1 - expected)


def test_round_trip_tables_and_kappa(treebanks, tmp_path):
    assert export(treebanks, tmp_path / "kit", n=3) == 0
    key = pl.read_parquet(tmp_path / "kit" / "answer_key.parquet")
    sheets = [tmp_path / "kit" / "sheets" / f"{a}.csv" for a in ("ann1", "ann2")]
    truth = [fill(sheet, key, random.Random(seed))
             for sheet, seed in zip(sheets, (3, 5), strict=True)]
    assert main(["human-eval", "tables", *map(str, sheets), "--key",
                 str(tmp_path / "kit" / "answer_key.parquet"), "--out-dir",
                 str(tmp_path / "tables")]) == 0
    table1 = pl.read_parquet(tmp_path / "tables" / "human_eval_grammaticality.parquet")
    table2 = pl.read_parquet(tmp_path / "tables" / "human_eval_preference.parquet")
    sents = sorted({s for s, _ in truth[0]})
    g = [[t[s, m] for m in ("spud", "posfree") for s in sents] for t in truth]
    p = [[t[s, "preference"] for s in sents] for t in truth]
    row1, row2 = table1.row(0, named=True), table2.row(0, named=True)
    assert (row1["treebank"], row1["split"], row1["language"]) == ("tiny_en", "test", "en")
    assert row1["annotators"] == 2 and row1["sentences"] == 3
    assert row1["kappa"] == pytest.approx(kappa(*g))
    for k, method in enumerate(("spud", "posfree")):
        per_method = [answers[k * 3:(k + 1) * 3] for answers in g]
        assert row1[f"kappa_{method}"] == pytest.approx(cohen_kappa_score(*per_method))
    assert row2["kappa"] == pytest.approx(kappa(*p))
    assert row1["agreement"] == pytest.approx(sum(a == b for a, b in zip(*g, strict=True)) / 6)
    for method in ("spud", "posfree"):
        for answer in ("yes", "no", "unsure"):
            mean = sum(100 * sum(t[s, method] == answer for s in sents) / 3 for t in truth) / 2
            assert row1[f"{method}_{answer}"] == pytest.approx(mean)
    for answer in ("equal", "spud", "posfree", "unsure"):
        mean = sum(100 * sum(t[s, "preference"] == answer for s in sents) / 3
                   for t in truth) / 2
        assert row2[answer] == pytest.approx(mean)


def test_committed_filled_sheets_give_the_tables(treebanks, tmp_path):
    """The made-up filled sheets of the tiny workflow (tests/data/workflow/human_eval) fit the
    tiny workflow's export (tiny_en/test, n 3, seed 1, nonce seed 1) and give hand-computed
    tables. The answers, by sentence (sent_index 0, 1, 3), spud / posfree / closer:
    annotator1: yes no spud, yes no spud, yes unsure spud;
    annotator2: yes no spud, unsure no equal, yes no spud."""
    assert export(treebanks, tmp_path / "kit", annotators=("annotator1", "annotator2")) == 0
    sheets = sorted(FILLED.glob("*.csv"))
    assert [p.name for p in sheets] == ["annotator1.csv", "annotator2.csv"]
    assert main(["human-eval", "tables", *map(str, sheets), "--key",
                 str(tmp_path / "kit" / "answer_key.parquet"), "--out-dir",
                 str(tmp_path / "tables")]) == 0
    table1 = pl.read_parquet(tmp_path / "tables" / "human_eval_grammaticality.parquet")
    table2 = pl.read_parquet(tmp_path / "tables" / "human_eval_preference.parquet")
    row1, row2 = table1.row(0, named=True), table2.row(0, named=True)
    # spud yes: 3/3 and 2/3 -> 83.3; posfree no: 2/3 and 3/3 -> 83.3.
    assert row1["spud_yes"] == pytest.approx(250 / 3)
    assert row1["spud_unsure"] == pytest.approx(50 / 3)
    assert row1["posfree_no"] == pytest.approx(250 / 3)
    # Six answers each: p_o = 4/6, p_e = (3*2 + 2*3 + 1*1) / 36 = 13/36 -> kappa = 11/23.
    assert row1["kappa"] == pytest.approx(11 / 23)
    assert row1["agreement"] == pytest.approx(4 / 6)
    # Per method the same answers agree no better than chance: spud yes yes yes / yes unsure yes,
    # posfree no no unsure / no no no: p_o = 2/3 = p_e on each -> kappa 0; pooling gave 11/23.
    assert (row1["kappa_spud"], row1["kappa_posfree"]) == pytest.approx((0, 0))
    # Preference: annotator1 always spud -> p_e = p_o = 2/3 -> kappa 0.
    assert (row2["equal"], row2["spud"], row2["posfree"], row2["unsure"]) == pytest.approx(
        (50 / 3, 250 / 3, 0, 0))
    assert row2["kappa"] == pytest.approx(0) and row2["agreement"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda rows: rows[2].__setitem__(6, ""), "a_grammatical is empty; expected yes, no, unsure"),
    (lambda rows: rows[1].__setitem__(8, "C"), "closer is 'C'; expected A, B, equal, unsure"),
    (lambda rows: rows[3].__setitem__(1, "2"), "item 2 appears twice"),
    (lambda rows: [row.__setitem__(2, row[2] + "!") for row in rows[1:]],
     "no item's original is the answer key's (item 1's differs first): a sheet of another kit"),
    (lambda rows: rows[2].__setitem__(0, "ann2"), "annotator 'ann2', but the sheet is"),
    (lambda rows: rows.pop(), "items missing: 3"),
])
def test_bad_sheet_exits_2_with_file_and_line(treebanks, tmp_path, capsys, edit, message):
    assert export(treebanks, tmp_path / "kit", n=3) == 0
    key = pl.read_parquet(tmp_path / "kit" / "answer_key.parquet")
    sheets = [tmp_path / "kit" / "sheets" / f"{a}.csv" for a in ("ann1", "ann2")]
    for sheet, seed in zip(sheets, (3, 5), strict=True):
        fill(sheet, key, random.Random(seed))
    with sheets[0].open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    edit(rows)
    with sheets[0].open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    capsys.readouterr()
    code = main(["human-eval", "tables", *map(str, sheets), "--key",
                 str(tmp_path / "kit" / "answer_key.parquet"), "--out-dir",
                 str(tmp_path / "tables")])
    err = capsys.readouterr().err.strip()
    assert code == EXIT_BAD_INPUT
    assert err.startswith(f"{sheets[0]}:") and message in err, err
    line = err.split(":")[1]
    assert line.isdigit() and 2 <= int(line) <= 4, err
    assert not (tmp_path / "tables").exists()


def test_a_sheet_per_annotator_of_the_key(treebanks, tmp_path, capsys):
    assert export(treebanks, tmp_path / "kit", n=3) == 0
    sheet = tmp_path / "kit" / "sheets" / "ann1.csv"
    fill(sheet, pl.read_parquet(tmp_path / "kit" / "answer_key.parquet"), random.Random(1))
    key = str(tmp_path / "kit" / "answer_key.parquet")
    copy = tmp_path / "ann1_copy.csv"
    copy.write_bytes(sheet.read_bytes())
    for sheets, message in (([sheet], "no sheet of annotator(s) ann2"),
                            ([sheet, copy], "a second sheet of annotator 'ann1'"),
                            ([sheet, sheet], f"{sheet}: given twice")):
        capsys.readouterr()
        assert main(["human-eval", "tables", *map(str, sheets), "--key", key, "--out-dir",
                     str(tmp_path / "tables")]) == EXIT_BAD_INPUT
        assert message in capsys.readouterr().err
    assert not (tmp_path / "tables").exists()


def test_export_checks_the_nonce_versions_and_n(treebanks, tmp_path, capsys):
    assert export(treebanks, tmp_path / "a", posfree="pos") == EXIT_BAD_INPUT
    assert "not a nonce treebank of method 'posfree'" in capsys.readouterr().err
    assert export(treebanks, tmp_path / "b", n=5) == EXIT_BAD_INPUT
    assert "only 4 sentences of 4 words or more" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize(("content", "message"), [
    (None, ": no such file"),
    (b"", ":1: empty file"),
    (b"PAR1\x00\xff\xfe", ": not a UTF-8 CSV sheet"),
    (b"a,b,c\n1,2,3\n", ":1: header is not annotator,item,"),
    (b"annotator,item,original,sentence_a,sentence_b,original_grammatical,a_grammatical,"
     b"b_grammatical,closer\n", ":1: no items in the sheet"),
])
def test_unreadable_sheet_exits_2(treebanks, tmp_path, capsys, content, message):
    """With a valid key: a sheet that is missing, empty, binary, of other columns, or empty."""
    assert export(treebanks, tmp_path / "kit", n=3) == 0
    sheet = tmp_path / "bad.csv"
    if content is not None:
        sheet.write_bytes(content)
    capsys.readouterr()
    assert main(["human-eval", "tables", str(sheet), "--key",
                 str(tmp_path / "kit" / "answer_key.parquet"), "--out-dir",
                 str(tmp_path / "tables")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"{sheet}{message}") and len(err.strip().splitlines()) == 1, err


def test_kappa_is_null_where_it_is_undefined_not_an_error():
    """One annotator (no pair to agree) or two who gave one and the same answer throughout
    (p_e = 1, kappa 0/0): kappa is null, the agreement where there is one still given."""
    from spudflow.nonce.human_eval.tables import _kappa

    one = pl.DataFrame({"annotator": ["a"] * 3, "sent_index": [0, 1, 2],
                        "spud": ["yes", "no", "yes"]})
    assert _kappa(one, ["spud"]) == (None, None)
    same = pl.DataFrame({"annotator": ["a"] * 3 + ["b"] * 3, "sent_index": [0, 1, 2] * 2,
                         "spud": ["yes"] * 6})
    assert _kappa(same, ["spud"]) == (None, 1.0)


def test_a_filled_sheet_is_kept_and_the_new_blank_one_goes_beside_it(treebanks, tmp_path,
                                                                       caplog):
    """`human-eval export --out` over a kit whose sheet was filled: the answers stay, the new
    sheet is NAME.new.csv (a log line says so); an unfilled sheet is replaced as before."""
    kit = tmp_path / "kit"
    assert export(treebanks, kit) == 0
    key = pl.read_parquet(kit / "answer_key.parquet")
    fill(kit / "sheets" / "ann1.csv", key, random.Random(3))
    filled = (kit / "sheets" / "ann1.csv").read_bytes()
    blank_ann2 = (kit / "sheets" / "ann2.csv").read_bytes()
    caplog.set_level("WARNING")
    for _ in range(2):  # the second run replaces its own blank NAME.new.csv
        assert export(treebanks, kit, seed=2) == 0
        assert (kit / "sheets" / "ann1.csv").read_bytes() == filled
        new = (kit / "sheets" / "ann1.new.csv").read_text(encoding="utf-8")
        assert "ann1" in new and ",yes," not in new.lower()
        assert (kit / "sheets" / "ann2.csv").read_bytes() != blank_ann2  # seed 2's sheet
        assert not (kit / "sheets" / "ann2.new.csv").exists()
    assert not (kit / "sheets" / "ann1.new-2.csv").exists()
    assert f"{kit / 'sheets' / 'ann1.csv'} holds answers" in caplog.text
    assert f"the new blank sheet is {kit / 'sheets' / 'ann1.new.csv'}" in caplog.text


@pytest.mark.slow
def test_the_workflow_keeps_a_filled_sheet_when_the_seed_changes(tmp_path):
    """A tiny workflow copy: export the kit, fill annotator1's sheet in place, change
    human_eval.seed, run again: the answers are where they were, the new sheet beside them."""
    from workflow_helpers import copy_workflow, run_workflow, update_config

    workdir = copy_workflow(tmp_path / "wf")
    kit = workdir / "results" / "human_eval" / "tiny_en" / "test"
    target = ["results/human_eval/tiny_en/test/sheets/annotator1.html"]
    run_workflow(workdir, targets=target)
    sheet = kit / "sheets" / "annotator1.csv"
    fill(sheet, pl.read_parquet(kit / "answer_key.parquet"), random.Random(3))
    filled = sheet.read_bytes()
    update_config(workdir, lambda config: config["human_eval"].update(seed=2))
    run_workflow(workdir, targets=target)
    assert sheet.read_bytes() == filled
    assert (kit / "sheets" / "annotator1.new.csv").is_file()
    assert (kit / "sheets" / "annotator2.csv").is_file()
    log = (workdir / "results" / "logs" / "human_eval_export.log").read_text(encoding="utf-8")
    assert "annotator1.csv holds answers" in log


def stale_by_keys(old: pl.DataFrame, new: pl.DataFrame) -> dict[tuple[str, int], str]:
    """(annotator, item) -> why the item of a sheet exported with the OLD key is stale under the
    NEW one: its original, or else its A/B sentences, differ (docs/nonce.md: the same item)."""
    stale = {}
    for before, after in zip(old.iter_rows(named=True), new.iter_rows(named=True), strict=True):
        assert (before["annotator"], before["item"]) == (after["annotator"], after["item"])
        shown = [(r["original"], r[r["sentence_a"]], r[r["sentence_b"]]) for r in (before, after)]
        if shown[0][0] != shown[1][0]:
            stale[before["annotator"], before["item"]] = "original changed"
        elif shown[0] != shown[1]:
            stale[before["annotator"], before["item"]] = "nonce sentence changed"
    return stale


def summary(stale: dict[tuple[str, int], str]) -> str:
    """The tables' `stale` text: per annotator and reason (in sheet order) the item numbers."""
    groups: dict[tuple[str, str], list[str]] = {}
    for (annotator, item), reason in stale.items():
        groups.setdefault((annotator, reason), []).append(str(item))
    return "; ".join(f"{a}, item{'s' * (len(n) > 1)} {', '.join(n)}: {r}"
                     for (a, r), n in groups.items())


def run_tables(kit: Path, out: Path, annotators: tuple[str, ...] = ("ann1", "ann2")) -> int:
    return main(["human-eval", "tables", *(str(kit / "sheets" / f"{a}.csv") for a in annotators),
                 "--key", str(kit / "answer_key.parquet"), "--out-dir", str(out)])


def test_an_edited_sentence_leaves_its_stale_items_out_and_counts_them(treebanks, tmp_path,
                                                                       caplog):
    """Sheets filled on a kit, then one word of one sampled sentence edited (`peaceful` ->
    `quiet`) and the kit exported again from the edited treebank: the filled sheets are kept,
    the tables exit 0 with the stale items counted (the edited sentence's: original changed; a
    sentence whose nonce versions the edit redrew: nonce sentence changed), and every number is
    the hand computation over the items still the key's."""
    kit = tmp_path / "kit"
    assert export(treebanks, kit) == 0
    old_key = pl.read_parquet(kit / "answer_key.parquet")
    sheets = [kit / "sheets" / f"{a}.csv" for a in ("ann1", "ann2")]
    truth = [fill(sheet, old_key, random.Random(seed))
             for sheet, seed in zip(sheets, (3, 5), strict=True)]
    edited = make_treebanks(tmp_path / "edited", edit_peaceful(TINY_EN, tmp_path / "e.conllu"))
    caplog.set_level("WARNING")
    assert export(edited, kit) == 0
    assert (kit / "sheets" / "ann1.new.csv").is_file()  # the filled sheets stay
    key = pl.read_parquet(kit / "answer_key.parquet")
    assert key["sent_index"].to_list() == old_key["sent_index"].to_list()  # the same sample
    stale = stale_by_keys(old_key, key)
    edited_sentence = key.filter(pl.col("original").str.contains("quiet"))
    assert {(r["annotator"], r["item"]): "original changed"
            for r in edited_sentence.iter_rows(named=True)}.items() <= stale.items()
    assert "nonce sentence changed" in stale.values() and 0 < len(stale) < key.height

    # The export says which items of each kept sheet changed.
    for annotator in ("ann1", "ann2"):
        items = ", ".join(str(i) for a, i in sorted(stale) if a == annotator)
        assert f"{annotator}.csv holds answers" in caplog.text
        assert f"the sentences of its item(s) {items} changed" in caplog.text
    assert run_tables(kit, tmp_path / "tables") == 0
    table1 = pl.read_parquet(tmp_path / "tables" / "human_eval_grammaticality.parquet")
    table2 = pl.read_parquet(tmp_path / "tables" / "human_eval_preference.parquet")
    row1, row2 = table1.row(0, named=True), table2.row(0, named=True)
    for row in (row1, row2):
        assert (row["status"], row["reason"], row["stale_items"]) == ("ok", None, len(stale))
        assert row["stale"] == summary(stale)
    # By hand over the counted items: each annotator's own, then the mean.
    counted = [{s for (a, _), s in zip(key.select("annotator", "item").iter_rows(),
                                       key["sent_index"], strict=True)
                if a == annotator and (a, _) not in stale} for annotator in ("ann1", "ann2")]
    assert all(counted)
    for method in ("spud", "posfree"):
        for answer in ("yes", "no", "unsure"):
            mean = sum(100 * sum(t[s, method] == answer for s in c) / len(c)
                       for t, c in zip(truth, counted, strict=True)) / 2
            assert row1[f"{method}_{answer}"] == pytest.approx(mean)
    for answer in ("equal", "spud", "posfree", "unsure"):
        mean = sum(100 * sum(t[s, "preference"] == answer for s in c) / len(c)
                   for t, c in zip(truth, counted, strict=True)) / 2
        assert row2[answer] == pytest.approx(mean)
    common = sorted(counted[0] & counted[1])
    assert row1["sentences"] == len(counted[0] | counted[1]) and row1["annotators"] == 2
    g = [[t[s, m] for m in ("spud", "posfree") for s in common] for t in truth]
    assert row1["agreement"] == pytest.approx(
        sum(a == b for a, b in zip(*g, strict=True)) / len(g[0]))
    p = [[t[s, "preference"] for s in common] for t in truth]
    assert row2["agreement"] == pytest.approx(
        sum(a == b for a, b in zip(*p, strict=True)) / len(p[0]))
    for row, answers in ((row1, g), (row2, p)):
        if len(set(answers[0]) | set(answers[1])) > 1:
            assert row["kappa"] == pytest.approx(cohen_kappa_score(*answers))
        else:
            assert row["kappa"] is None
    # The log names each stale item with its sheet line.
    for (annotator, item), reason in stale.items():
        assert f"item {item} of {annotator} left out of Tables 1-2: {reason}" in caplog.text
    assert f"stale for {len(stale)} item(s)" in caplog.text
    # The front page shows a red line for them.
    page = tmp_path / "index.html"
    assert main(["front-page", "--table", "human_eval_grammaticality="
                 f"{tmp_path / 'tables' / 'human_eval_grammaticality.parquet'}",
                 "--out", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert f"the filled annotation sheets are stale for {len(stale)} items" in html
    assert "color: #b00020" in html and "NAME.new.csv" in html


def test_a_sheet_of_another_kit_is_still_bad_input(treebanks, tmp_path, capsys):
    """Sheets filled on a kit of another seed (none of whose items has the key's original under
    its number) given with this kit's key: exit 2, one line, nothing written."""
    assert export(treebanks, tmp_path / "kit") == 0
    assert export(treebanks, tmp_path / "other", seed=3) == 0
    key = pl.read_parquet(tmp_path / "kit" / "answer_key.parquet")
    other = pl.read_parquet(tmp_path / "other" / "answer_key.parquet")
    assert not any(a == b for a, b in zip(key["original"], other["original"], strict=True))
    for name, seed in (("ann1", 3), ("ann2", 5)):
        fill(tmp_path / "other" / "sheets" / f"{name}.csv", other, random.Random(seed))
    (tmp_path / "other" / "answer_key.parquet").unlink()
    (tmp_path / "kit" / "answer_key.parquet").rename(tmp_path / "other" / "answer_key.parquet")
    capsys.readouterr()
    assert run_tables(tmp_path / "other", tmp_path / "tables") == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    sheet = tmp_path / "other" / "sheets" / "ann1.csv"
    assert err == (f"{sheet}:2: no item's original is the answer key's (item 1's differs "
                   "first): a sheet of another kit (another seed, split or annotator order)")
    assert not (tmp_path / "tables").exists()


def test_every_item_stale_writes_skipped_tables(treebanks, tmp_path, caplog):
    """The same originals with nonce versions drawn again (nonce seed 2): every item of the
    filled sheets is stale (nonce sentence changed). Nothing is left to compute: both tables
    are written with status `skipped`, their numbers null, the stale items counted; exit 0."""
    kit = tmp_path / "kit"
    assert export(treebanks, kit) == 0
    old_key = pl.read_parquet(kit / "answer_key.parquet")
    for name, seed in (("ann1", 3), ("ann2", 5)):
        fill(kit / "sheets" / f"{name}.csv", old_key, random.Random(seed))
    redrawn = dict(treebanks)
    for method in ("spud", "posfree"):
        redrawn[method] = tmp_path / f"{method}2"
        assert main(["nonce", str(treebanks["orig"]), "--lang", "en", "--seed", "2", "--method",
                     method, "--out", str(redrawn[method])]) == 0
    assert export(redrawn, kit) == 0
    stale = stale_by_keys(old_key, pl.read_parquet(kit / "answer_key.parquet"))
    assert set(stale.values()) == {"nonce sentence changed"} and len(stale) == 6
    caplog.set_level("WARNING")
    assert run_tables(kit, tmp_path / "tables") == 0
    for name in ("human_eval_grammaticality", "human_eval_preference"):
        row = pl.read_parquet(tmp_path / "tables" / f"{name}.parquet").row(0, named=True)
        assert (row["status"], row["stale_items"], row["annotators"], row["sentences"]) == (
            "skipped", 6, 0, 0)
        assert "every item of the sheets is stale" in row["reason"]
        assert row["stale"] == ("ann1, items 1, 2, 3: nonce sentence changed; "
                                "ann2, items 1, 2, 3: nonce sentence changed")
        assert row["kappa"] is None and row["agreement"] is None
        numbers = [v for c, v in row.items() if c not in (
            "treebank", "split", "language", "annotators", "sentences", "stale_items", "stale",
            "status", "reason")]
        assert numbers and all(v is None for v in numbers)
    assert "nothing is left to compute" in caplog.text


@pytest.mark.slow
def test_the_workflow_counts_stale_items_after_a_sentence_edit(tmp_path):
    """A finished tiny run, then one word of a sampled tiny_en sentence edited (`peaceful` ->
    `quiet`) and the workflow run again: the run finishes (the human_eval_tables job no longer
    dies with exit 2 on the committed filled sheets), Tables 1-2 count the stale items, the log
    names them and the front page shows a red line."""
    from workflow_helpers import finished_edited_run

    # the run cache's: the finished tiny run, `peaceful` -> `quiet`, the workflow run again
    workdir = finished_edited_run(tmp_path / "wf")
    tables = workdir / "results" / "tables"
    for name in ("human_eval_grammaticality", "human_eval_preference"):
        row = pl.read_parquet(tables / f"{name}.parquet").row(0, named=True)
        assert row["status"] == "ok" and row["stale_items"] >= 2, row
        # annotator1's item 1 and annotator2's item 2 are the edited sentence (sent_index 0).
        assert "annotator1, item" in row["stale"] and "annotator2, item" in row["stale"]
        assert row["stale_items"] < 6 and row["sentences"] >= 1
    log = (workdir / "results" / "logs" / "human_eval_tables.log").read_text(encoding="utf-8")
    assert "annotator1.csv:2: item 1 of annotator1 left out of Tables 1-2: original changed" \
        in log
    page = (workdir / "results" / "index.html").read_text(encoding="utf-8")
    stale = pl.read_parquet(tables / "human_eval_grammaticality.parquet")["stale_items"].item()
    assert f"the filled annotation sheets are stale for {stale} items" in page
