"""What main()'s shared parser saves a process that runs many commands (the tests; the forked
jobs of tests/preloaded_jobs.py's server): CPU milliseconds per `spudflow stats` on the tiny
English treebank, run in one process with the shared parser (cli.shared_parser) and with a parser
built for each command, as before it.

    python bench/bench_shared_parser.py [--calls 30] [--rounds 3]

Measured (2 cores, rounds of 30 calls each way): 26-38 ms per command with a parser built
per command, 13.6-15.3 ms with the shared one.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import spudflow.cli as cli

TINY_EN = Path(__file__).resolve().parents[1] / "tests" / "data" / "workflow" / "tiny_en.conllu"


def ms_per_command(argv: list[str], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        assert cli.main(argv) == 0
    return 1000 * (time.process_time() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    logging.disable(logging.CRITICAL)
    shared = cli.shared_parser
    with tempfile.TemporaryDirectory() as folder:
        treebank = Path(folder) / "tiny_en"
        assert cli.main(["ingest", str(TINY_EN), "--out", str(treebank)]) == 0
        argv = ["stats", str(treebank), "--treebank", "tiny_en", "--split", "test", "--lang",
                "en", "--out", str(Path(folder) / "stats.parquet")]
        cli.main(argv)  # warm: the command's imports
        for round_ in range(1, options.rounds + 1):
            cli.shared_parser = shared
            with_shared = ms_per_command(argv, options.calls)
            cli.shared_parser = cli.build_parser
            per_command = ms_per_command(argv, options.calls)
            print(f"round {round_}: parser built per command {per_command:.1f} ms, "
                  f"shared {with_shared:.1f} ms")
    cli.shared_parser = shared


if __name__ == "__main__":
    main()
