"""Figures from the aggregate tables, as STEM.png and STEM.svg (matplotlib, Agg backend).

Byte-identical on reruns: SVG ids come from a fixed hash salt and no date is written.
"""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib
import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from spudflow.aggregate.german_case_groups import CASES, DOUBLED_POSITIONS, GRAMMATICAL_ORDERS
from spudflow.aggregate.spud_scores import per_original
from spudflow.core.atomic import atomic_outputs

# Figures are made without pyplot (no global figure registry), on an Agg canvas.
STYLE = {"svg.hashsalt": "spudflow", "font.size": 8, "axes.titlesize": 9}
COLOURS = matplotlib.colormaps["tab10"].colors
EVAL_STYLES = {"orig": "-", "spud": "--", "pos": ":", "dev": (0, (1, 1))}
# How a figure marks a missing value (never drawn as 0).
MISSING = "n/a"


def styled(draw):
    """Runs a figure function under STYLE (also when saving, where svg.hashsalt is read)."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)
    return wrapper


def save(fig: Figure, stem: str | Path) -> None:
    """STEM.png and STEM.svg of one layout, cropped to one tight box. savefig with
    bbox_inches="tight" would lay the figure out and draw it once more per format to find the
    box: two fifths of the time a figure took to draw and save."""
    stem = Path(stem)
    fig.draw_without_rendering()  # runs the constrained layout
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    box = box.padded(matplotlib.rcParams["savefig.pad_inches"])
    fig.set_layout_engine(None)  # keep the positions just laid out: no layout in savefig
    with atomic_outputs() as out:
        fig.savefig(out.path(stem.with_name(stem.name + ".png")), format="png", dpi=150,
                    bbox_inches=box)
        fig.savefig(out.path(stem.with_name(stem.name + ".svg")), format="svg",
                    bbox_inches=box, metadata={"Date": None})


def _panels(n: int, width: float = 5.0, height: float = 3.2, ncols: int = 1):
    nrows = max(1, -(-n // ncols))
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes.ravel()


def _empty(stem: str | Path, what: str) -> None:
    fig, (ax,) = _panels(1)
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center")
    ax.set_axis_off()
    save(fig, stem)


@styled
def spud_log_ratios(pairs: pl.DataFrame, stem: str | Path) -> None:
    """Box plots of log(f(nonce) / f(orig)) per language and scoring function (paper Fig. 2);
    one panel per nonce method. One box value per original sentence: its mean log ratio over the
    nonce seeds (pooling the seeds would count each original once per seed)."""
    if pairs.is_empty():
        return _empty(stem, "sentence pairs")
    pairs = per_original(pairs).with_columns(
        pl.concat_str("model", pl.lit("/"), "method").alias("function"))
    function_names = sorted(pairs["function"].unique())
    methods = sorted(pairs["nonce_method"].unique())
    fig, axes = _panels(len(methods), width=max(5.0, 1.2 * pairs["language"].n_unique() + 2))
    width = 0.8 / len(function_names)
    for ax, method in zip(axes, methods, strict=False):
        panel = pairs.filter(pl.col("nonce_method") == method)
        languages = sorted(panel["language"].unique())
        for j, function in enumerate(function_names):
            data, positions = [], []
            for i, language in enumerate(languages):
                values = panel.filter((pl.col("language") == language)
                                      & (pl.col("function") == function))["log_ratio"]
                if values.len():
                    data.append(values.to_numpy())
                    positions.append(i - 0.4 + width * (j + 0.5))
            if data:
                boxes = ax.boxplot(data, positions=positions, widths=width * 0.9,
                                   patch_artist=True, flierprops={"markersize": 2})
                for box in boxes["boxes"]:
                    box.set_facecolor(COLOURS[j % len(COLOURS)])
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set_xticks(range(len(languages)), languages)
        ax.set_ylabel("log ratio nonce / original")
        ax.set_title(f"nonce method: {method}")
    axes[0].legend(handles=[Patch(color=COLOURS[j % len(COLOURS)], label=s)
                            for j, s in enumerate(function_names)], fontsize=7)
    save(fig, stem)


@styled
def german_case_roc(points: pl.DataFrame, stem: str | Path) -> None:
    """ROC curves per scoring function, all templates pooled; one panel per dataset."""
    if points.is_empty():
        return _empty(stem, "ROC curves")
    datasets = sorted(points["dataset"].unique())
    fig, axes = _panels(len(datasets), width=4.0, height=4.0)
    for ax, dataset in zip(axes, datasets, strict=False):
        panel = points.filter(pl.col("dataset") == dataset)
        for j, ((model, method), curve) in enumerate(sorted(
                panel.partition_by("model", "method", as_dict=True).items())):
            ax.plot(curve["fpr"], curve["tpr"], color=COLOURS[j % len(COLOURS)],
                    label=f"{model}/{method} (AUC {curve['auc'][0]:.3f})")
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.5, linestyle=":")
        ax.set_xlabel("false positive rate (violations)")
        ax.set_ylabel("true positive rate (grammatical)")
        ax.set_title(dataset)
        ax.legend(fontsize=7, loc="lower right")
    save(fig, stem)


# The panels of the word-order figure, left to right: title and x values.
ORDER_PANELS = {
    "one_vs_six": ("1 vs 6 by case order", GRAMMATICAL_ORDERS),
    "one_vs_six_first_case": ("1 vs 6 by first case", CASES),
    "order_vs_other_orders": ("one case order vs the other five (grammatical)",
                              GRAMMATICAL_ORDERS),
    "violation_position": ("grammatical vs violations, doubled case at positions",
                           DOUBLED_POSITIONS),
}


def _function_bars(ax, panel: pl.DataFrame, names: list[str], function_names: list[str]) -> None:
    """Bars of auc_mean ± auc_sd per subset (x) and scoring function (colour); a missing mean
    gets no bar but n/a, a missing sd no error bar."""
    width = 0.8 / len(function_names)
    for j, function in enumerate(function_names):
        rows = {r["subset"]: r for r in panel.filter(pl.col("function") == function).iter_rows(
            named=True)}
        label = function  # on the function's first bar, wherever the first subsets are missing
        for i, name in enumerate(names):
            x = i - 0.4 + width * (j + 0.5)
            row = rows.get(name)
            if row is None or row["auc_mean"] is None:
                ax.text(x, 0.02, MISSING, ha="center", va="bottom", rotation=90, fontsize=6,
                        color="grey")
                continue
            ax.bar(x, row["auc_mean"], width=width * 0.9, color=COLOURS[j % len(COLOURS)],
                   label=label,
                   yerr=row["auc_sd"] if row["auc_sd"] is not None else None,
                   error_kw={"linewidth": 0.6, "capsize": 1.5})
            label = None
    ax.axhline(0.5, color="grey", linewidth=0.5, linestyle=":")
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1)


@styled
def german_case_order_auc(aucs: pl.DataFrame, stem: str | Path) -> None:
    """The word-order figure: mean template AUC (± sd) of the reference's 1-vs-6 by case order and
    by first case, one order against the other five, and grammatical against violations by the
    positions
    of the doubled case; one row of panels per dataset."""
    aucs = aucs.filter(pl.col("comparison").is_in(list(ORDER_PANELS)))
    if aucs.is_empty():
        return _empty(stem, "case order AUCs")
    aucs = aucs.with_columns(pl.concat_str("model", pl.lit("/"), "method").alias("function"))
    datasets = sorted(aucs["dataset"].unique())
    function_names = sorted(aucs["function"].unique())
    fig, axes = _panels(len(datasets) * len(ORDER_PANELS), width=4.0, height=3.0,
                        ncols=len(ORDER_PANELS))
    for d, dataset in enumerate(datasets):
        for c, (comparison, (title, names)) in enumerate(ORDER_PANELS.items()):
            ax = axes[d * len(ORDER_PANELS) + c]
            panel = aucs.filter(pl.col("dataset") == dataset, pl.col("comparison") == comparison)
            _function_bars(ax, panel, list(names), function_names)
            ax.set_title(f"{dataset}: {title}", fontsize=7)
            if c == 0:
                ax.set_ylabel("ROC AUC (mean over templates)")
                ax.legend(fontsize=6)
    save(fig, stem)


@styled
def german_case_auc_templates(per_template: pl.DataFrame, stem: str | Path) -> None:
    """The per-template AUC figure: the distribution of the per-template AUCs per scoring function
    (box and every template as a dot, the mean as a diamond); one panel per dataset and analysis."""
    per_template = per_template.filter(pl.col("auc").is_not_null())
    if per_template.is_empty():
        return _empty(stem, "template AUCs")
    per_template = per_template.with_columns(
        pl.concat_str("model", pl.lit("/"), "method").alias("function"))
    panels = sorted(per_template.select("dataset", "analysis").unique().iter_rows())
    function_names = sorted(per_template["function"].unique())
    fig, axes = _panels(len(panels), width=max(4.0, 0.9 * len(function_names) + 2), height=3.2,
                        ncols=min(2, len(panels)))
    for ax, (dataset, analysis) in zip(axes, panels, strict=False):
        panel = per_template.filter(pl.col("dataset") == dataset,
                                    pl.col("analysis") == analysis)
        for j, function in enumerate(function_names):
            values = panel.filter(pl.col("function") == function).sort("template")["auc"].to_numpy()
            if not len(values):
                ax.text(j, 0.02, MISSING, ha="center", va="bottom", fontsize=6, color="grey")
                continue
            colour = COLOURS[j % len(COLOURS)]
            ax.boxplot([values], positions=[j], widths=0.5, showfliers=False,
                       medianprops={"color": "black"})
            # Dots spread evenly across the box (no random jitter: reruns are byte-identical).
            spread = np.linspace(-0.15, 0.15, len(values)) if len(values) > 1 else [0.0]
            ax.scatter(j + np.asarray(spread), values, s=6, color=colour, zorder=3)
            ax.scatter([j], [values.mean()], marker="D", s=18, color="black", zorder=4)
        ax.axhline(0.5, color="grey", linewidth=0.5, linestyle=":")
        ax.set_xticks(range(len(function_names)), function_names, rotation=30, ha="right")
        ax.set_ylim(0, 1)
        ax.set_ylabel("ROC AUC per template")
        ax.set_title(f"{dataset} ({analysis})")
    save(fig, stem)


# Which chosen layers each metric panel of the layer figure marks.
CHOSEN_ON = {"relacc_mean": ("label",), "uas_mean": ("dist",), "las_mean": ("dist", "label")}


@styled
def probe_layers(layers: pl.DataFrame, stem: str | Path) -> None:
    """RelAcc, UAS and LAS per layer for each model (no baseline), selection (dev), original
    and nonce sets; one row of panels per treebank (App. F.6, Fig. 8). The layers chosen for
    `auto` are marked by a vertical line in the model's colour: the label layer on the RelAcc
    panel, the distance layer on the UAS panel, both on the LAS panel."""
    layers = layers.filter(pl.col("baseline") == "lm")
    if layers.is_empty():
        return _empty(stem, "layer sweep")
    metrics = ("relacc_mean", "uas_mean", "las_mean")
    treebanks = sorted(layers["treebank"].unique())
    fig, axes = _panels(len(treebanks) * len(metrics), width=3.6, height=3.0, ncols=len(metrics))
    models = sorted(layers["model"].unique())
    for t, treebank in enumerate(treebanks):
        for m, metric in enumerate(metrics):
            ax = axes[t * len(metrics) + m]
            panel = layers.filter(pl.col("treebank") == treebank)
            for (model, eval_set), curve in sorted(
                    panel.partition_by("model", "eval_set", as_dict=True).items()):
                curve = curve.sort("layer")
                ax.plot(curve["layer"], curve[metric], marker="o", markersize=2,
                        color=COLOURS[models.index(model) % len(COLOURS)],
                        linestyle=EVAL_STYLES.get(eval_set, "-."), label=f"{model} {eval_set}")
            for part in CHOSEN_ON[metric]:
                chosen = panel.filter(pl.col(f"{part}_chosen")).unique(["model", "layer"])
                for model, layer in chosen.select("model", "layer").sort("model").iter_rows():
                    ax.axvline(layer, color=COLOURS[models.index(model) % len(COLOURS)],
                               linewidth=0.8, alpha=0.6, label=f"{model} {part} layer {layer}")
            ax.set_xlabel("layer")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_title(f"{treebank}: {metric.removesuffix('_mean')}")
            if m == 0:
                ax.legend(fontsize=6)
    save(fig, stem)


@styled
def blimp_field(fields: pl.DataFrame, stem: str | Path) -> None:
    """BLiMP accuracy per field, one bar per scoring function; one panel per dataset."""
    if fields.is_empty():
        return _empty(stem, "BLiMP results")
    fields = fields.with_columns(pl.concat_str("model", pl.lit("/"), "method").alias("function"))
    datasets = sorted(fields["dataset"].unique())
    fig, axes = _panels(len(datasets), width=max(5.0, 1.1 * fields["field"].n_unique() + 2))
    for ax, dataset in zip(axes, datasets, strict=False):
        panel = fields.filter(pl.col("dataset") == dataset)
        names = sorted(panel["field"].unique())
        function_names = sorted(panel["function"].unique())
        width = 0.8 / len(function_names)
        for j, function in enumerate(function_names):
            rows = dict(panel.filter(pl.col("function") == function).select("field", "accuracy")
                        .iter_rows())
            x = [i - 0.4 + width * (j + 0.5) for i in range(len(names))]
            # A field without an accuracy (no row, or no pair scored) gets no bar but "n/a".
            shown = [(x_i, rows[n]) for x_i, n in zip(x, names, strict=True)
                     if rows.get(n) is not None]
            ax.bar([x_i for x_i, _ in shown], [v for _, v in shown], width=width * 0.9,
                   label=function, color=COLOURS[j % len(COLOURS)])
            for x_i, n in zip(x, names, strict=True):
                if rows.get(n) is None:
                    ax.text(x_i, 0.02, MISSING, ha="center", va="bottom", rotation=90,
                            fontsize=6, color="grey")
        ax.axhline(0.5, color="grey", linewidth=0.5, linestyle=":")
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.set_title(dataset)
        ax.legend(fontsize=7)
    save(fig, stem)


@styled
def japanese_agreement(agreement: pl.DataFrame, stem: str | Path) -> None:
    """Heat map of the fraction of pairs on which two scoring modes choose the same verb."""
    if agreement.is_empty():
        return _empty(stem, "agreement matrix")
    datasets = sorted(agreement["dataset"].unique())
    n_modes = agreement["mode_a"].n_unique()
    size = max(4.0, 0.6 * n_modes + 2)
    fig, axes = _panels(len(datasets), width=size, height=size)
    for ax, dataset in zip(axes, datasets, strict=False):
        panel = agreement.filter(pl.col("dataset") == dataset)
        modes = sorted(panel["mode_a"].unique())
        value = {(a, b): v for a, b, v in panel.select("mode_a", "mode_b", "agreement")
                 .iter_rows()}
        # Missing cells (no pair both modes scored) are NaN: left blank, hatched, "n/a".
        matrix = np.array([[np.nan if value.get((a, b)) is None else value[a, b] for b in modes]
                           for a in modes], dtype=float)
        ax.set_facecolor("white")
        image = ax.imshow(np.ma.masked_invalid(matrix), vmin=0, vmax=1, cmap="viridis")
        for i, row in enumerate(matrix):
            for j, v in enumerate(row):
                if np.isnan(v):
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                           edgecolor="lightgrey", linewidth=0))
                    ax.text(j, i, MISSING, ha="center", va="center", fontsize=6, color="grey")
                else:
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if v < 0.6 else "black")
        ax.set_xticks(range(len(modes)), modes, rotation=45, ha="right")
        ax.set_yticks(range(len(modes)), modes)
        ax.set_title(dataset)
        fig.colorbar(image, ax=ax, fraction=0.046)
    save(fig, stem)


@styled
def japanese_agreement_graph(agreement: pl.DataFrame, stem: str | Path,
                             threshold: float | None = None) -> None:
    """The agreement graph (thesis §5.6, Figures 1, 2 and 7): modes as nodes, agreements as
    edges, pruned (aggregate/agreement_graph.py); nodes placed by ForceAtlas2 (networkx,
    seeded), edge width and label the agreement."""
    # Imported here: networkx is this figure's alone.
    import networkx as nx

    from spudflow.aggregate.agreement_graph import agreement_graph

    if agreement.is_empty():
        return _empty(stem, "agreement matrix")
    datasets = sorted(agreement["dataset"].unique())
    fig, axes = _panels(len(datasets), width=6.0, height=5.0)
    for ax, dataset in zip(axes, datasets, strict=False):
        graph, used = agreement_graph(agreement.filter(pl.col("dataset") == dataset), threshold)
        position = nx.forceatlas2_layout(graph, weight="weight", seed=0, max_iter=200)
        weights = [w for _, _, w in graph.edges(data="weight")]
        nx.draw_networkx_edges(graph, position, ax=ax, edge_color="grey",
                               width=[0.5 + 3 * w for w in weights])
        nx.draw_networkx_edge_labels(graph, position, ax=ax, font_size=5,
                                     edge_labels={(a, b): f"{w:.2f}" for a, b, w
                                                  in graph.edges(data="weight")})
        nx.draw_networkx_nodes(graph, position, ax=ax, node_size=60,
                               node_color=matplotlib.colors.to_hex(COLOURS[0]))
        nx.draw_networkx_labels(graph, position, ax=ax, font_size=6,
                                verticalalignment="bottom")
        rule = "fixed threshold" if threshold is not None else "thesis §5.6: kept connected"
        kept = MISSING if used is None else f"{used:.2f}"
        ax.set_title(f"{dataset}: edges with agreement ≥ {kept} ({rule})")
        ax.set_axis_off()
    save(fig, stem)


@styled
def japanese_length(lengths: pl.DataFrame, stem: str | Path) -> None:
    """Median perplexity (bars: quartiles) by sentence length in the model's tokens, one panel
    per scoring mode, one line per dataset (thesis §3.2, §4.5); log scale."""
    if lengths.is_empty():
        return _empty(stem, "scored sentences")
    modes = sorted(lengths.select("model", "method").unique().iter_rows())
    datasets = sorted(lengths["dataset"].unique())
    fig, axes = _panels(len(modes), width=4.0, height=3.0, ncols=min(3, len(modes)))
    for ax, (model, method) in zip(axes, modes, strict=False):
        panel = lengths.filter((pl.col("model") == model) & (pl.col("method") == method))
        for k, dataset in enumerate(datasets):
            rows = panel.filter(pl.col("dataset") == dataset).sort("n_tokens")
            if rows.is_empty():
                continue
            median = rows["ppl_median"].to_numpy()
            spread = [median - rows["ppl_q1"].to_numpy(), rows["ppl_q3"].to_numpy() - median]
            ax.errorbar(rows["n_tokens"].to_numpy(), median, yerr=spread, marker="o",
                        markersize=3, capsize=2, linewidth=1, label=dataset,
                        color=COLOURS[k % len(COLOURS)])
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("sentence length (tokens)")
        ax.set_ylabel("perplexity")
        ax.set_title(f"{model}/{method}")
        ax.legend(fontsize=6)
    for ax in axes[len(modes):]:
        ax.set_axis_off()
    save(fig, stem)
