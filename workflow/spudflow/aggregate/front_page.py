"""The report's front page (results/index.html): one headline table per paper, each cut from the
run's full table (same numbers, fewer columns) and linking to it and to its figures; the Snakemake
report with the workflow graph is one click away.

A paper whose tables the run did not make gets a line saying so, never an empty table.

Every headline also says what its numbers can show (aggregate/coverage.py): the fraction of
the scored words the model never saw in training (`unseen`) and of the pairs it cannot tell apart
(`tied`), and a one-line note under the table for each scoring function that decides mostly by
ties or unseen words."""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from spudflow.aggregate.columns import SPUD_ALL_SEEDS as ALL_SEEDS
from spudflow.aggregate.coverage import note
from spudflow.aggregate.inputs import NO_USABLE_SCORE
from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import read_artifact
from spudflow.core.dataset_families import DATASET_FAMILIES
from spudflow.core.outputs_registry import FIGURE_OUTPUTS, FORMAT_NAMES, TABLE_OUTPUTS
from spudflow.core.table_artifacts import STATUS_OK, TABLES

SCORING_FUNCTION = pl.concat_str("model", pl.lit(" · "), "method").alias("scoring_function")


def _spud_rows(summary: pl.DataFrame) -> pl.DataFrame:
    return summary.filter((pl.col("nonce_method") == "spud") & (pl.col("nonce_seed") == "all")
                          & (pl.col("outliers") == "kept"))


def spud_headline(summary: pl.DataFrame) -> pl.DataFrame:
    """Median ratio r per language and model (rows) and method (columns): SPUD nonce versions,
    every seed combined (one observation per original, §4.3), outliers kept (§4.4); then the
    fraction of the words the model never saw (`unseen`, the same for each method of a model) and
    of the pairs with r = 1 per method (`tied M`)."""
    rows = _spud_rows(summary)
    if rows.is_empty():
        return rows.select("language", "model")
    keys = ["language", "model"]
    # each median with its interval over the original sentences
    ratios = rows.with_columns(with_interval(rows, "ratio_median")).pivot(
        on="method", index=keys, values="ratio_median", sort_columns=True)
    unseen = rows.group_by(keys).agg(pl.col("unseen_fraction").drop_nulls().first().alias("unseen"))
    ties = rows.with_columns(pl.concat_str(pl.lit("tied "), "method").alias("tied")).pivot(
        on="tied", index=keys, values="tie_fraction", sort_columns=True)
    return ratios.join(unseen, on=keys, how="left").join(ties, on=keys, how="left").sort(keys)


def spud_coverage(summary: pl.DataFrame) -> pl.DataFrame:
    """A median ratio of exactly 1 with tied pairs is a tie: add-k gives an original and a
    nonce sentence the same probability where their words are unseen or their contexts too."""
    rows = _spud_rows(summary)
    return rows.select(pl.concat_str("language", pl.lit(": "), SCORING_FUNCTION).alias("what"),
                       "tie_fraction", "unseen_fraction",
                       ((pl.col("ratio_median") == 1.0) & (pl.col("tie_fraction") > 0))
                       .fill_null(False).alias("median_tied"))


def probe_headline(languages: pl.DataFrame) -> pl.DataFrame:
    """LAS on the original test sentences and its drop Δ = orig − nonce on each nonce method
    (means over probe seeds and nonce seeds), per treebank, model, baseline and layers."""
    keys = ["treebank", "model", "baseline", "layers"]
    rows = languages.with_columns(pl.concat_str(
        pl.col("dist_layer").cast(pl.String), pl.lit("/"), pl.col("label_layer").cast(pl.String),
        pl.when(pl.col("auto_layers")).then(pl.lit(" (auto)")).otherwise(pl.lit(""))
    ).alias("layers"))
    # each figure with its interval over the test sentences
    rows = rows.with_columns(with_interval(rows, "orig_las_mean"),
                             with_interval(rows, "delta_las_mean"))
    orig = rows.group_by(keys, maintain_order=True).agg(
        pl.col("orig_las_mean").first().alias("LAS orig"))
    deltas = rows.filter(pl.col("nonce").is_not_null()).select(
        *keys, pl.concat_str(pl.lit("Δ LAS "), "nonce").alias("nonce"), "delta_las_mean")
    if deltas.is_empty():
        return orig
    wide = deltas.pivot(on="nonce", index=keys, values="delta_las_mean", sort_columns=True)
    return orig.join(wide, on=keys, how="left", nulls_equal=True)


