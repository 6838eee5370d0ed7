"""LM scoring: token- and item-level log probabilities of sentences under causal, masked,
ELECTRA and word n-gram models (`spudflow score`, `spudflow ngram-train`). See docs/scoring.md."""
