"""Paper Fig. 5: pass@k versus k on every test level, Stage-1 base against the RL runs."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import label, palette, setup

COLUMNS = ["model", "level", "k", "pass_at_k", "ci_low", "ci_high", "n_prompts", "n_samples",
           "source", "config_hash"]


def table(inputs, settings) -> pd.DataFrame:
    df = pd.concat([read_with_provenance(p) for p in inputs], ignore_index=True)
    levels = settings.get("passk_levels")
    ks = settings.get("passk_ks")
    if levels:
        df = df[df["level"].isin(levels)]
    if ks:
        df = df[df["k"].isin(ks)]
    return df[COLUMNS].sort_values(["model", "level", "k"]).reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    setup()
    levels = sorted(df["level"].unique())
    ncols = min(4, max(1, len(levels)))
    nrows = max(1, math.ceil(len(levels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.7 * nrows), squeeze=False,
                             sharex=True)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for ax, level in zip(axes.flat, levels):
        sub = df[df["level"] == level]
        for model in models:
            m = sub[sub["model"] == model].sort_values("k")
            if m.empty:
                continue
            ax.plot(m["k"], 100 * m["pass_at_k"], marker="o", ms=3, color=colours[model], label=label(model))
            ax.fill_between(m["k"], 100 * m["ci_low"], 100 * m["ci_high"], color=colours[model], alpha=0.2, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_title(f"Level {level}")
        ax.set_ylim(-2, 102)
        ax.set_xlabel("k")
        ax.set_ylabel("pass@k (%)")
    for ax in list(axes.flat)[len(levels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("pass@k on held-out functions (bands: bootstrap CI over prompts)")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(pdf, format="pdf")
    plt.close(fig)
