"""Every Parquet file one stage hands to another, defined once: columns, types, nullability.

Writers go through `core.contract.write_artifact`, readers through `core.contract.read_artifact`;
the column tables of docs/*.md are rendered from these definitions (core/artifact_docs.py, checked
by tests/test_artifacts.py). Bump an artifact's `version` when its columns change, so that files
written by an older spudflow are rejected with a message instead of read wrongly; then regenerate
the snapshot (`python -m spudflow.core.schema_snapshot --write`; tests/test_schema_snapshot.py
fails until then, and fails on a change without a bump). Values inside list and struct columns
are not nullable unless a column's `null_inside` says so.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from spudflow.core.contract import Artifact, Column

STR, I8, I32, I64, F64, BOOL = pa.string(), pa.int8(), pa.int32(), pa.int64(), pa.float64(), \
    pa.bool_()
STR_LIST = pa.list_(pa.string())


def col(name: str, dtype: pa.DataType, doc: str, null: bool = False) -> Column:
    return Column(name, dtype, null, doc)


# --- ingest -----------------------------------------------------------------------------------
# v2: column token_type (docs/glossary.md)
TREEBANK_TOKENS = Artifact("treebank_tokens", "ingest", open=True, version=2,
                           key=("sent_index", "token_index"), doc=(
    "`results/ingest/{treebank}/{split}/tokens.parquet`: one row per CoNLL-U token line."),
    columns=(
    col("sent_index", I32, "0-based position of the sentence in the file"),
    col("sent_id", STR, "from `# sent_id = …`", True),
    col("token_index", I32, "0-based position of the line within its sentence"),
    col("line", I32, "1-based line number in the source file"),
    col("token_type", STR, "`word`, `mwt` (multiword-token range such as `3-4`) or `empty` "
        "(empty node such as `8.1`)"),
    col("id", STR, "the ID field as written"),
    col("word_index", I32, "word: its ID; mwt: first ID of the range; empty: the integer part"),
    col("mwt_end", I32, "mwt: last ID of the range", True),
    col("empty_minor", I32, "empty: the part after the dot", True),
    col("form", STR, "FORM as written (`_` kept)"),
    col("lemma", STR, "LEMMA as written"),
    col("upos", STR, "UPOS as written"),
    col("xpos", STR, "XPOS as written"),
    col("feats", STR, "FEATS as written (the UD string)"),
    col("head", I32, "HEAD; null where the field is `_` (mwt and empty rows)", True),
    col("deprel", STR, "DEPREL as written"),
    col("deps", STR, "DEPS as written"),
    col("misc", STR, "MISC as written"),
), extra=(
    col("orig_form", STR, "nonce treebanks: FORM in the input (for a multiword token: its "
        "original surface)"),
    col("orig_lemma", STR, "nonce treebanks: LEMMA in the input"),
    col("replaced", BOOL, "nonce treebanks: the word was replaced; false for mwt and empty rows, "
        "kept words and function words a language rule changed (those have `form != orig_form`)"),
))

TREEBANK_SENTENCES = Artifact("treebank_sentences", "ingest", open=True, key=("sent_index",),
                              doc=(
    "`results/ingest/{treebank}/{split}/sentences.parquet`: one row per sentence."), columns=(
    col("sent_index", I32, "joins with `tokens.sent_index`"),
    col("sent_id", STR, "from `# sent_id = …`", True),
    col("text", STR, "from `# text = …`", True),
    col("comments", STR_LIST, "every comment line, in order, as written"),
    col("newdoc", STR, "`# newdoc id = X` → `X`; bare `# newdoc` → `\"\"`; absent → null", True),
    col("newpar", STR, "likewise for `# newpar`", True),
    col("line", I32, "line number of the sentence's first line"),
    col("n_words", I32, "syntactic words (integer IDs)"),
    col("n_tokens", I32, "surface tokens: multiword-token ranges count once, their words not"),
), extra=(
    col("orig_text", STR, "nonce treebanks: `text` of the input", True),
    col("short", BOOL, "nonce treebanks: `n_words < 4`"),
))

# The columns the nonce stage adds to a treebank (the extras above): a nonce treebank has them all.
NONCE_TOKEN_COLUMNS = tuple(c.name for c in TREEBANK_TOKENS.extra)
NONCE_SENTENCE_COLUMNS = tuple(c.name for c in TREEBANK_SENTENCES.extra)

UPOS_TAGS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
             "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X")

TREEBANK_STATS = Artifact("treebank_stats", "ingest", key=("treebank", "split"), doc=(
    "`results/stats/{treebank}/{split}.parquet` (`spudflow stats`): one row per split; "
    "`results/tables/treebank_stats.*` stacks them."), columns=(
    col("treebank", STR, "the treebank's name in the config"),
    col("split", STR, "the split's name in the config"),
    col("language", STR, "the treebank's language code"),
    col("sentences", I64, "sentences"),
    col("words", I64, "syntactic words"),
    col("tokens", I64, "surface tokens (multiword-token ranges count once)"),
    col("mwts", I64, "multiword-token ranges"),
    col("empty_nodes", I64, "empty nodes"),
    col("word_types", I64, "distinct word forms (case-sensitive)"),
    col("type_token_ratio", F64, "word_types / words; null for a split without words", True),
    *[col(f"upos_{tag}", I64, f"words tagged {tag}") for tag in UPOS_TAGS],
    col("upos_other", I64, "words with any other UPOS value (e.g. `_`)"),
))

# --- nonce ------------------------------------------------------------------------------------
# Why a word of a replaced UPOS kept its form, a column each of nonce_stats: no_candidate (the
# context holds no other unit in the pool), no_form (other units, but none has a form with the
# word's FEATS), rule (candidates with a form, all rejected by the language hooks), protected
# (the language never replaces this word, French `ne`).
NONCE_REASONS = ("no_candidate", "no_form", "rule", "protected")

NONCE_STATS = Artifact("nonce_stats", "nonce", key=(
        "treebank", "split", "language", "method", "seed", "upos"), doc=(
    "`results/nonce/{treebank}/{split}/{method}/seed{seed}/replacement_stats.parquet`: one row "
    "per UPOS present in the split, then a row `upos = \"ALL\"` over all words."), columns=(
    col("treebank", STR, "label"),
    col("split", STR, "label"),
    col("language", STR, "label"),
    col("method", STR, "nonce method (`spud`, `pos`, `posfree`)"),
    col("seed", I32, "nonce seed"),
    col("upos", STR, "a UPOS tag, or `ALL`"),
    col("words", I64, "words (token_type `word`)"),
    col("targeted", I64, "words of a replaced UPOS"),
    col("replaced", I64, "words replaced"),
    col("adjusted", I64, "words whose form a language rule changed (a → an, le → l')"),
    *[col(reason, I64, f"targeted words kept: {reason}") for reason in NONCE_REASONS],
    col("types_orig", I64, "distinct word forms (case-sensitive) before"),
    col("types_nonce", I64, "distinct word forms (case-sensitive) after"),
    col("replacement_ratio", F64, "replaced / words"),
    col("type_token_ratio_orig", F64, "types_orig / words"),
    col("type_token_ratio_nonce", F64, "types_nonce / words"),
))

# --- items ------------------------------------------------------------------------------------
REGION_TYPE = pa.struct([("name", pa.string()), ("start", pa.int32()), ("end", pa.int32())])

ITEMS = Artifact("items", "items", open=True, key=("dataset", "item_id"), doc=(
    "`results/items/{dataset}.parquet`: one row per sentence; the base columns every dataset "
    "has, then its family's condition columns."), columns=(
    col("dataset", STR, "the dataset name (the file's stem)"),
    col("item_id", STR, "unique in the file and stable across runs: built from the input's own "
        "ids and the item's position in the dataset's design, never from random state"),
    col("group_id", STR, "the minimal pair, template or original sentence the item belongs to"),
    col("sentence", STR, "the text to score"),
    col("words", STR_LIST, "the sentence's words (see *Words* below)"),
    col("word_starts", pa.list_(I32), "character offset of each word in `sentence`"),
    col("word_ends", pa.list_(I32), "end offset (exclusive): `sentence[start:end] == word`"),
    col("label", I8, "1 grammatical / acceptable, 0 not, null when no label is claimed", True),
    col("language", STR, "ISO 639-1 code"),
    col("regions", pa.list_(REGION_TYPE), "named character spans (end exclusive) in sentence "
        "order; an empty list when none"),
))


def items_family(family: str, conditions: tuple[Column, ...], doc: str,
                 version: int = 1) -> Artifact:
    """The items of one dataset family: the base columns, then exactly these condition columns.
    Its name `items.FAMILY` also satisfies a reader of plain `items` (contract.check_schema).
    VERSION is the family's own: bump it when its condition columns change."""
    return ITEMS.extend(f"items.{family}", conditions, doc, version)


