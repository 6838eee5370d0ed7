"""The German case paper's own sentence files (crochereau/Word-based-LM,
src/data/grammatical_sentences.txt and ungrammatical_sentences.txt, the 2019 data set the paper's
LSTM scored): their line layout, the templates recovered from them, and files written in that
layout from other templates.

Layout, as the reference's notebooks index it (src/1vs6_analyses.ipynb `get_all_violations`,
src/analyse_results.ipynb `per_stc_gram_probs`, `get_case_violations`): template t (0-based) owns
lines 36t+1 to 36t+36 of the grammatical file and 108t+1 to 108t+108 of the ungrammatical one.
Inside a template, each block of six lines shares one case assignment of the NPs (np1 np2 np3; the
template's own is NDA), the blocks in GRAMMATICAL_BLOCKS and VIOLATION_BLOCKS order, and the six
lines of a block put the NPs in WORD_ORDERS. A sentence is `principal NP NP NP verb.`.

A template is recovered from its 36 grammatical sentences: the principal clause and the verb are
the words every one of them starts and ends with, and each block's six word orders fix where one
NP ends and the next begins. Then the template's 144 sentences are generated again and compared
with every line of both files, so a file that is not in this layout is refused at its first
differing line, never read wrongly.
"""

from __future__ import annotations

from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.items.german_case import Template, template_sentences
from spudflow.items.german_declension import CASES

GRAMMATICAL_BLOCKS = ("NAD", "NDA", "AND", "ADN", "DNA", "DAN")
VIOLATION_BLOCKS = ("ANN", "NAN", "NNA", "NDN", "DNN", "NND",   # a doubled nominative
                    "NAA", "AAN", "ANA", "ADA", "DAA", "AAD",   # accusative
                    "DDN", "DND", "NDD", "ADD", "DDA", "DAD")   # dative
WORD_ORDERS = ("123", "132", "213", "231", "312", "321")
PER_TEMPLATE = {"grammatical": len(GRAMMATICAL_BLOCKS) * len(WORD_ORDERS),
                "ungrammatical": len(VIOLATION_BLOCKS) * len(WORD_ORDERS)}


def reference_line(which: str, index: int) -> tuple[int, str, str]:
    """(template index, cases, positions) of the 0-based `index`-th line of the `which`
    (`grammatical` or `ungrammatical`) file."""
    blocks = GRAMMATICAL_BLOCKS if which == "grammatical" else VIOLATION_BLOCKS
    template, within = divmod(index, PER_TEMPLATE[which])
    block, order = divmod(within, len(WORD_ORDERS))
    return template, blocks[block], WORD_ORDERS[order]


def template_id(index: int) -> str:
    """The id of the reference's template `index` (0-based, the notebooks' numbering)."""
    return f"t{index:02d}"


def reference_lines(templates: list[Template]) -> dict[str, list[str]]:
    """The sentences of `templates` in the reference's layout: {"grammatical": [...],
    "ungrammatical": [...]} (what a rehearsal writes where the paper's files would be)."""
    lines: dict[str, list[str]] = {"grammatical": [], "ungrammatical": []}
    for template in templates:
        by_design = {(cases, positions): sentence
                     for cases, positions, sentence, _ in template_sentences(template)}
        for which, blocks in (("grammatical", GRAMMATICAL_BLOCKS),
                             ("ungrammatical", VIOLATION_BLOCKS)):
            lines[which] += [by_design[cases, order] for cases in blocks for order in WORD_ORDERS]
    return lines