def german_headline(auc: pl.DataFrame) -> pl.DataFrame:
    """Mean (with its interval over templates) and sd over templates of the ROC AUC, grammatical
    vs case violation, with the tied pairs' and unseen words' fractions."""
    auc = auc.filter(pl.col("analysis") == "all")
    return auc.with_columns(with_interval(auc, "auc_mean")).select(
        "dataset", "model", "method", "n_templates", "auc_mean", "auc_sd",
        pl.col("unseen_fraction").alias("unseen"), pl.col("tie_fraction").alias("tied")).sort(
        "dataset", "model", "method")


def german_coverage(auc: pl.DataFrame) -> pl.DataFrame:
    return auc.filter(pl.col("analysis") == "all").select(
        pl.concat_str("dataset", pl.lit(": "), SCORING_FUNCTION).alias("what"), "tie_fraction",
        "unseen_fraction")


def cola_headline(thresholds: pl.DataFrame) -> pl.DataFrame:
    """MCC of the cross-validated thresholds (with its interval) per split and scoring function
    × normalisation, a row each (as the other headlines: a column each outgrew the page at ten),
    with the unseen words' and tied pairs' fractions."""
    rows = thresholds.with_columns(
        pl.concat_str("model", pl.lit(" · "), "method", pl.lit(" · "), "normalisation")
        .alias("scoring_function"))
    return rows.with_columns(with_interval(rows, "mcc")).select(
        "split", "scoring_function", "mcc", pl.col("unseen_fraction").alias("unseen"),
        pl.col("tie_fraction").alias("tied")).sort("split", "scoring_function")


def cola_data(thresholds: pl.DataFrame) -> list[str]:
    """A line per dataset of the table that is not CoLA itself (a family that feeds CoLA's
    tables: core/dataset_families.py), saying what it is and which splits are its."""
    lines = []
    for (dataset,), rows in sorted(thresholds.partition_by("dataset", as_dict=True).items()):
        family = DATASET_FAMILIES.get(dataset)
        if family is not None and family.described:
            splits = sorted(set(rows["split"]))
            named = ", ".join(f"`{s}`" for s in splits)
            lines.append(f"Data: {dataset} (split{'s' if len(splits) > 1 else ''} {named}) is "
                         f"{family.described}.")
    return lines


def cola_coverage(thresholds: pl.DataFrame) -> pl.DataFrame:
    return thresholds.select(
        pl.concat_str("split", pl.lit(": "), "model", pl.lit(" · "), "method", pl.lit(" · "),
                      "normalisation").alias("what"), "tie_fraction", "unseen_fraction")


def with_interval(frame: pl.DataFrame, value: str) -> pl.Series:
    """The figure `value` with its interval (`value`_ci_low, _ci_high) as one cell,
    "0.731 [0.702, 0.759]"; the figure alone where it has no interval, null where it is null."""
    cells = [
        None if v is None else _cell(v) if low is None or high is None
        else f"{_cell(v)} [{_cell(low)}, {_cell(high)}]"
        for v, low, high in frame.select(value, f"{value}_ci_low", f"{value}_ci_high").iter_rows()]
    return pl.Series(value, cells, dtype=pl.String)


INTERVAL = ("[low, high]: its Wilson score interval over the pairs (config "
            "aggregate.uncertainty.level, 0.95 unless set)")


def blimp_headline(overall: pl.DataFrame) -> pl.DataFrame:
    """Accuracy with its interval and its ties beside it: a tie counts as wrong, so an accuracy
    far below 0.5 may mean "cannot tell" rather than "prefers the ungrammatical sentence"."""
    return overall.with_columns(with_interval(overall, "accuracy")).select(
        "dataset", "model", "method", "n_pairs", "accuracy", "n_ties",
                          pl.col("unseen_fraction").alias("unseen"),
                          pl.col("tie_fraction").alias("tied")).sort("dataset", "model", "method")


def blimp_coverage(overall: pl.DataFrame) -> pl.DataFrame:
    return overall.select(pl.concat_str("dataset", pl.lit(": "), SCORING_FUNCTION).alias("what"),
                          "tie_fraction", "unseen_fraction")


