"""The result tables (results/tables/NAME.parquet, and their CSV / Markdown / LaTeX copies) that
the aggregate, ingest and nonce stages write and the figure commands read: columns, types and
nullability, defined once (the stage artifacts are in core/artifacts.py). `write_table` checks a
table against its definition before writing; the docs' column tables are rendered from these
(docs/aggregate.md, docs/nonce.md)."""

from __future__ import annotations

from spudflow.core.artifacts import (
    BOOL,
    F64,
    I32,
    I64,
    NONCE_REASONS,
    NONCE_STATS,
    STAGE_ARTIFACTS,
    STR,
    TREEBANK_STATS,
    col,
)
from spudflow.core.contract import Artifact, Column
from spudflow.core.outputs_registry import TABLE_OUTPUTS

TABLE_LABELS = (
    col("treebank", STR, "the treebank's name in the config"),
    col("split", STR, "the split's name in the config"),
    col("language", STR, "the treebank's language code"),
    col("method", STR, "nonce method (`spud`, `pos`, `posfree`)"),
    col("seed", I32, "nonce seed"),
)


# A row of a group that cannot be computed (aggregate/group_status.py): its numbers null, the
# status and reason say why; every other row and table is still written.
STATUS_OK, STATUS_SKIPPED, STATUS_FAILED = "ok", "skipped", "failed"
STATUS = (
    col("status", STR, "`ok`; `skipped`: the group cannot give these numbers (`reason`: e.g. too "
        "few items, one class), which are null; `failed`: computing them stopped with an error "
        "(`reason`, its traceback in the rule's log), the numbers null"),
    col("reason", STR, "why the row is not `ok`; null when it is", True),
)


# The status of a headline table's rows: `skipped` for a scoring function none of whose scores
# is usable (every one NaN, e.g. a float16 overflow, or left out), its numbers null or 0.
UNSCORED_STATUS = (
    col("status", STR, "`ok`; `skipped`: the scoring function has no usable score for these "
        "rows (`reason`: e.g. every one NaN, a float16 overflow), its numbers null, its counts 0"),
    col("reason", STR, "why the row is not `ok`; null when it is", True),
)


# The dataset and scoring function a row of a scores table is about.
DATASET_SCORING = (
    col("dataset", STR, "items dataset"),
    col("model", STR, "scoring model"),
    col("method", STR, "scoring method"),
)

# Key columns (core/contract.py `key`) that several tables' rows share: no two rows of a table
# have the same values in its key, or a doubled row would be counted twice by a reader.
DATASET_SCORING_KEY = ("dataset", "model", "method")
SCORING_FUNCTION = ("model", "method")
SPUD_PAIR_SET = ("dataset", "language", "nonce_method")
JAPANESE_MODE_KEY = ("dataset", "model", "method", "region")
PROBE_CONFIGURATION = ("treebank", "model", "baseline", "dist_layer", "label_layer",
                       "auto_layers")


def unseen_fraction_col(where: str) -> Column:
    """The fraction of a row's scored words its n-gram model never saw (aggregate/coverage.py)."""
    return col("unseen_fraction", F64, f"fraction of the scored words {where} that the model never "
               "saw in training (item_scores n_unseen / n_words; n-gram models; null for "
               "transformers, whose subwords spell every word)", True)


def table(name: str, producer: str, doc: str, columns: tuple[Column, ...], **options) -> Artifact:
    return Artifact(name, producer, columns=columns, open=options.pop("open", False),
                    doc=f"`results/tables/{name}.*`: {doc}", **options)


# --- nonce and treebank tables ----------------------------------------------------------------
NONCE_REPLACEMENT_RATIO = table("nonce_replacement_ratio", "table-nonce-ratio", (
    "one row per treebank, split, method and seed (paper Table 7 layout); after `targeted`, "
    "one float64 column per replaced UPOS present (`ADJ`, `ADV`, `NOUN`, `PROPN`, `VERB`): the "
    "fraction of the words of that UPOS replaced, null in a row whose split was made without "
    "that UPOS (`nonce.splits`)."), columns=(
    *TABLE_LABELS,
    col("words", I64, "words (token_type `word`)"),
    col("targeted", I64, "words of a replaced UPOS"),
    col("replaced", I64, "words replaced"),
    col("total", F64, "replaced / all words, function words included"),
    *[col(f"unreplaced_{reason}", I64, f"targeted words kept: {reason}")
      for reason in NONCE_REASONS],
    col("adjusted", I64, "words whose form a language rule changed (a → an, le → l')"),
), open=True, keep_order=True, key=tuple(c.name for c in TABLE_LABELS))

NONCE_TYPE_TOKEN_RATIO = table("nonce_type_token_ratio", "table-nonce-ttr", (
    "type-token ratio of word forms (the default) or of a tokenizer's tokens in the original and "
    "the nonce treebank (paper Table 8 layout; the paper counts mBERT tokens), per split and, "
    "for a treebank with two splits or more, pooled over them (`split` names the splits "
    "pooled, `train+dev+test`: the distinct units of all of them together, the reading Table "
    "8's values support, App. D)."), columns=(
    *TABLE_LABELS,
    col("splits", I64, "splits counted: 1 for a split's own row, 2 or more for a pooled row"),
    col("words", I64, "words (token_type `word`)"),
    col("unit", STR, "what is counted: `word forms`, or `tokens of SOURCE` (config "
        "`nonce.ttr_tokenizer`, each word tokenized on its own)"),
    col("tokens_orig", I64, "units in the original words (word forms: = words)"),
    col("tokens_nonce", I64, "units in the nonce words (word forms: = words)"),
    col("types_orig", I64, "distinct units before (word forms: case-sensitive; tokens: ids)"),
    col("types_nonce", I64, "distinct units after"),
    col("ttr_orig", F64, "types_orig / tokens_orig"),
    col("ttr_nonce", F64, "types_nonce / tokens_nonce"),
), version=4, key=tuple(c.name for c in TABLE_LABELS))

