"""German case violations: declension of every noun class, the 7,200 items, bad templates."""

from __future__ import annotations

from collections import Counter

import pytest
from items_support import REPO, assert_bad_input, read_items, run_cli

from spudflow.items.german_case import ASSIGNMENTS, ORDERS, read_templates
from spudflow.items.german_declension import (
    DETERMINERS,
    DeclensionError,
    noun_class,
    noun_phrase,
)

TEMPLATES = REPO / "config" / "templates" / "german_case.tsv"
HEADER = "id\tprincipal\tverb\tnp1_det\tnp1_noun\tnp2_det\tnp2_noun\tnp3_det\tnp3_noun\tanimate\n"
ROW = "t1\tWir wissen, dass\tgegeben hat\tder\tLehrer\tder\tJunge\tein\tBrief\t110\n"


@pytest.mark.parametrize("noun, cls, forms", [
    # strong nouns keep their form, genitive -s (-es after a sibilant)
    ("Lehrer", "strong", "der Lehrer, den Lehrer, dem Lehrer, des Lehrers"),
    ("Mann", "strong", "der Mann, den Mann, dem Mann, des Manns"),
    ("Kaffee", "strong", "der Kaffee, den Kaffee, dem Kaffee, des Kaffees"),  # -ee is not weak
    ("Käse", "strong", "der Käse, den Käse, dem Käse, des Käses"),            # listed exception
    ("Tisch", "strong", "der Tisch, den Tisch, dem Tisch, des Tisches"),
    ("Strauß", "strong", "der Strauß, den Strauß, dem Strauß, des Straußes"),
    ("Kurs", "strong", "der Kurs, den Kurs, dem Kurs, des Kurses"),
    ("Gott", "strong", "der Gott, den Gott, dem Gott, des Gottes"),
    # weak nouns in -e take -n
    ("Junge", "weak", "der Junge, den Jungen, dem Jungen, des Jungen"),
    ("Kunde", "weak", "der Kunde, den Kunden, dem Kunden, des Kunden"),
    ("Kollege", "weak", "der Kollege, den Kollegen, dem Kollegen, des Kollegen"),
    ("Zeuge", "weak", "der Zeuge, den Zeugen, dem Zeugen, des Zeugen"),
    # mixed nouns: weak, genitive -ns
    ("Name", "mixed", "der Name, den Namen, dem Namen, des Namens"),
    ("Gedanke", "mixed", "der Gedanke, den Gedanken, dem Gedanken, des Gedankens"),
    # weak nouns in a consonant take -en (listed, or by the -ist rule)
    ("Polizist", "weak", "der Polizist, den Polizisten, dem Polizisten, des Polizisten"),
    ("Journalist", "weak", "der Journalist, den Journalisten, dem Journalisten, des Journalisten"),
    ("Student", "weak", "der Student, den Studenten, dem Studenten, des Studenten"),
    ("Prinz", "weak", "der Prinz, den Prinzen, dem Prinzen, des Prinzen"),
    ("Soldat", "weak", "der Soldat, den Soldaten, dem Soldaten, des Soldaten"),
    ("Bär", "weak", "der Bär, den Bären, dem Bären, des Bären"),
    # weak nouns that take only -n
    ("Nachbar", "weak", "der Nachbar, den Nachbarn, dem Nachbarn, des Nachbarn"),
    ("Herr", "weak", "der Herr, den Herrn, dem Herrn, des Herrn"),
    ("Bauer", "weak", "der Bauer, den Bauern, dem Bauern, des Bauern"),
    # nominalised adjectives after a der-word: weak adjective endings
    ("Abgeordneter", "adjectival",
     "der Abgeordnete, den Abgeordneten, dem Abgeordneten, des Abgeordneten"),
    ("Beamte", "adjectival", "der Beamte, den Beamten, dem Beamten, des Beamten"),
    ("Reisender", "adjectival", "der Reisende, den Reisenden, dem Reisenden, des Reisenden"),
    ("Vorsitzender", "adjectival",
     "der Vorsitzende, den Vorsitzenden, dem Vorsitzenden, des Vorsitzenden"),
    ("Verdächtiger", "adjectival",
     "der Verdächtige, den Verdächtigen, dem Verdächtigen, des Verdächtigen"),
    ("Angeklagter", "adjectival",
     "der Angeklagte, den Angeklagten, dem Angeklagten, des Angeklagten"),
])
def test_declension_after_der(noun, cls, forms):
    assert noun_class(noun) == cls
    assert ", ".join(noun_phrase("der", noun, c) for c in "NADG") == forms