def japanese_headline(accuracy: pl.DataFrame) -> pl.DataFrame:
    """Fraction of obligatory contexts where the whole-sentence score prefers the right verb, per
    dataset and scoring function, with the tied pairs beside it (they count as wrong)."""
    rows = accuracy.filter(pl.col("region").is_null()).with_columns(SCORING_FUNCTION)
    rows = rows.with_columns(with_interval(rows, "accuracy_obligatory"))
    return rows.select("dataset", "scoring_function", "n_obligatory", "accuracy_obligatory",
                       pl.col("n_ties_obligatory").alias("n_ties"),
                       pl.col("unseen_fraction").alias("unseen"),
                       pl.col("tie_fraction_obligatory").alias("tied")
                       ).sort("dataset", "scoring_function")


def human_eval_headline(grammaticality: pl.DataFrame) -> pl.DataFrame:
    """Table 1 as the paper prints it: percent yes / no / unsure per nonce method, pooled kappa."""
    return grammaticality.select(
        "language", "treebank", "split", "annotators", "sentences",
        *[f"{m}_{a}" for m in ("spud", "posfree") for a in ("yes", "no", "unsure")],
        "kappa").sort("language", "treebank", "split")


def japanese_coverage(accuracy: pl.DataFrame) -> pl.DataFrame:
    rows = accuracy.filter(pl.col("region").is_null())
    return rows.select(pl.concat_str("dataset", pl.lit(": "), SCORING_FUNCTION).alias("what"),
                       pl.col("tie_fraction_obligatory").alias("tie_fraction"), "unseen_fraction")


# What the headlines' two coverage columns are (coverage.py).
UNSEEN_TIED = ("`unseen`: the fraction of the scored words the model never saw in training (n-gram "
               "models; n/a for transformers, whose subwords spell every word); `tied`: the "
               "fraction of pairs it cannot tell apart")


@dataclass(frozen=True)
class Section:
    title: str
    source: str  # the paper's table or section the headline stands for
    table: str  # the full table the headline is cut from (an entry of the outputs registry)
    headline: Callable[[pl.DataFrame], pl.DataFrame]
    caption: str
    # (what, tie_fraction, unseen_fraction[, median_tied]) of the headline's scoring functions,
    # for the notes of those that decide mostly by ties or unseen words; None: no scored pairs
    # (probes)
    coverage: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    # lines saying which data the rows are, where that is not the paper's own
    data: Callable[[pl.DataFrame], list[str]] | None = None

    @property
    def figures(self) -> tuple[str, ...]:
        """Figures of the experiment, linked when the run made them: the registry's front-page
        figures fed by what feeds the table (core/outputs_registry.py)."""
        feed = TABLE_OUTPUTS[self.table].feed
        return tuple(f.name for f in FIGURE_OUTPUTS.values() if f.front_page and f.feed == feed)

    @property
    def comparison(self) -> str | None:
        """The family's `*_comparison` table (its significance line), if the registry has one."""
        return comparison_of(self.table)