# --- human evaluation kit (docs/nonce.md, "Human evaluation") ----------------------------------
HUMAN_EVAL_HEAD = (
    col("treebank", STR, "the treebank's name in the config"),
    col("split", STR, "the split's name in the config"),
    col("language", STR, "the treebank's language code"),
    col("annotators", I64, "annotators whose answers are counted (a sheet all of whose items are "
        "stale counts none)"),
    col("sentences", I64, "triplets judged in the counted items (the sample's, less those stale "
        "on every sheet)"),
)
HUMAN_EVAL_AGREEMENT = (
    col("kappa", F64, "Cohen's kappa between the annotators (mean over pairs, each on the "
        "sentences both judged); null with one annotator, no pair sharing a sentence, or where "
        "undefined (both gave one and the same answer throughout)", null=True),
    col("agreement", F64, "fraction of equal answers between the annotators (mean over pairs); "
        "null with one annotator or no pair sharing a sentence", null=True),
)
# Items of a filled sheet whose sentences are no longer the answer key's (an edited treebank
# sentence, a nonce version drawn again) are left out and counted, never a dead job
# (nonce/human_eval/tables.py).
HUMAN_EVAL_STATUS = (
    col("stale_items", I64, "items of the filled sheets left out because their sentences (the "
        "original, or the A/B nonce sentences the annotator saw) are no longer the answer key's; "
        "re-annotate them from the new blank sheet `human-eval export` writes beside the filled "
        "one"),
    col("stale", STR, "the stale items per annotator and why (`annotator1, items 1, 4: original "
        "changed`; `nonce sentence changed`); null when there are none", True),
    col("status", STR, "`ok`: the numbers are over the items counted; `skipped`: every item is "
        "stale, the numbers null"),
    col("reason", STR, "why the row is not `ok`; null when it is", True),
)

HUMAN_EVAL_GRAMMATICALITY = table("human_eval_grammaticality", "human-eval tables", (
    "grammaticality judgments of the SPUD and the rule-free POS-only (posfree) nonce sentences "
    "(paper Table 1 layout): percent yes / no / unsure, the mean over annotators; kappa pooled "
    "over both nonce sentences of every triplet (most likely the paper's single κ per language) "
    "and per method (the originals are judged but, as in the paper, left out)."), columns=(
    *HUMAN_EVAL_HEAD,
    *[col(f"{method}_{answer}", F64, f"percent of {method} sentences judged `{answer}`; null "
          "when `skipped`", null=True)
      for method in ("spud", "posfree") for answer in ("yes", "no", "unsure")],
    *HUMAN_EVAL_AGREEMENT,
    *[col(f"kappa_{method}", F64, f"Cohen's kappa on the {method} sentences alone (mean over "
          "pairs); null as kappa", null=True) for method in ("spud", "posfree")],
    *HUMAN_EVAL_STATUS,
), version=3, key=("treebank", "split"))

HUMAN_EVAL_PREFERENCE = table("human_eval_preference", "human-eval tables", (
    "which nonce sentence is syntactically closer to the original (paper Table 2 layout): "
    "percent of triplets, the mean over annotators."), columns=(
    *HUMAN_EVAL_HEAD,
    col("equal", F64, "percent judged equally close; null when `skipped`", True),
    col("spud", F64, "percent where the SPUD sentence is closer; null when `skipped`", True),
    col("posfree", F64, "percent where the posfree sentence is closer; null when `skipped`",
        True),
    col("unsure", F64, "percent unsure; null when `skipped`", True),
    *HUMAN_EVAL_AGREEMENT,
    *HUMAN_EVAL_STATUS,
), version=2, key=("treebank", "split"))
HUMAN_EVAL_TABLES = (HUMAN_EVAL_GRAMMATICALITY, HUMAN_EVAL_PREFERENCE)

# --- aggregate tables -------------------------------------------------------------------------
def bootstrap_interval(what: str, over: str) -> tuple[Column, ...]:
    """The ends of a bootstrap interval of `what` (its method in a column of its own)."""
    return (
        col(f"{what}_ci_low", F64, f"lower end of {what}'s bootstrap interval at "
            f"aggregate.uncertainty.level over {over} (null with aggregate.uncertainty.resamples "
            "0 or no value)", True),
        col(f"{what}_ci_high", F64, "upper end of that interval", True),
    )


INTERVAL_METHOD = ("the bootstrap intervals' method: `bca`, or `percentile` where BCa is not "
                   "defined; null with no interval")

QUARTILE_INTERVALS = (
    *bootstrap_interval("ratio_q1", "original sentences, each with all its nonce versions"),
    *bootstrap_interval("ratio_median", "original sentences (as ratio_q1)"),
    *bootstrap_interval("ratio_q3", "original sentences (as ratio_q1)"),
    col("ratio_interval", STR, f"{INTERVAL_METHOD} (one method for the three quartiles: "
        "percentile unless BCa is defined for all)", True),
)

SPUD_RATIO_SUMMARY = table("spud_ratio_summary", "table-spud-scores", (
    "per language, nonce method, seed, scoring function, with and without outliers"), columns=(
    col("dataset", STR, "items dataset"),
    col("language", STR, "the items' language"),
    col("nonce_method", STR, "`spud` or `pos`"),
    col("nonce_seed", STR, "seed of the nonce versions, or `all`: every seed, one geometric-mean "
        "ratio per original"),
    col("n_seeds", I64, "seeds combined (1 on per-seed rows; on `all` rows the most seeds "
        "combined for one original)"),
    col("outliers", STR, "`kept`: every observation; `removed`: without those with r > "
        "outlier_threshold (§4.4)"),
    col("outlier_threshold", F64, "the threshold (config `aggregate.spud_outlier_threshold`)"),
    col("n_dropped", I64, "observations above the threshold left out (0 on `kept` rows)"),
    col("model", STR, "scoring model"),
    col("method", STR, "scoring method (`ppl`, `pppl`, `pppl_l2r`, `unmasked`, …)"),
    *UNSCORED_STATUS,
    col("n_pairs", I64, "sentence pairs (original, nonce) summarised; on `all` rows original "
        "sentences"),
    col("ratio_q1", F64, "first quartile of r = ppl(nonce) / ppl(orig); null when n_pairs = 0 "
        "(every observation an outlier)", True),
    col("ratio_median", F64, "median of r (null as above)", True),
    col("ratio_q3", F64, "third quartile of r (null as above)", True),
    *QUARTILE_INTERVALS,
    col("ratio_mean", F64, "mean of r (null as above)", True),
    col("fraction_ratio_gt1", F64, "fraction of pairs with r > 1 (nonce more perplexing; null as "
        "above)", True),
    col("tie_fraction", F64, "fraction of pairs with r = 1 exactly: the scoring function cannot "
        "tell the nonce sentence from its original (`all`: every seed's pair tied; null as "
        "above)", True),
    unseen_fraction_col("of the pairs' sentences (each original once; outliers included)"),
    col("ppl_orig_median", F64, "median perplexity of the original sentences (null as above)",
        True),
    col("ppl_nonce_median", F64, "median perplexity of the nonce sentences (`all`: of their "
        "per-original geometric means; null as above)", True),
    # v6: the quartiles' intervals
), version=6, key=(*SPUD_PAIR_SET, "nonce_seed", "outliers", *SCORING_FUNCTION))