# `method` of a SPUD group's original sentence (never null: the nonce versions name theirs).
SPUD_ORIGINAL = "orig"

ITEMS_SPUD = items_family("spud", (
    col("method", STR, f"`{SPUD_ORIGINAL}`, or the nonce method (`spud`, `pos`)"),
    col("seed", I32, "nonce seed; null for the original", True),
    col("sent_index", I32, "0-based sentence position in the treebank split"),
    col("sent_id", STR, "the sentence's `sent_id`", True),
    col("n_words", I32, "syntactic words of the original sentence"),
    col("n_replaced", I32, "words the nonce method replaced; null for the original", True),
), "SPUD pairs (`spud_{treebank}_{split}`): an original sentence and its nonce versions.",
    version=2)

ITEMS_GERMAN_CASE = items_family("german_case", (
    col("template", STR, "template id"),
    col("cases", STR, "the case of np1, np2, np3, e.g. `NDA` (the template's own) or `NNA`"),
    col("positions", STR, "the NP indices in sentence order, e.g. `213`"),
    col("grammatical", BOOL, "each case used once"),
    col("violation", STR, "the doubled case (N, A or D); null when grammatical", True),
    col("animacy", STR, "the animacy flags in sentence order (e.g. `101`); null without an "
        "`animate` column", True),
), "German case templates (`german_case`).")