SECTIONS = (
    Section("SPUD: nonce vs original sentences", "SPUD paper, Tables 10–11", "spud_ratio_summary",
            spud_headline, "Median ratio r = PPL(nonce) / PPL(orig) of the SPUD pairs per "
            "language, model and scoring method, outliers kept (§4.4), every nonce seed combined "
            "(one geometric-mean ratio per original): spudflow's extension; the paper reports "
            "one SPUD instance per sentence (§4.3), the per-seed rows of the full table. "
            "[low, high]: a bootstrap interval over the original sentences (config "
            f"aggregate.uncertainty). {UNSEEN_TIED} (r = 1).", spud_coverage),
    Section("SPUD: DepProbe", "SPUD paper, Tables 3–4 and 14–16", "probe_languages",
            probe_headline, "Probe LAS on each treebank's original test sentences and its drop "
            "Δ = orig − nonce on the nonce versions, means over probe seeds (and nonce seeds), "
            "per treebank, model, baseline (`lm`: the LM itself) and layers. [low, high]: a "
            "bootstrap interval over the test sentences (each with its nonce versions: Δ paired "
            "by sentence), which the seed sd of the full table does not include."),
    Section("SPUD: human evaluation", "SPUD paper, Table 1", "human_eval_grammaticality",
            human_eval_headline, "Grammaticality judgments of the SPUD and the rule-free "
            "POS-only (posfree) nonce sentences: percent yes / no / unsure, the mean over "
            "annotators, and Cohen's kappa pooled over both nonce sentences (§3.2). Items whose "
            "sentences changed since the sheets were exported are left out and counted "
            "(`stale_items`)."),
    Section("German case violations", "German case paper, Results and the per-template AUC figure",
            "german_case_auc",
            german_headline, "ROC AUC of sentence log-probability, grammatical sentences against "
            "case violations: mean over templates ([low, high]: its bootstrap interval over "
            "templates, config aggregate.uncertainty) and sd over templates. "
            f"{UNSEEN_TIED} (a grammatical "
            "sentence and a violation of one template with equal log-probabilities: 1/2 in the "
            "AUC).", german_coverage),
    Section("CoLA", "CoLA paper, Table 4", "cola_thresholds", cola_headline,
            "Matthews correlation of cross-validated thresholds on normalised sentence scores "
            "per split and scoring function ([low, high]: its bootstrap interval over the "
            "sentences, the thresholds as fitted; config aggregate.uncertainty). "
            f"{UNSEEN_TIED} (an acceptable and an unacceptable sentence with equal scores, "
            "which no threshold separates).", cola_coverage, data=cola_data),
    Section("BLiMP", "BLiMP (Warstadt et al. 2020), Table 3", "blimp_overall", blimp_headline,
            "Accuracy over the scored minimal pairs: the grammatical sentence gets the higher "
            f"log-probability ({INTERVAL}); n_ties pairs have equal scores and count as wrong "
            "(an accuracy far below 0.5 with many ties means the scoring function cannot tell "
            f"the sentences apart). {UNSEEN_TIED}.", blimp_coverage),
    Section("Japanese transitivity", "Japanese thesis, §4.5", "japanese_accuracy",
            japanese_headline, "Accuracy on obligatory contexts: the whole-sentence perplexity "
            f"prefers the verb of the right transitivity ({INTERVAL}); n_ties obligatory pairs "
            "have equal "
            "scores and count as wrong (not preferring the transitive verb). "
            f"{UNSEEN_TIED}.", japanese_coverage),
)


def examples_tables() -> dict[str, str]:
    """Section table -> the examples table its rule makes (its family's, aggregate/
    family_examples.py), for the "where it goes wrong" list."""
    return {s.table: o.name for s in SECTIONS for o in TABLE_OUTPUTS.values()
            if o.rule == TABLE_OUTPUTS[s.table].rule and o.name.endswith("_examples")}


def page_tables() -> list[str]:
    """The tables the page reads: each section's, its family's comparisons and examples."""
    return [*(s.table for s in SECTIONS), *(s.comparison for s in SECTIONS if s.comparison),
            *examples_tables().values()]


def shown_outputs() -> list[str]:
    """The files the rules pass to the page (registry targets): each section's table (.parquet),
    its figures (.svg) and its examples table (.parquet)."""
    return [o.target for s in SECTIONS
            for o in (TABLE_OUTPUTS[s.table], *(FIGURE_OUTPUTS[f] for f in s.figures),
                      *([TABLE_OUTPUTS[s.comparison]] if s.comparison else []))] + [
        TABLE_OUTPUTS[name].target for name in examples_tables().values()]


def front_page(tables: dict[str, Path], figures: dict[str, Path], out: Path) -> str:
    """The page's HTML; links are relative to the page's folder `out`."""
    unknown = sorted((set(tables) - set(page_tables()))
                     | (set(figures) - {f for s in SECTIONS for f in s.figures}))
    if unknown:
        raise ValueError(f"no front-page section for {unknown[0]!r}")
    parts = [_HEAD, _nav(tables)]
    for section in SECTIONS:
        parts.append(_section(section, tables.get(section.table), figures, out,
                              tables.get(section.comparison)))
    parts.append(_where_it_goes_wrong(tables, out))
    parts.append("</body></html>\n")
    return "".join(parts)


def write_front_page(tables: dict[str, Path], figures: dict[str, Path], out: Path) -> None:
    page = front_page(tables, figures, out.parent)
    with atomic_outputs() as outputs:
        outputs.path(out).write_text(page, encoding="utf-8")


