"""Dependency relation labels the probe predicts; `root` is one of them."""

from __future__ import annotations

# The 37 universal relation types of UD v2 (no subtypes).
UD_RELATIONS = (
    "acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf", "compound",
    "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated", "expl", "fixed", "flat",
    "goeswith", "iobj", "list", "mark", "nmod", "nsubj", "nummod", "obj", "obl", "orphan",
    "parataxis", "punct", "reparandum", "root", "vocative", "xcomp",
)
ROOT = "root"

# The DepProbe reference's predict.py writes a predicted label as
# `UD_RELATION_TYPES[i] if i > 0 else 'UNK'`: index 0 of its sorted labels, `acl`, is written
# `UNK`, so a predicted `acl` never matches the gold one (RelAcc, LAS; not UAS). The SPUD paper's
# probe tables were made by that code; `--acl-predicted-as-unk` writes the same.
REFERENCE_LOST_LABEL = "acl"
REFERENCE_UNKNOWN = "UNK"


def label_of(deprel: str, subtypes: bool) -> str:
    return deprel if subtypes else deprel.split(":", 1)[0]


def as_reference_writes(label: str) -> str:
    """A predicted label as the reference's predict.py writes it (`acl` -> `UNK`)."""
    return REFERENCE_UNKNOWN if label == REFERENCE_LOST_LABEL else label


def label_set(training_deprels: list[list[str]], subtypes: bool) -> list[str]:
    """Sorted labels: the universal relations plus every label seen in training (subtypes, or
    a treebank's own relations)."""
    seen = {label_of(d, subtypes) for sentence in training_deprels for d in sentence}
    return sorted(set(UD_RELATIONS) | seen)
