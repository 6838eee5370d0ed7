"""`spudflow pairs DATASET …`: build one items table (see docs/pairs.md) per call."""

from __future__ import annotations

import argparse
from pathlib import Path

from spudflow.core.option_types import language, non_negative, positive, seed
from spudflow.core.output_paths import output_file
from spudflow.core.text_lines import WORD_SPLITS
from spudflow.core.training_share import share_fraction

SAMPLE_HELP = "keep a seeded uniform sample of N groups (default: all)"


def _add_common(p: argparse.ArgumentParser, dataset: str | None, sample: bool = True) -> None:
    p.add_argument("--out", type=output_file, required=True, help="output items .parquet file")
    p.add_argument("--dataset", default=dataset,
                   help="the dataset name written in the items (default: %(default)s)")
    if sample:
        p.add_argument("--sample", type=positive, metavar="N", help=SAMPLE_HELP)
        p.add_argument("--seed", type=seed, default=0,
                       help="seed of the sample (default: 0)")


def register(subparsers: argparse._SubParsersAction) -> None:
    pairs = subparsers.add_parser(
        "pairs", help="minimal pairs and template datasets -> one items table",
        description="Build an items table (one row per sentence to score: dataset, item_id, "
        "group_id, sentence, words with character offsets, label, language, regions, then the "
        "dataset's condition columns). Bad input exits 2 with FILE:LINE: message and writes "
        "nothing.")
    datasets = pairs.add_subparsers(dest="dataset_family", metavar="DATASET", required=True)

    p = datasets.add_parser(
        "spud", help="original treebank sentences with their nonce versions",
        description="One group per original sentence: the sentence (label 1) and each nonce "
        "version (label null; method and seed from the path …/{method}/seed{N}). Words are the "
        "treebank's surface tokens with offsets into the sentence text.")
    p.add_argument("--orig", type=Path, required=True, help="ingested treebank directory")
    p.add_argument("--nonce", type=Path, action="append", default=[], metavar="DIR",
                   help="nonce treebank directory …/{method}/seed{N} (repeatable)")
    p.add_argument("--lang", type=language, required=True,
                   help="ISO 639-1 code of the treebank's language")
    p.add_argument("--min-words", type=positive, default=4,
                   help="leave out sentences with fewer syntactic words (default: 4)")
    p.add_argument("--leave-out-share", type=share_fraction, metavar="FRACTION",
                   help="leave out the split's training share (`spudflow training-share`)")
    p.add_argument("--share-seed", type=seed, default=0,
                   help="seed of the training share (default: 0)")
    _add_common(p, "spud", sample=False)
    p.set_defaults(handler=run_spud)

    p = datasets.add_parser(
        "german-case", help="German case violations from templates (144 sentences each)",
        description="Every assignment of nominative, accusative and dative to the three NPs of "
        "a template except NNN, AAA and DDD (6 grammatical, 18 with a doubled case), each in the "
        "6 orders of the NPs. Groups are templates.")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--templates", type=Path, help="template TSV")
    source.add_argument("--sentences", type=Path, nargs=2, metavar=("GRAMMATICAL", "UNGRAMMATICAL"),
                        help="the paper's sentence files (crochereau/Word-based-LM src/data/"
                        "grammatical_sentences.txt, ungrammatical_sentences.txt: 36 and 108 "
                        "lines per template): the templates are recovered from them, and every "
                        "line must be the sentence they generate")
    _add_common(p, "german_case")
    p.set_defaults(handler=run_german_case)

    p = datasets.add_parser(
        "japanese-transitivity", help="Japanese transitive vs intransitive verb pairs",
        description="7,495 contexts per verb pair; each context gives a group of two items "
        "(transitive, intransitive). Groups: verb pair x context (x relative clause).")
    p.add_argument("--lexicon", type=Path, required=True, help="verb pair TSV with counts")
    p.add_argument("--variant", required=True, choices=("base", "rare", "longer", "relative"))
    p.add_argument("--n-verb-pairs", type=positive, default=50,
                   help="how many most (rare: least) common pairs (default: 50)")
    p.add_argument("--rank-by", choices=("min", "sum"), default="min",
                   help="how common a pair is: the count of its less common verb (the thesis, "
                   "§4.4.1; default) or the sum of both counts")
    p.add_argument("--min-count", type=non_negative, default=1,
                   help="pairs whose less common verb is counted fewer times are dropped "
                   "(default 1: the thesis drops a pair with a verb never seen; 0 keeps all)")
    _add_common(p, None)
    p.set_defaults(handler=run_japanese)

    p = datasets.add_parser(
        "count-verbs", help="count the Japanese lexicon's verbs in a text corpus",
        description="Writes the verb pair lexicon with each verb's count in the corpus (VERB "
        "tokens whose lemma, by spaCy's blank ja tokenizer with SudachiPy, is the verb as "
        "spelled), ranked as the thesis ranks (§4.4.1). Not an items table.")
    p.add_argument("corpus", type=Path, nargs="+",
                   help="UTF-8 text files (.gz allowed), e.g. Japanese Wikipedia")
    p.add_argument("--lexicon", type=Path, required=True, help="verb pair TSV")
    p.add_argument("--out", type=output_file, required=True,
                   help="the lexicon TSV with corpus counts")
    p.set_defaults(handler=run_count_verbs)

    p = datasets.add_parser(
        "cola", help="CoLA TSVs (source, label, mark, sentence; no header)",
        description="One item (and group) per sentence; the split is each file's stem. "
        "Phenomenon sets (the paper's section 8, Table 5: the same format with an empty source "
        "column) are given after --phenomena; each file's stem names the phenomenon.")
    p.add_argument("files", type=Path, nargs="+", help="CoLA .tsv files (a source on every line)")
    p.add_argument("--phenomena", type=Path, nargs="+", default=[],
                   help="phenomenon set .tsv files (empty source column)")
    p.add_argument("--words", choices=WORD_SPLITS, default="spacy",
                   help="how sentences are split into words: spacy (default), the blank "
                        "English tokenizer; whitespace, for the release's tokenized/ files (as "
                        "Lau et al.'s n-gram code reads them)")
    _add_common(p, "cola")
    p.set_defaults(handler=run_cola)

    p = datasets.add_parser(
        "blimp", help="BLiMP paradigm files (JSON lines) -> good/bad pairs",
        description="Each pair gives a group of two items: sentence_good (label 1) and "
        "sentence_bad (label 0). A directory stands for its *.jsonl files.")
    p.add_argument("paths", type=Path, nargs="+", help="paradigm .jsonl files or directories")
    _add_common(p, "blimp")
    p.set_defaults(handler=run_blimp)


