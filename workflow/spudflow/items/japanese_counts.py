"""Count the lexicon's verbs in a raw Japanese text corpus (thesis §4.4.1: "their number of
occurrences in the Wikipedia corpus") and write the lexicon with those counts.

A count is the number of tokens that spaCy's blank `ja` pipeline (SudachiPy, split mode A) tags
VERB and whose lemma (Sudachi's dictionary form) is the verb exactly as the lexicon spells it, so
kana-only spellings are not counted, as in the UD counts of the default lexicon. The corpus is
UTF-8 text (.gz allowed), read line by line; a line longer than Sudachi accepts is cut after a
"。" (or, without one, at the length limit).
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from spudflow.core.atomic import atomic_outputs
from spudflow.core.errors import InputError
from spudflow.items.japanese_lexicon import LEXICON_COLUMNS, VerbPair, ranked, read_lexicon

# Characters per piece given to Sudachi: well under its input limit of 49,149 bytes (3 bytes a
# character in UTF-8).
MAX_CHARS = 10_000


def _pieces(line: str) -> Iterator[str]:
    while len(line) > MAX_CHARS:
        cut = line.rfind("。", 0, MAX_CHARS) + 1 or MAX_CHARS
        yield line[:cut]
        line = line[cut:]
    if line:
        yield line


def _lines(paths: Iterable[str | Path]) -> Iterator[str]:
    for path in paths:
        path = Path(path)
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    yield from _pieces(line.strip())
        except UnicodeDecodeError as error:
            # Decoding runs ahead of the lines read, so no line number would be right.
            raise InputError(path, None, f"not UTF-8 text ({error.reason})") from None


def count_corpus_verbs(paths: Iterable[str | Path], lemmas: Iterable[str]) -> Counter:
    """How often each lemma occurs as a VERB token in the corpus files."""
    import spacy

    nlp = spacy.blank("ja")
    wanted = set(lemmas)
    counts: Counter = Counter({lemma: 0 for lemma in wanted})
    for doc in nlp.pipe(_lines(paths), batch_size=256):
        for token in doc:
            if token.pos_ == "VERB" and token.lemma_ in wanted:
                counts[token.lemma_] += 1
    return counts


def recounted(pairs: list[VerbPair], counts: Counter) -> list[VerbPair]:
    """The pairs with the new counts, in the thesis's rank order."""
    return ranked(VerbPair(p.transitive, p.intransitive, counts[p.transitive],
                           counts[p.intransitive], p.line) for p in pairs)


def write_lexicon(pairs: list[VerbPair], out: str | Path, note: str) -> None:
    """The lexicon TSV, `note` as its `#` header (what the counts are counts of)."""
    header = "".join(f"# {line}\n".replace("# \n", "#\n") for line in note.splitlines())
    rows = ["\t".join(LEXICON_COLUMNS)] + [
        f"{p.transitive}\t{p.intransitive}\t{p.transitive_count}\t{p.intransitive_count}"
        for p in pairs]
    with atomic_outputs() as outputs:
        outputs.path(out).write_text(header + "\n".join(rows) + "\n", encoding="utf-8")


def count_lexicon(corpus: list[Path], lexicon: Path, out: Path) -> list[VerbPair]:
    pairs = read_lexicon(lexicon)
    for path in corpus:
        if not path.is_file():
            raise InputError(path, None, "corpus file not found")
    counts = count_corpus_verbs(corpus, [v for p in pairs for v in (p.transitive, p.intransitive)])
    new = recounted(pairs, counts)
    unseen = sum(p.rarer_count == 0 for p in new)
    names = ", ".join(c.name for c in corpus)
    note = (f"The verb pairs of {lexicon.name} with their counts in {names}: VERB tokens whose "
            "lemma (spaCy blank ja, SudachiPy) is the verb as spelled here.\n"
            f"{len(new)} pairs, {unseen} with a verb never seen. Rows ranked by the count of the "
            "less common verb (thesis §4.4.1), ties by the sum, then code points.\n"
            "Written by `spudflow items count-verbs`.")
    write_lexicon(new, out, note)
    return new
