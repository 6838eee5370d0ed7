"""SPUD nonce treebanks: the same trees with content words swapped for words seen in the same
syntactic context (Arps et al., "Multilingual Nonce Dependency Treebanks"). See docs/nonce.md."""

# The UPOS tags replaced by default (content words; function words, AUX, PUNCT and NUM never).
DEFAULT_UPOS = ("NOUN", "PROPN", "ADJ", "ADV", "VERB")