SPUD_WILCOXON = table("spud_wilcoxon", "table-spud-scores", (
    "one row per two scoring functions, seed and outlier handling"), columns=(
    col("dataset", STR, "items dataset"),
    col("language", STR, "the items' language"),
    col("nonce_method", STR, "`spud` or `pos`"),
    col("nonce_seed", STR, "seed of the nonce versions, or `all`: every seed, one geometric-mean "
        "ratio per original"),
    col("n_seeds", I64, "seeds combined (1 on per-seed rows; on `all` rows the most seeds "
        "combined for one original)"),
    col("outliers", STR, "`kept`: every observation; `removed`: without those with r_a or r_b > "
        "outlier_threshold (§4.4)"),
    col("outlier_threshold", F64, "the threshold (config `aggregate.spud_outlier_threshold`)"),
    col("n_dropped", I64, "observations with r_a or r_b above the threshold left out (0 on "
        "`kept` rows)"),
    col("model_a", STR, "first scoring function: model"),
    col("method_a", STR, "first scoring function: method"),
    col("model_b", STR, "second scoring function: model"),
    col("method_b", STR, "second scoring function: method"),
    col("n_pairs", I64, "pairs both functions scored and kept (on `all` rows: original "
        "sentences)"),
    col("median_ratio_difference", F64, "median of r_a − r_b; null without pairs", True),
    col("fraction_a_greater", F64, "fraction of pairs with r_a > r_b; null without pairs", True),
    col("statistic", F64, "Wilcoxon signed-rank statistic (scipy)", True),
    col("p_value", F64, "its two-sided p-value", True),
), version=3, key=(
    *SPUD_PAIR_SET, "nonce_seed", "outliers", "model_a", "method_a", "model_b", "method_b"))

SPUD_EXTREMES = table("spud_extremes", "table-spud-scores", (
    "highest and lowest ratios (Tables 12–13)"), columns=(
    col("dataset", STR, "items dataset"),
    col("language", STR, "the items' language"),
    col("nonce_method", STR, "`spud` or `pos`"),
    col("model", STR, "scoring model"),
    col("method", STR, "scoring method"),
    col("extreme", STR, "`highest` or `lowest`"),
    col("rank", I64, "1 = the most extreme"),
    col("nonce_seed", STR, "seed of the nonce version"),
    col("group_id", STR, "the original sentence's group"),
    col("ratio", F64, "r = ppl(nonce) / ppl(orig)"),
    col("ppl_orig", F64, "perplexity of the original"),
    col("ppl_nonce", F64, "perplexity of the nonce sentence"),
    col("orig_sentence", STR, "the original sentence"),
    col("nonce_sentence", STR, "the nonce sentence"),
), key=(*SPUD_PAIR_SET, *SCORING_FUNCTION, "extreme", "rank"))

SPUD_OUTLIERS = table("spud_outliers", "table-spud-scores", (
    "pairs with r_PPL above / below two thresholds (Tables 12–13 layout)"), columns=(
    col("dataset", STR, "items dataset"),
    col("language", STR, "the items' language (the paper's tables: `en`)"),
    col("nonce_method", STR, "`spud` or `pos`"),
    col("ppl_model", STR, "the causal model (method `ppl`) whose r_PPL selects the pair"),
    col("mlm_model", STR, "a masked model scored (`pppl` and/or `pppl_l2r`) on the dataset; null "
        "when there is none", True),
    col("extreme", STR, "`above`: r_PPL > the upper threshold (Table 12); `below`: r_PPL < the "
        "lower one (Table 13)"),
    col("threshold", F64, "that threshold (config `aggregate.spud_outliers_above` / `_below`)"),
    col("rank", I64, "1 = the highest r_PPL (`above`) / the lowest (`below`)"),
    col("nonce_seed", STR, "seed of the nonce version"),
    col("group_id", STR, "the original sentence's group"),
    col("orig_sentence", STR, "the original sentence, verbatim"),
    col("nonce_sentence", STR, "the nonce sentence, verbatim"),
    col("r_pppl", F64, "mlm_model's pppl(nonce) / pppl(orig) of the same pair; null when it did "
        "not score both sentences with `pppl`", True),
    col("r_pppl_l2r", F64, "likewise with `pppl_l2r`", True),
    col("r_ppl", F64, "ppl_model's ppl(nonce) / ppl(orig)"),
), key=(*SPUD_PAIR_SET, "ppl_model", "mlm_model", "extreme", "rank"))

SPUD_RATIOS = table("spud_ratios", "table-spud-scores", (
    "every pair (data of the box plots)"), columns=(
    col("dataset", STR, "items dataset"),
    col("language", STR, "the items' language"),
    col("nonce_method", STR, "`spud` or `pos`"),
    col("nonce_seed", STR, "seed of the nonce version"),
    col("model", STR, "scoring model"),
    col("method", STR, "scoring method"),
    col("group_id", STR, "the pair's group"),
    col("orig_item_id", STR, "item_id of the original"),
    col("nonce_item_id", STR, "item_id of the nonce sentence"),
    col("ppl_orig", F64, "perplexity of the original"),
    col("ppl_nonce", F64, "perplexity of the nonce sentence"),
    col("ratio", F64, "ppl_nonce / ppl_orig"),
    col("log_ratio", F64, "natural log of ratio"),
    col("orig_sentence", STR, "the original sentence"),
    col("nonce_sentence", STR, "the nonce sentence"),
), key=(*SPUD_PAIR_SET, "nonce_seed", *SCORING_FUNCTION, "nonce_item_id"))

# Intervals of a mean over templates and of a pooled AUC (german_case.py, delong.py).
AUC_MEAN_INTERVAL = (
    col("auc_mean_ci_low", F64, "lower end of auc_mean's bootstrap interval at "
        "aggregate.uncertainty.level, the templates resampled (null with fewer than two "
        "templates or aggregate.uncertainty.resamples 0)", True),
    col("auc_mean_ci_high", F64, "upper end of that interval", True),
    col("auc_mean_interval", STR, "the bootstrap interval's method: `bca`, or `percentile` "
        "where BCa is not defined (every resample equal); null with no interval", True),
)

AUC_POOLED_INTERVAL = (
    col("auc_pooled_ci_low", F64, "lower end of auc_pooled's DeLong interval at "
        "aggregate.uncertainty.level (normal, clipped to [0, 1] as R pROC's; the sentences taken "
        "as independent; null with fewer than two sentences of a class)", True),
    col("auc_pooled_ci_high", F64, "upper end of that interval", True),
    col("auc_pooled_stderr", F64, "DeLong's standard error of auc_pooled", True),
)