@pytest.mark.parametrize("noun, animate, cls, forms", [
    # weak by the productive patterns (animate -ent, -ant, -ist, -at, -ot, -oge)
    ("Dozent", True, "weak", "der Dozent, den Dozenten, dem Dozenten, des Dozenten"),
    ("Passant", True, "weak", "der Passant, den Passanten, dem Passanten, des Passanten"),
    ("Akrobat", None, "weak", "der Akrobat, den Akrobaten, dem Akrobaten, des Akrobaten"),
    ("Idiot", True, "weak", "der Idiot, den Idioten, dem Idioten, des Idioten"),
    ("Pädagoge", True, "weak", "der Pädagoge, den Pädagogen, dem Pädagogen, des Pädagogen"),
    ("Optimist", None, "weak", "der Optimist, den Optimisten, dem Optimisten, des Optimisten"),
    # compounds decline by their last part
    ("Präsidentschaftskandidat", True, "weak",
     "der Präsidentschaftskandidat, den Präsidentschaftskandidaten, "
     "dem Präsidentschaftskandidaten, des Präsidentschaftskandidaten"),
    ("Technokrat", None, "weak", "der Technokrat, den Technokraten, dem Technokraten, "
     "des Technokraten"),
    ("Bauherr", True, "weak", "der Bauherr, den Bauherrn, dem Bauherrn, des Bauherrn"),
    ("Vorname", False, "mixed", "der Vorname, den Vornamen, dem Vornamen, des Vornamens"),
    ("Bundesabgeordneter", True, "adjectival", "der Bundesabgeordnete, den Bundesabgeordneten, "
     "dem Bundesabgeordneten, des Bundesabgeordneten"),
    ("Stadtrat", True, "strong", "der Stadtrat, den Stadtrat, dem Stadtrat, des Stadtrats"),
    ("Kleinbauer", True, "weak",
     "der Kleinbauer, den Kleinbauern, dem Kleinbauern, des Kleinbauern"),
    ("Orgelbauer", True, "strong",
     "der Orgelbauer, den Orgelbauer, dem Orgelbauer, des Orgelbauers"),
    ("Oberleutnant", True, "strong",
     "der Oberleutnant, den Oberleutnant, dem Oberleutnant, des Oberleutnants"),
    # inanimate weak nouns (listed)
    ("Konsonant", False, "weak",
     "der Konsonant, den Konsonanten, dem Konsonanten, des Konsonanten"),
    ("Diamant", False, "weak", "der Diamant, den Diamanten, dem Diamanten, des Diamanten"),
    ("Automat", None, "weak", "der Automat, den Automaten, dem Automaten, des Automaten"),
    ("Planet", None, "weak", "der Planet, den Planeten, dem Planeten, des Planeten"),
    # strong nouns with a weak-looking ending: listed, or inanimate
    ("Moment", None, "strong", "der Moment, den Moment, dem Moment, des Moments"),
    ("Zement", None, "strong", "der Zement, den Zement, dem Zement, des Zements"),
    ("Kontinent", None, "strong", "der Kontinent, den Kontinent, dem Kontinent, des Kontinents"),
    ("Akzent", None, "strong", "der Akzent, den Akzent, dem Akzent, des Akzents"),
    ("Senat", None, "strong", "der Senat, den Senat, dem Senat, des Senats"),
    ("Apparat", None, "strong", "der Apparat, den Apparat, dem Apparat, des Apparats"),
    ("Geist", True, "strong", "der Geist, den Geist, dem Geist, des Geists"),
    ("Mist", None, "strong", "der Mist, den Mist, dem Mist, des Mists"),
    ("Kuhmist", False, "strong", "der Kuhmist, den Kuhmist, dem Kuhmist, des Kuhmists"),
    ("Leutnant", True, "strong", "der Leutnant, den Leutnant, dem Leutnant, des Leutnants"),
])
def test_weak_nouns_by_pattern_and_compound_in_all_four_cases(noun, animate, cls, forms):
    assert noun_class(noun, animate) == cls
    assert ", ".join(noun_phrase("der", noun, c, animate) for c in "NADG") == forms


