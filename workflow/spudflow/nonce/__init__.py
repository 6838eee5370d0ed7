"""SPUD nonce treebanks: the same trees with content words swapped for words seen in the same
syntactic context (Arps et al., "Multilingual Nonce Dependency Treebanks"). See docs/nonce.md."""
