"""Every result table and figure, once: the rule and `spudflow` command that make it, its
caption and report category, what it reproduces, which input feeds it and, for the few tables
that may have no rows on sound inputs, when (`empty_when`: every other table has a row per group
at least, a group that cannot be computed included). The rules (rule all's targets, the table and
figure rules, the report entries), the aggregate CLI's table and figure commands, the front
page's links, the docs' lists (docs/aggregate.md) and the tests' expectations read it;
tests/test_outputs_registry.py fails when a table, figure, artifact or caption has no entry here,
or an entry lacks one of them.

A table's caption is written once, in its entry (`caption`, a str.format template whose fields
its command fills from its options and data): the LaTeX caption of NAME.tex and the report's
caption (NAME.caption.rst, written beside the table at run time, with a line on the data the
rule read) both come from it. The nonce stage's and the human evaluation's tables keep their
report captions in report/NAME.rst.

Adding a table to a dataset family: its entry here (_table: name, what it reproduces, caption,
`function`, the "module.function" that computes it from the family's items and scores
(keywords `items`, `scores`, and any of its command's options it names, e.g. `examples`; its
caption has no fields to fill), and `columns` and `key`, its
artifact), its function, and its test. Per-item data (_data) is written as Parquet and CSV
unless its entry's `formats` says Parquet alone (a file too large for a CSV); its function may
return aggregate/outputs.TableParts, written as computed. Its rule (the family's), command (the
family's), report entry, artifact (core/table_artifacts.TABLES) and docs rows follow.

Adding a figure: its entry here (_figure), its function in aggregate/figures.py and its caption
report/NAME_figure.rst (or the entry's `caption_file`). Its rule, command, report entry, docs row
and tests follow from the entry.

`python -m spudflow.core.outputs_registry [--check] DOCS...` rewrites (or checks) the docs'
lists: the block between `<!-- outputs -->` and `<!-- /outputs -->` (every output) and the one
between `<!-- figures -->` and `<!-- /figures -->` (the figures, what each shows).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.artifacts import BOOL, F64, I8, I64, STR, col
from spudflow.core.comparison_columns import (
    SCORING_FUNCTION_SIDES,
    comparison_columns,
    comparison_key,
)

# An output's type: a table (results/tables/NAME.{parquet,csv,md,tex}, its CSV in the report),
# per-item data behind a figure (NAME.{parquet,csv} by default, not in the report) or a figure
# (results/figures/NAME.{png,svg}, its SVG in the report).
TABLE, DATA, FIGURE = "table", "data", "figure"
TABLE_FORMATS = ("parquet", "csv", "md", "tex")
# Per-item data: too long for Markdown or LaTeX. An entry whose CSV would be too large to open
# (the Japanese preset's every pair and mode: about a gigabyte) names Parquet alone.
DATA_FORMATS = ("parquet", "csv")
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "md": "Markdown", "tex": "LaTeX"}
# What feeds an output besides the dataset families (core/dataset_families.py): the ingested
# treebanks, the nonce treebanks, the human evaluation's filled sheets, the probe runs.
TREEBANKS, NONCE, HUMAN_EVAL, PROBE = "treebanks", "nonce", "human_eval", "probe"


@dataclass(frozen=True)
class Output:
    name: str
    output_type: str  # TABLE, DATA or FIGURE
    stage: str  # the stage whose rules make it (rules/<stage>.smk)
    rule: str
    command: str  # the `spudflow` subcommand the rule runs
    category: str | None  # report category; None: not in the report (DATA)
    reproduces: str  # the paper's table, figure or section
    feed: str  # a dataset family or TREEBANKS, NONCE, HUMAN_EVAL, PROBE
    table: str | None = None  # a figure: the table it draws (its artifact)
    caption_file: str | None = None  # report/…; default NAME.rst, a figure's NAME_figure.rst
    # a figure: its function in aggregate/figures.py; a table: "module.function" under
    # spudflow.aggregate that computes it from its family's items and scores (None: its
    # command's writer computes it with the family's other tables)
    function: str | None = None
    front_page: bool = False  # a figure linked from its paper's front-page section
    what: str = ""  # a figure: what it shows, in a line (its command's help)
    shows: str = ""  # a figure: what it shows, in detail (the docs' list of figures)
    # a table that may have no rows on sound inputs: when (None: it always has rows, one per
    # group at least, a group that cannot be computed included, aggregate/group_status.py)
    empty_when: str | None = None
    # a table: its caption, a str.format template its command fills (LaTeX and report caption;
    # "" for the tables whose report caption is report/NAME.rst)
    caption: str = ""
    # a table defined here rather than in core/table_artifacts.py: its columns (core.contract
    # Column), the key that names a row, and what a row is (the artifact's doc)
    columns: tuple = ()
    key: tuple[str, ...] = ()
    rows: str = ""
    version: int = 1  # of a table defined here: its artifact's version (core/contract.py)
    # a table's or data's files under results/tables (NAME.FORMAT), the first the rule's target
    formats: tuple[str, ...] = ()

    @property
    def report_caption(self) -> str | None:
        """The report's caption of the output, a path from the workflow's root: a table's
        NAME.caption.rst (written with it from its caption), or a file under report/ (None for
        DATA)."""
        if self.output_type == DATA:
            return None
        if self.output_type == TABLE and self.caption:
            return f"results/tables/{self.name}.caption.rst"
        suffix = "_figure" if self.output_type == FIGURE else ""
        return "report/" + (self.caption_file or f"{self.name}{suffix}.rst")

    @property
    def artifact(self) -> str:
        """The table artifact (core/table_artifacts.TABLES) of the output or, for a figure, of
        the table it draws."""
        return self.table if self.output_type == FIGURE else self.name

    @property
    def target(self) -> str:
        """The one file of the output that rule all asks for."""
        if self.output_type == FIGURE:
            return f"results/figures/{self.name}.svg"
        return f"results/tables/{self.name}.parquet"

    def caption_text(self, **values) -> str:
        """The caption with its fields filled (the values its command computed)."""
        return self.caption.format(**values)


@dataclass(frozen=True)
class _Entry:
    """A table or data entry of one rule, before the rule's fields are added."""
    name: str
    reproduces: str
    caption: str = ""
    empty_when: str | None = None
    function: str | None = None
    columns: tuple = ()
    key: tuple[str, ...] = ()
    rows: str = ""
    version: int = 1
    formats: tuple[str, ...] = DATA_FORMATS  # of a _data entry (a table has TABLE_FORMATS)