GERMAN_CASE_AUC = table("german_case_auc", "table-german-case", (
    "per scoring function"), columns=(
    *DATASET_SCORING,
    *UNSCORED_STATUS,
    col("analysis", STR, "`all`: 36 grammatical vs 108 violations per template; `restricted`: "
        "only the original assignment (NDA) among the grammatical sentences, all violations"),
    col("n_templates", I64, "templates with an AUC"),
    col("auc_mean", F64, "mean ROC AUC over templates (the paper's figure); null unless `ok`",
        True),
    col("auc_sd", F64, "sample sd over templates (null for one template)", True),
    *AUC_MEAN_INTERVAL,
    col("auc_pooled", F64, "ROC AUC of all templates' sentences in one ROC (the reference "
        "notebook src/analyse_results.ipynb); null without both classes", True),
    *AUC_POOLED_INTERVAL,
    col("tie_fraction", F64, "of the pairs the AUCs compare (a grammatical sentence and a "
        "violation of the same template), the fraction with equal log-probabilities (each "
        "counts 1/2 in the AUC)", True),
    unseen_fraction_col("of the analysis's sentences"),
    # v2: auc_pooled, tie_fraction, unseen_fraction; v3: status, reason; v4: intervals
), version=4, key=(*DATASET_SCORING_KEY, "analysis"))

GERMAN_CASE_AUC_TEMPLATES = table("german_case_auc_templates", "table-german-case", (
    "per template"), columns=(
    *DATASET_SCORING,
    col("template", STR, "template id"),
    col("analysis", STR, "`all` or `restricted` (as above)"),
    col("n_grammatical", I64, "grammatical sentences (positives)"),
    col("n_violation", I64, "violations (negatives)"),
    col("auc", F64, "roc_auc_score of logprob_sum; null without both classes", True),
), key=(*DATASET_SCORING_KEY, "template", "analysis"))

GERMAN_CASE_AUC_VIOLATION = table("german_case_auc_violation", "table-german-case", (
    "per violation type (the paper's per-violation AUC table; restricted to the original case "
    "assignment: its plausible-sentences table)"),
    columns=(
    *DATASET_SCORING,
    col("analysis", STR, "`all`: the 36 grammatical sentences of a template (the per-violation "
        "AUC table); `restricted`: only the 6 in the original assignment (NDA), the plausible ones "
        "(the plausible-sentences table)"),
    col("violation", STR, "the doubled case: `N`, `A` or `D`"),
    col("n_templates", I64, "templates"),
    col("auc_mean", F64, "mean over templates of the AUC of the grammatical sentences against "
        "the 36 violations doubling this case (the per-violation AUC table's number; for "
        "`restricted` our reading of the plausible-sentences table, `auc_pooled` the other)"),
    col("auc_sd", F64, "sample sd over templates", True),
    *AUC_MEAN_INTERVAL,
    col("auc_pooled", F64, "the same sentences of all templates in one ROC (the reference "
        "notebook src/analyse_results.ipynb); null without both classes", True),
    *AUC_POOLED_INTERVAL,
), version=4, key=(*DATASET_SCORING_KEY, "analysis", "violation"))  # v3: auc_pooled; v4: intervals

GERMAN_CASE_ANIMACY = table("german_case_animacy", "table-german-case", (
    "per case (the paper's animacy table)"), columns=(
    *DATASET_SCORING,
    col("case", STR, "`N`, `A` or `D`"),
    col("animacy_from", STR, "`positions`: np1 and np2 animate, np3 inanimate (the reference's "
        "definition); `flags`: the templates' `animate` flags"),
    col("n_templates", I64, "templates with a 1-vs-6 AUC of a grammatical sentence with this "
        "case on an animate NP and of one with it on an inanimate NP"),
    col("n_animate", I64, "grammatical sentences whose NP in this case is animate, summed over "
        "those templates"),
    col("n_inanimate", I64, "those whose NP in this case is inanimate"),
    col("auc_animate", F64, "mean over templates of the mean 1-vs-6 AUC of the animate ones"),
    col("auc_inanimate", F64, "the same of the inanimate ones"),
    col("difference_mean", F64, "mean over templates of animate minus inanimate (the paper's "
        "figure: positive, the case is preferred on an animate NP)"),
    col("difference_sd", F64, "sample sd over templates", True),
    # v3: the reference's 1-vs-6 difference (v2: AUC of animate vs inanimate)
), version=3, key=(*DATASET_SCORING_KEY, "case", "animacy_from"))

GERMAN_CASE_ORDER = table("german_case_order", "table-german-case", (
    "per case order"), columns=(
    *DATASET_SCORING,
    col("grammatical", BOOL, "grammatical sentences or violations"),
    col("case_order", STR, "the NPs' cases in sentence order, e.g. `DNA` (from `cases` and "
        "`positions`)"),
    col("n_items", I64, "sentences"),
    col("logprob_mean", F64, "mean logprob_sum"),
    col("logprob_sd", F64, "sample sd", True),
), key=(*DATASET_SCORING_KEY, "grammatical", "case_order"))

GERMAN_CASE_ORDER_AUC = table("german_case_order_auc", "table-german-case", (
    "per case order and position of the violation (the paper's word-order figure)"), columns=(
    *DATASET_SCORING,
    col("comparison", STR, "`one_vs_six`: each grammatical sentence in this case order "
        "against its six one-case violations in the same NP order (the reference's 1-vs-6, "
        "the paper's word-order figure), averaged; `one_vs_six_first_case`: the same by the "
        "first NP's case; "
        "`order_vs_other_orders`: the grammatical sentences in one case order against those in "
        "the other five orders (0.5 = no preference); "
        "`order_vs_violations`: those in one case order against all violations; "
        "`violation_position`: all grammatical sentences against the violations whose doubled "
        "case is at these positions; `violation_order`: all grammatical sentences against the "
        "violations in one case order"),
    col("subset", STR, "the case order in the sentence (e.g. `NAD`, `NNA`), for "
        "`one_vs_six_first_case` the first NP's case, for `violation_position` the 1-based "
        "sentence positions of the doubled case (`12`, `13`, `23`)"),
    col("n_templates", I64, "templates with an AUC"),
    col("n_positive", I64, "positives (1-vs-6: grammatical sentences), summed over templates"),
    col("n_negative", I64, "negatives (1-vs-6: their scored violations), summed over templates"),
    col("auc_mean", F64, "mean template AUC (1-vs-6: of the template's mean over its sentences)"),
    col("auc_sd", F64, "sample sd over templates", True),
    # v3: one_vs_six, one_vs_six_first_case replace order_vs_all_orders
), version=3, key=(*DATASET_SCORING_KEY, "comparison", "subset"))

GERMAN_CASE_ROC = table("german_case_roc", "table-german-case", (
    "ROC curve points (data of the figure)"), columns=(
    *DATASET_SCORING,
    col("fpr", F64, "false positive rate (violations scored ≥ threshold)"),
    col("tpr", F64, "true positive rate (grammatical scored ≥ threshold)"),
    col("threshold", F64, "logprob_sum threshold (the first is +inf)"),
    col("auc", F64, "AUC of all templates pooled"),
), key=(*DATASET_SCORING_KEY, "threshold"))