def _section(section: Section, path: Path | None, figures: dict[str, Path], out: Path,
             comparison: Path | None = None) -> str:
    anchor = section.table
    head = (f'<section id="{anchor}"><h2>{html.escape(section.title)}</h2>'
            f'<p class="source">{html.escape(section.source)}</p>')
    if path is None:
        return head + "<p>Not in this run: the config makes no input for it.</p></section>\n"
    table = read_artifact(path, TABLES[section.table])
    unscored = _unscored_lines(table) + _stale_lines(table)
    table, note = _computed_rows(table)
    headline = section.headline(table)
    links = [_link(path.with_suffix(".csv"), out, f"full table {section.table} (CSV)"),
             _link(path.with_suffix(".md"), out, "Markdown")]
    links += [_link(figures[name], out, f"figure {name}") for name in section.figures
              if name in figures]
    body = (_html_table(headline) if headline.height else
            "<p>The full table has no rows for this headline.</p>")
    body += _notes(section, table)
    data = "".join(f'<p class="data">{html.escape(line)}</p>'
                   for line in (section.data(table) if section.data else []))
    if comparison is not None:
        body += significance_line(read_artifact(comparison, TABLES[section.comparison]))
        links.append(_link(comparison.with_suffix(".csv"), out,
                           f"comparisons {section.comparison} (CSV)"))
    return (head + f"<p>{html.escape(section.caption)}</p>{data}{unscored}{body}{note}"
            f'<p class="links">{" · ".join(links)}</p></section>\n')


# At most this many rows of a family's examples table on the page (the CSV has them all).
MAX_EXAMPLES_SHOWN = 60
# The per-item file of a family whose examples table has no FAMILY_items beside it.
PER_ITEM = {"spud_examples": "spud_ratios",
            "japanese_examples": "japanese_transitivity_items"}


def per_item_links(examples: str, path: Path, out: Path) -> list[str]:
    """Links to the per-item file beside the examples table `examples` (at `path`), one per
    format of its registry entry the run wrote (a large one is Parquet only, and the link says
    so); none for a family without one (DepProbe)."""
    name = PER_ITEM.get(examples, examples.removesuffix("_examples") + "_items")
    if name not in TABLE_OUTPUTS:
        return []
    formats = TABLE_OUTPUTS[name].formats
    only = " only" if len(formats) == 1 else ""
    return [_link(file, out, f"every item: {name} ({FORMAT_NAMES[fmt]}{only})")
            for fmt in formats if (file := path.with_name(f"{name}.{fmt}")).is_file()]


def _where_it_goes_wrong(tables: dict[str, Path], out: Path) -> str:
    """A collapsed list of each family's examples table (the items each scoring function gets
    most confidently wrong), every cell escaped (sentences hold <, &), with links to the table's
    CSV and to the family's per-item file, in each format the run wrote."""
    parts = []
    for section in SECTIONS:
        name = examples_tables().get(section.table)
        if name is None or name not in tables:
            continue
        path = tables[name]
        # the ids are in the linked table; the page shows the text, scores and margin
        frame = read_artifact(path, TABLES[name])
        frame = frame.drop(c for c in frame.columns if c.endswith(("group_id", "item_id"))
                           or c.startswith("item_id"))
        if "method" in frame.columns:  # a scoring function (probes: model and baseline)
            at = frame.columns.index("model")
            frame = frame.select(*frame.columns[:at], SCORING_FUNCTION,
                                 pl.exclude(*frame.columns[:at], "model", "method"))
        links = [_link(path.with_suffix(".csv"), out, f"{name} (CSV)"),
                 *per_item_links(name, path, out)]
        shown = frame if frame.height <= MAX_EXAMPLES_SHOWN else frame.filter(
            pl.col("rank") == 1).head(MAX_EXAMPLES_SHOWN)
        body = (_html_table(shown) if frame.height else
                "<p>No scoring function gets an item wrong.</p>")
        if shown.height < frame.height:
            body += (f'<p class="note">Shown: {shown.height} of its {frame.height} rows (each '
                     "scoring function's most confidently wrong item"
                     + ("" if shown.height == frame.filter(pl.col("rank") == 1).height
                        else f", the first {MAX_EXAMPLES_SHOWN}")
                     + "); every row in the CSV.</p>")
        parts.append(f"<h3>{html.escape(section.title)}</h3>{body}"
                     f'<p class="links">{" · ".join(links)}</p>')
    if not parts:
        return ""
    return ('<div id="examples"><style>#examples td { text-align: left; vertical-align: top; '
            "min-width: 4em; }</style><details><summary>Where it goes wrong: the items each "
            "scoring function gets most confidently wrong (config aggregate.examples per "
            "function)</summary>" + "".join(parts) + "</details></div>\n")