_table = _data = _Entry


def _tables(stage, rule, command, category, feed, *entries, data=()):
    """Tables (_table entries) and data tables (_data entries) of one rule."""
    def output(entry, output_type, category, formats):
        if output_type == DATA and formats not in (DATA_FORMATS, DATA_FORMATS[:1]):
            raise ValueError(f"{entry.name}: formats {formats}, not Parquet (and CSV)")
        return Output(entry.name, output_type, stage, rule, command, category, entry.reproduces,
                      feed, function=entry.function, empty_when=entry.empty_when,
                      caption=entry.caption, columns=entry.columns, key=entry.key,
                      rows=entry.rows, version=entry.version, formats=formats)
    return (*(output(e, TABLE, category, TABLE_FORMATS) for e in entries),
            *(output(e, DATA, None, e.formats) for e in data))


def _figure(name, table, what, category, reproduces, feed, caption_file=None, front_page=False,
            shows=""):
    """A figure has one name (docs/glossary.md): its file NAME.svg, rule figure_NAME, command
    figure-NAME and function figures.NAME all derive from it."""
    return Output(name, FIGURE, "aggregate", f"figure_{name}", f"figure-{name.replace('_', '-')}",
                  category, reproduces, feed, table, caption_file, name, front_page, what,
                  shows=shows, formats=("svg", "png"))


# --- the examples tables (aggregate/family_examples.py): per scoring function, the k items it
# gets most confidently wrong (config aggregate.examples; equal margins ordered by a seeded hash
# of the item, aggregate/examples.py)
_SCORING = (col("dataset", STR, "items dataset"), col("model", STR, "scoring model"),
            col("method", STR, "scoring method"))
_RANK = col("rank", I64, "1 for the most confidently wrong item of the scoring function")
_EXAMPLES = ("the k items per scoring function it gets most confidently wrong, k from config "
             "`aggregate.examples`; equally wrong ones ordered by a seeded hash of the item "
             "(`aggregate.seed`), not by its id")
_NONE_WRONG = "no scoring function gets a {} wrong (ties count wrong)"


def _margin(what: str):
    return col("margin", F64, what)


BLIMP_EXAMPLES = (
    *_SCORING, _RANK, col("uid", STR, "paradigm (UID)"), col("group_id", STR, "the pair"),
    col("sentence_good", STR, "the grammatical sentence"),
    col("sentence_bad", STR, "the ungrammatical sentence"),
    col("logprob_good", F64, "log P(good)"), col("logprob_bad", F64, "log P(bad)"),
    _margin("log P(bad) - log P(good), at least 0 (a tie counts wrong)"))
JAPANESE_EXAMPLES = (
    *_SCORING, col("region", STR, "null: the whole sentence; `verb`: the verb's tokens", True),
    _RANK, col("group_id", STR, "the pair"), col("verb_pair", STR, "the verb pair"),
    col("sentence_transitive", STR, "the transitive verb's sentence (the grammatical one)"),
    col("sentence_intransitive", STR, "the intransitive verb's sentence"),
    col("score_transitive", F64, "the decision's score of the transitive sentence (mean "
        "log-probability for the perplexity rule, else summed), higher preferred"),
    col("score_intransitive", F64, "... of the intransitive sentence"),
    _margin("score_intransitive - score_transitive, at least 0 (a tie counts wrong)"))
COLA_EXAMPLES = (
    *_SCORING, col("split", STR, "CoLA split or phenomenon set"),
    col("normalisation", STR, "the normalised score the threshold is on"), _RANK,
    col("item_id", STR, "the sentence's item"), col("sentence", STR, "the sentence"),
    col("label", I8, "1 acceptable, 0 not"), col("score", F64, "its normalised score"),
    col("threshold", F64, "the threshold its fold's training folds fitted (its held-out "
        "prediction: acceptable when score >= threshold)"),
    _margin("how far the score lies on the wrong side of the threshold (threshold - score for "
            "an acceptable sentence, score - threshold for an unacceptable one)"))
GERMAN_CASE_EXAMPLES = (
    *_SCORING, _RANK, col("template", STR, "the scoring function's lowest-AUC template"),
    col("template_auc", F64, "its AUC (ties count 1/2)"),
    col("item_id_grammatical", STR, "the grammatical sentence's item"),
    col("item_id_violation", STR, "the violation's item"),
    col("sentence_grammatical", STR, "the grammatical sentence"),
    col("sentence_violation", STR, "the case violation"),
    col("logprob_sum_grammatical", F64, "log P(grammatical)"),
    col("logprob_sum_violation", F64, "log P(violation)"),
    _margin("log P(violation) - log P(grammatical): the largest first (negative when even the "
            "template's worst pair is ranked right)"))
SPUD_EXAMPLES = (
    col("dataset", STR, "items dataset"), col("language", STR, "language"),
    col("nonce_method", STR, "nonce method"), col("model", STR, "scoring model"),
    col("method", STR, "scoring method"), _RANK, col("nonce_seed", STR, "nonce seed"),
    col("group_id", STR, "the original sentence's group"),
    col("nonce_item_id", STR, "the nonce sentence's item"),
    col("orig_sentence", STR, "the original sentence"),
    col("nonce_sentence", STR, "the nonce sentence"),
    col("ppl_orig", F64, "perplexity of the original"),
    col("ppl_nonce", F64, "perplexity of the nonce sentence"),
    col("ratio", F64, "ppl_nonce / ppl_orig: the largest first"))

