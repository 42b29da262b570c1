"""Shared look of fgx figures: one colour per model, stable across figures.

matplotlib and seaborn are imported where a figure is drawn: the planner imports every figure module
(its SPEC) whenever Snakemake starts, and a dry run draws nothing."""

from __future__ import annotations

from pathlib import Path
import math

from fgx.plan.models import RFT_ITER

MODEL_LABELS = {
    "stage1": "Stage-1 (RFT) base",
    "rl_level1": "RL Level 1",
    "rl_level2": "RL Level 2",
    "rl_level1to2": "RL Level 1+2",
}


def label(model: str) -> str:
    if m := RFT_ITER.match(model):
        return f"Iterative RFT L2, iter {m[1]}"
    return MODEL_LABELS.get(model, model)


def palette(models) -> dict:
    import seaborn as sns

    fixed = list(MODEL_LABELS)
    colours = sns.color_palette("colorblind", n_colors=max(len(fixed), 4))
    out = {m: colours[i] for i, m in enumerate(fixed)}
    extra = [m for m in models if m not in out]
    greys = sns.color_palette("Greys", n_colors=len(extra) + 2)[2:] if extra else []
    out.update(dict(zip(extra, greys)))
    return out


def setup():
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")


def level_grid(levels):
    """One panel per level, up to four per row, each with its own x tick labels (a panel of the top row
    may have none below it); returns (fig, {level: ax})."""
    import matplotlib.pyplot as plt

    setup()
    ncols = min(4, max(1, len(levels)))
    nrows = max(1, math.ceil(len(levels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.7 * nrows), squeeze=False, sharex=True)
    for ax in list(axes.flat)[len(levels):]:
        ax.set_visible(False)
    for ax in list(axes.flat)[:len(levels)]:
        ax.tick_params(axis="x", labelbottom=True)
    return fig, dict(zip(levels, axes.flat))


def finish_grid(fig, panels, title, pdf):
    """Shared legend below the panels, a title, and the PDF."""
    import matplotlib.pyplot as plt

    handles, labels = next(iter(panels.values())).get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