# ---- the significance line: which model differences hold after Holm -------------------------

ALPHA = 0.05  # the significance level of the line (Holm-adjusted p-values below it)
# At most this many significant differences named in the line (the smallest Holm p first); the
# comparison CSV, linked beside it, has them all.
MAX_NAMED = 8


def comparison_of(table: str) -> str | None:
    """The `*_comparison` table fed by what feeds `table` (core/outputs_registry.py)."""
    feed = TABLE_OUTPUTS[table].feed
    names = [o.name for o in TABLE_OUTPUTS.values()
             if o.feed == feed and o.name.endswith("_comparison")]
    return names[0] if names else None


def side_label(row: dict, side: list[str]) -> str:
    """What names one side of a comparison, as the tables show it: its values joined by " · ",
    a probe configuration's two layers as `layers D/L` (as probe_languages' `layers`), and a
    true flag by its name (`auto layers`), a false one left out."""
    values = {column[:-2]: row[column] for column in side}  # NAME_a -> NAME
    parts = []
    for name, value in values.items():
        if name == "label_layer" and "dist_layer" in values:
            continue
        if name == "dist_layer":
            parts.append(f"layers {value}/{values.get('label_layer', value)}")
        elif isinstance(value, bool):
            parts += [name.replace("_", " ")] if value else []
        else:
            parts.append(str(value))
    return " · ".join(parts)


def significance_line(comparison: pl.DataFrame) -> str:
    """One line: the paired differences significant after Holm's adjustment over the
    family's comparison table, and how many are not (or were not tested). Of a table by
    nonce seed (SPUD), the rows of seed `all` only: the headline's figure, Holm-adjusted within
    them."""
    if "nonce_seed" in comparison.columns:
        comparison = comparison.filter(pl.col("nonce_seed") == ALL_SEEDS)
    if comparison.is_empty():
        return ('<p class="significance">Model differences: none to test (no two scoring '
                "functions scored the same items).</p>")
    tested = comparison.filter(pl.col("p_holm").is_not_null())
    significant = tested.filter(pl.col("p_holm") < ALPHA)
    # the group's columns, then what names each side (NAME_a ..., NAME_b ...), then statistic
    named = comparison.columns[:comparison.columns.index("statistic")]
    side_a = [c for c in named if c.endswith("_a")]
    side_b = [c for c in named if c.endswith("_b")]
    group = named[:named.index(side_a[0])]
    parts = []
    named_rows = significant.with_row_index("order").sort(
        pl.col("p_holm"), pl.col("difference").abs(), "order", descending=[False, True, False])
    for row in named_rows.head(MAX_NAMED).iter_rows(named=True):
        # a null group value is the whole (a Japanese sentence, a probe's original set)
        where = ", ".join(str(row[g]) for g in group if row[g] is not None)
        a, b = (side_label(row, side) for side in (side_a, side_b))
        interval = ("" if row["difference_ci_low"] is None else
                    f" [{row['difference_ci_low']:.3f}, {row['difference_ci_high']:.3f}]")
        parts.append(f"{row['statistic']} ({where}): {a} − {b} = {row['difference']:+.3f}"
                     f"{interval}, Holm p = {row['p_holm']:.2g}")
    rest = tested.height - significant.height
    untested = comparison.height - tested.height
    head = f"Model differences significant after Holm's adjustment (p < {ALPHA:g}): "
    if not parts:
        text = head + f"none of the {rest} tested"
    else:
        more = significant.height - len(parts)
        if more:
            parts.append(f"and {more} more (the comparisons CSV)")
        text = head + "; ".join(parts) + ". " + (
            f"The other {rest} {'difference is' if rest == 1 else 'differences are'} not "
            "significant" if rest else "Every tested difference is significant")
    if untested:
        text += f"; {untested} not tested (aggregate.uncertainty.resamples 0)"
    return f'<p class="significance">{html.escape(text)}.</p>'


