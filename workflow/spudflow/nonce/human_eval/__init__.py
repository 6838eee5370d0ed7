"""Human evaluation kit (Arps et al. 2024, section 3.2, Tables 1-2): annotation sheets of
original / SPUD / rule-free POS-only (posfree) triplets, and the tables from filled sheets."""

# The two nonce methods the annotators compare, in the order of the paper's tables.
COMPARED = ("spud", "posfree")
GRAMMATICAL = ("yes", "no", "unsure")
# Which nonce sentence is syntactically closer to the original, as the sheet asks it.
CLOSER = ("A", "B", "equal", "unsure")