# Intervals over the held-out sentences with the folds' thresholds as fitted (cola.py).
COLA_ACCURACY_INTERVAL = (
    col("accuracy_ci_low", F64, "lower end of accuracy's Wilson score interval over the held-out "
        "sentences at aggregate.uncertainty.level, the folds' thresholds as fitted (null unless "
        "`ok`)", True),
    col("accuracy_ci_high", F64, "upper end of that interval", True),
    col("accuracy_stderr", F64, "lm-eval's standard error of accuracy: sample sd of the 0/1 "
        "outcomes over sqrt(n) (null with fewer than two sentences)", True),
)

MCC_INTERVAL = (
    col("mcc_ci_low", F64, "lower end of mcc's bootstrap interval at "
        "aggregate.uncertainty.level: the held-out sentences resampled, each with its label and "
        "prediction, the folds' thresholds as fitted (null with a null mcc, fewer than two "
        "sentences or aggregate.uncertainty.resamples 0)", True),
    col("mcc_ci_high", F64, "upper end of that interval", True),
    col("mcc_interval", STR, "the bootstrap interval's method: `bca`, or `percentile` where BCa "
        "is not defined (every resample equal); null with no interval", True),
)

COLA_CROSS_VALIDATED = (
    col("n_items", I64, "labelled items with this score (a finite one)"),
    col("n_acceptable", I64, "of which acceptable (label 1)"),
    *STATUS,
    col("folds", I64, "cross-validation folds used (min(folds, n_items)); null unless `ok` "
        "(`skipped`: fewer than 2 items)", True),
    col("accuracy", F64, "accuracy of the held-out predictions; null unless `ok`", True),
    *COLA_ACCURACY_INTERVAL,
    col("mcc", F64, "Matthews correlation of the held-out predictions; null when the labels "
        "are of one class (a fit that is still `ok`: its accuracy stands) or unless `ok`", True),
    *MCC_INTERVAL,
    col("threshold_mean", F64, "mean of the folds' thresholds; null when a fold's threshold "
        "is ±inf (it called every sentence one class) or unless `ok`", True),
)

COLA_THRESHOLDS = table("cola_thresholds", "table-cola", (
    "per normalisation and split (Table 4)"), columns=(
    *DATASET_SCORING,
    col("split", STR, "CoLA split (`in_domain_dev`, `out_of_domain_dev`, …)"),
    col("normalisation", STR, "`LogProb`, `MeanLP`, `NormLP`, `SLOR` or `Word-LP Min-1`"),
    *COLA_CROSS_VALIDATED,
    col("tie_fraction", F64, "of the pairs of an acceptable and an unacceptable sentence of the "
        "split, the fraction with equal scores (no threshold separates them; null when the "
        "labels are of one class)", True),
    unseen_fraction_col("of the split's sentences"),
), version=5, key=(*DATASET_SCORING_KEY, "split", "normalisation"))  # v5: intervals

COLA_PHENOMENA = table("cola_phenomena", "table-cola", (
    "per normalisation and phenomenon set (section 8, Table 5); each set cross-validated on "
    "its own"), columns=(
    *DATASET_SCORING,
    col("normalisation", STR, "`LogProb`, `MeanLP`, `NormLP`, `SLOR` or `Word-LP Min-1`"),
    col("phenomenon", STR, "the phenomenon set's file stem (`svo`, `wh_extraction`, "
        "`inchoative`, `singular_pl`, `reflexive`)"),
    *COLA_CROSS_VALIDATED,
), version=3, key=(*DATASET_SCORING_KEY, "normalisation", "phenomenon"))  # v3: intervals

COLA_SOURCES = table("cola_sources", "table-cola", (
    "per normalisation, split and source (section 7): the split's held-out predictions "
    "grouped by the source column"), columns=(
    *DATASET_SCORING,
    col("split", STR, "CoLA split (`in_domain_dev`, `out_of_domain_dev`, …)"),
    col("normalisation", STR, "`LogProb`, `MeanLP`, `NormLP`, `SLOR` or `Word-LP Min-1`"),
    col("source", STR, "the publication code (`ad03`, `r-67`, …)"),
    col("n_items", I64, "labelled items of this source with this score"),
    col("n_acceptable", I64, "of which acceptable (label 1)"),
    col("accuracy", F64, "accuracy of the held-out predictions"),
    *COLA_ACCURACY_INTERVAL,
    col("mcc", F64, "Matthews correlation of the held-out predictions; null when the "
        "source's labels are of one class", True),
    *MCC_INTERVAL,
), version=2, key=(*DATASET_SCORING_KEY, "split", "normalisation", "source"))  # v2: intervals

def accuracy_interval(what: str = "accuracy", of: str = "pairs") -> tuple[Column, ...]:
    """Wilson's interval of a proportion of independent items and lm-eval's stderr beside it."""
    return (
        col(f"{what}_ci_low", F64, f"lower end of {what}'s Wilson score interval over {of} at "
            "aggregate.uncertainty.level (null when there is none)", True),
        col(f"{what}_ci_high", F64, "upper end of that interval", True),
        col(f"{what}_stderr", F64, f"lm-eval's standard error of {what}: sample sd of the 0/1 "
            f"outcomes over sqrt(n) (null with fewer than two {of})", True),
    )


PARADIGM_MEAN_INTERVAL = (
    col("paradigm_mean_accuracy_ci_low", F64, "lower end of paradigm_mean_accuracy's bootstrap "
        "interval at aggregate.uncertainty.level, the scored pairs resampled within each paradigm "
        "(null with aggregate.uncertainty.resamples 0)", True),
    col("paradigm_mean_accuracy_ci_high", F64, "upper end of that interval", True),
    col("paradigm_mean_interval", STR, "the bootstrap interval's method: `bca`, or `percentile` "
        "where BCa is not defined (every resample equal); null with no interval", True),
)

BLIMP_OVERALL = table("blimp_overall", "table-blimp", (
    "per scoring function"), columns=(
    *DATASET_SCORING,
    *UNSCORED_STATUS,
    col("n_paradigms", I64, "paradigms (UIDs) with an accuracy (at least one pair scored)"),
    col("n_pairs", I64, "pairs with both sentences scored (ties included)"),
    col("n_correct", I64, "pairs with logprob(good) > logprob(bad)"),
    col("n_ties", I64, "pairs with equal scores (counted wrong)"),
    col("n_skipped", I64, "skipped pairs: a sentence not scored (no row, or `skipped` / null "
        "logprob_sum); not in n_pairs"),
    col("accuracy", F64, "n_correct / n_pairs (null when n_pairs = 0)", True),
    *accuracy_interval(),
    col("paradigm_mean_accuracy", F64, "unweighted mean of the n_paradigms paradigms' "
        "accuracies", True),
    *PARADIGM_MEAN_INTERVAL,
    col("tie_fraction", F64, "n_ties / n_pairs: pairs the scoring function cannot tell apart (null "
        "when n_pairs = 0)", True),
    unseen_fraction_col("of the n_pairs pairs"),
), version=4, key=DATASET_SCORING_KEY)  # v4: intervals

