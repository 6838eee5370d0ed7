"""The scoring methods: one entry each, the one list everything else is made from.

The scoring stage scores a method with the function its entry names (`score`), and checks
`--method` and builds `score --help` from the list; config/schema.yaml's methods of each kind and
docs/scoring.md's table of methods are rendered from it (`python -m
spudflow.core.scoring_methods [--check] config/schema.yaml docs/scoring.md`, checked by
tests/test_scoring_methods.py); the aggregate stage reads a method's role in a table from its
entry, never from its name. It lives in core because two stages read it.

A new method is its scoring function, one line below and its test.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from spudflow.core import rendered_blocks

KINDS = ("causal", "masked", "electra", "ngram")

# The SPUD outlier table (Tables 12–13) sets the ratio of a causal model's method beside the
# ratios of a masked model's methods, each in a column `r_METHOD`.
OUTLIER_CAUSAL = "causal"
OUTLIER_MASKED = "masked"


@dataclass(frozen=True)
class Method:
    name: str
    kind: str
    scores: str        # per-token log probability, for docs/scoring.md (Markdown)
    score: str         # "module:function" of the scoring stage that scores it
    # whose words config `scoring.l2r_words` chooses (so the setting is passed to its jobs and
    # keys its scores)
    l2r_words: bool = False
    outliers: str | None = None   # OUTLIER_CAUSAL | OUTLIER_MASKED: its column of the outlier table


SCORING_METHODS = (
    Method("ppl", "causal", "log P(t_i \\| BOS, t_1 … t_{i-1}): every token, the first one given "
           "the BOS token (EOS for tokenizers without BOS, as lm-eval does). One pass per "
           "sentence, batched with right padding.", "spudflow.scoring.causal:score_ppl",
           outliers=OUTLIER_CAUSAL),
    Method("pppl", "masked", "log P(t_i \\| sentence with t_i masked) (Salazar et al. 2020).",
           "spudflow.scoring.masked:score_pppl", outliers=OUTLIER_MASKED),
    Method("pppl_l2r", "masked", "as `pppl`, but the tokens to the right of t_i within the same "
           "word are masked too (Kauf & Ivanova 2023, \"within-word l2r\"). Words are the "
           "tokenizer's own by default, as in Kauf & Ivanova's code and minicons; `--l2r-words "
           "items` (config `scoring.l2r_words`) takes the items' words instead (\"pppl_l2r's "
           "words\", below).", "spudflow.scoring.masked:score_pppl_l2r", l2r_words=True,
           outliers=OUTLIER_MASKED),
    Method("unmasked", "masked", "log P(t_i \\| the unmasked sentence): one pass per sentence.",
           "spudflow.scoring.masked:score_unmasked"),
    Method("electra", "electra", "log P(t_i is original) = log sigmoid(−logit_i) of the "
           "discriminator, one pass over the unmasked sentence.",
           "spudflow.scoring.electra:score_electra"),
    Method("kn", "ngram", "interpolated Kneser–Ney word probability (below).",
           "spudflow.scoring.ngram_scorer:score_kn"),
    Method("addk", "ngram", "add-k (Laplace for k = 1) word probability.",
           "spudflow.scoring.ngram_scorer:score_addk"),
)
BY_NAME = {m.name: m for m in SCORING_METHODS}

# `M_region`: only the tokens inside the items' named regions are scored (for masked models only
# they are masked, one at a time), and only region rows are written.
REGION_SUFFIX = "_region"


def base_method(method: str) -> str:
    return method.removesuffix(REGION_SUFFIX)


def is_region_method(method: str) -> bool:
    return method.endswith(REGION_SUFFIX)


def methods_of(kind: str) -> tuple[str, ...]:
    return tuple(m.name for m in SCORING_METHODS if m.kind == kind)


def uses_l2r_words(methods: Iterable[str]) -> bool:
    """Whether any of `methods` (with or without REGION_SUFFIX) takes `scoring.l2r_words`."""
    return any(BY_NAME[base_method(m)].l2r_words for m in methods if base_method(m) in BY_NAME)


def outlier_methods(role: str) -> tuple[str, ...]:
    return tuple(m.name for m in SCORING_METHODS if m.outliers == role)


def by_kind() -> str:
    """`causal: ppl; masked: pppl, …` for help texts."""
    return "; ".join(f"{kind}: {', '.join(methods_of(kind))}" for kind in KINDS)


def render_docs() -> str:
    lines = ["| kind | method | per-token log probability (natural log) |", "|---|---|---|"]
    lines += [f"| {m.kind} | `{m.name}` | {m.scores} |" for m in SCORING_METHODS]
    return "\n".join(lines) + "\n"


def render_schema() -> str:
    """The `allOf` clauses of config/schema.yaml's `models` that give each kind its methods."""
    clauses = []
    for kind in KINDS:
        names = methods_of(kind)
        enum = ", ".join([*names, *(n + REGION_SUFFIX for n in names)])
        clauses.append(f"        - if: {{properties: {{kind: {{const: {kind}}}}}}}\n"
                       f"          then: {{properties: {{methods: {{items: {{enum: [{enum}]}}}}}}}}"
                       "\n")
    return "".join(clauses)


# Markers around the rendered text: a Markdown comment in docs, a YAML comment in the schema.
BLOCKS = (
    (re.compile(r"(<!-- scoring methods -->\n)(.*?)(<!-- /scoring methods -->)", re.S),
     render_docs),
    (re.compile(r"( *# scoring methods: rendered from core/scoring_methods\.py\n)(.*?)"
                r"( *# /scoring methods)", re.S), render_schema),
)


def rewrite(text: str) -> str:
    return rendered_blocks.rewrite(text, BLOCKS)


def main(argv: Iterable[str] | None = None) -> int:
    return rendered_blocks.main(argv, BLOCKS, "scoring methods",
                                "python -m spudflow.core.scoring_methods",
                                "Render the scoring methods into files.", require=True)


if __name__ == "__main__":
    sys.exit(main())