def _unscored_lines(table: pl.DataFrame) -> str:
    """A red line per scoring function with no usable score (every score NaN, e.g. a float16
    overflow): the table's rows of it say why, and no number of it is in the headline."""
    if "reason" not in table.columns or "dataset" not in table.columns:
        return ""
    rows = table.filter(pl.col("status") != STATUS_OK,
                        pl.col("reason").str.starts_with(NO_USABLE_SCORE)).select(
        "dataset", "model", "method", "reason").unique().sort("dataset", "model", "method")
    return "".join(f'<p class="note" style="color: #b00020">{html.escape(dataset)}, '
                   f"{html.escape(model)} · {html.escape(method)}: {html.escape(reason)}</p>"
                   for dataset, model, method, reason in rows.iter_rows())


def _stale_lines(table: pl.DataFrame) -> str:
    """A red line per kit whose filled annotation sheets are stale for some items (their
    sentences changed since the export): those items are left out of the human-evaluation
    tables (nonce/human_eval/tables.py)."""
    if "stale_items" not in table.columns:
        return ""
    rows = table.filter(pl.col("stale_items") > 0).sort("treebank", "split")
    return "".join(
        f'<p class="note" style="color: #b00020">{html.escape(treebank)} {html.escape(split)}: '
        f"the filled annotation sheets are stale for {n} item{'s' if n != 1 else ''} "
        f"({html.escape(stale)}): their sentences changed since the sheets were exported, so "
        "they are left out of the tables; re-annotate them with the new blank sheet "
        "`human-eval export` wrote beside each filled one (NAME.new.csv).</p>"
        for treebank, split, n, stale in rows.select(
            "treebank", "split", "stale_items", "stale").iter_rows())


def _computed_rows(table: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """The rows whose numbers were computed (status `ok`, where the table has a status), and a
    note counting the others (their reasons are in the full table)."""
    if "status" not in table.columns:
        return table, ""
    left_out = table.filter(pl.col("status") != STATUS_OK)
    if left_out.is_empty():
        return table, ""
    counts = ", ".join(f"{n} {status}" for status, n in
                       left_out.group_by("status").len().sort("status").iter_rows())
    return (table.filter(pl.col("status") == STATUS_OK),
            f'<p class="note">Not shown: {left_out.height} rows whose numbers could not be '
            f"computed ({html.escape(counts)}); the full table gives each one's reason.</p>")


def _notes(section: Section, table: pl.DataFrame) -> str:
    """One line per scoring function of the headline that decides mostly by ties or unseen
    words."""
    if section.coverage is None:
        return ""
    lines = [note(*row) for row in section.coverage(table).sort("what").iter_rows()]
    return "".join(f'<p class="note">{html.escape(line)}</p>' for line in lines if line)


def _html_table(frame: pl.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in frame.iter_rows())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _cell(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) >= 1000 else f"{value:.3f}"
    return html.escape(str(value))


def _link(path: Path, out: Path, text: str) -> str:
    # relative to the page's folder, `../` where the file lies outside it
    href = Path(os.path.relpath(Path(path).resolve(), out.resolve())).as_posix()
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def _nav(tables: dict[str, Path]) -> str:
    items = "".join(f'<li><a href="#{s.table}">{html.escape(s.title)}</a></li>'
                    for s in SECTIONS if s.table in tables)
    return (f"<nav><ul>{items}</ul><p>Every table and figure, with the workflow graph: "
            '<a href="report.html">the Snakemake report</a> (made after the run by '
            "<code>snakemake --report results/report.html</code>, as <code>make run</code> does)."
            "</p></nav>\n")


_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>spudflow results</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: .5em 0; font-size: 90%; }
th, td { border-bottom: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
.source { color: #666; margin-top: -.8em; font-size: 90%; }
.note { color: #8a4b00; margin: .2em 0; font-size: 90%; }
nav ul { display: flex; flex-wrap: wrap; gap: 1.2em; list-style: none; padding: 0; }
section { margin-top: 2em; }
</style></head><body>
<h1>spudflow: what do language models know about syntax?</h1>
"""