# The case particles an argument of a Japanese transitivity item ends in (its `arguments`).
JAPANESE_PARTICLES = ("が", "は", "を")
# The nouns of the arguments, the thesis's eleven in its order (§4.4.2: watashi, kare, hito,
# kangofu, neko, tori, ongaku, jiyuu, isu, zairyou, doa); its regression tables number them 1-11
# in this order (`arg1 id1.marker1g` is 私が first).
JAPANESE_NOUNS = ("私", "彼", "人", "看護婦", "猫", "鳥", "音楽", "自由", "椅子", "材料", "ドア")

ITEMS_JAPANESE = items_family("japanese_transitivity", (
    col("verb_pair", STR, "`transitive/intransitive`, e.g. `開ける/開く`"),
    col("pair_rank", I32, "the pair's frequency rank in the lexicon (1 = most frequent)"),
    col("pair_number", I32, "the pair's position among the lexicon's pairs (1 = its first "
        "row): the number the thesis's regression names a pair by (`verb pair id286`, its "
        "list's order)"),
    col("pair_count", I32, "the pair's frequency (transitive + intransitive count)"),
    col("verb_form", STR, "`transitive` or `intransitive`"),
    col("verb", STR, "the verb form in the sentence"),
    col("context_index", I32, "position in the context enumeration (0–7,494)"),
    col("context_label", STR, "`obligatory` or `ambiguous`"),
    col("adverbial", STR, "the adverbial; null when none", True),
    col("n_arguments", I8, "0, 1 or 2"),
    col("particles", STR, "particles in sentence order, e.g. `がを`; empty when none"),
    col("context", STR, "the context before the verb, without prefix or clause"),
    col("order", STR, "constituent order: each argument by its particle, the adverbial as "
        "`adv`, joined by `-` (e.g. `が-adv-を`; empty when none)"),
    col("arguments", STR_LIST, "noun + particle (が, は or を) per argument, sentence order"),
    col("prefix", STR, "longer: 美しい天気な日、時々; otherwise null", True),
    col("relative_clause", STR, "relative: the clause; otherwise null", True),
    col("relative_argument", I8, "relative: the 0-based argument (sentence order) the clause "
        "precedes", True),
), "Japanese transitivity pairs (`japanese_{dataset}`).", version=2)