def test_animacy_decides_the_pattern_and_genitives_out_of_rule_fail():
    assert noun_class("Kuhmist", True) == "weak" and noun_class("Kuhmist", False) == "strong"
    # a listed word does not depend on the flag
    assert noun_class("Student", False) == noun_class("Konsonant", True) == "weak"
    assert noun_phrase("ein", "Dozent", "G", True) == "eines Dozenten"
    assert noun_phrase("unser", "Lehrer", "G") == "unseres Lehrers"
    with pytest.raises(DeclensionError, match="genitive of 'Bus'"):
        noun_phrase("der", "Bus", "G")
    assert noun_phrase("der", "Bus", "D") == "dem Bus"
    with pytest.raises(DeclensionError, match="unknown case"):
        noun_phrase("der", "Bus", "L")


def test_templates_decline_weak_nouns_by_pattern_and_animacy(tmp_path):
    path = tmp_path / "templates.tsv"
    path.write_text(HEADER + "t1\tWir wissen, dass\tgegeben hat\tder\tDozent\tder\t"
                    "Präsidentschaftskandidat\tder\tMoment\t110\n", encoding="utf-8")
    rows = {r["item_id"]: r for r in read_items(build(path))}
    assert rows["german_case:t1:NDA:123"]["sentence"] == (
        "Wir wissen, dass der Dozent dem Präsidentschaftskandidaten den Moment gegeben hat.")
    assert rows["german_case:t1:ADN:123"]["sentence"] == (
        "Wir wissen, dass den Dozenten dem Präsidentschaftskandidaten der Moment gegeben hat.")


def build(templates):
    import pyarrow.parquet as pq

    from spudflow.items.german_case import build_german_case_items, read_templates

    out = templates.parent / "items.parquet"
    pq.write_table(build_german_case_items(read_templates(templates)), out)
    return out


@pytest.mark.parametrize("det, noun, nom, acc, dat", [
    ("ein", "Abgeordneter", "ein Abgeordneter", "einen Abgeordneten", "einem Abgeordneten"),
    ("kein", "Beamter", "kein Beamter", "keinen Beamten", "keinem Beamten"),
    ("sein", "Angestellte", "sein Angestellter", "seinen Angestellten", "seinem Angestellten"),
    ("ein", "Polizist", "ein Polizist", "einen Polizisten", "einem Polizisten"),
    ("mein", "Nachbar", "mein Nachbar", "meinen Nachbarn", "meinem Nachbarn"),
    ("dein", "Junge", "dein Junge", "deinen Jungen", "deinem Jungen"),
    ("ihr", "Mann", "ihr Mann", "ihren Mann", "ihrem Mann"),
    ("unser", "Lehrer", "unser Lehrer", "unseren Lehrer", "unserem Lehrer"),
    ("euer", "Kollege", "euer Kollege", "euren Kollegen", "eurem Kollegen"),
    ("dieser", "Student", "dieser Student", "diesen Studenten", "diesem Studenten"),
    ("jeder", "Reisender", "jeder Reisende", "jeden Reisenden", "jedem Reisenden"),
])
def test_declension_after_every_determiner(det, noun, nom, acc, dat):
    assert [noun_phrase(det, noun, c) for c in "NAD"] == [nom, acc, dat]


