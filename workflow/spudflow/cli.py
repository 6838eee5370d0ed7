"""The `spudflow` command: one subcommand per pipeline step, registered by each stage."""

from __future__ import annotations

import argparse
import importlib
import sys

from spudflow import __version__
from spudflow.core.distinct_inputs import check_distinct_path_arguments
from spudflow.core.errors import EXIT_BAD_INPUT, InputError

# Each stage package has a `cli` module with `register(subparsers)`; handlers import heavy
# libraries (torch, transformers, sklearn, scipy, matplotlib) lazily: every Snakemake job is a
# fresh Python, and a command should load only what it runs (tests/test_cli_imports.py).
STAGES = ("ingest", "nonce", "pairs", "controls", "scoring", "probe", "aggregate", "rehearse")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spudflow",
        description="Test what language models know about syntax: treebank ingestion, SPUD nonce "
        "treebanks, minimal pairs, LM scoring, structural probes and result tables.",
    )
    parser.add_argument("--version", action="version", version=f"spudflow {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for stage in STAGES:
        importlib.import_module(f"spudflow.{stage}.cli").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_distinct_path_arguments(args)
        result = args.handler(args)
    except InputError as error:
        print(error.format(), file=sys.stderr)
        return EXIT_BAD_INPUT
    return int(result or 0)