ITEMS_COLA = items_family("cola", (
    col("split", STR, "the file's stem (`in_domain_train`, `in_domain_dev`, ...; in a "
        "phenomenon set the phenomenon: `svo`, `wh_extraction`, ...)"),
    col("source", STR, "the code of the publication the sentence comes from; null in a "
        "phenomenon set (its source column is empty)", True),
    col("phenomenon_set", BOOL, "the file is one of the paper's phenomenon sets (section 8, "
        "Table 5; pairs.cola.phenomena), not a CoLA split"),
    col("original_mark", STR, "the author's mark (`*`, `??`, `?*`, …); null when none", True),
    col("line", I32, "1-based line in the file"),
), "CoLA (`cola`).", version=2)  # v2: phenomenon_set

BLIMP_FLAGS = ("simple_LM_method", "one_prefix_method", "two_prefix_method", "lexically_identical")

ITEMS_BLIMP = items_family("blimp", (
    col("field", STR, "morphology, syntax, syntax-semantics, semantics"),
    col("linguistics_term", STR, "the phenomenon (12 values)"),
    col("UID", STR, "the paradigm"),
    col("pairID", STR, "the pair within its paradigm, as written (`\"0\"`…`\"999\"`)"),
    col("version", STR, "`good` or `bad`"),
    *[col(flag, BOOL, f"the paradigm's `{flag}` flag; null when the line lacks it", True)
      for flag in BLIMP_FLAGS],
), "BLiMP (`blimp`).")

# --- scoring ----------------------------------------------------------------------------------
TOKEN_SCORES = Artifact("token_scores", "score", version=2, key=(
        "item_id", "model", "method", "token_index"), doc=(
    "`results/scores/{dataset}/{model}/token_scores.parquet`: one row per scored token, in item "
    "order, then method order as given, then token order."), columns=(
    col("item_id", STR, "the item's id (text input: 1-based line number)"),
    col("model", STR, "model name (`--name`; in the pipeline the config key)"),
    col("method", STR, "method as requested, e.g. `pppl` or `pppl_region`"),
    col("token_index", I32, "0-based position of the token among the sentence's tokens, special "
        "tokens and the BOS prefix excluded (n-gram models: the word index)"),
    col("token", STR, "the token as the tokenizer writes it (`Ġthe`, `##ing`, `▁the`); n-gram "
        "models: the word"),
    col("char_start", I32, "start of the tokenizer's offsets into the sentence (may include a "
        "leading space, e.g. `Ġthe`)"),
    col("char_end", I32, "end (exclusive) of those offsets"),
    col("word_index", I32, "0-based index into the item's `words`; null for a token of no word",
        True),
    col("logprob", F64, "natural-log probability of the token under the method"),
    col("unseen", BOOL, "n-gram models: true when the token's word has no symbol of its own in "
        "the model (never seen in training, or fewer than min_count times) and is scored as "
        "`<unk>` or its signature; false for `</s>`; null for transformer models (their "
        "subword vocabulary covers every word)", True),
))

# Where a scores file lies: its path names its dataset (the file has no dataset column).
SCORES_LAYOUT = "results/scores/{dataset}/{model}/item_scores.parquet"


def dataset_of_scores(path: Path) -> str:
    """results/scores/{dataset}/{model}/item_scores.parquet -> dataset."""
    return path.parent.parent.name


