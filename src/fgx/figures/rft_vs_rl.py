"""Paper Fig. 3: iterative RFT on Level-2 data versus RL on the same data, accuracy per level."""

from __future__ import annotations

from pathlib import Path
import numpy as np
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import label, palette, setup
from fgx.plan import paths
from fgx.plan.comparisons import rft_vs_rl_models
from fgx.plan.figures import FigureSpec

COLUMNS = ["model", "level", "accuracy", "ci_low", "ci_high", "n_prompts", "source", "config_hash"]


def planned_inputs(config) -> list[str]:
    return [paths.fill(paths.METRICS, model=m, split="test") for m in rft_vs_rl_models(config)]


SPEC = FigureSpec(planned_inputs)


def table(inputs, settings) -> pd.DataFrame:
    columns = ("model", "level", "k", "pass_at_k", "ci_low", "ci_high")
    df = pd.concat([read_with_provenance(p, columns) for p in inputs], ignore_index=True)
    df = df[df["k"] == 1].rename(columns={"pass_at_k": "accuracy"})
    order = {m: i for i, m in enumerate(dict.fromkeys(df["model"]))}
    df = df.assign(_o=df["model"].map(order)).sort_values(["_o", "level"]).drop(columns="_o")
    return df[COLUMNS].reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    setup()
    models = list(dict.fromkeys(df["model"]))
    levels = sorted(df["level"].unique())
    colours = palette(models)
    width = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(levels) + 2), 3.4))
    x = np.arange(len(levels))
    for i, model in enumerate(models):
        m = df[df["model"] == model].set_index("level").reindex(levels)
        err = np.vstack([m["accuracy"] - m["ci_low"], m["ci_high"] - m["accuracy"]]) * 100
        ax.bar(x + (i - (len(models) - 1) / 2) * width, 100 * m["accuracy"], width, yerr=err,
               capsize=1.5, color=colours[model], label=label(model))
    ax.set_xticks(x, [f"L{lv}" for lv in levels])
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Iterative RFT vs RL on Level-2 data (held-out functions)")
    fig.tight_layout()
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
