"""The `spudflow` command: one subcommand per pipeline step, registered by each stage."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import sys

from spudflow import __version__
from spudflow.core.distinct_inputs import check_distinct_path_arguments
from spudflow.core.errors import EXIT_BAD_INPUT, InputError
from spudflow.core.os_errors import NewOutputs, ignore_file_size_signal, system_error
from spudflow.core.output_paths import (
    check_outputs_apart_from_inputs,
    check_outputs_replaceable,
)
from spudflow.core.renamed import renamed_command

# Each stage package has a `cli` module with `register(subparsers)`; handlers import heavy
# libraries (torch, transformers, sklearn, scipy, matplotlib) lazily: every Snakemake job is a
# fresh Python, and a command should load only what it runs (tests/test_cli_imports.py).
STAGES = ("ingest", "nonce", "items", "controls", "scoring", "probe", "aggregate", "rehearse")


class OneLineParser(argparse.ArgumentParser):
    """argparse's errors as one line and exit 2, like every other bad input (argparse prints
    the whole usage first: 3 to 8 lines). Subcommands' parsers are of the same class
    (add_subparsers makes them with type(parser))."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {' '.join(message.split())} "
                                  f"(`{self.prog} --help` lists the options)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="spudflow",
        description="Test what language models know about syntax: treebank ingestion, SPUD nonce "
        "treebanks, minimal pairs, LM scoring, structural probes and result tables.",
    )
    parser.add_argument("--version", action="version", version=f"spudflow {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for stage in STAGES:
        importlib.import_module(f"spudflow.{stage}.cli").register(subparsers)
    return parser


@functools.cache
def shared_parser() -> argparse.ArgumentParser:
    """build_parser(), once per process: building it costs about 15 ms of CPU, half of a small
    command's (bench/bench_shared_parser.py), and a process that runs many commands builds it
    once (the tests, and the forked jobs of their preloaded server, which inherit it)."""
    return build_parser()


def main(argv: list[str] | None = None) -> int:
    ignore_file_size_signal()
    outputs = None
    try:
        # output arguments are checked while they are parsed (spudflow.core.output_paths)
        args = shared_parser().parse_args(renamed_command(sys.argv[1:] if argv is None else argv))
        _own_lists(args)
        options = vars(args)  # the checks below look at every option of any command
        outputs = NewOutputs(options)
        check_distinct_path_arguments(options.values())
        check_outputs_apart_from_inputs(options.values())
        # the write rule, before any input is read: on the outputs the command declares
        planned = args.planned_outputs(args) if options.get("planned_outputs") else None
        check_outputs_replaceable(planned, options.values())
        result = args.handler(args)
    except InputError as error:
        _remove(outputs)
        print(error.format(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:  # a full disk, a file it may not read or write: one line
        bad = system_error(error, outputs.first() if outputs else None)
        if bad is None:
            raise
        _remove(outputs)
        print(bad.format(), file=sys.stderr)
        return EXIT_BAD_INPUT
    return int(result or 0)


def _own_lists(args: argparse.Namespace) -> None:
    """A list option left at its default is the shared parser's own object: each command gets
    a copy, so that one that extends it cannot change the next command's default."""
    options = vars(args)
    options.update({name: list(value) for name, value in options.items()
                    if isinstance(value, list)})


def _remove(outputs: NewOutputs | None) -> None:
    """What a failed command made at its output paths (nothing is left half-written)."""
    if outputs is not None:
        with contextlib.suppress(OSError):  # best effort: the one line still comes
            outputs.remove()
