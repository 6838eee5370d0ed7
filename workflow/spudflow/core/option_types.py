"""argparse types that check an option as config/schema.yaml checks the config key that fills
it, so that a value the pipeline refuses is refused by hand too (`--seed -1`, `--lang EN/../x`).

Each constraint is written once here as the JSON-schema keywords of its config keys;
tests/test_config_defaults.py checks that the schema's keys say the same (the schema is not
shipped with the package, so the commands cannot read it).
"""

from __future__ import annotations

import argparse
import math
import re

# numpy's and scikit-learn's seeds are 32-bit: a larger one fails deep inside a fit.
SEED = {"type": "integer", "minimum": 0, "maximum": 4294967295}
LANGUAGE = {"type": "string", "pattern": "^[a-z]{2,3}$"}
# Word n-grams longer than 10 words are no use to a language model (KenLM's default build
# stops at 6); without a bound an order of 3000 took 3 GB on a two-line text.
NGRAM_ORDER = {"type": "integer", "minimum": 1, "maximum": 10}
SHARE = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
POSITIVE = {"type": "integer", "minimum": 1}
NON_NEGATIVE = {"type": "integer", "minimum": 0}


def finite_float(text: str) -> float:
    """argparse type of a real number: `nan` and `inf` parse as floats and pass every bound
    (a learning rate of nan trains on NaN gradients), so they are refused, as in the config."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not of type 'number'") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _convert(schema: dict, text: str):
    json_type = schema["type"]
    if json_type == "number":
        return finite_float(text)
    try:
        if json_type == "integer":
            return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not of type {json_type!r}") from None
    return text


def violation(schema: dict, value) -> str | None:
    """What is wrong with `value` under `schema` (jsonschema's wording), or None."""
    if "minimum" in schema and value < schema["minimum"]:
        return f"{value!r} is less than the minimum of {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{value!r} is greater than the maximum of {schema['maximum']}"
    if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
        return (f"{value!r} is less than or equal to the minimum of "
                f"{schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and not value < schema["exclusiveMaximum"]:
        return (f"{value!r} is greater than or equal to the maximum of "
                f"{schema['exclusiveMaximum']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return f"{value!r} does not match {schema['pattern']!r}"
    return None


def schema_type(schema: dict, name: str):
    """The argparse type of an option whose config key has `schema`; `.schema` keeps it for the
    test that compares it with config/schema.yaml."""
    def parse(text: str):
        value = _convert(schema, text)
        problem = violation(schema, value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    parse.__name__ = name
    parse.schema = schema
    return parse


def schema_list_type(schema: dict, name: str):
    """A comma-separated list, each item checked by `schema` (`--languages en,de`)."""
    item = schema_type(schema, name)

    def parse(text: str) -> list:
        values = [item(part.strip()) for part in text.split(",") if part.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"{text!r} names no {name}")
        return values

    parse.__name__ = f"{name} list"
    parse.schema = schema
    return parse


seed = schema_type(SEED, "seed")
language = schema_type(LANGUAGE, "language")
language_list = schema_list_type(LANGUAGE, "language")
ngram_order = schema_type(NGRAM_ORDER, "n-gram order")
positive = schema_type(POSITIVE, "positive integer")
non_negative = schema_type(NON_NEGATIVE, "non-negative integer")
