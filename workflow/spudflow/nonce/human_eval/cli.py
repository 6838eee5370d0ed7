"""`spudflow human-eval export` and `spudflow human-eval tables` (docs/nonce.md, "Human
evaluation")."""

from __future__ import annotations

import argparse
from pathlib import Path

from spudflow.core.option_types import seed
from spudflow.core.output_paths import output_dir

KEY_FILE = "answer_key.parquet"
SHEETS_DIR = "sheets"
DEFAULT_ANNOTATORS = ["annotator1", "annotator2"]


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser(
        "human-eval", help="human evaluation kit: annotation sheets and Tables 1-2 (§3.2)",
        description="The human evaluation of Arps et al. (2024), section 3.2: original, SPUD "
        "and rule-free POS-only (posfree) sentences judged by annotators. See docs/nonce.md.")
    commands = group.add_subparsers(dest="human_eval_command", metavar="COMMAND", required=True)

    p = commands.add_parser(
        "export", help="seeded annotation sheets (CSV + HTML) and their answer key",
        description="Sample n sentences of 4 words or more from the split ORIG (seeded) and "
        "write, per annotator, OUT/sheets/NAME.csv (to fill in) and OUT/sheets/NAME.html (to "
        "print): each item the original sentence and its SPUD and posfree versions as A and B, "
        "items and A/B in a seeded order of their own per annotator. OUT/answer_key.parquet "
        "says which sentence is which. The same inputs and seed give byte-identical files. A "
        "sheet someone filled in (changed since spudflow wrote it) is kept: the new blank one "
        "goes beside it as NAME.new.csv (NAME.new-2.csv, ...).")
    p.add_argument("--orig", type=Path, required=True, help="ingested treebank split")
    p.add_argument("--spud", type=Path, required=True,
                   help="its nonce version made with --method spud")
    p.add_argument("--posfree", type=Path, required=True,
                   help="its nonce version made with --method posfree")
    p.add_argument("--n", type=int, default=40, help="triplets (default: %(default)s)")
    p.add_argument("--seed", type=seed, default=1, help="seed of the sample and the orders "
                   "(default: %(default)s)")
    p.add_argument("--annotators", nargs="+", default=DEFAULT_ANNOTATORS, metavar="NAME",
                   help="one sheet per annotator (default: %(default)s)")
    p.add_argument("--out", type=output_dir, required=True, help="output directory")
    p.set_defaults(handler=run_export)

    p = commands.add_parser(
        "tables", help="filled sheets -> Tables 1-2 with Cohen's kappa",
        description="Read filled CSV sheets (every annotator of the answer key once) and write "
        "human_eval_grammaticality (Table 1) and human_eval_preference (Table 2) as "
        "DIR/NAME.parquet, .csv, .md and .tex. An item whose sentences are no longer the "
        "answer key's (an edited sentence, a nonce version drawn again) is stale: left out, "
        "counted in the tables (stale_items) and named in the log. A missing or unknown "
        "answer or item, or a sheet none of whose originals is the key's (another kit), "
        "exits 2 with FILE:LINE.")
    p.add_argument("sheets", type=Path, nargs="+", help="filled CSV sheets")
    p.add_argument("--key", type=Path, required=True, help=f"the export's {KEY_FILE}")
    p.add_argument("--out-dir", type=output_dir, required=True, help="directory for the tables")
    p.set_defaults(handler=run_tables)


def blank_sheet_path(sheet: Path) -> Path:
    """Where the blank sheet for SHEET goes: SHEET itself unless it holds what spudflow did not
    write there (answers filled in), then the first of NAME.new.csv, NAME.new-2.csv, ... that
    is free or a blank sheet of spudflow's. Annotations are never replaced."""
    from spudflow.core.written_files import is_written

    def taken(path: Path) -> bool:
        return path.is_file() and path.stat().st_size > 0 and not is_written(path)

    candidate, number = sheet, 1
    while taken(candidate):
        suffix = ".new" if number == 1 else f".new-{number}"
        candidate = sheet.with_name(f"{sheet.stem}{suffix}{sheet.suffix}")
        number += 1
    return candidate