# the per-item files beside them (DATA: not in the report), one row per item and scoring function
_CORRECT = col("correct", BOOL, "the scoring function gets it right (a tie counts wrong)")
BLIMP_ITEMS = (
    *_SCORING, col("group_id", STR, "the pair"), col("uid", STR, "paradigm (UID)"),
    col("sentence_good", STR, "the grammatical sentence"),
    col("sentence_bad", STR, "the ungrammatical sentence"),
    col("logprob_good", F64, "log P(good); null: not scored", True),
    col("logprob_bad", F64, "log P(bad); null: not scored", True),
    col("margin", F64, "log P(bad) - log P(good): at least 0 when wrong; null "
                        "when a sentence is not scored", True),
    col("scored", BOOL, "both sentences scored: the pair counts in the accuracy"), _CORRECT)
COLA_ITEMS = (
    *COLA_EXAMPLES[:5], *COLA_EXAMPLES[6:11],
    _margin("how far the score lies on the wrong side of the threshold; negative on the right "
            "side"), col("correct", BOOL, "the held-out prediction is the label"))
GERMAN_CASE_ITEMS = (
    *_SCORING, col("template", STR, "template"), col("item_id", STR, "the sentence's item"),
    col("sentence", STR, "the sentence"), col("grammatical", BOOL, "a grammatical sentence"),
    col("violation", STR, "the doubled case of a violation; null when grammatical", True),
    col("logprob_sum", F64, "log P(sentence)"),
    col("template_auc", F64, "its template's AUC (ties count 1/2); null without a grammatical "
        "sentence and a violation", True))


JAPANESE_ITEMS = (
    *JAPANESE_EXAMPLES[:4],
    col("mode", STR, "the mode's label, as japanese_agreement's: model/method, and @verb for "
        "the verb only"),
    col("decision", STR, "the decision rule (config `aggregate.japanese_decision`)"),
    col("group_id", STR, "the pair"), col("verb_pair", STR, "the verb pair"),
    col("item_id_transitive", STR, "the transitive sentence's item"),
    col("item_id_intransitive", STR, "the intransitive sentence's item"),
    *JAPANESE_EXAMPLES[7:11],
    _margin("score_intransitive - score_transitive: at least 0 when wrong (a tie counts wrong), "
            "negative when right"),
    col("correct", BOOL, "the mode prefers the transitive verb (score_transitive > "
        "score_intransitive): what japanese_accuracy's accuracy_obligatory averages"))


def _items(family: str, columns: tuple, key: tuple, name: str | None = None,
           formats: tuple[str, ...] = DATA_FORMATS, rows: str = "per item and scoring function"
           ) -> _Entry:
    """A family's per-item file (NAME, default FAMILY_items), computed by
    family_examples.FAMILY_items."""
    return _data(name or f"{family}_items", "spudflow's extension: the items behind the figures",
                 f"Every {family} item per scoring function: its scores, margin and whether it "
                 "is right (filter it for the items behind a figure).",
                 function=f"family_examples.{family}_items", rows=rows, columns=columns, key=key,
                 formats=formats)
PROBE_EXAMPLES = (
    col("treebank", STR, "the test treebank"), col("model", STR, "the model's name in the config"),
    col("baseline", STR, "`lm`, `M0`, `MR` or `MRC`"),
    col("dist_layer", I64, "layer of the distance probe"),
    col("label_layer", I64, "layer of the label probe"),
    col("auto_layers", BOOL, "the layers were chosen for `auto`"),
    col("nonce_method", STR, "the nonce eval sets' method (every nonce seed pooled)"), _RANK,
    col("sent_index", I64, "the sentence's position in the test treebank (tokens.parquet "
        "sent_index; the same in its nonce versions)"),
    col("n_words", I64, "words scored in the sentence"),
    col("sentence", STR, "the original sentence's words (FORM, joined by spaces: a multiword "
        "token's words, not its surface), from a run's predictions.parquet; null when the "
        "command was given none (`--predictions`)", True),
    col("nonce_sentences", STR, "each nonce version's words, after its eval set "
        "(`spud/seed1: …`), in seed order, separated by ` ‖ `; null as `sentence`", True),
    col("las_orig", F64, "LAS of the original sentence over every probe seed's run"),
    col("las_nonce", F64, "LAS of its nonce versions over every run and nonce seed"),
    _margin("las_orig - las_nonce: the largest drop first"))


def _examples(family: str, what: str, caption: str, columns: tuple, key: tuple,
              empty_when: str | None = None) -> _Entry:
    """A family's examples table, computed by family_examples.FAMILY."""
    return _table(f"{family}_examples", "spudflow's extension: the items behind the figures",
                  f"{caption} {_EXAMPLES[0].upper()}{_EXAMPLES[1:]}.", empty_when=empty_when,
                  function=f"family_examples.{family}",
                  rows=f"per scoring function, {what}", columns=columns, key=key)


COMPARISON_EMPTY = ("fewer than two scoring functions scored one {what}: nothing to compare "
                    "(the default run may have one model in a family)")
COMPARISON_CAPTION = (
    "Paired comparisons between scoring functions (model × method) on the {items} both scored: "
    "{statistics}; difference a − b with its paired interval, the p-value of the test named in "
    "`test`, and Holm's adjustment over the table (p_holm). Items only one side scored are left "
    "out of both figures and counted (n_only_a, n_only_b).")


def _comparison(family, reproduces, items, statistics, group, what="items dataset",
                sides=SCORING_FUNCTION_SIDES, caption=COMPARISON_CAPTION, empty_when=None,
                version=1):
    """A family's `*_comparison` table (aggregate/comparison_tables.py)."""
    return _Entry(f"{family}_comparison", reproduces,
                  caption.format(items=items, statistics=statistics),
                  empty_when=empty_when or COMPARISON_EMPTY.format(what=what),
                  function=f"comparison_tables.{family}_comparison",
                  columns=comparison_columns(group, sides),
                  key=comparison_key([c.name for c in group], sides),
                  rows="per group, pair of scoring functions and statistic compared",
                  version=version)


