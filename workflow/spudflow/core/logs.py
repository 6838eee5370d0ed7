"""The stages' loggers. Log lines go to stderr, which every Snakemake rule sends to its log."""

from __future__ import annotations

import logging
import sys


def get_logger(name: str) -> logging.Logger:
    """The logger NAME, with one INFO-level stderr handler on the root logger if it has none."""
    logger = logging.getLogger(name)
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return logger
