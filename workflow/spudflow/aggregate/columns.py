"""Where the aggregate stage finds its inputs' columns: internal name -> column name in the file.

The only place that names other stages' columns. The stage reads every input through these maps
(inputs.py renames the columns to the internal names on the left), so when an
upstream artifact's columns change, only the right-hand sides below change.
"""

from spudflow.core.artifacts import SPUD_ORIGINAL

# Items (results/items/{dataset}.parquet, artifact items.FAMILY): columns every dataset has.
ITEMS = {
    "dataset": "dataset",
    "item_id": "item_id",
    "group_id": "group_id",
    "sentence": "sentence",
    "label": "label",
    "language": "language",
}

# Condition columns per dataset family. Items of a family must have these columns; values may be
# null where the family says so (SPUD originals have no nonce seed).
SPUD_ITEMS = {
    "nonce_method": "method",  # spud | pos; SPUD_ORIGINAL_METHOD for the original of a group
    "nonce_seed": "seed",      # seed of the nonce treebank; null for the original
}
SPUD_ORIGINAL_METHOD = SPUD_ORIGINAL
# `nonce_seed` of SPUD's table rows that combine every seed (one observation per original
# sentence), which the front page reads without importing the SPUD tables' module.
SPUD_ALL_SEEDS = "all"
GERMAN_CASE_ITEMS = {
    "template": "template",
    "cases": "cases",              # case of np1, np2, np3, e.g. "NDA"
    "positions": "positions",      # NP indices in sentence order, e.g. "213"
    "grammatical": "grammatical",  # bool
    "violation": "violation",      # null or the doubled case N / A / D
    "animacy": "animacy",          # per sentence position, e.g. "110" (null without animacy data)
}
JAPANESE_ITEMS = {
    "transitivity": "verb_form",  # "transitive" | "intransitive": which verb of the pair
    "verb_pair": "verb_pair",
    "pair_number": "pair_number",        # the pair's number in the lexicon (the regression's)
    "condition": "context_label",        # "obligatory" | "ambiguous"
    "order": "order",
    "args": "arguments",                  # argument + particle per argument (list<str> or str)
    "adverbial": "adverbial",
    "relative_clause": "relative_clause",
    "relative_position": "relative_argument",
}
JAPANESE_TRANSITIVE = "transitive"
JAPANESE_OBLIGATORY = "obligatory"
JAPANESE_AMBIGUOUS = "ambiguous"
# The items' region of the verb (items stage): the thesis's verb-only mode; other regions
# (prefix, relative_clause) are no modes.
JAPANESE_VERB_REGION = "verb"

COLA_ITEMS = {
    "split": "split",    # in_domain_train | in_domain_dev | out_of_domain_dev
    "source": "source",  # null in a phenomenon set
    "phenomenon_set": "phenomenon_set",  # the file is one of section 8's phenomenon sets
}
BLIMP_ITEMS = {
    "field": "field",
    "linguistics_term": "linguistics_term",
    "uid": "UID",
    "pair_id": "pairID",
}

# Scores (results/scores/{dataset}/{model}/item_scores.parquet, artifact item_scores).
SCORES = {
    "item_id": "item_id",
    # hash of the sentence as scored (core/text_hash.py): checked against the items' sentence
    "text_hash": "text_hash",
    "model": "model",
    "method": "method",
    "logprob_sum": "logprob_sum",
    "n_tokens": "n_tokens",
    "n_words": "n_words",
    # Words of the row the model never saw in training (n-gram models); null for transformers.
    "n_unseen": "n_unseen",
    "ppl": "ppl",
    "mean_logprob": "mean_logprob",
    # Null without a unigram model for the item's language (the column is always there).
    "slor": "slor",
    "word_lp_min1": "word_lp_min1",
    "norm_lp": "normlp",
    "region": "region",  # null: the whole sentence; else the region's name (e.g. "verb")
    # null when scored; the reason (too_long, no_tokens) when left out.
    "skipped": "skipped",
}

# Probe metrics (results/probe/.../metrics.parquet, artifact probe_metrics): one row per probe
# run and eval set.
PROBE_METRICS = {
    "treebank": "treebank",
    "model": "model",
    "baseline": "baseline",        # lm (the LM itself) | M0 | MR | MRC
    "seed": "seed",
    "dist_layer": "dist_layer",    # layer of the distance probe
    "label_layer": "label_layer",  # layer of the label probe
    "auto_layers": "auto_layers",  # bool: layers chosen by the layer sweep (config `auto`)
    "eval_set": "eval_set",        # "orig", or "{nonce method}/{nonce seed}" such as "spud/seed1"
    "uas": "uas",
    "las": "las",
    "relacc": "relacc",
    "root_acc": "root_acc",
    "n_words": "n_words",
    "n_too_long": "n_too_long",    # left out of every eval set of the run alike
    "dev_uas": "dev_uas",          # selection-data metrics of the run (same on each of its rows)
    "dev_las": "dev_las",
    "dev_relacc": "dev_relacc",
    "dev_root_acc": "dev_root_acc",
}
PROBE_ORIG_EVAL_SET = "orig"
PROBE_EVAL_SET_SEPARATOR = "/"