BLIMP_FIELD = table("blimp_field", "table-blimp", (
    "per field"), columns=(
    *DATASET_SCORING,
    col("field", STR, "BLiMP field"),
    col("n_paradigms", I64, "paradigms in the field with an accuracy"),
    col("n_pairs", I64, "pairs with both sentences scored"),
    col("n_correct", I64, "correct pairs"),
    col("n_ties", I64, "tied pairs (counted wrong)"),
    col("n_skipped", I64, "skipped pairs (not in n_pairs)"),
    col("accuracy", F64, "n_correct / n_pairs (null when n_pairs = 0)", True),
    *accuracy_interval(),
    col("paradigm_mean_accuracy", F64, "unweighted mean of the field's paradigm accuracies", True),
    *PARADIGM_MEAN_INTERVAL,
), version=2, key=(*DATASET_SCORING_KEY, "field"))  # v2: intervals

BLIMP_PARADIGM = table("blimp_paradigm", "table-blimp", (
    "per paradigm"), columns=(
    *DATASET_SCORING,
    col("field", STR, "BLiMP field"),
    col("linguistics_term", STR, "phenomenon"),
    col("uid", STR, "paradigm (BLiMP UID)"),
    col("n_pairs", I64, "pairs with both sentences scored"),
    col("n_correct", I64, "correct pairs"),
    col("n_ties", I64, "tied pairs (counted wrong)"),
    col("n_skipped", I64, "skipped pairs (not in n_pairs)"),
    col("accuracy", F64, "n_correct / n_pairs (null when every pair is skipped)", True),
    *accuracy_interval(),
), version=2, key=(*DATASET_SCORING_KEY, "uid"))  # v2: intervals

JAPANESE_ACCURACY = table("japanese_accuracy", "table-japanese-transitivity", (
    "per dataset and scoring mode"), columns=(
    col("dataset", STR, "items dataset (base, rare, longer, relative clauses)"),
    col("model", STR, "scoring model"),
    col("method", STR, "scoring method"),
    col("region", STR, "null: whole sentence; `verb`: verb-only mode (no other regions)", True),
    col("decision", STR, "`perplexity` (lower perplexity preferred; the thesis's rule, §4.5) or "
        "`logprob_sum`"),
    *UNSCORED_STATUS,
    col("n_obligatory", I64, "obligatory pairs"),
    col("accuracy_obligatory", F64, "fraction of obligatory pairs preferring the transitive "
        "verb", True),
    *accuracy_interval("accuracy_obligatory", "obligatory pairs"),
    col("n_ties_obligatory", I64, "obligatory pairs with equal scores (count as not "
        "preferring the transitive verb, i.e. wrong)"),
    col("n_ambiguous", I64, "ambiguous pairs"),
    col("transitive_rate_ambiguous", F64, "fraction of ambiguous pairs preferring the transitive "
        "verb", True),
    col("n_ties", I64, "pairs with equal scores, obligatory and ambiguous (count as "
        "intransitive)"),
    col("tie_fraction_obligatory", F64, "n_ties_obligatory / n_obligatory: obligatory pairs the "
        "mode cannot tell apart (null without obligatory pairs)", True),
    unseen_fraction_col("of the obligatory pairs (in the mode's span: the verb alone in verb-only "
                     "modes)"),
), version=5, key=JAPANESE_MODE_KEY)  # v5: intervals

JAPANESE_AGREEMENT = table("japanese_agreement", "table-japanese-transitivity", (
    "every ordered pair of modes"), columns=(
    col("dataset", STR, "items dataset"),
    col("mode_a", STR, "`model/method` (whole sentence) or `model/method@verb` (verb-only)"),
    col("mode_b", STR, "likewise (the full matrix, diagonal included)"),
    col("decision", STR, "`perplexity` or `logprob_sum` (as in `japanese_accuracy`)"),
    col("n_pairs", I64, "pairs both modes scored"),
    col("agreement", F64, "fraction of pairs with the same preferred verb; null when the two modes "
        "share no pair", True),
    col("kappa", F64, "Cohen's kappa (null when both modes always choose the same verb)", True),
    *bootstrap_interval("kappa", "the pairs both modes scored (the same for (a, b) and (b, a))"),
    col("kappa_interval", STR, f"{INTERVAL_METHOD}; null also where a resample has no kappa "
        "(both modes constant on it)", True),
), version=2, key=("dataset", "mode_a", "mode_b"))  # v2: kappa's interval

JAPANESE_MODE = (
    *DATASET_SCORING,
    col("region", STR, "null: whole sentence; `verb`: verb-only mode", True),
    col("decision", STR, "`perplexity` or `logprob_sum` (as in `japanese_accuracy`)"),
)

JAPANESE_REGRESSION = table("japanese_regression", "table-japanese-transitivity", (
    "one glmnet fit per mode (thesis §5.7)"), columns=(
    *JAPANESE_MODE,
    col("n_pairs", I64, "pairs in the regression"),
    col("n_features", I64, "columns of R's model.matrix for the thesis's formula, the "
        "intercept column left out (180 for 50 verb pairs and every order, adverbial, noun and "
        "marker: the thesis's 181 coefficients with the intercept)"),
    col("lambda_choice", STR, "`lambda.1se` (coef()'s default) or `lambda.min` "
        "(`aggregate.regression.lambda_choice`)"),
    *STATUS,
    col("n_lambdas", I64, "lambdas on the path of the fit on all pairs (at most n_lambda: "
        "glmnet ends it early, `path_end`); null unless `ok`", True),
    col("path_end", STR, "why that path ended early, as glmnet's: `devmax` (the deviance "
        "explained passed 0.999), `fdev` (it grew by less than 1e-5), `saturated` (every fitted "
        "probability 0 or 1), `maxit` (IRLS did not converge at the next lambda); null when it "
        "ran its length", True),
    col("lambda", F64, "the penalty of the coefficients: lambda_1se or lambda_min", True),
    col("lambda_min", F64, "the path's lambda with the lowest cross-validated deviance", True),
    col("lambda_1se", F64, "the largest lambda within one standard error of that deviance",
        True),
    col("cv_deviance", F64, "mean held-out binomial deviance over the folds at lambda", True),
    col("cv_deviance_se", F64, "its standard error (cv.glmnet's cvsd)", True),
    col("cv_accuracy_mean", F64, "mean held-out accuracy over the same folds at lambda (the "
        "folds also chose lambda)", True),
    col("cv_accuracy_sd", F64, "its sample sd over the folds", True),
    col("intercept", F64, "intercept of the fit on all pairs", True),
    # v4: status, path_end; n_features counts R's model.matrix columns
), version=4, key=JAPANESE_MODE_KEY)