DATASET = (col("dataset", STR, "items dataset"),)
GERMAN_ANALYSIS = (*DATASET, col("analysis", STR, "as german_case_auc's: `all` sentences; "
                                 "`restricted`: only the original assignment (NDA) among the "
                                 "grammatical sentences, all violations"))
# a probe configuration: what probe_languages names a row by, but the treebank
PROBE_SIDES = (col("model", STR, "model"), col("baseline", STR, "baseline (`lm`: the LM)"),
               col("dist_layer", I64, "layer of the distance probe"),
               col("label_layer", I64, "layer of the label probe"),
               col("auto_layers", BOOL, "layers chosen by `auto`"))

SPUD = "SPUD scoring"
GERMAN = "German case"
JAPANESE = "Japanese transitivity"

OUTPUTS: tuple[Output, ...] = (
    *_tables("aggregate", "table_treebank_stats", "table-treebank-stats", "Treebanks",
             TREEBANKS, _table("treebank_stats", "SPUD paper, cf. Table 6",
                               "Treebank statistics per split: sentences, words, surface tokens, "
                               "multiword tokens, empty nodes, UPOS counts and type-token ratio "
                               "of word forms.")),
    *_tables("aggregate", "table_nonce_replacements", "table-collect", "Treebanks", NONCE,
             _table("nonce_replacements", "SPUD paper, Table 7, App. A.4",
                    "Nonce treebanks: replacement statistics per treebank, method and seed.")),
    *_tables("nonce", "table_nonce_ratio", "table-nonce-ratio", "Treebanks", NONCE,
             _table("nonce_replacement_ratio", "SPUD paper, Table 7",
                    "Nonce treebanks: fraction of words replaced per UPOS and in total (all "
                    "words), and words of a replaced UPOS left unreplaced by reason.")),
    *_tables("nonce", "table_nonce_ttr", "table-nonce-ttr", "Treebanks", NONCE,
             _table("nonce_type_token_ratio", "SPUD paper, Table 8",
                    "Nonce treebanks: type-token ratio of the {unit}{tokenized} in the original "
                    "and the nonce treebank, per split and pooled over a treebank's splits where "
                    "it has two or more (`split` names the splits pooled; Table 8 of Arps et al. "
                    "reports the pooled TTR of mBERT tokens).")),
    *_tables("nonce", "human_eval_tables", "human-eval tables", "Human evaluation", HUMAN_EVAL,
             _table("human_eval_grammaticality", "SPUD paper, Table 1"),
             _table("human_eval_preference", "SPUD paper, Table 2")),
    *_tables("aggregate", "table_spud_scores", "table-spud-scores", SPUD, "spud",
             _table("spud_ratio_summary", "SPUD paper, §4, Tables 10–11",
                    "Perplexity ratio r = f(nonce) / f(orig) per sentence pair: quartiles, mean "
                    "and fraction with r > 1, per language, nonce method, nonce seed and scoring "
                    "function ({models}); seed `{all_seeds}`: one geometric-mean ratio per "
                    "original sentence over the seeds. Outliers `kept`: all observations; "
                    "`removed`: without those with r > {outlier_threshold:g} (§4.4), n_dropped "
                    "of them. tie_fraction: pairs with r = 1, which the scoring function cannot "
                    "tell apart; unseen_fraction: words of the pairs' sentences the model never "
                    "saw in training (n-gram models)."),
             _table("spud_wilcoxon", "SPUD paper, §4",
                    "Wilcoxon signed-rank tests between the ratios of two scoring functions on "
                    "the same sentence pairs (scipy.stats.wilcoxon, two-sided), per nonce seed "
                    "and, as seed `{all_seeds}`, on one geometric-mean ratio per original "
                    "sentence over the seeds. Outliers `removed`: without the observations where "
                    "either ratio is above {outlier_threshold:g} (§4.4).",
                    empty_when="no language has two scoring functions to compare"),
             _comparison("spud", "SPUD paper, §4, Tables 10–11, between scoring functions",
                         "nonce pairs", "the median ratio as spud_ratio_summary computes it, "
                         "per nonce seed (one pair per original sentence) and, as seed `all`, "
                         "of the per-original geometric-mean ratio over the seeds; on all "
                         "observations, outliers kept, as the headline (the summary's `kept` "
                         "rows; its `removed` rows, without the ratios above "
                         "aggregate.spud_outlier_threshold, are not compared); original "
                         "sentences resampled: paired bootstrap and its p",
                         (*DATASET, col("language", STR, "language"),
                          col("nonce_method", STR, "nonce method"),
                          col("nonce_seed", STR, "nonce seed, or `all`: every seed, one "
                              "geometric-mean ratio per original sentence")),
                         caption=COMPARISON_CAPTION.replace(
                             "Holm's adjustment over the table (p_holm)",
                             "Holm's adjustment within each nonce seed (p_holm: a seed's rows "
                             "replicate the comparisons of `all`, they are no further "
                             "hypotheses)"),
                         version=2,  # v2: a row per nonce seed
                         what="language and nonce method"),
             _table("spud_extremes", "SPUD paper, App. E",
                    "The {extremes} sentence pairs with the highest and the lowest ratio per "
                    "scoring function."),
             _table("spud_outliers", "SPUD paper, App. E.3, Tables 12–13",
                    "Sentence pairs with r_PPL above {outliers_above:g} or below "
                    "{outliers_below:g} (Tables 12–13 of Arps et al.), per causal model (PPL) and "
                    "masked model (PPPL, PPPL_l2r of the same pair), orig and nonce verbatim.",
                    empty_when="no pair's r_PPL is beyond the thresholds, or no causal model "
                    "(`ppl`) scored"),
             _examples("spud", "nonce method and seed, the k largest ratios",
                       "SPUD: the nonce sentences with the largest perplexity ratio r = "
                       "PPL(nonce) / PPL(orig) per language, nonce method, nonce seed and "
                       "scoring function, both sentences verbatim.", SPUD_EXAMPLES,
                       ("dataset", "language", "nonce_method", "model", "method", "nonce_seed",
                        "rank")),
             data=[_data("spud_ratios", "SPUD paper, Fig. 2",
                         "Every sentence pair's perplexities and ratio.")]),
    _figure("spud_log_ratios", "spud_ratios",
            "box plots of log nonce/original ratios per language and scoring function", SPUD,
            "SPUD paper, Fig. 2", "spud", "spud_log_ratios.rst", front_page=True,
            shows="box plots of log r per language (x) and scoring function (colour), one panel "
            "per nonce method (paper Fig. 2); one value per original sentence, its mean log r "
            "over the nonce seeds"),
    *_tables("aggregate", "table_german_case", "table-german-case", GERMAN, "german_case",
             _table("german_case_auc", "German case paper, the per-template AUC figure",
                    "ROC AUC per scoring function: mean and sd over templates (the paper's "
                    "figure), and of all templates' sentences in one ROC (auc_pooled); "
                    "tie_fraction: the pairs the AUCs compare that the scoring function cannot "
                    "tell apart; unseen_fraction: the words its model never saw in training "
                    "(n-gram models).{intervals}"),
             _comparison("german_case", "German case paper, AUC between scoring functions",
                         "sentences", "mean template AUC (templates resampled: paired "
                         "bootstrap; permutation test) and pooled AUC (DeLong's paired test), "
                         "per analysis", GERMAN_ANALYSIS, version=2),  # v2: analysis
             _table("german_case_auc_templates", "German case paper, the per-template AUC "
                    "figure",
                    "ROC AUC of sentence log-probability, grammatical sentences against case "
                    "violations, per template (restricted: only the original case assignment "
                    "among the grammatical sentences)."),
             _table("german_case_auc_violation", "German case paper, the per-violation AUC "
                    "table and the plausible-sentences table",
                    "ROC AUC per violation type (the doubled case; the paper's per-violation AUC "
                    "table, and, restricted to the original case assignment, its "
                    "plausible-sentences table): grammatical sentences against the violations "
                    "doubling that case; mean and sd over templates, and all templates in one "
                    "ROC (auc_pooled).{intervals}"),
             _table("german_case_animacy", "German case paper, the animacy table",
                    "Animacy and case (the paper's animacy table): per case, the mean 1-vs-6 AUC "
                    "of the grammatical sentences whose NP in that case is animate, of those "
                    "where it is inanimate, and animate minus inanimate; mean and sd over "
                    "templates.",
                    empty_when="no scored template puts an animate and an inanimate NP in one "
                    "case"),
             _table("german_case_order", "German case paper, word order",
                    "Mean sentence log-probability per order of the cases in the sentence."),
             _table("german_case_order_auc", "German case paper, the word-order figure",
                    "Word order (the paper's word-order figure): the 1-vs-6 AUC (each "
                    "grammatical sentence against its six one-case violations in the same NP "
                    "order) by case order and by first case; one case order against the other "
                    "five and against the violations; all grammatical sentences against the "
                    "violations by the positions of the doubled case and by case order; mean "
                    "and sd over templates."),
             _examples("german_case", "its lowest-AUC template's k worst pairs",
                       "German case: per scoring function, the template with the lowest AUC "
                       "and its (grammatical, violation) pairs whose violation it scored "
                       "highest above the grammatical sentence.", GERMAN_CASE_EXAMPLES,
                       ("dataset", "model", "method", "rank")),
             data=[_data("german_case_roc", "German case paper, ROC curves",
                         "ROC curve points, all templates pooled."),
                   _items("german_case", GERMAN_CASE_ITEMS,
                          ("dataset", "model", "method", "item_id"))]),
    _figure("german_case_roc", "german_case_roc",
            "ROC curves per scoring function on the German case set", GERMAN,
            "German case paper, ROC curves", "german_case", "german_case_roc.rst",
            front_page=True,
            shows="ROC curve per scoring function with its pooled AUC, one panel per dataset"),
    _figure("german_case_order_auc", "german_case_order_auc",
            "German case AUC per case order and position of the violation (the paper's word-order "
            "figure)", GERMAN,
            "German case paper, the word-order figure", "german_case",
            shows="the paper's word-order figure: mean template AUC ± sd per case order (one "
            "order vs all six; vs the violations) and per position of the doubled case, one "
            "bar per scoring function, chance line; an order without an AUC keeps its tick and "
            "says `n/a`"),
    _figure("german_case_auc_templates", "german_case_auc_templates",
            "distribution of the German case AUCs per template (the paper's per-template AUC "
            "figure)", GERMAN,
            "German case paper, the per-template AUC figure", "german_case",
            shows="the paper's per-template AUC figure: per-template AUCs per scoring function "
            "as a box with every template a dot (evenly spread, no random jitter) and the mean "
            "a diamond; one panel per dataset and analysis"),
    *_tables("aggregate", "table_cola", "table-cola", "CoLA", "cola",
             _table("cola_thresholds", "CoLA paper, Table 4",
                    "CoLA (Table 4): {method}; accuracy and Matthews correlation (null when a "
                    "split's labels are of one class) of the held-out predictions, per split. A "
                    "split with fewer than 2 scored items, or whose fit failed, has its row with "
                    "its status and reason, the numbers null. tie_fraction: "
                    "acceptable-unacceptable pairs with equal scores; unseen_fraction: the words "
                    "the model never saw in training (n-gram models).{note}",
                    empty_when="only phenomenon sets are configured"),
             _table("cola_phenomena", "CoLA paper, §8, Table 5",
                    "CoLA phenomenon sets (section 8, Table 5): {method} within each set; "
                    "accuracy and Matthews correlation (null when a set's labels are of one "
                    "class) of the held-out predictions, per phenomenon.{note}",
                    empty_when="no phenomenon set is configured"),
             _table("cola_sources", "CoLA paper, §7",
                    "CoLA per source (section 7): {method} per split; accuracy and Matthews "
                    "correlation of the split's held-out predictions of each source's sentences "
                    "(null when a source's labels are of one class).{note}",
                    empty_when="only phenomenon sets are configured, or no CoLA split could be "
                    "computed"),
             _examples("cola", "split and normalisation, the k sentences furthest on the "
                       "wrong side of the threshold",
                       "CoLA: per split, scoring function and normalisation, the sentences "
                       "furthest on the wrong side of the threshold their cross-validation "
                       "fold fitted (acceptable ones below it, unacceptable ones at or above "
                       "it), the held-out predictions of cola_thresholds.", COLA_EXAMPLES,
                       ("dataset", "model", "method", "split", "normalisation", "rank"),
                       empty_when=_NONE_WRONG.format("sentence")),
             _comparison("cola", "CoLA paper, Table 4, between scoring functions",
                         "sentences of a split", "Matthews correlation of the held-out "
                         "predictions per split and normalisation, each function's thresholds "
                         "as cola_thresholds fits them (sentences resampled with their label "
                         "and both predictions: paired bootstrap; permutation test)",
                         (*DATASET, col("split", STR, "CoLA split"),
                          col("normalisation", STR, "score normalisation")),
                         what="split and normalisation"),
             data=[_items("cola", COLA_ITEMS, ("dataset", "model", "method", "split",
                                                 "normalisation", "item_id"))]),
    *_tables("aggregate", "table_blimp", "table-blimp", "BLiMP", "blimp",
             _table("blimp_overall", "BLiMP (Warstadt et al. 2020), Table 3",
                    "BLiMP accuracy over all paradigms; tie_fraction: the pairs the scoring "
                    "function cannot tell apart; unseen_fraction: the words of the scored pairs "
                    "its model never saw in training (n-gram models). {intervals}"),
             _table("blimp_field", "BLiMP, accuracy per field",
                    "BLiMP accuracy per field. {intervals}"),
             _table("blimp_paradigm", "BLiMP, accuracy per paradigm",
                    "BLiMP accuracy per paradigm: fraction of the pairs with both sentences "
                    "scored that have log P(good) > log P(bad); ties count as wrong; skipped "
                    "pairs (a sentence not scored, e.g. too long) are counted apart and left out "
                    "of the accuracy. {intervals}"),
             _examples("blimp", "the k wrong pairs with the largest margin",
                       "BLiMP: the pairs whose ungrammatical sentence the scoring function "
                       "scored highest above the grammatical one.", BLIMP_EXAMPLES,
                       ("dataset", "model", "method", "rank"),
                       empty_when=_NONE_WRONG.format("pair")),
             _comparison("blimp", "BLiMP, accuracy between models", "pairs (both sentences)",
                         "accuracy (exact McNemar) and paradigm mean accuracy (paired bootstrap "
                         "stratified by paradigm, permutation test)", DATASET),
             data=[_items("blimp", BLIMP_ITEMS, ("dataset", "model", "method", "group_id"))]),
    _figure("blimp_field", "blimp_field",
            "BLiMP accuracy by field", "BLiMP", "BLiMP, accuracy per field", "blimp",
            front_page=True,
            shows="accuracy per field, one bar per scoring function, chance line at 0.5; a field "
            "without an accuracy (all pairs skipped, or no row) gets no bar but `n/a`"),
    *_tables("aggregate", "table_japanese_transitivity", "table-japanese-transitivity",
             JAPANESE, "japanese_transitivity",
             _table("japanese_accuracy", "Japanese thesis, §4.5, Tables 2–3",
                    "Japanese transitivity: accuracy on obligatory pairs (transitive preferred) "
                    "and transitive-preference rate on ambiguous pairs, per dataset and scoring "
                    "mode; tie_fraction_obligatory: obligatory pairs the mode cannot tell apart; "
                    "unseen_fraction: the obligatory pairs' words the model never saw in "
                    "training (n-gram models); status `skipped`: a mode without a usable score "
                    "(reason), left out of the other tables. Interval of the accuracy at "
                    "{level:g}: Wilson's over obligatory pairs, with lm-eval's stderr (sample sd "
                    "over sqrt(n)). {modes} {rule}"),
             _comparison("japanese", "Japanese thesis, §4.5, Tables 2–3, between "
                         "scoring functions", "obligatory pairs", "accuracy on obligatory pairs "
                         "by the table's decision rule, per span (region null: the whole "
                         "sentence; `verb`: the verb only; exact McNemar)",
                         (*DATASET, col("region", STR, "the span scored: null the whole "
                                        "sentence, `verb` the verb only", True)),
                         what="items dataset and span"),
             _table("japanese_agreement", "Japanese thesis, §5.6",
                    "Agreement between scoring modes: fraction of pairs on which two modes "
                    "prefer the same verb, and Cohen's kappa. {compared} {modes} {rule}"),
             _table("japanese_regression", "Japanese thesis, §5.7",
                    "{regression} Per mode: the chosen lambda (and both cv choices), its "
                    "cross-validated deviance and accuracy, and the intercept of the fit on all "
                    "pairs. {modes} {rule}"),
             _table("japanese_regression_max", "Japanese thesis, §5.7, Tables 4 and 6",
                    "The {top} largest positive coefficients per mode, the intercept among them "
                    "(favouring the transitive verb; the thesis's Tables 4 and 6). {regression} "
                    "{modes} {rule}"),
             _table("japanese_regression_min", "Japanese thesis, §5.7, Tables 5 and 7",
                    "The {top} largest negative coefficients per mode, the intercept among them "
                    "(favouring the intransitive verb; the thesis's Tables 5 and 7). "
                    "{regression} {modes} {rule}"),
             _table("japanese_length_correlation", "Japanese thesis, §3.2, §4.5",
                    "Sentence length (the model's tokens) against perplexity ({thesis}, §3.2 and "
                    "§4.5: a negative correlation on the base dataset): Pearson's r and "
                    "Spearman's rho (scipy.stats) over every scored whole sentence, per dataset "
                    "and mode."),
             _examples("japanese", "the k obligatory pairs it got wrong by the largest margin",
                       "Japanese transitivity: per dataset and scoring mode, the obligatory "
                       "pairs whose intransitive sentence the mode preferred by the largest "
                       "margin of the decision rule's score (config "
                       "`aggregate.japanese_decision`).", JAPANESE_EXAMPLES,
                       ("dataset", "model", "method", "region", "rank"),
                       empty_when=_NONE_WRONG.format("obligatory pair")),
             data=[_data("japanese_length_perplexity", "Japanese thesis, §3.2, §4.5",
                         "Perplexity by sentence length (the model's tokens): median and "
                         "quartiles per dataset, mode and length, over every scored whole "
                         "sentence."),
                   # Parquet only: at the thesis's size (749,500 items a dataset, 24 modes) a
                   # CSV would be about a gigabyte
                   _items("japanese", JAPANESE_ITEMS,
                          ("dataset", "model", "method", "region", "group_id"),
                          name="japanese_transitivity_items", formats=DATA_FORMATS[:1],
                          rows="per obligatory pair and scoring mode")]),
    _figure("japanese_agreement", "japanese_agreement",
            "heat map of agreement between Japanese scoring modes",
            JAPANESE, "Japanese thesis, §5.6", "japanese_transitivity", front_page=True,
            shows="heat map of the agreement between scoring modes, one panel per dataset; a "
            "missing cell (no pair both modes scored) is blank, hatched and marked `n/a`, never "
            "0"),
    _figure("japanese_agreement_graph", "japanese_agreement",
            "graph of Japanese scoring modes joined by their agreement, weak edges pruned",
            JAPANESE, "Japanese thesis, §5.6, Figures 1, 2 and 7", "japanese_transitivity",
            "japanese_agreement_graph.rst",
            shows="the agreement graph (thesis §5.6, Figures 1, 2, 7): modes as nodes, agreement "
            "as edges (width and label), pruned by the thesis's rule or by `--threshold T` "
            "(config `aggregate.japanese_graph_threshold`), ForceAtlas2 layout; one panel per "
            "dataset"),
    _figure("japanese_length", "japanese_length_perplexity",
            "perplexity by sentence length per Japanese scoring mode",
            JAPANESE, "Japanese thesis, §3.2, §4.5", "japanese_transitivity",
            shows="median perplexity (bars: quartiles) by sentence length in tokens, one panel per "
            "model and method, one line per dataset, log scale (thesis §3.2, §4.5)"),
    *_tables("aggregate", "table_probe", "table-probe", "DepProbe", PROBE,
             _table("probe_summary", "SPUD paper, Tables 3–5, 14–20",
                    "DepProbe: RelAcc, UAS, LAS and root accuracy per treebank, model, baseline "
                    "and layers on the original test set and on nonce versions (Δ = original − "
                    "nonce per probe run); mean and sd over probe seeds and nonce seeds."),
             _table("probe_languages", "SPUD paper, Tables 3–4, 14–16",
                    "DepProbe across languages (SPUD paper Tables 3 and 4 for the LMs, Tables "
                    "14–16 for the M0, MRC and MR baselines): RelAcc, UAS and LAS on each "
                    "treebank's original test set and on its nonce versions, Δ = original − "
                    "nonce per probe run (the paper's performance drop); mean and sd over probe "
                    "seeds (orig) and probe seeds × nonce seeds (nonce, Δ), as Tables 17–19."),
             _table("probe_examples", "spudflow's extension: the sentences behind the drop",
                    "DepProbe: per probe configuration and nonce method, the test sentences "
                    "whose LAS drops most from the original to its nonce versions (each over "
                    "every probe seed and nonce seed), by their index in the test treebank; "
                    "only sentences whose LAS drops (none: no rows); the k of config "
                    "`aggregate.examples`, equal drops (short sentences) ordered "
                    "by a hash of the sentence seeded by `aggregate.seed`; each with its "
                    "words and those of its nonce versions (the runs' predictions.parquet).",
                    function="family_examples.probe", version=2,  # v2: the sentences' words
                    rows="per probe configuration and nonce method, the k largest LAS drops",
                    columns=PROBE_EXAMPLES,
                    key=("treebank", "model", "baseline", "dist_layer", "label_layer",
                         "auto_layers", "nonce_method", "rank"),
                    empty_when="no probe run has a nonce eval set, no sentence's LAS drops "
                    "on its nonce versions, or the runs have no per-sentence counts (trained "
                    "before `probe train` wrote them; the log says so)"),
             _table("probe_layers", "SPUD paper, App. F.6",
                    "DepProbe metrics per layer (probes whose distance and label parts use the "
                    "same layer; App. F.6): means over seeds on the selection data (dev) and the "
                    "test sets; the layers chosen for `auto` marked.",
                    empty_when="no probe run reads one configured layer with both parts (no "
                    "layer sweep, no M0)"),
             _comparison("probe", "SPUD paper, Tables 3–4, 14–16, between probe configurations",
                         "test sentences", "RelAcc, UAS and LAS on the original test set "
                         "(nonce_method null), the mean over the probe seeds both "
                         "configurations ran of each seed's micro-averaged score; per nonce "
                         "method, the Δ = orig − nonce of UAS and LAS (delta_uas, delta_las: "
                         "probe_languages' delta_*_mean, the mean over the nonce runs of the "
                         "probe seed's original score minus the run's), on the (run, sentence) "
                         "both evaluated, n_items counting original and nonce rows (sentences "
                         "resampled with every run's counts, a sentence's original and nonce "
                         "versions together: paired bootstrap; permutation test swapping a "
                         "sentence's counts)",
                         (col("treebank", STR, "treebank"),
                          col("nonce_method", STR, "the nonce method of a Δ (its nonce seeds "
                              "pooled); null: a figure on the original test set", True)),
                         empty_when="fewer than two probe configurations ran on one treebank, "
                         "or aggregate.uncertainty.resamples is 0 (the per-sentence counts are "
                         "read only with resampling)",
                         sides=PROBE_SIDES,
                         caption=COMPARISON_CAPTION.replace("scoring functions (model × "
                                                            "method)", "probe configurations"),
                         version=2)),  # v2: RelAcc, the Δ (nonce_method)
    *_tables("aggregate", "table_probe_edges", "table-probe-edges", "DepProbe", PROBE,
             _table("probe_edges", "SPUD paper, App. F.7, Tables 21–22",
                    "DepProbe by edge direction (left: the gold head precedes the word; right: "
                    "it follows; root: head 0): fraction of edges (Table 21) and RelAcc, UAS, "
                    "LAS (Table 22) on the original test set and nonce versions (Δ = original − "
                    "nonce per run); mean and sd over probe seeds and nonce seeds.")),
    _figure("probe_layers", "probe_layers",
            "DepProbe metrics per layer", "DepProbe", "SPUD paper, App. F.6, Fig. 8", PROBE,
            front_page=True,
            shows="RelAcc, UAS, LAS per layer for each model (baseline `lm`; App. F.6, Fig. 8); "
            "densely dotted dev (selection data), solid orig, dashed SPUD, dotted POS; a vertical "
            "line in the model's colour at a layer chosen for `auto` (label layer on RelAcc, "
            "distance layer on UAS, both on LAS)"),
)