# v3: text_hash
ITEM_SCORES = Artifact("item_scores", "score", version=3, key=(
        "item_id", "model", "method", "region"), doc=(
    "`results/scores/{dataset}/{model}/item_scores.parquet`: one row per item and method for the "
    "whole sentence (`region` null; not for `_region` methods), plus one row per named region of "
    "the item, in item order."), columns=(
    col("item_id", STR, "the item's id"),
    col("text_hash", STR, "the first 16 hex digits of the SHA-256 of the item's sentence as "
        "scored (UTF-8): a reader of items and scores refuses scores of another text under the "
        "same id"),
    col("model", STR, "model name"),
    col("method", STR, "method as requested"),
    col("region", STR, "null: the whole sentence; else the region's name (its tokens only)", True),
    col("logprob_sum", F64, "Σ logprob over the row's tokens", True),
    col("n_tokens", I32, "number of the row's tokens"),
    col("n_words", I32, "number of words (whole sentence: all words; region: words overlapping "
        "it)"),
    col("n_unseen", I32, "n-gram models: how many of the row's tokens are `unseen` "
        "(token_scores); null for transformer models and left-out items", True),
    col("ppl", F64, "exp(−logprob_sum / n_tokens) (the SPUD paper's Eq. 1–3); null when "
        "n_tokens = 0", True),
    col("mean_logprob", F64, "logprob_sum / n_tokens", True),
    col("slor", F64, "(Σ_w log P_m(w) − Σ_v log P_u(v)) / |V|: w the row's words with scored "
        "tokens (a token's word: the one it overlaps most), V those words and the row's words "
        "inside their tokens (CoLA's `can` `not` in `cannot`); the same text on both sides: a "
        "token of no word, with no unigram term, is left out of the model side too, with the "
        "unigram model of the item's language (Lau et al. 2017); null without one. `--measures "
        "lau` (n-gram models, whole sentences; region rows null): Lau et al.'s code, (Σ lp_i − "
        "Σ u_i) / (m + n) over the words and `</s>`, u_i the model's own order-1 log "
        "probability, m + n the sentence's length padded with n−1 `<s>` and `</s>`", True),
    col("word_lp_min1", F64, "min over the row's words w with scored tokens of −log P_m(w) / "
        "Σ_v log P_u(v), v: w and the words inside w's tokens only (as slor), where log P_m(w) "
        "is the sum of the logprobs of w's tokens; `--measures lau`: min over the words and "
        "`</s>` of −lp_i / u_i", True),
    col("normlp", F64, "−Σ_w log P_m(w) / Σ_v log P_u(v) over the words of slor (Lau et al.'s "
        "NormLP, division form); `--measures lau`: −Σ lp_i / Σ u_i over the words and `</s>`",
        True),
    col("skipped", STR, "null when scored; `too_long` (more input tokens than the model takes) "
        "or `no_tokens` (nothing to score) when left out; such rows have null figures", True),
))

NGRAM_MODEL = Artifact("ngram_model", "ngram-train", key=("ngram",), doc=(
    "`results/ngram/{name}.parquet`: the counts of a word n-gram model, sorted by order then "
    "n-gram; the settings (order, k, discount, lang, min_count, lowercase, unknown, kneser_ney) "
    "are JSON under the schema metadata key `spudflow.ngram`."), columns=(
    col("ngram", STR_LIST, "the n-gram, oldest word first"),
    col("count", I64, "raw count at predicted positions, every order 1 … n"),
))

# --- controls ---------------------------------------------------------------------------------
CONTROL_LOSSES = Artifact("control_losses", "control-train", key=("step",), doc=(
    "`results/controls/{name}/training_loss.parquet`: one row per optimisation step."), columns=(
    col("epoch", I32, "1-based epoch"),
    col("step", I32, "1-based optimisation step, over all epochs"),
    col("loss", F64, "the step's training loss (electra: generator + 50 × discriminator)"),
    col("generator_loss", F64, "electra: the generator's MLM loss; else null", True),
    col("discriminator_loss", F64, "electra: replaced-token detection loss (binary cross-entropy "
        "over all real tokens); else null", True),
))

# --- probe ------------------------------------------------------------------------------------
# The `baseline` of a probe on the language model itself (docs/glossary.md), beside M0, MR, MRC.
LM_BASELINE = "lm"
# A layer the sweep chooses: the value of a config layer (probe.models.MODEL.dist_layer, ...),
# of `probe train --dist-layer/--label-layer` and of the rules' {dist} and {label} wildcards.
AUTO = "auto"