def test_every_listed_determiner_declines_and_unknown_ones_fail():
    assert set(DETERMINERS) == {"der", "ein", "kein", "sein", "mein", "dein", "ihr", "unser",
                                "euer", "dieser", "jeder"}
    for det in DETERMINERS:
        nom, acc, dat, gen = (noun_phrase(det, "Hund", c).split()[0] for c in "NADG")
        assert acc.endswith("en") and dat.endswith("em") and gen.endswith("es") and nom == det
    with pytest.raises(DeclensionError, match="unknown determiner"):
        noun_phrase("das", "Hund", "N")


def test_design_has_24_assignments_in_6_orders():
    assert len(ASSIGNMENTS) == 24 and len(ORDERS) == 6
    assert {"NNN", "AAA", "DDD"}.isdisjoint(ASSIGNMENTS)
    assert sum(len(set(a)) == 3 for a in ASSIGNMENTS) == 6


def test_shipped_templates_use_every_noun_class():
    templates = read_templates(TEMPLATES)
    assert len(templates) == 50
    classes = Counter(noun_class(noun) for t in templates for _, noun in t.nps)
    assert set(classes) == {"strong", "weak", "mixed", "adjectival"}
    dets = {det for t in templates for det, _ in t.nps}
    assert dets == set(DETERMINERS)


@pytest.fixture(scope="module")
def german_items(tmp_path_factory):
    from spudflow.cli import main

    out = tmp_path_factory.mktemp("german") / "items.parquet"
    assert main(["items", "german-case", "--templates", str(TEMPLATES), "--out", str(out)]) == 0
    return out


def test_shipped_templates_give_7200_items_1800_grammatical(german_items):
    rows = read_items(german_items)
    assert len(rows) == 50 * 144 == 7200
    assert sum(r["label"] for r in rows) == 1800
    assert all(r["label"] == int(r["grammatical"]) for r in rows)
    assert all((r["violation"] is None) == r["grammatical"] for r in rows)
    assert Counter(r["violation"] for r in rows) == {None: 1800, "N": 1800, "A": 1800, "D": 1800}
    per_template = Counter(r["group_id"] for r in rows)
    assert len(per_template) == 50 and set(per_template.values()) == {144}
    assert len({(r["template"], r["cases"], r["positions"]) for r in rows}) == 7200
    assert {r["language"] for r in rows} == {"de"} and {r["dataset"] for r in rows} == {
        "german_case"}


def test_sentences_regions_and_animacy(german_items):
    rows = {r["item_id"]: r for r in read_items(german_items)}
    canonical = rows["german_case:t01:NDA:123"]
    assert canonical["sentence"] == "Wir wissen, dass der Lehrer dem Schüler den Brief gegeben hat."
    assert canonical["label"] == 1 and canonical["animacy"] == "110"
    scrambled = rows["german_case:t02:ADN:312"]
    # np3 (accusative -> nominative "ein Ball") first, then np1 in the accusative, np2 dative.
    assert scrambled["sentence"] == ("Ich glaube, dass ein Ball einen Polizisten dem Jungen "
                                     "geschenkt hat.")
    assert scrambled["animacy"] == "011" and scrambled["label"] == 1
    doubled = rows["german_case:t03:DDA:213"]
    assert doubled["sentence"] == ("Es stimmt, dass einem Journalisten dem Abgeordneten den "
                                   "Bericht zeigte.")
    assert doubled["violation"] == "D" and doubled["label"] == 0
    spans = {r["name"]: doubled["sentence"][r["start"]:r["end"]] for r in doubled["regions"]}
    assert spans == {"np2": "einem Journalisten", "np1": "dem Abgeordneten",
                     "np3": "den Bericht", "verb": "zeigte"}
    assert doubled["words"][-2:] == ["zeigte", "."]