def _write(table, out: Path) -> None:
    from spudflow.pairs.items import write_items

    write_items(table, out)


def run_spud(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.pairs.spud import build_spud_items

    share = None if args.leave_out_share is None else (args.leave_out_share, args.share_seed)
    table, counts = build_spud_items(args.orig, args.nonce, args.dataset, args.lang,
                                     args.min_words, leave_out_share=share)
    get_logger(__name__).info("%d sentences kept, %d shorter than %d words left out, %d in the "
                              "training share left out, %d texts rebuilt from forms",
                              counts["sentences"], counts["short"], args.min_words,
                              counts["training_share"], counts["rebuilt_text"])
    _write(table, args.out)


def run_german_case(args: argparse.Namespace) -> None:
    from spudflow.pairs.german_case import build_german_case_items, read_templates
    from spudflow.pairs.german_case_reference import read_reference_templates

    templates = (read_templates(args.templates) if args.sentences is None
                 else read_reference_templates(*args.sentences))
    _write(build_german_case_items(templates, args.dataset, args.sample, args.seed), args.out)


def run_japanese(args: argparse.Namespace) -> None:
    from spudflow.pairs.japanese_transitivity import build_japanese_items

    dataset = args.dataset or f"japanese_transitivity_{args.variant}"
    _write(build_japanese_items(args.lexicon, args.variant, dataset, args.n_verb_pairs,
                                args.sample, args.seed, args.rank_by, args.min_count), args.out)


def run_count_verbs(args: argparse.Namespace) -> None:
    from spudflow.pairs.japanese_counts import count_lexicon

    count_lexicon(args.corpus, args.lexicon, args.out)


def run_cola(args: argparse.Namespace) -> None:
    from spudflow.pairs.cola import build_cola_items

    _write(build_cola_items(args.files, args.dataset, args.sample, args.seed, args.phenomena,
                            args.words), args.out)


def run_blimp(args: argparse.Namespace) -> None:
    from spudflow.pairs.blimp import build_blimp_items

    _write(build_blimp_items(args.paths, args.dataset, args.sample, args.seed), args.out)