PROBE_METRICS = Artifact("probe_metrics", "probe-train", version=4, key=(
        "treebank", "model", "baseline", "seed", "dist_layer", "label_layer", "eval_set"), doc=(
    "`results/probe/runs/…/metrics.parquet`: one row per eval set of a probe run."), columns=(
    col("treebank", STR, "the test treebank"),
    col("model", STR, "the model's name in the config"),
    col("baseline", STR, "`lm` (the model itself), `M0`, `MR` or `MRC`"),
    col("seed", I64, "probe seed"),
    col("dist_layer", I64, "layer of the distance probe"),
    col("label_layer", I64, "layer of the label probe"),
    col("auto_layers", BOOL, "the layers were chosen on the selection data by the layer sweep "
        "(config `auto`, `--layer-choice`), not configured"),
    col("eval_set", STR, "`orig` or `{method}/seed{N}` (`spud/seed1`)"),
    col("uas", F64, "unlabelled attachment score (fraction of words, 0–1)"),
    col("las", F64, "labelled attachment score (0–1)"),
    col("relacc", F64, "relation (label) accuracy (0–1)"),
    col("root_acc", F64, "root accuracy (0–1)"),
    col("n_words", I64, "words scored"),
    col("n_sentences", I64, "sentences scored"),
    col("n_too_long", I64, "sentences left out because one of their versions (in any eval set "
        "of the run: original or nonce) is longer than the model's limit; the same on every "
        "eval set's row, so that every eval set has the same sentences"),
    col("n_short", I64, "sentences left out for fewer than `min_words` words"),
    col("n_train_sentences", I64, "sentences trained on"),
    col("n_train_short", I64, "sentences of the training split left out as short"),
    col("n_dev_sentences", I64, "sentences selected on"),
    col("n_dev_short", I64, "sentences of the `--dev` split left out as short; 0 with "
        "`--holdout`, whose short sentences count in `n_train_short`"),
    col("best_epoch", I64, "the selected epoch"),
    col("dev_uas", F64, "UAS of the selected probe on the selection data (`--dev` split or "
        "held-out share; the same on every row of a run): the layer sweep's criterion"),
    col("dev_las", F64, "LAS on the selection data"),
    col("dev_relacc", F64, "RelAcc on the selection data"),
    col("dev_root_acc", F64, "root accuracy on the selection data"),
))

# Next to metrics.parquet: the counts behind each metrics row, per evaluated sentence, so that a
# table can resample sentences (an interval over the test set) without the predictions CoNLL-U.
PROBE_SENTENCES_FILE = "sentence_counts.parquet"
PROBE_SENTENCES = Artifact("probe_sentences", "probe-train", key=(
        "treebank", "model", "baseline", "seed", "dist_layer", "label_layer", "eval_set",
        "sent_index"), doc=(
    "`results/probe/runs/…/sentence_counts.parquet`, next to metrics.parquet: one row per eval "
    "set and evaluated sentence of a probe run; summed over an eval set's sentences, the counts "
    "give its metrics row."), columns=(
    col("treebank", STR, "the test treebank (as in metrics.parquet)"),
    col("model", STR, "the model's name in the config"),
    col("baseline", STR, "`lm`, `M0`, `MR` or `MRC`"),
    col("seed", I64, "probe seed"),
    col("dist_layer", I64, "layer of the distance probe"),
    col("label_layer", I64, "layer of the label probe"),
    col("eval_set", STR, "`orig` or `{method}/seed{N}` (as in metrics.parquet)"),
    col("sent_index", I64, "the sentence's position in its treebank (tokens.parquet "
        "sent_index): the same sentence in the original and every nonce eval set"),
    col("n_words", I64, "words scored (all, or all but PUNCT as the run's metrics)"),
    col("n_uas", I64, "of them, words with the right head"),
    col("n_relacc", I64, "words with the right label"),
    col("n_las", I64, "words with the right head and label"),
    col("root_right", BOOL, "the predicted root words are the gold ones (root accuracy)"),
))

