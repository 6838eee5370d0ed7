"""Every result table and figure, once: the rule and `spudflow` command that make it, its report
caption (report/NAME.rst) and category, what it reproduces, which input feeds it and, for the
few tables that may have no rows on sound inputs, when (`empty_when`: every other table has a
row per group at least, a group that cannot be computed included). The rules
(rule all's targets, the report entries), the aggregate CLI's figure commands, the front page's
links, the docs' lists (docs/aggregate.md) and the tests' expectations read it;
tests/test_outputs_registry.py fails when a table, figure, artifact or caption has no entry here,
or an entry lacks one of them.

Adding a figure: its entry here (_figure), its function in aggregate/figures.py and its caption
report/NAME_figure.rst (or the entry's `caption`). Its rule, command, report entry, docs row and
tests follow from the entry.

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

# An output's type: a table (results/tables/NAME.{parquet,csv,md,tex}, its CSV in the report),
# per-item data behind a figure (NAME.{parquet,csv}, not in the report) or a figure
# (results/figures/NAME.{png,svg}, its SVG in the report).
TABLE, DATA, FIGURE = "table", "data", "figure"
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
    function: str | None = None  # a figure: its function in aggregate/figures.py
    front_page: bool = False  # a figure linked from its paper's front-page section
    what: str = ""  # a figure: what it shows, in a line (its command's help)
    shows: str = ""  # a figure: what it shows, in detail (the docs' list of figures)
    # a table that may have no rows on sound inputs: when (None: it always has rows, one per
    # group at least, a group that cannot be computed included, aggregate/group_status.py)
    empty_when: str | None = None

    @property
    def caption(self) -> str | None:
        """The caption file under report/ (None for DATA)."""
        if self.output_type == DATA:
            return None
        suffix = "_figure" if self.output_type == FIGURE else ""
        return self.caption_file or f"{self.name}{suffix}.rst"

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


def _tables(stage, rule, command, category, feed, *entries, data=()):
    """Tables (name, reproduces[, empty_when]) and data tables (name, reproduces[, empty_when])
    of one rule."""
    return (*(Output(n, TABLE, stage, rule, command, category, r, feed, empty_when=e)
              for n, r, e in map(_empty_when, entries)),
            *(Output(n, DATA, stage, rule, command, None, r, feed, empty_when=e)
              for n, r, e in map(_empty_when, data)))


def _empty_when(entry: tuple) -> tuple:
    return (*entry, None) if len(entry) == 2 else entry


def _figure(name, table, what, category, reproduces, feed, caption=None, front_page=False,
            shows=""):
    """A figure has one name (docs/glossary.md): its file NAME.svg, rule figure_NAME, command
    figure-NAME and function figures.NAME all derive from it."""
    return Output(name, FIGURE, "aggregate", f"figure_{name}", f"figure-{name.replace('_', '-')}",
                  category, reproduces, feed, table, caption, name, front_page, what, shows=shows)


SPUD = "SPUD scoring"
GERMAN = "German case"
JAPANESE = "Japanese transitivity"

OUTPUTS: tuple[Output, ...] = (
    *_tables("aggregate", "table_treebank_stats", "table-treebank-stats", "Treebanks",
             TREEBANKS, ("treebank_stats", "SPUD paper, cf. Table 6")),
    *_tables("aggregate", "table_nonce_replacements", "table-collect", "Treebanks", NONCE,
             ("nonce_replacements", "SPUD paper, Table 7, App. A.4")),
    *_tables("nonce", "table_nonce_ratio", "table-nonce-ratio", "Treebanks", NONCE,
             ("nonce_replacement_ratio", "SPUD paper, Table 7")),
    *_tables("nonce", "table_nonce_ttr", "table-nonce-ttr", "Treebanks", NONCE,
             ("nonce_type_token_ratio", "SPUD paper, Table 8")),
    *_tables("nonce", "human_eval_tables", "human-eval tables", "Human evaluation", HUMAN_EVAL,
             ("human_eval_grammaticality", "SPUD paper, Table 1"),
             ("human_eval_preference", "SPUD paper, Table 2")),
    *_tables("aggregate", "table_spud_scores", "table-spud-scores", SPUD, "spud",
             ("spud_ratio_summary", "SPUD paper, §4, Tables 10–11"),
             ("spud_wilcoxon", "SPUD paper, §4",
              "no language has two scoring functions to compare"),
             ("spud_extremes", "SPUD paper, App. E"),
             ("spud_outliers", "SPUD paper, App. E.3, Tables 12–13",
              "no pair's r_PPL is beyond the thresholds, or no causal model (`ppl`) scored"),
             data=[("spud_ratios", "SPUD paper, Fig. 2")]),
    _figure("spud_log_ratios", "spud_ratios",
            "box plots of log nonce/original ratios per language and scoring function", SPUD,
            "SPUD paper, Fig. 2", "spud", "spud_log_ratios.rst", front_page=True,
            shows="box plots of log r per language (x) and scoring function (colour), one panel "
            "per nonce method (paper Fig. 2); one value per original sentence, its mean log r "
            "over the nonce seeds"),
    *_tables("aggregate", "table_german_case", "table-german-case", GERMAN, "german_case",
             ("german_case_auc", "German case paper, the per-template AUC figure"),
             ("german_case_auc_templates", "German case paper, the per-template AUC figure"),
             ("german_case_auc_violation", "German case paper, the per-violation AUC table "
              "and the plausible-sentences table"),
             ("german_case_animacy", "German case paper, the animacy table",
              "no scored template puts an animate and an inanimate NP in one case"),
             ("german_case_order", "German case paper, word order"),
             ("german_case_order_auc", "German case paper, the word-order figure"),
             data=[("german_case_roc", "German case paper, ROC curves")]),
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
             ("cola_thresholds", "CoLA paper, Table 4", "only phenomenon sets are configured"),
             ("cola_phenomena", "CoLA paper, §8, Table 5", "no phenomenon set is configured"),
             ("cola_sources", "CoLA paper, §7",
              "only phenomenon sets are configured, or no CoLA split could be computed")),
    *_tables("aggregate", "table_blimp", "table-blimp", "BLiMP", "blimp",
             ("blimp_overall", "BLiMP (Warstadt et al. 2020), Table 3"),
             ("blimp_field", "BLiMP, accuracy per field"),
             ("blimp_paradigm", "BLiMP, accuracy per paradigm")),
    _figure("blimp_fields", "blimp_field",
            "BLiMP accuracy by field", "BLiMP", "BLiMP, accuracy per field", "blimp",
            "blimp_fields.rst", front_page=True,
            shows="accuracy per field, one bar per scoring function, chance line at 0.5; a field "
            "without an accuracy (all pairs skipped, or no row) gets no bar but `n/a`"),
    *_tables("aggregate", "table_japanese", "table-japanese", JAPANESE,
             "japanese_transitivity",
             ("japanese_accuracy", "Japanese thesis, §4.5, Tables 2–3"),
             ("japanese_agreement", "Japanese thesis, §5.6"),
             ("japanese_regression", "Japanese thesis, §5.7"),
             ("japanese_regression_max", "Japanese thesis, §5.7, Tables 4 and 6"),
             ("japanese_regression_min", "Japanese thesis, §5.7, Tables 5 and 7"),
             ("japanese_length_correlation", "Japanese thesis, §3.2, §4.5"),
             data=[("japanese_length_perplexity", "Japanese thesis, §3.2, §4.5")]),
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
             ("probe_summary", "SPUD paper, Tables 3–5, 14–20"),
             ("probe_languages", "SPUD paper, Tables 3–4, 14–16"),
             ("probe_layers", "SPUD paper, App. F.6",
              "no probe run reads one configured layer with both parts (no layer sweep, no M0)")),
    *_tables("aggregate", "table_probe_edges", "table-probe-edges", "DepProbe", PROBE,
             ("probe_edges", "SPUD paper, App. F.7, Tables 21–22")),
    _figure("probe_layers", "probe_layers",
            "DepProbe metrics per layer", "DepProbe", "SPUD paper, App. F.6, Fig. 8", PROBE,
            front_page=True,
            shows="RelAcc, UAS, LAS per layer for each model (baseline `lm`; App. F.6, Fig. 8); "
            "densely dotted dev (selection data), solid orig, dashed SPUD, dotted POS; a vertical "
            "line in the model's colour at a layer chosen for `auto` (label layer on RelAcc, "
            "distance layer on UAS, both on LAS)"),
)

# In the order of the rules' and the front page's file lists: each feed's tables, then its figures.
# A table and a figure may share a name (probe_layers): look them up apart.
TABLE_OUTPUTS: dict[str, Output] = {o.name: o for o in OUTPUTS if o.output_type != FIGURE}
FIGURE_OUTPUTS: dict[str, Output] = {o.name: o for o in OUTPUTS if o.output_type == FIGURE}
FIGURE_COMMANDS: dict[str, Output] = {o.command: o for o in FIGURE_OUTPUTS.values()}


def rule_outputs(rule: str) -> list[Output]:
    """The outputs of one rule, in registry order."""
    return [o for o in OUTPUTS if o.rule == rule]


# --- the docs' lists --------------------------------------------------------------------------
def _block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name} -->\n)(?P<body>.*?)(<!-- /{name} -->)", re.S)


BLOCK = _block("outputs")
FIGURES_BLOCK = _block("figures")


def render() -> str:
    """The Markdown list of every output, as docs/aggregate.md shows it."""
    lines = ["| output | output_type | rule (`spudflow` command) | fed by | report category | "
             "reproduces | no rows when |", "|---|---|---|---|---|---|---|"]
    for o in OUTPUTS:
        name = f"`{o.name}`" + (f" (draws `{o.table}`)" if o.output_type == FIGURE else "")
        lines.append(f"| {name} | {o.output_type} | `{o.rule}` (`{o.command}`) | {o.feed} | "
                     f"{o.category or '–'} | {o.reproduces} | {o.empty_when or '–'} |")
    return "\n".join(lines) + "\n"


def render_figures() -> str:
    """The Markdown list of the figures, as docs/aggregate.md shows it."""
    lines = ["| figure | draws | command | shows | caption |", "|---|---|---|---|---|"]
    for o in FIGURE_OUTPUTS.values():
        lines.append(f"| `{o.name}` | `{o.table}` | `spudflow {o.command} {o.table}.parquet --out "
                     f"STEM` | {o.shows} | report/{o.caption} |")
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
