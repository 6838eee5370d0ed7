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
    stem = Path(stem)
    with atomic_outputs() as out:
        fig.savefig(out.path(stem.with_name(stem.name + ".png")), format="png", dpi=150,
                    bbox_inches="tight")
        fig.savefig(out.path(stem.with_name(stem.name + ".svg")), format="svg",
                    bbox_inches="tight", metadata={"Date": None})


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


# The table each figure draws (core/table_artifacts.py defines its columns).
TABLE_OF = {
    "spud_log_ratios": "spud_ratios",
    "german_roc": "german_case_roc",
    "probe_layers": "probe_layers",
    "blimp_fields": "blimp_field",
    "japanese_agreement": "japanese_agreement",
}


@styled
def spud_log_ratios(pairs: pl.DataFrame, stem: str | Path) -> None:
    """Box plots of log(f(nonce) / f(orig)) per language and scoring function (paper Fig. 2);
    one panel per nonce method. One box value per original sentence: its mean log ratio over the
    nonce seeds (pooling the seeds would count each original once per seed)."""
    if pairs.is_empty():
        return _empty(stem, "sentence pairs")
    pairs = per_original(pairs).with_columns(
        pl.concat_str("model", pl.lit("/"), "method").alias("scorer"))
    scorer_names = sorted(pairs["scorer"].unique())
    methods = sorted(pairs["nonce_method"].unique())
    fig, axes = _panels(len(methods), width=max(5.0, 1.2 * pairs["language"].n_unique() + 2))
    width = 0.8 / len(scorer_names)
    for ax, method in zip(axes, methods, strict=False):
        panel = pairs.filter(pl.col("nonce_method") == method)
        languages = sorted(panel["language"].unique())
        for j, scorer in enumerate(scorer_names):
            data, positions = [], []
            for i, language in enumerate(languages):
                values = panel.filter((pl.col("language") == language)
                                      & (pl.col("scorer") == scorer))["log_ratio"]
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
                            for j, s in enumerate(scorer_names)], fontsize=7)
    save(fig, stem)


@styled
def german_roc(points: pl.DataFrame, stem: str | Path) -> None:
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


# Which chosen layers each metric panel of the layer figure marks.
CHOSEN_ON = {"relacc_mean": ("label",), "uas_mean": ("dist",), "las_mean": ("dist", "label")}


@styled
def probe_layers(layers: pl.DataFrame, stem: str | Path) -> None:
    """RelAcc, UAS and LAS per layer for each model (no baseline), selection (dev), original
    and nonce sets; one row of panels per treebank (App. F.6, Fig. 8). The layers chosen for
    `auto` are marked by a vertical line in the model's colour: the label layer on the RelAcc
    panel, the distance layer on the UAS panel, both on the LAS panel."""
    layers = layers.filter(pl.col("baseline") == "none")
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
                    panel.partition_by("model", "eval", as_dict=True).items()):
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
def blimp_fields(fields: pl.DataFrame, stem: str | Path) -> None:
    """BLiMP accuracy per field, one bar per scoring function; one panel per dataset."""
    if fields.is_empty():
        return _empty(stem, "BLiMP results")
    fields = fields.with_columns(pl.concat_str("model", pl.lit("/"), "method").alias("scorer"))
    datasets = sorted(fields["dataset"].unique())
    fig, axes = _panels(len(datasets), width=max(5.0, 1.1 * fields["field"].n_unique() + 2))
    for ax, dataset in zip(axes, datasets, strict=False):
        panel = fields.filter(pl.col("dataset") == dataset)
        names = sorted(panel["field"].unique())
        scorer_names = sorted(panel["scorer"].unique())
        width = 0.8 / len(scorer_names)
        for j, scorer in enumerate(scorer_names):
            rows = dict(panel.filter(pl.col("scorer") == scorer).select("field", "accuracy")
                        .iter_rows())
            x = [i - 0.4 + width * (j + 0.5) for i in range(len(names))]
            # A field without an accuracy (no row, or no pair scored) gets no bar but "n/a".
            shown = [(x_i, rows[n]) for x_i, n in zip(x, names, strict=True)
                     if rows.get(n) is not None]
            ax.bar([x_i for x_i, _ in shown], [v for _, v in shown], width=width * 0.9,
                   label=scorer, color=COLOURS[j % len(COLOURS)])
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
    """Heat map of the share of pairs on which two scoring modes choose the same verb."""
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
