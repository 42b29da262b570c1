"""Paper Fig. 2: held-out accuracy per level over RL steps, one line per RL run."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import label, palette, setup

COLUMNS = ["model", "step", "level", "accuracy", "source", "config_hash"]


def table(inputs, settings) -> pd.DataFrame:
    frames = []
    for path in inputs:
        df = read_with_provenance(path)
        df = df[(df["metric"] == "val_accuracy") & (df["level"] >= 1)].copy()
        df["model"] = f"rl_{Path(path).parent.name}"  # results/rl/{run}/metrics.parquet
        frames.append(df.rename(columns={"value": "accuracy"}))
    out = pd.concat(frames, ignore_index=True)
    return out[COLUMNS].sort_values(["model", "level", "step"]).reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    setup()
    levels = sorted(df["level"].unique())
    ncols = min(4, max(1, len(levels)))
    nrows = max(1, math.ceil(len(levels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.7 * nrows), squeeze=False, sharex=True)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for ax, level in zip(axes.flat, levels):
        sub = df[df["level"] == level]
        for model in models:
            m = sub[sub["model"] == model]
            ax.plot(m["step"], 100 * m["accuracy"], marker="o", ms=2.5, color=colours[model], label=label(model))
        ax.set_title(f"Level {level}")
        ax.set_ylim(-2, 102)
        ax.set_xlabel("RL step")
        ax.set_ylabel("accuracy (%)")
    for ax in list(axes.flat)[len(levels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("Held-out accuracy during RL")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(pdf, format="pdf")
    plt.close(fig)