# What the report says, after a table's caption, of the data its rule read (Jinja over the
# job, as Snakemake renders a caption): a dataset family's datasets and models, or its feed's.
FAMILY_DATA = ("Data: items datasets {{ snakemake.params.datasets | join(\", \") }}; models: "
               "{{ snakemake.params.models | join(\", \") }}.")
REPORT_DATA = {
    TREEBANKS: "From the ingested treebanks "
               "{{ snakemake.config[\"treebanks\"] | list | join(\", \") }}.",
    NONCE: "From the replacement statistics of {{ snakemake.input.stats | length }} nonce "
           "treebanks.",
    PROBE: "From {{ snakemake.input.metrics | length }} probe runs.",
}

# In the order of the rules' and the front page's file lists: each feed's tables, then its figures.
# A table and a figure may share a name (probe_layers): look them up apart.
TABLE_OUTPUTS: dict[str, Output] = {o.name: o for o in OUTPUTS if o.output_type != FIGURE}
FIGURE_OUTPUTS: dict[str, Output] = {o.name: o for o in OUTPUTS if o.output_type == FIGURE}
FIGURE_COMMANDS: dict[str, Output] = {o.command: o for o in FIGURE_OUTPUTS.values()}


def rule_outputs(rule: str) -> list[Output]:
    """The outputs of one rule, in registry order."""
    return [o for o in OUTPUTS if o.rule == rule]


