"""The stages' loggers. Log lines go to stderr, which every Snakemake rule sends to its log."""

from __future__ import annotations

import logging
import sys

from spudflow.core.errors import redact


class _Redacting(logging.Formatter):
    """Log lines without a URL's user:password@ (a download's URL is logged)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def get_logger(name: str) -> logging.Logger:
    """The logger NAME, with one INFO-level stderr handler on the root logger if it has none."""
    logger = logging.getLogger(name)
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        for handler in logging.getLogger().handlers:
            handler.setFormatter(_Redacting(handler.formatter._fmt if handler.formatter
                                            else None))
    return logger