def _coefficients(name: str, sign: str, tables: str) -> Artifact:
    return table(name, "table-japanese-transitivity", (
        f"the largest {sign} coefficients per mode (thesis {tables})"), columns=(
        *JAPANESE_MODE,
        *STATUS,
        col("rank", I64, f"1 = the largest {sign} coefficient; null in the one row of a fit "
            f"without a {sign} coefficient or not `ok`", True),
        col("feature", STR, "the column as R's model.matrix names it (treatment contrasts): "
            "`verb_pair_id12` (the pair's number in the lexicon, the items' `pair_number`), "
            "`COwgav` (constituent order: g が, h は, w を, a adverbial, v verb), `adverbialよく`, "
            "`arg1_id4` (the first argument's noun by the thesis's number, 4 = 看護婦), "
            "`marker1w`, `arg1_id1:marker1g` (私が first), `relative_clause…`, "
            "`relative_position2`, or `(Intercept)`", True),
        col("coefficient", F64, "coefficient of the fit on all pairs at the chosen lambda, "
            "original scale (positive: favours the transitive verb)", True),
        col("tied_with_next", BOOL, "the coefficient is within 1e-4 of the next one of its sign "
            "(listed or not): a fit converged differently could swap their ranks; null where "
            "rank is", True),
    ), version=4, key=(*JAPANESE_MODE_KEY, "rank"))  # v4: tied_with_next


JAPANESE_REGRESSION_MAX = _coefficients("japanese_regression_max", "positive",
                                        "Tables 4 and 6")
JAPANESE_REGRESSION_MIN = _coefficients("japanese_regression_min", "negative",
                                        "Tables 5 and 7")

JAPANESE_LENGTH_CORRELATION = table("japanese_length_correlation", "table-japanese-transitivity", (
    "sentence length against perplexity per dataset and mode (thesis §3.2, §4.5)"), columns=(
    *DATASET_SCORING,
    col("n_sentences", I64, "scored whole sentences (transitive and intransitive)"),
    col("min_tokens", I64, "shortest sentence, in the model's tokens"),
    col("max_tokens", I64, "longest sentence"),
    col("pearson_r", F64, "Pearson's r of token count and perplexity (scipy.stats.pearsonr); "
        "null when either is constant", True),
    col("pearson_p", F64, "its two-sided p-value", True),
    col("spearman_rho", F64, "Spearman's rho (scipy.stats.spearmanr); null when either is "
        "constant", True),
    col("spearman_p", F64, "its two-sided p-value", True),
), key=DATASET_SCORING_KEY)

JAPANESE_LENGTH_PERPLEXITY = table("japanese_length_perplexity", "table-japanese-transitivity", (
    "perplexity per sentence length (data of the length figure)"), columns=(
    *DATASET_SCORING,
    col("n_tokens", I64, "sentence length in the model's tokens"),
    col("n_sentences", I64, "scored whole sentences of that length"),
    col("ppl_q1", F64, "first quartile of perplexity (linear interpolation)"),
    col("ppl_median", F64, "median perplexity"),
    col("ppl_q3", F64, "third quartile of perplexity"),
), key=(*DATASET_SCORING_KEY, "n_tokens"))

# A probe run's eval set without words has no score (the probe writes 0 there): its means are
# null, never a mean of fewer runs than n_runs counts.
NO_WORDS = "; null when an eval set of the runs has no words (all its sentences too short)"

def _sentence_intervals(*parts: tuple[str, str]) -> tuple[Column, ...]:
    """The probe tables' intervals over test sentences (aggregate/probe_intervals.py)."""
    columns = []
    for prefix, what in parts:
        for metric in ("relacc", "uas", "las"):
            columns += [
                col(f"{prefix}{metric}_mean_ci_low", F64, f"lower end of the interval of "
                    f"{prefix}{metric}_mean at aggregate.uncertainty.level: a bootstrap over the "
                    f"test sentences, each with all its versions, {what} recomputed on every "
                    "run (null with aggregate.uncertainty.resamples 0 or no value)", True),
                col(f"{prefix}{metric}_mean_ci_high", F64, "upper end of that interval", True),
            ]
    return (*columns, col("interval", STR, f"{INTERVAL_METHOD} (one method for the row's "
                          "intervals: percentile unless BCa is defined for all)", True))


PROBE_SUMMARY = table("probe_summary", "table-probe", (
    "per probe configuration and eval set"), columns=(
    col("treebank", STR, "treebank probed"),
    col("model", STR, "LM"),
    col("baseline", STR, "`lm` (the LM itself), `M0`, `MR` or `MRC`"),
    col("dist_layer", I64, "layer of the distance probe"),
    col("label_layer", I64, "layer of the label probe"),
    col("auto_layers", BOOL, "the layers were chosen by the layer sweep (config `auto`); such "
        "runs are apart from a sweep run on the same layers"),
    col("eval_set", STR, "`orig` or the nonce method (`spud`, `pos`): its eval sets pooled "
        "over nonce seeds"),
    col("n_runs", I64, "rows averaged (probe seeds × nonce seeds)"),
    *[c for m, what in (("relacc", "relation accuracy"), ("uas", "UAS"), ("las", "LAS"),
                        ("root_acc", "root accuracy"))
      for c in (col(f"{m}_mean", F64, what + NO_WORDS, True),
                col(f"{m}_sd", F64, "its sample sd", True))],
    col("delta_relacc_mean", F64, "Δ RelAcc = orig − nonce of the same run (null on `orig` "
        "rows)", True),
    col("delta_relacc_sd", F64, "its sample sd", True),
    col("delta_uas_mean", F64, "Δ UAS", True),
    col("delta_uas_sd", F64, "its sample sd", True),
    col("delta_las_mean", F64, "Δ LAS", True),
    col("delta_las_sd", F64, "its sample sd", True),
    *_sentence_intervals(("", "the figure"), ("delta_", "the Δ")),
), version=5, key=(*PROBE_CONFIGURATION, "eval_set"))  # v5: intervals over sentences

def _probe_side_by_side():
    """orig, nonce and Δ mean/sd columns of RelAcc, UAS and LAS (probe_languages)."""
    columns = []
    for metric, label in (("relacc", "RelAcc"), ("uas", "UAS"), ("las", "LAS")):
        columns += [
            col(f"orig_{metric}_mean", F64, f"{label} on the original test set{NO_WORDS}",
                True),
            col(f"orig_{metric}_sd", F64, "its sample sd over probe seeds", True),
            col(f"nonce_{metric}_mean", F64, f"{label} on the nonce versions (null without "
                "nonce sets)", True),
            col(f"nonce_{metric}_sd", F64, "its sample sd over probe seeds × nonce seeds", True),
            col(f"delta_{metric}_mean", F64, f"Δ {label} = orig − nonce of the same probe run "
                "(the paper's drop)", True),
            col(f"delta_{metric}_sd", F64, "its sample sd", True),
        ]
    return tuple(columns)


