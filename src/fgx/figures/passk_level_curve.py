"""Paper Fig. 5: pass@k versus k on every test level, Stage-1 base against the RL runs."""

from __future__ import annotations

import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import finish_grid, label, level_grid, palette

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
    levels = sorted(df["level"].unique())
    fig, panels = level_grid(levels)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for level, ax in panels.items():
        sub = df[df["level"] == level]
        for model in models:
            m = sub[sub["model"] == model].sort_values("k")
            if m.empty:
                continue
            ax.plot(m["k"], 100 * m["pass_at_k"], marker="o", ms=3, color=colours[model], label=label(model))
            ax.fill_between(m["k"], 100 * m["ci_low"], 100 * m["ci_high"], color=colours[model], alpha=0.2, lw=0)
        ax.set_xscale("log", base=2)
        ax.set(title=f"Level {level}", ylim=(-2, 102), xlabel="k", ylabel="pass@k (%)")
    finish_grid(fig, panels, "pass@k on held-out functions (bands: bootstrap CI over prompts)", pdf)
