"""Commands of the ingestion stage: ingest, export, fetch, stats, training-share."""

from __future__ import annotations

import argparse
from pathlib import Path

from spudflow.core.atomic import atomic_outputs
from spudflow.core.errors import InputError
from spudflow.core.option_types import language, positive, seed
from spudflow.core.output_paths import output_dir, output_file
from spudflow.core.regular_files import check_regular_file
from spudflow.core.training_share import share_fraction
from spudflow.ingest.download import MAX_BYTES, sha256_hex


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ingest", help="CoNLL-U (.conllu or .conllu.gz) -> DIR/tokens.parquet + sentences.parquet",
        description="Validate a CoNLL-U file and write it as DIR/tokens.parquet (one row per token "
        "line: words, multiword-token ranges, empty nodes) and DIR/sentences.parquet (one row per "
        "sentence, with every comment line). Several files are read as one split, in the order "
        "given (a training set shipped in parts). Bad input exits 2 with FILE:LINE: message and "
        "writes nothing. CRLF line ends, a UTF-8 BOM and a missing final blank line are "
        "normalised.")
    p.add_argument("src", type=Path, nargs="+", help="a .conllu or .conllu.gz file, or several")
    p.add_argument("--out", type=output_dir, required=True, help="output directory")
    p.add_argument("--lenient", action="store_true",
                   help="skip bad sentences with a warning (counted) instead of failing")
    p.set_defaults(handler=run_ingest)

    p = subparsers.add_parser(
        "export", help="DIR (from ingest) -> CoNLL-U file",
        description="Write an ingested treebank back as CoNLL-U. For a valid UD file, ingest then "
        "export is byte-identical. Extra token columns added by later stages are ignored. The "
        "output is read back as ingest reads it first: a treebank that would export as invalid "
        "CoNLL-U (a tab or newline in a field, a HEAD outside its sentence) is bad input and "
        "writes nothing.")
    p.add_argument("dir", type=Path, help="directory with tokens.parquet and sentences.parquet")
    p.add_argument("--out", type=output_file, required=True, help="output .conllu file")
    p.set_defaults(handler=run_export)

    p = subparsers.add_parser(
        "fetch", help="download a treebank split or another input from a URL (atomic, checked)",
        description="Download URL to OUT through a temporary file renamed into place. A body "
        "shorter or longer than the server's Content-Length, larger than --max-bytes (checked "
        "while it streams), or whose SHA-256 is not --sha256, is bad input (exit 2) and leaves "
        "nothing. Temporary files of killed fetches of OUT are removed.")
    p.add_argument("url")
    p.add_argument("--out", type=output_file, required=True)
    p.add_argument("--sha256", type=sha256_hex, default=None, metavar="HEX",
                   help="the file's SHA-256 (64 hex digits; config fetch.sha256)")
    p.add_argument("--max-bytes", type=positive, default=MAX_BYTES, metavar="N",
                   help="refuse a body larger than N bytes (config fetch.max_bytes; default "
                   "%(default)s)")
    p.set_defaults(handler=run_fetch)

    p = subparsers.add_parser(
        "stats", help="statistics of one ingested split (one-row Parquet)",
        description="Sentences, words, surface tokens, multiword tokens, empty nodes, UPOS counts "
        "and type-token ratio of one ingested treebank split.")
    p.add_argument("dir", type=Path)
    p.add_argument("--treebank", required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--lang", type=language, required=True)
    p.add_argument("--out", type=output_file, required=True, help="output .parquet file")
    p.set_defaults(handler=run_stats)

    p = subparsers.add_parser(
        "training-share", help="an ingested split's seeded training share, as an ingested split",
        description="Keep round(FRACTION x n) sentences of an ingested split, chosen by SHA-256 of "
        "the seed and each sentence's sent_id (or position): the text the pipeline's own models "
        "train on. `pairs spud --leave-out-share` leaves the same sentences out of the items.")
    p.add_argument("dir", type=Path, help="ingested split (tokens.parquet + sentences.parquet)")
    p.add_argument("--fraction", type=share_fraction, required=True,
                   help="the fraction of the split in the share, 0 < FRACTION < 1")
    p.add_argument("--seed", type=seed, default=0, help="seed of the share (default: 0)")
    p.add_argument("--rest", action="store_true",
                   help="keep the sentences NOT in the share instead (what the items keep; the "
                   "probe tests on them)")
    p.add_argument("--out", type=output_dir, required=True, help="output directory")
    p.set_defaults(handler=run_training_share)


def run_ingest(args: argparse.Namespace) -> None:
    from spudflow.core.treebank import write_treebank
    from spudflow.ingest.convert import read_conllu

    for src in args.src:
        check_regular_file(src)
    tokens, sentences = read_conllu(args.src, lenient=args.lenient)
    write_treebank(args.out, tokens, sentences)


def run_training_share(args: argparse.Namespace) -> None:
    from spudflow.core.training_share import training_share
    from spudflow.core.treebank import read_treebank, write_treebank

    for name in ("tokens.parquet", "sentences.parquet"):
        if not (args.dir / name).is_file():
            raise InputError(args.dir / name, None, "no such file (not an ingested split)")
    tokens, sentences = read_treebank(args.dir)
    kept_tokens, kept = training_share(tokens, sentences, args.fraction, args.seed,
                                       rest=args.rest)
    if kept.height == 0:  # a model trained on nothing, items of nothing: never what was meant
        part = "the rest of the split" if args.rest else "the share"
        raise InputError("--fraction", None, f"{args.fraction} of the {sentences.height} "
                         f"sentences of {args.dir} leaves {part} empty")
    write_treebank(args.out, kept_tokens, kept)


def run_export(args: argparse.Namespace) -> None:
    from spudflow.core.treebank import read_treebank, write_conllu
    from spudflow.ingest.convert import read_conllu

    tokens, sentences = read_treebank(args.dir)
    with atomic_outputs() as out:
        tmp = out.path(args.out)
        write_conllu(tmp, tokens, sentences)
        # What export writes must ingest again: a tab or newline inside a field, a HEAD of -1 or
        # one outside its sentence (Parquet written by other tools) would make invalid CoNLL-U.
        try:
            read_conllu(tmp)
        except InputError as error:
            raise InputError(args.dir, None, f"would export as invalid CoNLL-U ({error.message}, "
                             f"at line {error.line} of the export): nothing written") from None


def _check_url(url: str) -> None:
    """A URL of a scheme the config's splits may have (anything else, a path or a typo, would
    meet urllib's ValueError)."""
    from spudflow.core.split_files import URL_SCHEMES, is_url

    if not is_url(url):
        raise InputError(url, None, "not a URL: a treebank split is downloaded from "
                         f"{', '.join(s + '://' for s in URL_SCHEMES)}")


def run_fetch(args: argparse.Namespace) -> None:
    from spudflow.ingest.download import download

    _check_url(args.url)
    with atomic_outputs() as out:
        download(args.url, out.path(args.out), args.sha256, args.max_bytes)


def run_stats(args: argparse.Namespace) -> None:
    from spudflow.core.artifacts import TREEBANK_STATS
    from spudflow.core.contract import write_artifact
    from spudflow.core.treebank import read_treebank
    from spudflow.ingest.stats import treebank_statistics

    tokens, sentences = read_treebank(args.dir)
    table = treebank_statistics(tokens, sentences, args.treebank, args.split, args.lang)
    with atomic_outputs() as out:
        write_artifact(table, out.path(args.out), TREEBANK_STATS)
