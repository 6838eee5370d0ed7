"""Recount the frequencies in config/lexicons/japanese_verb_pairs.tsv on the Japanese UD treebanks
(the default lexicon's counts; a user's corpus is counted by `spudflow items count-verbs`).

    python bench/japanese_verb_counts.py            # print the counts, compare with the file
    python bench/japanese_verb_counts.py --write    # rewrite the file (rows ranked, note kept)

A count is the number of VERB tokens whose LEMMA is the verb as spelled in the lexicon, over
UD_Japanese-PUD test (vendored, r2.5) and UD_Japanese-GSD dev + test (../shared/data, r2.18; its
train split is not available offline). Exit status 1 when the file's counts differ.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from spudflow.items.japanese_lexicon import (
    LEXICON_COLUMNS,
    VerbPair,
    count_verb_lemmas,
    ranked,
    read_lexicon,
)

REPO = Path(__file__).resolve().parents[1]
# The shared corpora sit beside the repository; SPUDFLOW_SHARED_DATA points elsewhere.
SHARED_DATA = Path(os.environ.get("SPUDFLOW_SHARED_DATA", REPO.parent / "shared" / "data"))
LEXICON = REPO / "config" / "lexicons" / "japanese_verb_pairs.tsv"
TREEBANKS = [
    REPO / "resources/ud/UD_Japanese-PUD/ja_pud-ud-test.conllu.gz",
    SHARED_DATA / "ud/UD_Japanese-GSD/ja_gsd-ud-dev.conllu.gz",
    SHARED_DATA / "ud/UD_Japanese-GSD/ja_gsd-ud-test.conllu.gz",
]
NOTE = """\
# Japanese transitive/intransitive verb pairs sharing a kanji stem (spudflow; CC0).
# transitive_count / intransitive_count are NOT the thesis's Japanese Wikipedia counts: they are
# VERB tokens whose LEMMA equals the verb as spelled here, counted in UD_Japanese-PUD test (r2.5,
# resources/ud) plus UD_Japanese-GSD dev and test (r2.18; ../shared/data/ud), 2,050 sentences in
# all. Other spellings (e.g. kana-only つく) are not counted. 98 of the 145 pairs have a verb
# never seen there (43 both), so the thesis's rule (section 4.4.1: drop such pairs) leaves 47.
# For the thesis's counts set pairs.japanese_transitivity.corpus to a Japanese Wikipedia text
# (`spudflow items count-verbs`). Rows are ranked by the count of the less common verb, ties by
# the sum, then code point order of the verbs; the pipeline ranks the same way whatever the row
# order. Recompute with `python bench/japanese_verb_counts.py --write`.
"""


def recount(pairs: list[VerbPair], treebanks: list[Path]) -> list[VerbPair]:
    lemmas = [v for p in pairs for v in (p.transitive, p.intransitive)]
    counts = count_verb_lemmas(treebanks, lemmas)
    return ranked(VerbPair(p.transitive, p.intransitive, counts[p.transitive],
                           counts[p.intransitive], p.line) for p in pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lexicon", type=Path, default=LEXICON)
    parser.add_argument("--treebank", type=Path, action="append",
                        help="CoNLL-U file to count in (repeatable; default: the three above)")
    parser.add_argument("--write", action="store_true", help="rewrite the lexicon's counts")
    args = parser.parse_args()
    treebanks = args.treebank or TREEBANKS
    missing = [t for t in treebanks if not t.is_file()]
    if missing:
        sys.exit(f"missing treebank file(s): {', '.join(map(str, missing))}")
    old = read_lexicon(args.lexicon)
    new = recount(old, treebanks)
    for rank, pair in enumerate(new, start=1):
        print(f"{rank}\t{pair.id}\t{pair.transitive_count}\t{pair.intransitive_count}")
    changed = {p.id: (p.transitive_count, p.intransitive_count) for p in old} != {
        p.id: (p.transitive_count, p.intransitive_count) for p in new}
    if args.write:
        rows = ["\t".join(LEXICON_COLUMNS)] + [
            f"{p.transitive}\t{p.intransitive}\t{p.transitive_count}\t{p.intransitive_count}"
            for p in new]
        args.lexicon.write_text(NOTE + "\n".join(rows) + "\n", encoding="utf-8")
        print(f"wrote {len(new)} pairs to {args.lexicon}", file=sys.stderr)
        return 0
    print(f"{len(new)} pairs; counts {'DIFFER from' if changed else 'equal'} {args.lexicon}",
          file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