def run_export(args: argparse.Namespace) -> None:
    from spudflow.core.artifacts import HUMAN_EVAL_KEY
    from spudflow.core.atomic import atomic_outputs
    from spudflow.core.contract import write_artifact
    from spudflow.core.errors import InputError
    from spudflow.core.logs import get_logger
    from spudflow.nonce.human_eval.kit import (
        answer_key,
        check_annotators,
        load_triplets,
        sample_triplets,
    )
    from spudflow.nonce.human_eval.sheets import (
        changed_items,
        sheet_csv,
        sheet_html,
        sheet_rows,
    )

    log = get_logger("spudflow.nonce")
    if args.n < 1:
        raise InputError("--n", None, f"{args.n}: at least 1 triplet")
    annotators = check_annotators(args.annotators)
    triplets, labels = load_triplets(args.orig, {"spud": args.spud, "posfree": args.posfree})
    sample = sample_triplets(triplets, args.n, args.seed, args.orig)
    key = answer_key(sample, annotators, args.seed, labels)
    title = f"Nonce sentences: {labels['treebank']} {labels['split']} ({labels['language']})"
    with atomic_outputs() as out:
        for annotator in annotators:
            rows = sheet_rows(key, annotator)
            stem = args.out / SHEETS_DIR / annotator
            sheet = blank_sheet_path(stem.with_suffix(".csv"))
            if sheet != stem.with_suffix(".csv"):
                changed = changed_items(stem.with_suffix(".csv"), rows)
                log.warning("human-eval: %s holds answers (changed since spudflow wrote it): "
                            "kept; the new blank sheet is %s%s", stem.with_suffix(".csv"), sheet,
                            f"; the sentences of its item(s) {', '.join(map(str, changed))} "
                            "changed: `human-eval tables` leaves them out as stale, re-annotate "
                            "them on the new sheet" if changed else "")
            out.path(sheet).write_text(sheet_csv(rows), encoding="utf-8")
            out.path(stem.with_suffix(".html")).write_text(
                sheet_html(rows, annotator, title), encoding="utf-8")
        write_artifact(key, out.path(args.out / KEY_FILE), HUMAN_EVAL_KEY)


def run_tables(args: argparse.Namespace) -> None:
    from spudflow.core.artifacts import HUMAN_EVAL_KEY
    from spudflow.core.contract import read_artifact
    from spudflow.core.logs import get_logger
    from spudflow.core.table_artifacts import (
        HUMAN_EVAL_GRAMMATICALITY,
        HUMAN_EVAL_PREFERENCE,
        STATUS_OK,
    )
    from spudflow.core.tables import write_table
    from spudflow.nonce.human_eval.tables import human_eval_tables

    key = read_artifact(args.key, HUMAN_EVAL_KEY)
    # Both tables are computed before either is written: bad input leaves nothing behind.
    grammaticality, preference, stale = human_eval_tables(key, args.sheets)
    log = get_logger("spudflow.nonce")
    for item in stale:
        log.warning("%s:%d: item %d of %s left out of Tables 1-2: %s since the sheet was "
                    "exported (its sentences are not the answer key's)", item.path, item.line,
                    item.item, item.annotator, item.reason)
    if stale:
        log.warning("human-eval: the filled sheets are stale for %d item(s): re-annotate them "
                    "from the new blank sheet export wrote beside each filled one (NAME.new.csv)"
                    "%s", len(stale), "; nothing is left to compute, the tables say `skipped`"
                    if grammaticality["status"][0] != STATUS_OK else "")
    write_table(grammaticality, args.out_dir / HUMAN_EVAL_GRAMMATICALITY.name,
                HUMAN_EVAL_GRAMMATICALITY, caption=(
                    "Human evaluation (Arps et al. 2024, Table 1): grammaticality judgments of "
                    "SPUD and rule-free POS-only nonce sentences, percent, mean over "
                    "annotators, with Cohen's kappa."))
    write_table(preference, args.out_dir / HUMAN_EVAL_PREFERENCE.name, HUMAN_EVAL_PREFERENCE,
                caption=("Human evaluation (Arps et al. 2024, Table 2): which nonce sentence is "
                         "syntactically closer to the original, percent, mean over annotators, "
                         "with Cohen's kappa."))
