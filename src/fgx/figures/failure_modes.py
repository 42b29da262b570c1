"""Paper Fig. 6: why models fail on Level-3 problems, stacked bars of failure categories per model.

Inputs: evaluation parquets ``results/eval/{model}/test.parquet`` (fgx.plan.paths.EVAL). Every
response at ``settings["failure_level"]`` (default 3) is classified by its task family's classifier
(``fgx.analysis.failures``; the string task's: ``fgx.tasks.strings.failure_modes``). Left panel: shares
of all responses (Correct included); right panel: shares of the failures only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fgx.analysis.failures import classify_eval
from fgx.figures import read_with_provenance
from fgx.figures.style import label, setup
from fgx.plan import paths
from fgx.plan.comparisons import failure_mode_models
from fgx.plan.figures import FigureSpec

COLUMNS = ["model", "level", "category", "count", "share", "failure_share", "n_responses", "source",
           "config_hash"]
COLOURS = {
    "Correct": "#1b9e77",
    "Ignores Composition": "#969696",
    "Incomplete Trace": "#e6ab02",
    "Incorrect Composition": "#7570b3",
    "Atomic Error": "#d95f02",
}


def planned_inputs(config) -> list[str]:
    return [paths.fill(paths.EVAL, model=m, split="test") for m in failure_mode_models(config)]


SPEC = FigureSpec(planned_inputs, keys=("failure_level",))


def counts(classified: pd.DataFrame, categories) -> dict:
    """{category: count} over ``categories`` (zeros included)."""
    vc = classified["category"].value_counts()
    return {c: int(vc.get(c, 0)) for c in categories}


def table(inputs, settings) -> pd.DataFrame:
    level = int(settings.get("failure_level", 3))
    rows = []
    for path in inputs:
        df = read_with_provenance(path, ("responses", "reward_model"))
        source = str(path)
        config_hash = df["config_hash"].iloc[0] if len(df) else ""
        model = paths.parse(paths.EVAL, path)["model"]
        classified, classifier = classify_eval(df, level=level, source=source)
        c = counts(classified, classifier.CATEGORIES)
        n = sum(c.values())
        n_fail = n - c[classifier.CORRECT]
        for cat in classifier.CATEGORIES:
            rows.append({
                "model": model, "level": level, "category": cat, "count": c[cat],
                "share": c[cat] / n if n else float("nan"),
                "failure_share": (c[cat] / n_fail if n_fail else float("nan")) if cat != classifier.CORRECT
                else float("nan"),
                "n_responses": n, "source": source, "config_hash": config_hash,
            })
    return pd.DataFrame(rows, columns=COLUMNS)


def _stack(ax, df: pd.DataFrame, models: list, cats, column: str, colours: dict) -> None:
    x = np.arange(len(models))
    bottom = np.zeros(len(models))
    for cat in cats:
        vals = np.array([100 * df[(df["model"] == m) & (df["category"] == cat)][column].fillna(0).sum()
                         for m in models])
        ax.bar(x, vals, 0.65, bottom=bottom, color=colours[cat], label=cat, edgecolor="white", lw=0.5)
        for xi, (b, v) in enumerate(zip(bottom, vals)):
            if v >= 6:
                ax.text(xi, b + v / 2, f"{v:.0f}%", ha="center", va="center", fontsize=6.5, color="black")
        bottom += vals
    ax.set_xticks(x, [label(m) for m in models], rotation=20, ha="right", fontsize=7)
    ax.set_ylim(0, 100)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt
    import seaborn as sns

    setup()
    models = list(dict.fromkeys(df["model"]))
    level = int(df["level"].iloc[0]) if len(df) else int(settings.get("failure_level", 3))
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 1.6 * len(models) + 3.5), 3.6))
    # a classifier lists its correct category first (fgx.analysis.failures)
    cats = list(dict.fromkeys(df["category"]))
    spare = iter(sns.color_palette("colorblind", n_colors=max(len(cats), 1)))
    colours = {c: COLOURS[c] if c in COLOURS else next(spare) for c in cats}
    _stack(axes[0], df, models, cats, "share", colours)
    axes[0].set_ylabel("share of responses (%)")
    axes[0].set_title(f"All Level-{level} responses")
    _stack(axes[1], df, models, cats[1:], "failure_share", colours)
    axes[1].set_ylabel("share of failures (%)")
    axes[1].set_title(f"Level-{level} failures by cause")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize=7,
               bbox_to_anchor=(0.5, -0.01))
    if not models:
        for ax in axes:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle("Failure modes on held-out compositions (rule-based classification)")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