@pytest.mark.slow
def test_item_ids_are_stable_and_independent_of_sampling(german_items, tmp_path, capsys):
    again = tmp_path / "again.parquet"
    assert run_cli(capsys, "items", "german-case", "--templates", TEMPLATES, "--out", again)[0] == 0
    assert again.read_bytes() == german_items.read_bytes()
    sampled = tmp_path / "sampled.parquet"
    assert run_cli(capsys, "items", "german-case", "--templates", TEMPLATES, "--sample", "3",
                   "--seed", "7", "--out", sampled)[0] == 0
    sample_rows = read_items(sampled)
    full = {r["item_id"]: r for r in read_items(german_items)}
    assert len(sample_rows) == 3 * 144
    assert all(full[r["item_id"]] == r for r in sample_rows)


@pytest.mark.parametrize("row, line, words", [
    (ROW.replace("\tein\tBrief", "\tdas\tBrief"), 3, "unknown determiner 'das' in np3_det"),
    (ROW.replace("\t110\n", "\n"), 3, "expected 10 tab-separated columns, found 9"),
    (ROW.replace("gegeben hat", ""), 3, "malformed template: empty verb"),
    (ROW.replace("\t110\n", "\t11\n"), 3, "animate '11'"),
    (ROW.replace("Lehrer", "lehrer"), 3, "np1_noun 'lehrer'"),
    (ROW + ROW, 4, "template id 't1' already used on line 3"),
])
def test_bad_templates_exit_2_and_write_nothing(tmp_path, capsys, row, line, words):
    path = tmp_path / "templates.tsv"
    path.write_text("# a comment\n" + HEADER + row, encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "items.parquet",
                     ["items", "german-case", "--templates", path], f"{path}:{line}", words)


def test_bad_header_exits_2(tmp_path, capsys):
    path = tmp_path / "templates.tsv"
    path.write_text(HEADER.replace("np2_det", "np2_article") + ROW, encoding="utf-8")
    assert_bad_input(capsys, tmp_path / "items.parquet",
                     ["items", "german-case", "--templates", path], f"{path}:1",
                     "missing column(s) np2_det")


# --- the paper's sentence files (german_case_reference.py) -------------------------------------

def reference_files(tmp_path, n_templates=3, edit=None):
    """The first templates of the shipped TSV written in the reference's layout (36 grammatical
    and 108 ungrammatical lines each); `edit(which, lines)` may change the lines first."""
    from spudflow.items.german_case_reference import reference_lines

    lines = reference_lines(read_templates(TEMPLATES)[:n_templates])
    if edit:
        edit(lines)
    paths = []
    for which in ("grammatical", "ungrammatical"):
        path = tmp_path / f"{which}_sentences.txt"
        path.write_text("".join(line + "\n" for line in lines[which]), encoding="utf-8")
        paths.append(path)
    return paths


def test_the_reference_layout_and_its_line_index():
    from spudflow.items.german_case_reference import reference_line

    # the notebooks' indexing: 36 / 108 lines per template, blocks of six NP orders
    assert reference_line("grammatical", 0) == (0, "NAD", "123")
    assert reference_line("grammatical", 6) == (0, "NDA", "123")  # the template's own
    assert reference_line("grammatical", 36 + 35) == (1, "DAN", "321")
    assert reference_line("ungrammatical", 0) == (0, "ANN", "123")
    assert reference_line("ungrammatical", 108 * 2 + 6 * 17 + 4) == (2, "DAD", "312")