def _read_lines(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except UnicodeDecodeError as error:
        raise InputError(path, None, f"not UTF-8 ({error.reason})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            raise InputError(path, number, "empty line (one sentence per line)")
    return lines


def _common_words(rows: list[list[str]], reverse: bool = False) -> list[str]:
    common = []
    for words in zip(*[reversed(r) if reverse else r for r in rows], strict=False):
        if len(set(words)) > 1:
            break
        common.append(words[0])
    return common[::-1] if reverse else common


def _split_nps(middles: list[list[str]]) -> list[tuple[str, str, str]]:
    """Every way to cut the first middle (NPs in order 123) into three NPs that the other five
    middles show in their WORD_ORDERS."""
    first = middles[0]
    found = []
    for i in range(1, len(first) - 1):
        for j in range(i + 1, len(first)):
            nps = (first[:i], first[i:j], first[j:])
            if all(sum((nps[int(k) - 1] for k in order), []) == middle
                   for order, middle in zip(WORD_ORDERS, middles, strict=True)):
                found.append(tuple(" ".join(np) for np in nps))
    return found


def _recover(index: int, sentences: list[str], path: Path) -> Template:
    first_line = index * PER_TEMPLATE["grammatical"] + 1
    bodies = []
    for offset, sentence in enumerate(sentences):
        if not sentence.endswith("."):
            raise InputError(path, first_line + offset, "the sentence does not end with '.'")
        bodies.append(sentence[:-1].split(" "))
    principal = _common_words(bodies)
    verb = _common_words([b[len(principal):] for b in bodies], reverse=True)
    if not principal or not verb:
        raise InputError(path, first_line, f"template {index}: its {len(sentences)} sentences do "
                         "not share a clause before the NPs and a verb after them")
    forms: list[dict[str, str]] = [{}, {}, {}]
    seen: dict[tuple[int, str], int] = {}
    for b, cases in enumerate(GRAMMATICAL_BLOCKS):
        start = b * len(WORD_ORDERS)
        middles = [body[len(principal):len(body) - len(verb)]
                   for body in bodies[start:start + len(WORD_ORDERS)]]
        splits = _split_nps(middles)
        line = first_line + start
        if len(splits) != 1:
            raise InputError(path, line, f"template {index}: the six lines of assignment "
                             f"{cases} do not put three NPs in the orders "
                             f"{', '.join(WORD_ORDERS)}" if not splits else
                             f"template {index}: the NPs of assignment {cases} can be cut in "
                             f"{len(splits)} ways")
        for k, (case, phrase) in enumerate(zip(cases, splits[0], strict=True)):
            known = forms[k].setdefault(case, phrase)
            if known != phrase:
                raise InputError(path, line, f"template {index}: np{k + 1} in case {case} is "
                                 f"{phrase!r} here but {known!r} on line {seen[k, case]}")
            seen.setdefault((k, case), line)
    forms = [{case: form[case] for case in CASES} for form in forms]
    return Template(template_id(index), " ".join(principal), " ".join(verb), tuple(forms), None)


def read_reference_templates(grammatical: str | Path,
                             ungrammatical: str | Path) -> list[Template]:
    """The templates of the reference's two sentence files, each checked against every line."""
    paths = {"grammatical": Path(grammatical), "ungrammatical": Path(ungrammatical)}
    lines = {which: _read_lines(path) for which, path in paths.items()}
    n = len(lines["grammatical"]) // PER_TEMPLATE["grammatical"]
    for which, path in paths.items():
        if not lines[which] or len(lines[which]) != n * PER_TEMPLATE[which] or not n:
            raise InputError(path, None, f"{len(lines[which])} sentences: the layout has "
                             f"{PER_TEMPLATE[which]} per template"
                             + (f" ({n} templates in {paths['grammatical']})"
                                if which == "ungrammatical" and n else ""))
    templates = []
    per = PER_TEMPLATE["grammatical"]
    for index in range(n):
        template = _recover(index, lines["grammatical"][index * per:(index + 1) * per],
                            paths["grammatical"])
        expected = reference_lines([template])
        for which, path in paths.items():
            start = index * PER_TEMPLATE[which]
            for offset, sentence in enumerate(expected[which]):
                if lines[which][start + offset] != sentence:
                    _, cases, positions = reference_line(which, start + offset)
                    raise InputError(path, start + offset + 1, f"template {index}, cases "
                                     f"{cases} in NP order {positions}: expected {sentence!r}")
        templates.append(template)
    return templates
