"""The choices of an n-gram model's settings and of its scoring, apart from the model code so
that the command line offers them without importing it."""

# What rare and unseen words become: one symbol <unk>, or Lau et al.'s signatures.
UNKNOWN = ("unk", "signature")
# Kneser-Ney as KenLM reads it (interpolated) or as Lau et al.'s bncpylib computes it (lau).
KNESER_NEY = ("interpolated", "lau")
# SLOR, NormLP and Word-LP Min-1 over the words with a separate unigram model (words), or as Lau
# et al.'s code computes them (lau).
MEASURES = ("words", "lau")