def command_tables(command: str) -> list[Output]:
    """The tables and data tables one command writes, in registry order."""
    return [o for o in OUTPUTS if o.command == command and o.output_type != FIGURE]


def report_caption_text(entry: Output, caption: str) -> str:
    """A table's report caption (NAME.caption.rst): its caption as its command filled it, kept
    from Jinja (`raw`), then what it reproduces and what its rule read."""
    return (f"{{% raw %}}{caption}{{% endraw %}}\n\n"
            f"{{% raw %}}Reproduces: {entry.reproduces}.{{% endraw %}} "
            f"{REPORT_DATA.get(entry.feed, FAMILY_DATA)}\n")


# --- the docs' lists --------------------------------------------------------------------------
def _block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name} -->\n)(?P<body>.*?)(<!-- /{name} -->)", re.S)


BLOCK = _block("outputs")
FIGURES_BLOCK = _block("figures")


def render() -> str:
    """The Markdown list of every output, as docs/aggregate.md shows it."""
    lines = ["| output | output_type | files | rule (`spudflow` command) | fed by | "
             "report category | reproduces | no rows when |", "|---|---|---|---|---|---|---|---|"]
    for o in OUTPUTS:
        name = f"`{o.name}`" + (f" (draws `{o.table}`)" if o.output_type == FIGURE else "")
        lines.append(f"| {name} | {o.output_type} | {', '.join(o.formats)} | `{o.rule}` "
                     f"(`{o.command}`) | {o.feed} | {o.category or '–'} | {o.reproduces} | "
                     f"{o.empty_when or '–'} |")
    return "\n".join(lines) + "\n"


def render_figures() -> str:
    """The Markdown list of the figures, as docs/aggregate.md shows it."""
    lines = ["| figure | draws | command | shows | caption |", "|---|---|---|---|---|"]
    for o in FIGURE_OUTPUTS.values():
        lines.append(f"| `{o.name}` | `{o.table}` | `spudflow {o.command} {o.table}.parquet --out "
                     f"STEM` | {o.shows} | {o.report_caption} |")
    return "\n".join(lines) + "\n"


def render_blocks(text: str) -> str:
    """`text` with its outputs and figures lists rendered from the registry."""
    text = BLOCK.sub(lambda m: m.group(1) + render() + m.group(3), text)
    return FIGURES_BLOCK.sub(lambda m: m.group(1) + render_figures() + m.group(3), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the outputs and figures lists in "
                                     "docs pages.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a list is stale")
    parser.add_argument("pages", nargs="+", type=Path)
    args = parser.parse_args(argv)
    stale = []
    for page in args.pages:
        text = page.read_text(encoding="utf-8")
        new = render_blocks(text)
        if new != text:
            stale.append(str(page))
            if not args.check:
                page.write_text(new, encoding="utf-8")
    if stale and args.check:
        print(f"stale outputs list: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