PROBE_LANGUAGES = table("probe_languages", "table-probe", (
    "across languages: per treebank, model, baseline, layers and nonce method (Tables 3, 4, "
    "14–16)"), columns=(
    col("treebank", STR, "treebank probed (its task in probe.tasks; one per language)"),
    col("model", STR, "LM"),
    col("baseline", STR, "`lm` (the LM itself: Tables 3/4), `M0` (Table 14), `MRC` (Table 15) or "
        "`MR` (Table 16)"),
    col("dist_layer", I64, "layer of the distance probe"),
    col("label_layer", I64, "layer of the label probe"),
    col("auto_layers", BOOL, "the layers were chosen by the layer sweep (`auto`, App. F.6)"),
    col("nonce", STR, "nonce method (`spud`, `pos`); null when the runs had no nonce set", True),
    col("n_probe_seeds", I64, "probe runs (seeds) averaged on the original set"),
    col("n_nonce_runs", I64, "rows averaged on the nonce sets (probe seeds × nonce seeds)",
        True),
    col("n_too_long", I64, "test sentences left out of the original and every nonce set alike "
        "because one of their versions is longer than the model's limit (most over the runs)"),
    *_probe_side_by_side(),
    *_sentence_intervals(("orig_", "the original set's"), ("nonce_", "the nonce sets'"),
                         ("delta_", "the Δ, paired by sentence,")),
), version=5, key=(*PROBE_CONFIGURATION, "nonce"))  # v5: intervals over sentences


PROBE_LAYERS = table("probe_layers", "table-probe", (
    "per layer (App. F.6)"), version=4, columns=(
    col("treebank", STR, "treebank probed"),
    col("model", STR, "LM"),
    col("baseline", STR, "`lm`, `M0`, `MR` or `MRC`"),
    col("layer", I64, "the layer both probe parts read"),
    col("eval_set", STR, "`dev` (the selection data the layers are chosen on), `orig`, `spud` or "
        "`pos`"),
    col("n_runs", I64, "rows averaged"),
    col("relacc_mean", F64, f"mean relation accuracy{NO_WORDS}", True),
    col("uas_mean", F64, f"mean UAS{NO_WORDS}", True),
    col("las_mean", F64, f"mean LAS{NO_WORDS}", True),
    col("root_acc_mean", F64, f"mean root accuracy{NO_WORDS}", True),
    col("dist_chosen", BOOL, "the layer sweep's best layer for the distance probe (a "
        "`--layer-choice` file; what a `dist_layer: auto` uses)"),
    col("label_chosen", BOOL, "the layer sweep's best layer for the label probe (what a "
        "`label_layer: auto` uses)"),
), key=("treebank", "model", "baseline", "layer", "eval_set"))

PROBE_EDGES = table("probe_edges", "table-probe-edges", (
    "per probe configuration, eval set and edge direction (App. F.7, Tables 21–22)"), columns=(
    col("treebank", STR, "treebank probed"),
    col("model", STR, "LM"),
    col("baseline", STR, "`lm` (the LM itself), `M0`, `MR` or `MRC`"),
    col("dist_layer", I64, "layer of the distance probe"),
    col("label_layer", I64, "layer of the label probe"),
    col("auto_layers", BOOL, "the layers were chosen by the layer sweep (config `auto`)"),
    col("eval_set", STR, "`orig` or the nonce method (`spud`, `pos`): its eval sets pooled "
        "over nonce seeds"),
    col("direction", STR, "where the gold head stands: `left` (before the word), `right` "
        "(after it) or `root` (head 0)"),
    col("n_runs", I64, "rows averaged (probe seeds × nonce seeds)"),
    col("n_edges_mean", F64, "words of this direction scored, mean over the runs"),
    col("fraction_mean", F64, "fraction of the scored words with this direction (Table 21)", True),
    col("fraction_sd", F64, "its sample sd", True),
    *[c for m, what in (("relacc", "relation accuracy"), ("uas", "UAS"), ("las", "LAS"))
      for c in (col(f"{m}_mean", F64, f"{what} on these edges (Table 22); null when a run has "
                    "none", True), col(f"{m}_sd", F64, "its sample sd", True))],
    *[c for m in ("relacc", "uas", "las")
      for c in (col(f"delta_{m}_mean", F64, f"Δ {m} = orig − nonce of the same run (null on "
                    "`orig` rows)", True), col(f"delta_{m}_sd", F64, "its sample sd", True))],
), version=3, key=(*PROBE_CONFIGURATION, "eval_set", "direction"))

AGGREGATE_TABLES = (
    SPUD_RATIO_SUMMARY, SPUD_WILCOXON, SPUD_EXTREMES, SPUD_OUTLIERS, SPUD_RATIOS, GERMAN_CASE_AUC,
    GERMAN_CASE_AUC_TEMPLATES, GERMAN_CASE_AUC_VIOLATION, GERMAN_CASE_ANIMACY, GERMAN_CASE_ORDER,
    GERMAN_CASE_ORDER_AUC, GERMAN_CASE_ROC, COLA_THRESHOLDS, COLA_PHENOMENA, COLA_SOURCES,
    BLIMP_OVERALL, BLIMP_FIELD, BLIMP_PARADIGM, JAPANESE_ACCURACY, JAPANESE_AGREEMENT,
    JAPANESE_REGRESSION, JAPANESE_REGRESSION_MAX, JAPANESE_REGRESSION_MIN,
    JAPANESE_LENGTH_CORRELATION, JAPANESE_LENGTH_PERPLEXITY, PROBE_SUMMARY, PROBE_LANGUAGES,
    PROBE_LAYERS, PROBE_EDGES,
)

# Tables defined by their registry entry (core/outputs_registry.py: its columns, key and what a
# row is), as a table added to a dataset family may be.
REGISTRY_TABLES = tuple(table(o.name, o.command, o.rows, tuple(o.columns), key=o.key,
                              version=o.version)
                        for o in TABLE_OUTPUTS.values() if o.columns)

# Tables that stack a stage artifact unchanged keep its definition.
TABLES: dict[str, Artifact] = {
    "treebank_stats": TREEBANK_STATS,
    "nonce_replacements": NONCE_STATS,
    **{a.name: a for a in (NONCE_REPLACEMENT_RATIO, NONCE_TYPE_TOKEN_RATIO, *HUMAN_EVAL_TABLES,
                           *AGGREGATE_TABLES, *REGISTRY_TABLES)},
}
TABLE_ARTIFACTS = (NONCE_REPLACEMENT_RATIO, NONCE_TYPE_TOKEN_RATIO, *HUMAN_EVAL_TABLES,
                   *AGGREGATE_TABLES, *REGISTRY_TABLES)
ALL_ARTIFACTS = STAGE_ARTIFACTS + TABLE_ARTIFACTS