# Next to metrics.parquet: the predicted tree of every evaluated word, the predictions CoNLL-U's
# HEAD and DEPREL in columns, so that a table reads them without parsing the text files.
PROBE_PREDICTIONS_FILE = "predictions.parquet"
PROBE_PREDICTIONS = Artifact("probe_predictions", "probe-train", key=(
        "eval_set", "sent_index", "word_index"), doc=(
    "`results/probe/runs/…/predictions.parquet`, next to metrics.parquet: one row per eval set "
    "and evaluated word of a probe run, with the predicted head and label that its "
    "`predictions/{eval set}.conllu` shows."), columns=(
    col("eval_set", STR, "`orig` or `{method}/seed{N}` (as in metrics.parquet)"),
    col("sent_index", I64, "the sentence's position in its treebank (tokens.parquet "
        "sent_index)"),
    col("word_index", I64, "the word's ID (1-based, as tokens.parquet word_index)"),
    col("form", STR, "the word's FORM in the eval set's treebank"),
    col("head", I64, "predicted HEAD (0: the root)"),
    col("deprel", STR, "predicted DEPREL (a label of the probe's label set)"),
))

PROBE_HISTORY = Artifact("probe_history", "probe-train", key=("epoch",), doc=(
    "`results/probe/runs/…/history.parquet`: one row per epoch."), columns=(
    col("epoch", I64, "1-based epoch"),
    col("train_loss", F64, "mean loss over the training sentences"),
    col("dev_loss", F64, "selection loss"),
    col("lr", F64, "learning rate during that epoch"),
))

PROBE_LAYER_CHOICE = Artifact("probe_layer_choice", "probe-select-layers", key=(
        "treebank", "model", "part"), doc=(
    "`results/probe/layers/{treebank}/{model}.parquet`: the layers the layer sweep chose for "
    "config `auto` (App. F.6), one row per probe part."), columns=(
    col("treebank", STR, "the test treebank (as in the metrics)"),
    col("model", STR, "the model's name in the config"),
    col("part", STR, "`dist` (attachment) or `label` (relation labelling)"),
    col("layer", I64, "the chosen layer"),
    col("criterion", STR, "`dev_uas` (dist) or `dev_relacc` (label): the selection-data metric "
        "maximised"),
    col("score", F64, "the criterion's mean over the probe seeds at that layer"),
    col("n_seeds", I64, "probe seeds averaged"),
    col("n_layers", I64, "layers compared (0 = embeddings up to the last)"),
))


def by_name(name: str) -> Artifact | None:
    """The stage artifact a file's metadata names (None for an unknown name)."""
    return next((a for a in STAGE_ARTIFACTS if a.name == name), None)


HUMAN_EVAL_KEY = Artifact("human_eval_key", "human-eval export", key=(
        "treebank", "split", "seed", "annotator", "item"), doc=(
    "`results/human_eval/{treebank}/{split}/answer_key.parquet`: one row per annotator and item "
    "(the row of the annotator's sheet): the triplet and which nonce method is sentence A and "
    "which is B. Kept apart from the sheets (`sheets/`), which show neither."), columns=(
    col("treebank", STR, "label"),
    col("split", STR, "label"),
    col("language", STR, "label"),
    col("seed", I64, "seed of the sample, the item order and the A/B order"),
    col("annotator", STR, "annotator name (the sheet's file name)"),
    col("item", I64, "item number on the annotator's sheet, 1..n"),
    col("sent_index", I32, "the sentence in the split"),
    col("sent_id", STR, "the sentence's sent_id", null=True),
    col("original", STR, "original sentence text"),
    col("spud", STR, "SPUD nonce text (method `spud`)"),
    col("posfree", STR, "rule-free POS-only nonce text (method `posfree`)"),
    col("sentence_a", STR, "method shown as sentence A (`spud` or `posfree`)"),
    col("sentence_b", STR, "method shown as sentence B"),
))

STAGE_ARTIFACTS = (TREEBANK_TOKENS, TREEBANK_SENTENCES, TREEBANK_STATS, NONCE_STATS, ITEMS,
                   ITEMS_SPUD, ITEMS_GERMAN_CASE, ITEMS_JAPANESE, ITEMS_COLA, ITEMS_BLIMP,
                   TOKEN_SCORES, ITEM_SCORES, NGRAM_MODEL, CONTROL_LOSSES,
                   PROBE_METRICS, PROBE_HISTORY, HUMAN_EVAL_KEY, PROBE_LAYER_CHOICE)
STAGE_ARTIFACTS += (PROBE_SENTENCES, PROBE_PREDICTIONS)