def test_templates_recovered_from_sentence_files_give_the_same_items(tmp_path, capsys):
    """Sentences in the reference's layout give back each template: the same 144 sentences,
    regions and conditions as its TSV row, under the reference's template numbers (t00, ...)."""
    grammatical, ungrammatical = reference_files(tmp_path)
    recovered = tmp_path / "recovered.parquet"
    assert run_cli(capsys, "items", "german-case", "--sentences", grammatical, ungrammatical,
                   "--out", recovered)[0] == 0
    from_tsv = tmp_path / "tsv.parquet"
    assert run_cli(capsys, "items", "german-case", "--templates", TEMPLATES, "--sample", "50",
                   "--out", from_tsv)[0] == 0
    ids = {t.id: f"t{k:02d}" for k, t in enumerate(read_templates(TEMPLATES)[:3])}
    expected = {}
    for row in read_items(from_tsv):
        if row["template"] in ids:
            row = dict(row, template=ids[row["template"]], animacy=None,
                       group_id=f"german_case:{ids[row['template']]}")
            row["item_id"] = f"{row['group_id']}:{row['cases']}:{row['positions']}"
            expected[row["item_id"]] = row
    got = {row["item_id"]: row for row in read_items(recovered)}
    assert len(got) == 3 * 144 and got == expected
    assert got["german_case:t00:NDA:123"]["sentence"] == (
        "Wir wissen, dass der Lehrer dem Schüler den Brief gegeben hat.")


def _swap(which, index, text):
    def edit(lines):
        lines[which][index] = text(lines[which][index])
    return edit


@pytest.mark.parametrize("edit, file, line, words", [
    # a violation line that is not the sentence its place in the layout says
    (_swap("ungrammatical", 110, lambda s: s.replace(" ", "  ", 1)), 1, 111,
     "template 1, cases ANN in NP order 213: expected"),
    # two grammatical lines swapped: the NPs no longer come in the six orders
    (lambda lines: lines["grammatical"].__setitem__(
        slice(36, 38), lines["grammatical"][37:35:-1]), 0, 37,
     "template 1: the six lines of assignment NAD do not put three NPs"),
    # np1's nominative spelt differently in two blocks
    (_swap("grammatical", 12, lambda s: s.replace("Lehrer", "Lehrerin")), 0, 13,
     "do not put three NPs"),
    # np1 in the accusative spelt "den Lehrern" in the six lines of AND, "den Lehrer" in ADN
    (lambda lines: lines["grammatical"].__setitem__(slice(12, 18), [
        s.replace("den Lehrer", "den Lehrern") for s in lines["grammatical"][12:18]]), 0, 19,
     "template 0: np1 in case A is 'den Lehrer' here but 'den Lehrern' on line 13"),
    (_swap("grammatical", 40, lambda s: s[:-1]), 0, 41, "does not end with '.'"),
    (_swap("grammatical", 3, lambda s: ""), 0, 4, "empty line"),
])
def test_bad_sentence_files_exit_2_at_the_first_wrong_line(tmp_path, capsys, edit, file, line,
                                                           words):
    paths = reference_files(tmp_path, 2, edit)
    assert_bad_input(capsys, tmp_path / "items.parquet",
                     ["items", "german-case", "--sentences", *paths], f"{paths[file]}:{line}",
                     words)


def test_sentence_files_of_the_wrong_length_exit_2(tmp_path, capsys):
    grammatical, ungrammatical = reference_files(tmp_path, 2, lambda lines: lines[
        "ungrammatical"].pop())
    assert_bad_input(capsys, tmp_path / "items.parquet",
                     ["items", "german-case", "--sentences", grammatical, ungrammatical],
                     str(ungrammatical), "215 sentences: the layout has 108 per template (2 "
                     "templates in")
    grammatical, ungrammatical = reference_files(tmp_path, 1, lambda lines: lines[
        "grammatical"].pop())
    assert_bad_input(capsys, tmp_path / "items.parquet",
                     ["items", "german-case", "--sentences", grammatical, ungrammatical],
                     str(grammatical), "35 sentences: the layout has 36 per template")
