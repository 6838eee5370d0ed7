"""Which scoring methods each model kind can do, and the `_region` variants."""

from __future__ import annotations

from spudflow.core.errors import InputError

KINDS = ("causal", "masked", "electra", "ngram")

METHODS = {
    "causal": ("ppl",),                           # every token given BOS and the tokens before it
    "masked": ("pppl", "pppl_l2r", "unmasked"),   # Salazar et al.; Kauf & Ivanova; no mask
    "electra": ("electra",),                      # discriminator's log P(original)
    "ngram": ("kn", "addk"),                      # interpolated Kneser-Ney; add-k (Laplace)
}

# What pppl_l2r counts as one word: the tokenizer's pre-tokenizer words (Kauf & Ivanova's code,
# minicons: the fast tokenizer's word_ids()) or the items' words (for SPUD, UD surface tokens).
L2R_WORDS = ("tokenizer", "items")

# `M_region`: only the tokens inside the items' named regions are scored (for masked models only
# they are masked, one at a time), and only region rows are written.
REGION_SUFFIX = "_region"


def base_method(method: str) -> str:
    return method.removesuffix(REGION_SUFFIX)


def is_region_method(method: str) -> bool:
    return method.endswith(REGION_SUFFIX)


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise InputError("--kind", None, f"unknown model kind {kind!r} (one of {', '.join(KINDS)})")
    return kind


def parse_methods(kind: str, text: str) -> list[str]:
    """`--method M[,M…]` checked against the kind; order kept, duplicates dropped."""
    methods = list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    if not methods:
        raise InputError("--method", None, "no method given")
    known = {m for ms in METHODS.values() for m in ms}
    for method in methods:
        base = base_method(method)
        if base not in known:
            raise InputError("--method", None, f"unknown method {method!r} (methods: "
                             f"{', '.join(sorted(known))}, each also as M{REGION_SUFFIX})")
        if base not in METHODS[kind]:
            raise InputError("--method", None, f"a {kind} model cannot do {method!r} (it does "
                             f"{', '.join(METHODS[kind])}, each also as M{REGION_SUFFIX})")
    return methods
