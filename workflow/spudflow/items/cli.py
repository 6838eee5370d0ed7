"""`spudflow items DATASET …`: build one items table (see docs/items.md) per call."""

from __future__ import annotations

import argparse
import importlib
import inspect
from pathlib import Path

from spudflow.core.dataset_families import FAMILIES, DatasetFamily
from spudflow.core.option_types import language, non_negative, positive, seed
from spudflow.core.output_paths import output_file
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
    items = subparsers.add_parser(
        "items", help="minimal pairs and template datasets -> one items table",
        description="Build an items table (one row per sentence to score: dataset, item_id, "
        "group_id, sentence, words with character offsets, label, language, regions, then the "
        "dataset's condition columns). Bad input exits 2 with FILE:LINE: message and writes "
        "nothing. `spudflow pairs`, its old name, still runs.")
    datasets = items.add_subparsers(dest="dataset_family", metavar="DATASET", required=True)
    for family in FAMILIES:  # in registry order
        if family.builder:
            _add_built(datasets, family)
        elif family.name == "spud":
            _add_spud(datasets)
        elif family.name == "japanese_transitivity":
            _add_japanese(datasets)


def _add_built(datasets: argparse._SubParsersAction, family: DatasetFamily) -> None:
    """The command of a family with a builder module: its arguments, then the common ones."""
    builder = importlib.import_module(f"spudflow.items.{family.builder}")
    p = datasets.add_parser(family.command, help=builder.HELP, description=builder.DESCRIPTION)
    builder.add_arguments(p)
    _add_common(p, family.name)
    p.set_defaults(handler=_built_handler(builder))


def _built_handler(builder):
    """The command's handler: the builder's `build` takes, by name, the options it declares as
    keyword parameters (no Namespace below this module)."""
    def run(args: argparse.Namespace) -> None:
        options = {name: getattr(args, name)
                   for name in inspect.signature(builder.build).parameters}
        _write(builder.build(**options), args.out)
    return run


def _add_spud(datasets: argparse._SubParsersAction) -> None:
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


def _add_japanese(datasets: argparse._SubParsersAction) -> None:
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


def _write(table, out: Path) -> None:
    from spudflow.items.table import write_items

    write_items(table, out)


def run_spud(args: argparse.Namespace) -> None:
    from spudflow.core.logs import get_logger
    from spudflow.items.spud import build_spud_items

    share = None if args.leave_out_share is None else (args.leave_out_share, args.share_seed)
    table, counts = build_spud_items(args.orig, args.nonce, args.dataset, args.lang,
                                     args.min_words, leave_out_share=share)
    get_logger(__name__).info("%d sentences kept, %d shorter than %d words left out, %d in the "
                              "training share left out, %d texts rebuilt from forms",
                              counts["sentences"], counts["short"], args.min_words,
                              counts["training_share"], counts["rebuilt_text"])
    _write(table, args.out)


def run_japanese(args: argparse.Namespace) -> None:
    from spudflow.items.japanese_transitivity import build_japanese_items

    dataset = args.dataset or f"japanese_transitivity_{args.variant}"
    _write(build_japanese_items(args.lexicon, args.variant, dataset, args.n_verb_pairs,
                                args.sample, args.seed, args.rank_by, args.min_count), args.out)


def run_count_verbs(args: argparse.Namespace) -> None:
    from spudflow.items.japanese_counts import count_lexicon

    count_lexicon(args.corpus, args.lexicon, args.out)
